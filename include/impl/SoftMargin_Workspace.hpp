// SoftMargin: per-execution-space-instance scratch for the reductions.
#ifndef SOFTMARGIN_IMPL_WORKSPACE_HPP
#define SOFTMARGIN_IMPL_WORKSPACE_HPP

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "SoftMargin_Tuning.hpp"

namespace softmargin::Impl {

/// Exclusive use of a Payload for the kernels of one call; neither kind of backend allocates per call.
///
/// Device backends keep one Payload per execution-space instance, made on first use and released at
/// Kokkos::finalize, so that a call allocates nothing and never synchronizes. Reuse is safe because every use is
/// ordered by the instance's own stream, and the lease's lock keeps the launches of two host threads that share
/// one instance from interleaving within one call. Host backends run synchronously on the calling thread, so
/// concurrent calls (several host threads) each need their own Payload: a pool of free ones, released at
/// Kokkos::finalize, lends one that fits (Payload::fits) for the length of a lease and takes it back after.
template <class Exec, class Payload>
class Lease {
 public:
  template <class... Args>
  static Lease acquire(const Exec& space, Args&&... args) {
    Lease lease;
    if constexpr (is_host_space_v<Exec>) {
      Pool& pool = registry().pool;
      {
        std::lock_guard<std::mutex> guard(registry().mutex);
        hook_locked();
        lease.generation_ = registry().generation;
        for (auto it = pool.begin(); it != pool.end(); ++it) {
          if ((*it)->fits(args...)) {
            lease.payload_ = std::move(*it);
            pool.erase(it);
            break;
          }
        }
        // None fits: the new one replaces one that does not, so the pool never outgrows the callers' concurrency.
        if (!lease.payload_ && !pool.empty()) pool.pop_back();
      }
      if (!lease.payload_) lease.payload_ = std::make_shared<Entry>(space, std::forward<Args>(args)...);
    } else {
      Registry& reg = registry();
      {
        std::lock_guard<std::mutex> guard(reg.mutex);
        hook_locked();
        auto& slot = reg.by_instance[space.impl_instance_id()];
        if (!slot) slot = std::make_shared<Entry>(space, std::forward<Args>(args)...);
        lease.payload_ = slot;
      }
      lease.lock_ = std::unique_lock<std::mutex>(lease.payload_->mutex);
    }
    return lease;
  }

  Lease(Lease&&) noexcept = default;
  Lease& operator=(Lease&&) = delete;
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  ~Lease() {
    if constexpr (is_host_space_v<Exec>) {
      if (!payload_) return;
      std::lock_guard<std::mutex> guard(registry().mutex);
      // A payload lent before Kokkos::finalize emptied the pool is not taken back.
      if (registry().generation == generation_) registry().pool.push_back(std::move(payload_));
    }
  }

  Payload& operator*() const { return *payload_; }
  Payload* operator->() const { return payload_.get(); }

 private:
  Lease() = default;

  struct Entry : Payload {
    using Payload::Payload;
    std::mutex mutex;
  };
  using Pool = std::vector<std::shared_ptr<Entry>>;
  struct Registry {
    std::mutex mutex;
    std::map<std::uint32_t, std::shared_ptr<Entry>> by_instance;  ///< device backends
    Pool pool;                                                    ///< host backends: the free payloads
    std::uint64_t generation = 0;                                 ///< Kokkos::finalize calls seen
    bool hook_registered = false;
  };
  // Never destroyed: Kokkos::finalize may run after static destructors (from an atexit handler registered before the
  // first call), and its hook must still find the registry.
  static Registry& registry() {
    static auto* reg = new Registry;
    return *reg;
  }
  // Registers the finalize hook that releases the payloads (under the registry's lock).
  static void hook_locked() {
    Registry& reg = registry();
    if (reg.hook_registered) return;
    Kokkos::push_finalize_hook([] {
      Registry& r = registry();
      std::lock_guard<std::mutex> g(r.mutex);
      r.by_instance.clear();
      r.pool.clear();
      ++r.generation;
      r.hook_registered = false;
    });
    reg.hook_registered = true;
  }

  std::shared_ptr<Entry> payload_;
  std::unique_lock<std::mutex> lock_;
  std::uint64_t generation_ = 0;
};

/// Scratch of a reduction: one partial per team, then one accumulator; and the last-team ticket.
template <class Exec, class Accum>
struct Workspace {
  using memory_space = typename Exec::memory_space;
  using unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;

  Kokkos::View<Accum*, memory_space> partials;
  Kokkos::View<unsigned, memory_space> ticket;  ///< teams finished in the current launch; 0 between launches

  Workspace(const Exec& space, int teams)
      : partials(Kokkos::view_alloc(space, "softmargin::workspace::partials"), teams + 1),
        ticket(Kokkos::view_alloc(space, "softmargin::workspace::ticket")) {}

  int capacity() const { return static_cast<int>(partials.extent(0)) - 1; }
  bool fits(int teams) const { return capacity() >= teams; }
  Kokkos::View<Accum, memory_space, unmanaged> accumulator() const {
    return Kokkos::View<Accum, memory_space, unmanaged>(partials.data() + capacity());
  }

  static Lease<Exec, Workspace> acquire(const Exec& space, int teams) {
    return Lease<Exec, Workspace>::acquire(space, is_host_space_v<Exec> ? teams : kMaxDeviceTeams);
  }
};

/// Where a blocking call's result lands: host-pinned memory that the device writes and the host reads after a fence.
template <class Exec, class T>
struct HostResult {
  using memory_space = std::conditional_t<is_host_space_v<Exec>, Kokkos::HostSpace, Kokkos::SharedHostPinnedSpace>;
  Kokkos::View<T, memory_space> value;
  explicit HostResult(const Exec&) : value("softmargin::host_result") {}
  bool fits() const { return true; }
  static Lease<Exec, HostResult> acquire(const Exec& space) { return Lease<Exec, HostResult>::acquire(space); }
};

}  // namespace softmargin::Impl

#endif

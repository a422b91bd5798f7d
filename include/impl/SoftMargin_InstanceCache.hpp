// SoftMargin: Kokkos objects cached per execution-space instance (or any key), made on first use and released at
// Kokkos::finalize.
#ifndef SOFTMARGIN_IMPL_INSTANCE_CACHE_HPP
#define SOFTMARGIN_IMPL_INSTANCE_CACHE_HPP

#include <Kokkos_Core.hpp>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace softmargin::Impl {

/// Values of one type by Key, each made on first use and shared until Kokkos::finalize releases them; and a pool of
/// free values that callers borrow one at a time. Thread-safe. The generation counts the finalizes seen (from 1): a
/// value obtained in an older generation has left the cache, and a pooled value borrowed then is not taken back.
template <class Key, class Value>
class Cache {
 public:
  /// The value of key, made as Value(args...) on first use; the cache holds it until Kokkos::finalize.
  template <class... Args>
  static std::shared_ptr<Value> find_or_make(const Key& key, Args&&... args) {
    State& s = state();
    std::lock_guard<std::mutex> guard(s.mutex);
    hook_locked(s);
    auto& slot = s.by_key[key];
    if (!slot) slot = std::make_shared<Value>(std::forward<Args>(args)...);
    return slot;
  }

  /// A free value of the pool for which fits(value) holds, or none; with the generation to give it back in. Where
  /// none fits, one free value that does not is dropped (the caller makes one), so the pool never outgrows the
  /// callers' concurrency.
  template <class Fits>
  static std::pair<std::shared_ptr<Value>, std::uint64_t> borrow(const Fits& fits) {
    State& s = state();
    std::lock_guard<std::mutex> guard(s.mutex);
    hook_locked(s);
    const std::uint64_t gen = s.generation.load(std::memory_order_relaxed);
    for (auto it = s.pool.begin(); it != s.pool.end(); ++it) {
      if (fits(**it)) {
        std::shared_ptr<Value> value = std::move(*it);
        s.pool.erase(it);
        return {std::move(value), gen};
      }
    }
    if (!s.pool.empty()) s.pool.pop_back();
    return {nullptr, gen};
  }

  /// Puts a borrowed (or new) value into the pool, unless Kokkos::finalize ran since generation gen.
  static void give_back(std::shared_ptr<Value> value, std::uint64_t gen) {
    State& s = state();
    std::lock_guard<std::mutex> guard(s.mutex);
    if (value && s.generation.load(std::memory_order_relaxed) == gen) s.pool.push_back(std::move(value));
  }

  static std::uint64_t generation() { return state().generation.load(std::memory_order_acquire); }

 private:
  struct State {
    std::mutex mutex;
    std::map<Key, std::shared_ptr<Value>> by_key;
    std::vector<std::shared_ptr<Value>> pool;  ///< free values
    std::atomic<std::uint64_t> generation{1};
    bool hooked = false;
  };
  // Never destroyed: Kokkos::finalize may run after static destructors (from an atexit handler registered before the
  // first use), and its hook must still find the state.
  static State& state() {
    static auto* s = new State;
    return *s;
  }
  // Registers the finalize hook that releases the values (once per Kokkos lifetime). The hook destroys them outside
  // the lock, before Kokkos finalizes its backends.
  static void hook_locked(State& s) {
    if (s.hooked) return;
    Kokkos::push_finalize_hook([] {
      State& st = state();
      std::map<Key, std::shared_ptr<Value>> by_key;
      std::vector<std::shared_ptr<Value>> pool;
      std::lock_guard<std::mutex> guard(st.mutex);
      by_key.swap(st.by_key);
      pool.swap(st.pool);
      st.generation.fetch_add(1, std::memory_order_release);
      st.hooked = false;
    });
    s.hooked = true;
  }
};

/// Whether Exec runs its kernels on the calling thread (host backends).
template <class Exec>
inline constexpr bool runs_on_host_v = Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible;

/// Exclusive use of a Payload for the kernels of one call (from InstanceCache::acquire); neither kind of backend
/// allocates per call.
///
/// Device backends keep one Payload per execution-space instance, made on first use and released at
/// Kokkos::finalize, so that a call allocates nothing and never synchronizes. Reuse is safe because every use is
/// ordered by the instance's own stream, and the lease's lock keeps the launches of two host threads that share
/// one instance from interleaving within one call. Host backends run synchronously on the calling thread, so
/// concurrent calls (several host threads) each need their own Payload: a pool of free ones, released at
/// Kokkos::finalize, lends one that fits (Payload::fits) for the length of a lease and takes it back after.
template <class Exec, class Payload>
class InstanceCache {
  struct Entry : Payload {
    using Payload::Payload;
    std::mutex mutex;
  };
  using Store = Cache<std::uint32_t, Entry>;

 public:
  class Lease {
   public:
    Lease(Lease&&) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() {
      if constexpr (runs_on_host_v<Exec>) {
        if (payload_) Store::give_back(std::move(payload_), generation_);
      }
    }

    Payload& operator*() const { return *payload_; }
    Payload* operator->() const { return payload_.get(); }

   private:
    friend class InstanceCache;
    Lease() = default;
    std::shared_ptr<Entry> payload_;
    std::unique_lock<std::mutex> lock_;
    std::uint64_t generation_ = 0;
  };

  /// The Payload of this call: on device backends space's own, made as Payload(space, args...) on first use and
  /// locked for the lease; on host backends a free one that fits(args...), else a new one.
  template <class... Args>
  static Lease acquire(const Exec& space, Args&&... args) {
    Lease lease;
    if constexpr (runs_on_host_v<Exec>) {
      auto [payload, gen] = Store::borrow([&](const Entry& e) { return e.fits(args...); });
      lease.generation_ = gen;
      lease.payload_ = payload ? std::move(payload) : std::make_shared<Entry>(space, std::forward<Args>(args)...);
    } else {
      lease.payload_ = Store::find_or_make(space.impl_instance_id(), space, std::forward<Args>(args)...);
      lease.lock_ = std::unique_lock<std::mutex>(lease.payload_->mutex);
    }
    return lease;
  }
};

}  // namespace softmargin::Impl

#endif

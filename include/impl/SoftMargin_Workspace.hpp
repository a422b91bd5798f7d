// SoftMargin: per-execution-space-instance scratch for the reductions (held in the instance cache).
#ifndef SOFTMARGIN_IMPL_WORKSPACE_HPP
#define SOFTMARGIN_IMPL_WORKSPACE_HPP

#include <Kokkos_Core.hpp>
#include <type_traits>

#include "SoftMargin_InstanceCache.hpp"
#include "SoftMargin_Tuning.hpp"

namespace softmargin::Impl {

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

  /// The instance's workspace (device backends, sized for kMaxDeviceTeams), or a pooled one of teams or more (host).
  static auto acquire(const Exec& space, int teams) {
    return InstanceCache<Exec, Workspace>::acquire(space, is_host_space_v<Exec> ? teams : kMaxDeviceTeams);
  }
};

/// Where a blocking call's result lands: host-pinned memory that the device writes and the host reads after a fence.
template <class Exec, class T>
struct HostResult {
  using memory_space = std::conditional_t<is_host_space_v<Exec>, Kokkos::HostSpace, Kokkos::SharedHostPinnedSpace>;
  Kokkos::View<T, memory_space> value;
  explicit HostResult(const Exec&) : value("softmargin::host_result") {}
  bool fits() const { return true; }
  static auto acquire(const Exec& space) { return InstanceCache<Exec, HostResult>::acquire(space); }
};

}  // namespace softmargin::Impl

#endif

// SoftMargin: the portable launch shapes and pack sizes. A hardware room tunes its own (impl/cuda/
// SoftMargin_CudaTuning.hpp, impl/host/SoftMargin_HostTuning.hpp); each constant says what chose it, the figures are
// in docs/PERFORMANCE.md.
#ifndef SOFTMARGIN_IMPL_TUNING_HPP
#define SOFTMARGIN_IMPL_TUNING_HPP

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstddef>

#include "../SoftMargin_Types.hpp"

namespace softmargin::Impl {

/// Whether Exec runs its kernels on the host (Serial, OpenMP, Threads, HPX), synchronously for reductions.
template <class Exec>
inline constexpr bool is_host_space_v = Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible;

/// Shapes of the portable team kernels on devices (SoftMargin_Kokkos.hpp), swept on the H200.
struct DeviceTuning {
  /// Threads a block (team). At 512x4096 the native reduce took the same time with 1024-thread blocks.
  static constexpr int block_size = 256;
  /// Launch bound of the team kernels: 6 blocks resident, so at most 40 registers a thread (the loss fits without
  /// spills).
  static constexpr int resident_blocks_per_sm = 6;
  /// Grid blocks per multiprocessor for n elements: fewer partials and a shorter tail below 2^22 and 2^23, more loads
  /// in flight above (the team kernels' sweep over N).
  static constexpr int grid_blocks_per_sm(std::size_t n) {
    return n < (std::size_t(1) << 22) ? 3 : n < (std::size_t(1) << 23) ? 4 : 6;
  }
};

/// Bytes of x a device thread reads at once: the widest load (16 bytes).
inline constexpr int kDevicePackBytes = 16;

/// Bytes of the compute type in one vector of a host pack (64: an AVX-512 register; targets with narrower vectors
/// compute it in parts).
inline constexpr int kHostVectorBytes = 64;

/// Most teams (blocks) a device reduction launches; the cached workspace holds this many partials.
inline constexpr int kMaxDeviceTeams = 1 << 14;

/// Grid blocks per multiprocessor of a device kernel over n elements under Tuning: LaunchOptions::blocks_per_sm
/// where set, else the tuned value.
template <class Tuning>
int grid_blocks_per_sm(std::size_t n) {
  const int forced = launch_options().blocks_per_sm;
  return forced > 0 ? std::min(forced, Tuning::resident_blocks_per_sm) : Tuning::grid_blocks_per_sm(n);
}

}  // namespace softmargin::Impl

#endif

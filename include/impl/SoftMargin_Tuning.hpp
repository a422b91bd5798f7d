// SoftMargin: the launch shapes of the device kernels, per GPU architecture, in one place. Each constant says what
// was measured to choose it; the figures are in docs/PERFORMANCE.md.
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

/// Hopper (sm_90), measured on the H200.
struct TuningHopper90 {
  /// Threads a block (team). At 512x4096 the native reduce took the same time with 1024-thread blocks.
  static constexpr int block_size = 256;
  /// Launch bound of the team kernels, the native map kernels and the native reduce's latency shape: 6 blocks
  /// resident, so at most 40 registers a thread (the loss fits without spills).
  static constexpr int resident_blocks_per_sm = 6;
  /// Launch bound of the native reduce's bandwidth shape (and of the fused pass, which spills at 40 registers):
  /// 4 blocks resident (64 registers); also the most grid blocks per multiprocessor of a native kernel, leaving
  /// resident slots for the next call's grid under programmatic dependent launch.
  static constexpr int bandwidth_blocks_per_sm = 4;
  /// Grid blocks per multiprocessor of the native reduce's latency shape: 3, so the next call's grid, launched early,
  /// fits beside this one whole (a grid of 4 landed the next one unevenly and was slower in a stream).
  static constexpr int latency_grid_blocks_per_sm = 3;
  /// Below this many elements the native reduce uses the latency shape; from it on, the bandwidth shape (faster
  /// against cublasSdot at 2^24 to 2^28).
  static constexpr std::size_t latency_max_n = std::size_t(1) << 24;
  /// Partials a lane of the native reduce's last block loads at once (a warp gathers 32 x 16 = 512 partials).
  static constexpr int gather = 16;
  /// Packs a native reduce thread loads before their arithmetic (8 in flight measured no faster than 4).
  static constexpr int reduce_unroll = 4;
  /// Below latency_max_n, packs a native map thread (gradient, reduction none) loads before their arithmetic (2 fit
  /// in 40 registers), and a grid of every resident block (a map publishes no partials): the backward pass at
  /// 512x4096 went from slower to faster than cublasSaxpy. From latency_max_n on, one pack (two measured slower).
  static constexpr int map_unroll = 2;
  static constexpr int map_latency_grid_blocks_per_sm = 6;
  /// The fused pass (loss and gradient), which spills at 40 registers: packs loaded at once, launch bound and grid
  /// blocks per multiprocessor, below latency_max_n and from it on. From a sweep of the three against cublasSaxpy:
  /// 2 packs and 5 blocks (51 registers) below 2^24 (at 512x4096 1.06x cublasSaxpy's time, down from 1.20x with
  /// the reduce's bandwidth shape), one pack and a grid of 6 above (2^24 to 2^28: 0.80-0.81x, down from 0.86-0.89x).
  struct FusedShape {
    static constexpr int latency_unroll = 2;
    static constexpr int latency_min_blocks = 5;
    static constexpr int latency_grid_blocks_per_sm = 5;
    static constexpr int bandwidth_unroll = 1;
    static constexpr int bandwidth_min_blocks = 4;
    static constexpr int bandwidth_grid_blocks_per_sm = 6;
  };

  /// Grid blocks per multiprocessor for n elements: fewer partials and a shorter tail below 2^22 and 2^23, more loads
  /// in flight above (the team kernels' sweep over N).
  static constexpr int grid_blocks_per_sm(std::size_t n) {
    return n < (std::size_t(1) << 22) ? 3 : n < (std::size_t(1) << 23) ? 4 : 6;
  }
};

/// Other GPUs: Hopper's shapes until measured.
struct TuningGeneric : TuningHopper90 {};

#if defined(KOKKOS_ARCH_HOPPER90)
using DeviceTuning = TuningHopper90;
#else
using DeviceTuning = TuningGeneric;
#endif

/// Bytes of the compute type in one host vector (an AVX-512 register), and vectors in a host pack of float arithmetic
/// (SoftMargin_Packs.hpp says which passes): the host kernels compute such a pack stage by stage, so that four chains
/// of the loss's dependent operations overlap (one vector's chain alone leaves the core waiting on their latency: on
/// one core the bf16 fused pass took 1.24x the time of four, the fp32 fused pass 1.10x). A pack's views need only a
/// vector's alignment (of their own type).
inline constexpr int kHostVectorBytes = 64;
inline constexpr int kHostPackVectors = 4;
/// Bytes a device thread reads at once: the widest load (16 bytes).
inline constexpr int kDevicePackBytes = 16;

/// Most teams (blocks) a device reduction launches; the cached workspace holds this many partials.
inline constexpr int kMaxDeviceTeams = 1 << 14;

/// Grid blocks per multiprocessor of a device kernel over n elements: LaunchOptions::blocks_per_sm where set, else
/// the tuned value.
inline int grid_blocks_per_sm(std::size_t n) {
  const int forced = launch_options().blocks_per_sm;
  return forced > 0 ? std::min(forced, DeviceTuning::resident_blocks_per_sm) : DeviceTuning::grid_blocks_per_sm(n);
}

}  // namespace softmargin::Impl

#endif

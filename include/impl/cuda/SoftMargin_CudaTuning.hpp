// SoftMargin CUDA room: the launch shapes of the native kernels per GPU architecture, in one place. Each constant says
// what was measured to choose it (on the H200); the figures are in docs/PERFORMANCE.md.
#ifndef SOFTMARGIN_IMPL_CUDA_TUNING_HPP
#define SOFTMARGIN_IMPL_CUDA_TUNING_HPP

#include <Kokkos_Core.hpp>
#include <cstddef>

#include "../SoftMargin_Tuning.hpp"

namespace softmargin::Impl {

/// Hopper (sm_90), measured on the H200. The team kernels' shapes are the portable ones (DeviceTuning).
struct TuningHopper90 : DeviceTuning {
  /// Launch bound of the native map kernels and the native reduce's latency shape: DeviceTuning's 6 resident blocks.
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
};

/// The shapes of the architecture Kokkos is built for. Only Hopper has been measured; other architectures take its
/// shapes until they are.
using CudaTuning = TuningHopper90;

}  // namespace softmargin::Impl

#endif

// SoftMargin: the option types of the public API.
#ifndef SOFTMARGIN_TYPES_HPP
#define SOFTMARGIN_TYPES_HPP

#include <atomic>

namespace softmargin {

/// How the element-wise losses are reduced, as torch.nn.SoftMarginLoss(reduction=...).
enum class Reduction {
  None,  ///< one loss per element, in an output View of x's shape
  Sum,   ///< sum of the losses (0 for an empty input)
  Mean   ///< sum / N (NaN for an empty input, as in PyTorch)
};

/// Which kernel runs a pass.
enum class Algorithm {
  Auto,         ///< the fastest measured for the backend and size (docs/PERFORMANCE.md)
  RangeReduce,  ///< Kokkos::parallel_reduce (parallel_for for element-wise passes) over a RangePolicy: the portable
                ///< reference path
  TeamScratch,  ///< TeamPolicy kernel: tree reduction in team scratch, the last team combines, one launch
  Native        ///< CUDA: the team kernel's work as a CUDA kernel launched on the instance's stream (warp shuffles,
                ///< programmatic dependent launch); TeamScratch on other backends
};

inline const char* to_string(Reduction r) {
  switch (r) {
    case Reduction::None:
      return "none";
    case Reduction::Sum:
      return "sum";
    case Reduction::Mean:
      return "mean";
  }
  return "invalid";
}

inline const char* to_string(Algorithm a) {
  switch (a) {
    case Algorithm::Auto:
      return "auto";
    case Algorithm::RangeReduce:
      return "range_reduce";
    case Algorithm::TeamScratch:
      return "team_scratch";
    case Algorithm::Native:
      return "native";
  }
  return "invalid";
}

/// Launch settings of the device kernels, process-wide. The defaults are the tuned ones; the switches exist for
/// measurements (the benchmark exposes them as flags).
struct LaunchOptions {
  /// Programmatic dependent launch of the native CUDA kernels (compute capability 9 and later): a call's launch
  /// overlaps the tail of the kernel before it in the stream, which it still waits for before reading anything.
  bool programmatic_dependent_launch = true;
  /// Grid blocks (teams) per multiprocessor of the device kernels; 0: the tuned value for the size
  /// (impl/cuda/SoftMargin_CudaTuning.hpp). Clamped to what is resident.
  int blocks_per_sm = 0;
};

namespace Impl {
inline std::atomic<bool> g_pdl{true};
inline std::atomic<int> g_blocks_per_sm{0};
}  // namespace Impl

/// Sets the launch options of every later call (thread-safe; calls already enqueued are unaffected).
inline void set_launch_options(const LaunchOptions& options) {
  Impl::g_pdl.store(options.programmatic_dependent_launch, std::memory_order_relaxed);
  Impl::g_blocks_per_sm.store(options.blocks_per_sm < 0 ? 0 : options.blocks_per_sm, std::memory_order_relaxed);
}

/// The launch options in effect.
inline LaunchOptions launch_options() {
  return {Impl::g_pdl.load(std::memory_order_relaxed), Impl::g_blocks_per_sm.load(std::memory_order_relaxed)};
}

}  // namespace softmargin

#endif

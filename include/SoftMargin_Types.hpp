// SoftMargin: the option types of the public API.
#ifndef SOFTMARGIN_TYPES_HPP
#define SOFTMARGIN_TYPES_HPP

#include <Kokkos_Core.hpp>
#include <atomic>
#include <cstdint>
#include <type_traits>

namespace softmargin {

/// How the element-wise losses are reduced, as torch.nn.SoftMarginLoss(reduction=...).
enum class Reduction {
  None,  ///< one loss per element, in an output View of x's shape
  Sum,   ///< sum of the losses (0 for an empty input)
  Mean   ///< sum / N (NaN for an empty input, as in PyTorch)
};

/// The type of a caller's count held in memory (mean_over with a View).
enum class CountType { Double, Float, Int64, Int32 };

/// The reduction a pass applies: a Reduction, or the sum divided by a count the caller gives (mean_over). Every
/// pass's `reduction` parameter takes either.
class ReduceBy {
 public:
  ReduceBy(Reduction r) : reduction_(r) {}  // NOLINT: a Reduction is a ReduceBy
  /// None, Sum or Mean; Sum for a caller's count (the sum is divided by it).
  Reduction reduction() const { return reduction_; }
  /// Whether the sum is divided by a caller's count.
  bool has_count() const { return has_count_; }
  /// The host count (count_data() null), else the count is read from count_data() where the division happens.
  double count() const { return count_; }
  const void* count_data() const { return count_data_; }
  CountType count_type() const { return count_type_; }
  /// Where a count in memory may be read from: host code, the default execution space.
  bool count_host_accessible() const { return host_accessible_; }
  bool count_device_accessible() const { return device_accessible_; }

  friend ReduceBy mean_over(double count);
  template <class View>
  friend ReduceBy mean_over(const View& count);

 private:
  Reduction reduction_;
  bool has_count_ = false;
  double count_ = 1.0;
  const void* count_data_ = nullptr;
  CountType count_type_ = CountType::Double;
  bool host_accessible_ = true;
  bool device_accessible_ = true;
};

/// The sum of the losses divided by `count` (a positive number the caller knows, such as the tokens of a whole step
/// over micro-batches or ranks), on every pass: the losses of micro-batches reduced with the same count add up to the
/// mean over all of them. The gradient is scaled by 1 / count alike.
inline ReduceBy mean_over(double count) {
  ReduceBy r(Reduction::Sum);
  r.has_count_ = true;
  r.count_ = count;
  return r;
}

/// As mean_over(double) with the count in a rank-0 View (double, float, int64_t or int32_t) that the kernels read
/// where they divide: it may be the result of earlier work on the device. It must stay valid until the pass ends.
template <class View>
ReduceBy mean_over(const View& count) {
  static_assert(Kokkos::is_view_v<View> && View::rank() == 0, "softmargin::mean_over: count must be a rank-0 View");
  using T = typename View::non_const_value_type;
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, float> || std::is_same_v<T, std::int64_t> ||
                    std::is_same_v<T, std::int32_t>,
                "softmargin::mean_over: the count View must hold double, float, int64_t or int32_t");
  ReduceBy r(Reduction::Sum);
  r.has_count_ = true;
  r.count_data_ = count.data();
  r.count_type_ = std::is_same_v<T, double>         ? CountType::Double
                  : std::is_same_v<T, float>        ? CountType::Float
                  : std::is_same_v<T, std::int64_t> ? CountType::Int64
                                                    : CountType::Int32;
  using Mem = typename View::memory_space;
  r.host_accessible_ = Kokkos::SpaceAccessibility<Kokkos::HostSpace, Mem>::accessible;
  r.device_accessible_ = Kokkos::SpaceAccessibility<Kokkos::DefaultExecutionSpace, Mem>::accessible;
  return r;
}

/// Which kernel runs a pass.
enum class Algorithm {
  Auto,         ///< the fastest measured for the backend and size (docs/PERFORMANCE.md)
  RangeReduce,  ///< Kokkos::parallel_reduce (parallel_for for element-wise passes) over a RangePolicy: the portable
                ///< reference path
  TeamScratch,  ///< TeamPolicy kernel: tree reduction in team scratch, the last team combines, one launch
  Native        ///< CUDA: the team kernel's work as a CUDA kernel launched on the instance's stream (warp shuffles,
                ///< programmatic dependent launch); TeamScratch on other backends
};

/// Algorithm::Auto fixed at compile time, for the family's non-blocking passes (softmargin::auto_only in place of an
/// Algorithm): such a call compiles the kernels of the backend's Auto alone, where a run-time Algorithm compiles those
/// of every algorithm (the PyTorch operators use it: one algorithm's kernels of three).
struct AutoOnly {};
inline constexpr AutoOnly auto_only{};

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

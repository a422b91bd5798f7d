// SoftMargin: the option types of the public API (documented in SoftMargin.hpp).
#ifndef SOFTMARGIN_IMPL_TYPES_HPP
#define SOFTMARGIN_IMPL_TYPES_HPP

#include <stdexcept>
#include <string>

namespace softmargin {

/// How the element-wise losses are reduced, as torch.nn.SoftMarginLoss(reduction=...).
enum class Reduction {
  None,  ///< one loss per element, in an output View of x's shape
  Sum,   ///< sum of the losses (0 for an empty input)
  Mean   ///< sum / N (NaN for an empty input, as in PyTorch)
};

/// Which kernel computes a reduction.
enum class Algorithm {
  Auto,         ///< the fastest measured for the backend and size (see docs/PERFORMANCE.md)
  RangeReduce,  ///< Kokkos::parallel_reduce of a functor over a RangePolicy: the portable reference path
  TeamScratch,  ///< TeamPolicy kernel: tree reduction in team scratch, last team combines, one launch
  Native        ///< the team kernel's work as a CUDA kernel launched directly on the instance's stream (warp
                ///< shuffles; the lowest per-call overhead); TeamScratch on backends other than CUDA
};

inline const char* to_string(Reduction r) {
  switch (r) {
    case Reduction::None: return "none";
    case Reduction::Sum: return "sum";
    case Reduction::Mean: return "mean";
  }
  return "invalid";
}

inline const char* to_string(Algorithm a) {
  switch (a) {
    case Algorithm::Auto: return "auto";
    case Algorithm::RangeReduce: return "range_reduce";
    case Algorithm::TeamScratch: return "team_scratch";
    case Algorithm::Native: return "native";
  }
  return "invalid";
}

namespace Impl {

inline void check_reduction(const char* where, Reduction r) {
  if (r != Reduction::None && r != Reduction::Sum && r != Reduction::Mean) {
    throw std::invalid_argument(std::string(where) + ": reduction has the invalid value " +
                                std::to_string(static_cast<int>(r)) + " (expected None, Sum or Mean)");
  }
}

inline void check_algorithm(const char* where, Algorithm a) {
  if (a != Algorithm::Auto && a != Algorithm::RangeReduce && a != Algorithm::TeamScratch && a != Algorithm::Native) {
    throw std::invalid_argument(std::string(where) + ": algorithm has the invalid value " +
                                std::to_string(static_cast<int>(a)) +
                                " (expected Auto, RangeReduce, TeamScratch or Native)");
  }
}

}  // namespace Impl
}  // namespace softmargin

#endif

// SoftMargin: from a public call to a kernel. Checks the arguments at run time, chooses flat or strided canonical
// views, builds the element op, resolves the algorithm and hands the op to the Reduce or Map launcher, which runs it
// on Backend<Exec> (Native; SoftMargin_Hardware.hpp) or on the portable backend. The launchers are what the library
// compiles once (the generated SoftMargin_ETI.hpp).
#ifndef SOFTMARGIN_IMPL_DISPATCH_HPP
#define SOFTMARGIN_IMPL_DISPATCH_HPP

#include <Kokkos_Core.hpp>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "../SoftMargin_Types.hpp"
#include "SoftMargin_Checks.hpp"
#include "SoftMargin_Hardware.hpp"
#include "SoftMargin_Kokkos.hpp"
#include "SoftMargin_Ops.hpp"
#include "SoftMargin_Views.hpp"
#include "SoftMargin_Workspace.hpp"

namespace softmargin::Impl {

/// A Kokkos Tools region over a public call, pushed only while a tool is loaded (Kokkos' ScopedRegion builds a
/// std::string on every call even when no tool listens).
class ToolsRegion {
 public:
  explicit ToolsRegion(const char* name) : active_(Kokkos::Tools::profileLibraryLoaded()) {
    if (active_) Kokkos::Profiling::pushRegion(name);
  }
  ~ToolsRegion() {
    if (active_) Kokkos::Profiling::popRegion();
  }
  ToolsRegion(const ToolsRegion&) = delete;
  ToolsRegion& operator=(const ToolsRegion&) = delete;

 private:
  bool active_;
};

/// What Algorithm::Auto means: the backend's native kernels where it has them (CUDA: one launch at the cost of a
/// CUDA launch), else the team kernel (hosts: each thread streams one contiguous block in vectorized packs).
/// Algorithm::Native is the team kernel where there is no native one.
template <class Exec>
Algorithm resolve(Algorithm a) {
  if (a == Algorithm::Auto) return Backend<Exec>::has_native ? Algorithm::Native : Algorithm::TeamScratch;
  if (a == Algorithm::Native && !Backend<Exec>::has_native) return Algorithm::TeamScratch;
  return a;
}

/// 32-bit indices while every index a kernel forms (up to n plus one grid stride) fits, else 64-bit.
inline bool fits_int32(std::size_t n) { return n <= static_cast<std::size_t>(INT_MAX / 2); }

/// What a reduction over n elements divides its sum by: N (mean), 1 (sum) or the caller's count (mean_over).
template <class A>
Divisor<A> divisor_of(const ReduceBy& r, std::size_t n) {
  if (r.has_count())
    return r.count_data() != nullptr ? Divisor<A>{A(1), r.count_data(), r.count_type()} : Divisor<A>{A(r.count())};
  return Divisor<A>{r.reduction() == Reduction::Mean ? static_cast<A>(n) : A(1)};
}

// ---------------------------------------------------------------------------------------------------------------
// Launchers: the class templates that src/ instantiates explicitly.

/// Sum (or mean) of a reduce or fused Op over n elements into the rank-0 View result.
template <class Exec, class Op, class RV>
struct Reduce {
  static void run(const Exec& space, const Op& op, std::size_t n, const RV& result, const ReduceBy& reduction,
                  Algorithm algorithm);
  /// Algorithm::Auto, the only one compiled (AutoOnly).
  static void run(const Exec& space, const Op& op, std::size_t n, const RV& result, const ReduceBy& reduction,
                  AutoOnly algorithm);

 private:
  template <class Alg>
  static void run_with(const Exec& space, const Op& op, std::size_t n, const RV& result, const ReduceBy& reduction,
                       Alg algorithm);
  template <class Index, class Alg>
  static void dispatch(const Exec& space, const Op& op, std::size_t n, const RV& result,
                       const Divisor<typename Op::accum_type>& divisor, Alg algorithm) {
    if constexpr (std::is_same_v<Alg, AutoOnly>) {
      if constexpr (Backend<Exec>::has_native)
        Backend<Exec>::template reduce<Index>(space, op, n, result, divisor);
      else
        KokkosBackend::reduce_team<Index>(space, op, n, result, divisor);
    } else {
      const Algorithm a = resolve<Exec>(algorithm);
      if constexpr (Backend<Exec>::has_native) {
        if (a == Algorithm::Native) return Backend<Exec>::template reduce<Index>(space, op, n, result, divisor);
      }
      if (a == Algorithm::TeamScratch)
        KokkosBackend::reduce_team<Index>(space, op, n, result, divisor);
      else
        KokkosBackend::reduce_range<Index>(space, op, n, result, divisor);
    }
  }
};

/// A map Op applied to each of n elements.
template <class Exec, class Op>
struct Map {
  static void run(const Exec& space, const Op& op, std::size_t n, Algorithm algorithm);
  /// Algorithm::Auto, the only one compiled (AutoOnly).
  static void run(const Exec& space, const Op& op, std::size_t n, AutoOnly algorithm);

 private:
  template <class Alg>
  static void run_with(const Exec& space, const Op& op, std::size_t n, Alg algorithm) {
    if (n == 0) return;
    if (fits_int32(n))
      dispatch<int>(space, op, n, algorithm);
    else
      dispatch<std::int64_t>(space, op, n, algorithm);
  }
  template <class Index, class Alg>
  static void dispatch(const Exec& space, const Op& op, std::size_t n, Alg algorithm) {
    if constexpr (std::is_same_v<Alg, AutoOnly>) {
      if constexpr (Backend<Exec>::has_native)
        Backend<Exec>::template map<Index>(space, op, n);
      else
        KokkosBackend::map_team<Index>(space, op, n);
    } else {
      const Algorithm a = resolve<Exec>(algorithm);
      if constexpr (Backend<Exec>::has_native) {
        if (a == Algorithm::Native) return Backend<Exec>::template map<Index>(space, op, n);
      }
      if (a == Algorithm::TeamScratch)
        KokkosBackend::map_team<Index>(space, op, n);
      else
        KokkosBackend::map_range<Index>(space, op, n);
    }
  }
};

// The entries are defined out of the class, so not inline: where SoftMargin_ETI.hpp declares an instantiation
// `extern`, a caller's translation unit compiles no kernel of it (an inline member would be instantiated anyway for
// inlining, and with it every kernel beneath).
template <class Exec, class Op, class RV>
void Reduce<Exec, Op, RV>::run(const Exec& space, const Op& op, std::size_t n, const RV& result,
                               const ReduceBy& reduction, Algorithm algorithm) {
  run_with(space, op, n, result, reduction, algorithm);
}
template <class Exec, class Op, class RV>
void Reduce<Exec, Op, RV>::run(const Exec& space, const Op& op, std::size_t n, const RV& result,
                               const ReduceBy& reduction, AutoOnly algorithm) {
  run_with(space, op, n, result, reduction, algorithm);
}
template <class Exec, class Op, class RV>
template <class Alg>
void Reduce<Exec, Op, RV>::run_with(const Exec& space, const Op& op, std::size_t n, const RV& result,
                                    const ReduceBy& reduction, Alg algorithm) {
  using A = typename Op::accum_type;
  if (n == 0) {  // sum of nothing is 0 (also over a caller's count); mean of nothing is 0/0 = NaN, as in PyTorch
    const A empty = reduction.reduction() == Reduction::Mean ? A(0) / A(0) : A(0);
    Kokkos::deep_copy(space, result, round_to<typename RV::non_const_value_type>(empty));
    return;
  }
  auto divisor = divisor_of<A>(reduction, n);
  Op scaled = op;
  if constexpr (decltype(op.sum_scale)::enabled) {
    if (reduction.has_count() || reduction.reduction() == Reduction::Mean) {               // a mean: scaled (SumScale)
      scaled.sum_scale.factor = std::ldexp(1.0, -std::ilogb(static_cast<double>(n)) - 1);  // 2^-k, 2^k > n
      divisor.value *= scaled.sum_scale.factor;
      divisor.count_scale = scaled.sum_scale.factor;
    }
  }
  if (fits_int32(n))
    dispatch<int>(space, scaled, n, result, divisor, algorithm);
  else
    dispatch<std::int64_t>(space, scaled, n, result, divisor, algorithm);
}

template <class Exec, class Op>
void Map<Exec, Op>::run(const Exec& space, const Op& op, std::size_t n, Algorithm algorithm) {
  run_with(space, op, n, algorithm);
}
template <class Exec, class Op>
void Map<Exec, Op>::run(const Exec& space, const Op& op, std::size_t n, AutoOnly algorithm) {
  run_with(space, op, n, algorithm);
}

/// Whether the library holds the compiled passes of backend Exec for x of type X and targets of type Y: the generated
/// SoftMargin_ETI.hpp specializes it for each combination it declares. Any other combination compiles in the caller.
template <class Exec, class X, class Y>
struct eti_spec_avail : std::false_type {};

/// A blocking call's result: fn(result View) enqueues the pass, then space is fenced and the value returned.
template <class T, class Exec, class F>
T blocking(const Exec& space, const F& fn, const char* fence_label) {
  auto slot = HostResult<Exec, T>::acquire(space);
  fn(slot->value);
  space.fence(fence_label);
  return slot->value();
}

}  // namespace softmargin::Impl

#endif

// SoftMargin: from a public call to a kernel. Checks the arguments at run time, chooses flat or strided canonical
// views, builds the element op, resolves the algorithm and hands the op to the Reduce or Map launcher, which runs it
// on Backend<Exec> (Native; SoftMargin_Hardware.hpp) or on the portable backend. The launchers are what the library
// compiles once (the generated SoftMargin_ETI.hpp).
#ifndef SOFTMARGIN_IMPL_DISPATCH_HPP
#define SOFTMARGIN_IMPL_DISPATCH_HPP

#include <Kokkos_Core.hpp>
#include <climits>
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

// ---------------------------------------------------------------------------------------------------------------
// Launchers: the class templates that src/ instantiates explicitly.

/// Sum (or mean) of a reduce or fused Op over n elements into the rank-0 View result.
template <class Exec, class Op, class RV>
struct Reduce {
  static void run(const Exec& space, const Op& op, std::size_t n, const RV& result, Reduction reduction,
                  Algorithm algorithm);

 private:
  template <class Index>
  static void dispatch(const Exec& space, const Op& op, std::size_t n, const RV& result,
                       typename Op::accum_type divisor, Algorithm a) {
    if constexpr (Backend<Exec>::has_native) {
      if (a == Algorithm::Native) return Backend<Exec>::template reduce<Index>(space, op, n, result, divisor);
    }
    if (a == Algorithm::TeamScratch)
      KokkosBackend::reduce_team<Index>(space, op, n, result, divisor);
    else
      KokkosBackend::reduce_range<Index>(space, op, n, result, divisor);
  }
};

/// A map Op applied to each of n elements.
template <class Exec, class Op>
struct Map {
  static void run(const Exec& space, const Op& op, std::size_t n, Algorithm algorithm);

 private:
  template <class Index>
  static void dispatch(const Exec& space, const Op& op, std::size_t n, Algorithm a) {
    if constexpr (Backend<Exec>::has_native) {
      if (a == Algorithm::Native) return Backend<Exec>::template map<Index>(space, op, n);
    }
    if (a == Algorithm::TeamScratch)
      KokkosBackend::map_team<Index>(space, op, n);
    else
      KokkosBackend::map_range<Index>(space, op, n);
  }
};

// The entries are defined out of the class, so not inline: where SoftMargin_ETI.hpp declares an instantiation
// `extern`, a caller's translation unit compiles no kernel of it (an inline member would be instantiated anyway for
// inlining, and with it every kernel beneath).
template <class Exec, class Op, class RV>
void Reduce<Exec, Op, RV>::run(const Exec& space, const Op& op, std::size_t n, const RV& result, Reduction reduction,
                               Algorithm algorithm) {
  using A = typename Op::accum_type;
  if (n == 0) {  // sum of nothing is 0; mean of nothing is 0/0 = NaN, as in PyTorch
    const A empty = reduction == Reduction::Mean ? A(0) / A(0) : A(0);
    Kokkos::deep_copy(space, result, round_to<typename RV::non_const_value_type>(empty));
    return;
  }
  const A divisor = reduction == Reduction::Mean ? static_cast<A>(n) : A(1);
  if (fits_int32(n))
    dispatch<int>(space, op, n, result, divisor, resolve<Exec>(algorithm));
  else
    dispatch<std::int64_t>(space, op, n, result, divisor, resolve<Exec>(algorithm));
}

template <class Exec, class Op>
void Map<Exec, Op>::run(const Exec& space, const Op& op, std::size_t n, Algorithm algorithm) {
  if (n == 0) return;
  if (fits_int32(n))
    dispatch<int>(space, op, n, resolve<Exec>(algorithm));
  else
    dispatch<std::int64_t>(space, op, n, resolve<Exec>(algorithm));
}

// ---------------------------------------------------------------------------------------------------------------
// The passes, after the public overloads' static checks.

/// Runs f.template operator()<Flat>() with Flat true when every view maps logical element i to data()[i] in one
/// common order (rank-1 canonical views, packs), else false (strided views of the original rank).
template <class F, class... Views>
void with_flat_or_strided(const F& f, const Views&... views) {
  if (flat_compatible(views...))
    f.template operator()<true>();
  else
    f.template operator()<false>();
}

/// A scalar upstream gradient (host value or rank-0 View) as a ScalarUpstream in the compute type C, divided by N
/// for the mean.
template <class Exec, class C, class Upstream>
auto scalar_upstream(const Upstream& g, std::size_t n, Reduction reduction) {
  using A = accum_t<C>;
  const A divisor = reduction == Reduction::Mean ? static_cast<A>(n) : A(1);
  if constexpr (Kokkos::is_view_v<Upstream>) {
    using UV = ScalarView<const storage_t<value_t<Upstream>>, Exec, typename Upstream::memory_space>;
    return ScalarUpstream<UV, C>{UV(reinterpret_cast<typename UV::const_value_type*>(g.data())), A(0), divisor};
  } else {
    using UV = ScalarView<const C, Exec>;
    return ScalarUpstream<UV, C>{UV(nullptr), static_cast<A>(g), divisor};
  }
}

template <class Exec, class XView, class YView, class OutView>
void loss(const Exec& space, const XView& x, const YView& y, const OutView& out, Reduction reduction,
          Algorithm algorithm) {
  constexpr const char* where = "softmargin::loss";
  check_inputs(where, reduction, algorithm, x, y);
  check_reduced_or_elementwise(where, "out", reduction, out, x);
  if constexpr (OutView::rank() == 0) {
    check_allocated(where, "out", out);
    check_alias(where, "out", out, "x", x);
    check_alias(where, "out", out, "y", y);
  } else {
    check_elementwise_output(where, "out", out, x, y);
  }

  ToolsRegion region(where);
  const auto run = [&]<bool Flat>() {
    auto xc = canonical<Exec, Flat, true>(x);
    auto yc = canonical<Exec, Flat, true>(y);
    auto oc = canonical<Exec, Flat, false>(out);
    if constexpr (OutView::rank() == 0) {
      using Op = LossOp<decltype(xc), decltype(yc)>;
      Reduce<Exec, Op, decltype(oc)>::run(space, Op{xc, yc}, x.size(), oc, reduction, algorithm);
    } else {
      using Op = LossNoneOp<decltype(xc), decltype(yc), decltype(oc)>;
      Map<Exec, Op>::run(space, Op{xc, yc, oc}, x.size(), algorithm);
    }
  };
  if constexpr (OutView::rank() == 0)
    with_flat_or_strided(run, x, y);
  else
    with_flat_or_strided(run, x, y, out);
}

template <class Exec, class XView, class YView, class Upstream, class GradView>
void backward(const Exec& space, const XView& x, const YView& y, const Upstream& grad_loss, const GradView& grad_x,
              Reduction reduction, Algorithm algorithm) {
  constexpr const char* where = "softmargin::backward";
  constexpr bool per_element = [] {
    if constexpr (Kokkos::is_view_v<Upstream>)
      return Upstream::rank() != 0;
    else
      return false;
  }();
  check_inputs(where, reduction, algorithm, x, y);
  check_elementwise_output(where, "grad_x", grad_x, x, y);
  if constexpr (Kokkos::is_view_v<Upstream>) {
    check_reduced_or_elementwise(where, "grad_loss", reduction, grad_loss, x);
    check_allocated(where, "grad_loss", grad_loss);
    check_alias(where, "grad_x", grad_x, "grad_loss", grad_loss);
  } else if (reduction == Reduction::None) {
    throw std::invalid_argument(
        "softmargin::backward: reduction none needs grad_loss as a View of x's shape, but it is a scalar");
  }

  using C = compute_t<value_t<XView>>;
  ToolsRegion region(where);
  const auto run = [&]<bool Flat>() {
    auto xc = canonical<Exec, Flat, true>(x);
    auto yc = canonical<Exec, Flat, true>(y);
    auto gc = canonical<Exec, Flat, false>(grad_x);
    if constexpr (per_element) {
      auto uc = canonical<Exec, Flat, true>(grad_loss);
      using Op = GradOp<decltype(xc), decltype(yc), decltype(gc), decltype(uc)>;
      Map<Exec, Op>::run(space, Op{xc, yc, gc, uc}, x.size(), algorithm);
    } else {
      const auto up = scalar_upstream<Exec, C>(grad_loss, x.size(), reduction);
      using Op = GradOp<decltype(xc), decltype(yc), decltype(gc), decltype(up.view)>;
      Map<Exec, Op>::run(space, Op{xc, yc, gc, up}, x.size(), algorithm);
    }
  };
  if constexpr (per_element)
    with_flat_or_strided(run, x, y, grad_x, grad_loss);
  else
    with_flat_or_strided(run, x, y, grad_x);
}

template <class Exec, class XView, class YView, class LossView, class GradView, class Upstream>
void loss_and_grad(const Exec& space, const XView& x, const YView& y, const LossView& loss_out, const GradView& grad_x,
                   Reduction reduction, const Upstream& grad_loss, Algorithm algorithm) {
  constexpr const char* where = "softmargin::loss_and_grad";
  check_inputs(where, reduction, algorithm, x, y);
  if (reduction == Reduction::None)
    throw std::invalid_argument(
        "softmargin::loss_and_grad: reduction none has no scalar loss; use loss() and backward()");
  check_allocated(where, "loss_out", loss_out);
  check_elementwise_output(where, "grad_x", grad_x, x, y);
  check_alias(where, "loss_out", loss_out, "x", x);
  check_alias(where, "loss_out", loss_out, "y", y);
  check_alias(where, "loss_out", loss_out, "grad_x", grad_x);
  if constexpr (Kokkos::is_view_v<Upstream>) {
    check_allocated(where, "grad_loss", grad_loss);
    check_alias(where, "grad_x", grad_x, "grad_loss", grad_loss);
    check_alias(where, "loss_out", loss_out, "grad_loss", grad_loss);
  }

  using C = compute_t<value_t<XView>>;
  ToolsRegion region(where);
  const auto up = scalar_upstream<Exec, C>(grad_loss, x.size(), reduction);
  const auto run = [&]<bool Flat>() {
    auto xc = canonical<Exec, Flat, true>(x);
    auto yc = canonical<Exec, Flat, true>(y);
    auto gc = canonical<Exec, Flat, false>(grad_x);
    auto lc = canonical<Exec, Flat, false>(loss_out);
    using Op = LossGradOp<decltype(xc), decltype(yc), decltype(gc), decltype(up.view)>;
    Reduce<Exec, Op, decltype(lc)>::run(space, Op{xc, yc, gc, up}, x.size(), lc, reduction, algorithm);
  };
  with_flat_or_strided(run, x, y, grad_x);
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

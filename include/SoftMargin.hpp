// SoftMargin: torch.nn.SoftMarginLoss on Kokkos, fused and numerically stable.
//
//   loss_i = log(1 + exp(-y_i x_i)),  reduction none | sum | mean (mean = sum / N)
//   d loss_i / d x_i = -y_i sigmoid(-y_i x_i)
//
// This is the library's one public header.
#ifndef SOFTMARGIN_HPP
#define SOFTMARGIN_HPP

#include <Kokkos_Core.hpp>

#include <stdexcept>
#include <string>
#include <type_traits>

#include "SoftMargin_Config.hpp"
#include "impl/SoftMargin_ETI.hpp"
#include "impl/SoftMargin_Kernels.hpp"
#include "impl/SoftMargin_Ops.hpp"
#include "impl/SoftMargin_Types.hpp"
#include "impl/SoftMargin_Views.hpp"
#include "impl/SoftMargin_Workspace.hpp"

namespace softmargin {

namespace Impl {

template <class ExecSpace, class XView, class YView>
constexpr void static_check_inputs() {
  static_assert(Kokkos::is_execution_space_v<ExecSpace>, "softmargin: the first argument must be a Kokkos execution space");
  static_assert(Kokkos::is_view_v<XView>, "softmargin: x must be a Kokkos::View");
  static_assert(Kokkos::is_view_v<YView>, "softmargin: y must be a Kokkos::View");
  static_assert(XView::rank() >= 1, "softmargin: x must be a View of rank 1 or more");
  static_assert(XView::rank() == YView::rank(), "softmargin: x and y must have the same rank");
  static_assert(std::is_floating_point_v<typename XView::non_const_value_type>,
                "softmargin: x must hold a floating-point type");
  static_assert(std::is_same_v<typename XView::non_const_value_type, typename YView::non_const_value_type>,
                "softmargin: x and y must hold the same value type");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename XView::memory_space>::accessible,
                "softmargin: x's memory space is not accessible from the execution space");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename YView::memory_space>::accessible,
                "softmargin: y's memory space is not accessible from the execution space");
}

/// An output View: writable, of x's value type, accessible from the execution space, of rank 0 or x's rank.
template <class ExecSpace, class XView, class OutView>
constexpr void static_check_output() {
  static_assert(Kokkos::is_view_v<OutView>, "softmargin: outputs must be Kokkos::Views");
  static_assert(!std::is_const_v<typename OutView::value_type>, "softmargin: an output View must not be const");
  static_assert(std::is_same_v<typename OutView::non_const_value_type, typename XView::non_const_value_type>,
                "softmargin: an output View must hold x's value type");
  static_assert(OutView::rank() == 0 || OutView::rank() == XView::rank(),
                "softmargin: an output View must be of rank 0 (a reduced loss) or of x's rank");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename OutView::memory_space>::accessible,
                "softmargin: an output View's memory space is not accessible from the execution space");
}

/// A scalar upstream gradient (host value or rank-0 View) as the op's ScalarUpstream.
template <class ExecSpace, class T, class Upstream>
auto scalar_upstream(const Upstream& g, std::size_t n, Reduction reduction) {
  using A = accum_t<T>;
  const A divisor = reduction == Reduction::Mean ? static_cast<A>(n) : A(1);
  if constexpr (Kokkos::is_view_v<Upstream>) {
    using UV = ScalarView<const T, ExecSpace, typename Upstream::memory_space>;
    return ScalarUpstream<UV>{UV(g.data()), A(0), divisor};
  } else {
    using UV = ScalarView<const T, ExecSpace>;
    return ScalarUpstream<UV>{UV(nullptr), static_cast<A>(g), divisor};
  }
}

template <class Upstream>
constexpr bool is_scalar_upstream_v = std::is_arithmetic_v<Upstream> || Kokkos::is_view_v<Upstream>;

template <class ExecSpace, class XView, class Upstream>
constexpr void static_check_upstream() {
  if constexpr (Kokkos::is_view_v<Upstream>) {
    static_assert(Upstream::rank() == 0 || Upstream::rank() == XView::rank(),
                  "softmargin: the upstream gradient must be a host scalar, a rank-0 View, or a View of x's rank");
    static_assert(std::is_same_v<typename Upstream::non_const_value_type, typename XView::non_const_value_type>,
                  "softmargin: the upstream gradient View must hold x's value type");
    static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename Upstream::memory_space>::accessible,
                  "softmargin: the upstream gradient's memory space is not accessible from the execution space");
  } else {
    static_assert(std::is_arithmetic_v<Upstream>,
                  "softmargin: the upstream gradient must be a host scalar, a rank-0 View, or a View of x's rank");
  }
}

template <class XView, class YView>
void check_inputs(const char* where, Reduction reduction, Algorithm algorithm, const XView& x, const YView& y) {
  check_reduction(where, reduction);
  check_algorithm(where, algorithm);
  check_allocated(where, "x", x);
  check_allocated(where, "y", y);
  check_same_shape(where, "x", x, "y", y);
}

template <class OutView, class XView>
void check_reduced_or_elementwise(const char* where, const char* name, Reduction reduction, const OutView& out,
                                  const XView& x) {
  if constexpr (OutView::rank() == 0) {
    if (reduction == Reduction::None)
      throw std::invalid_argument(std::string(where) + ": reduction none needs " + name +
                                  " of x's shape, but it is a rank-0 View");
  } else {
    if (reduction != Reduction::None)
      throw std::invalid_argument(std::string(where) + ": reduction " + to_string(reduction) + " needs a rank-0 " +
                                  name + ", but it has x's rank (use Reduction::None)");
    check_same_shape(where, "x", x, name, out);
  }
}

}  // namespace Impl

// =================================================================================================================
// Forward

/// \brief SoftMarginLoss of x against targets y, written to out, without blocking.
///
/// Computes loss_i = log(1 + exp(-y_i x_i)) stably as softplus(-y_i x_i) in one fused pass, and
///  - reduction None: writes loss_i into out, a View of x's shape (any layout; out may be x or y itself);
///  - reduction Sum or Mean: reduces in the same pass (accumulating in double) into out, a rank-0 View.
///    The mean of an empty input is NaN and the sum 0, as in PyTorch.
/// The kernels are enqueued on `space` and the call returns without fencing.
///
/// \param space execution space instance that runs the kernels
/// \param x input View of rank >= 1, float or double, any layout, accessible from space
/// \param y targets, a View of x's shape and value type (typically +-1; real values are used as given)
/// \param out rank-0 View (Sum, Mean) or View of x's shape (None), accessible from space
/// \param reduction None, Sum or Mean (default Mean, as PyTorch)
/// \param algorithm kernel (default Auto)
/// \throws std::invalid_argument, before anything is launched or written: a View is not allocated; y's or out's
///   extents differ from x's; out's rank does not suit the reduction; out overlaps x or y other than in place;
///   reduction or algorithm is not one of the enumerators.
template <class ExecSpace, class XView, class YView, class OutView>
  requires(Kokkos::is_execution_space_v<ExecSpace> && Kokkos::is_view_v<OutView>)
void loss(const ExecSpace& space, const XView& x, const YView& y, const OutView& out,
          Reduction reduction = Reduction::Mean, Algorithm algorithm = Algorithm::Auto) {
  Impl::static_check_inputs<ExecSpace, XView, YView>();
  Impl::static_check_output<ExecSpace, XView, OutView>();
  constexpr const char* where = "softmargin::loss";
  Impl::check_inputs(where, reduction, algorithm, x, y);
  Impl::check_allocated(where, "out", out);
  Impl::check_reduced_or_elementwise(where, "out", reduction, out, x);
  Impl::check_alias(where, "out", out, "x", x, y);
  Impl::check_alias(where, "out", out, "y", y, x);

  using T = typename XView::non_const_value_type;
  Impl::ToolsRegion region(where);
  const auto run = [&]<bool Flat>() {
    auto xc = Impl::canonical<ExecSpace, Flat, const T>(x);
    auto yc = Impl::canonical<ExecSpace, Flat, const T>(y);
    auto oc = Impl::canonical<ExecSpace, Flat, T>(out);
    if constexpr (OutView::rank() == 0) {
      using Op = Impl::LossOp<decltype(xc), decltype(yc)>;
      Impl::Reduce<ExecSpace, Op, decltype(oc)>::run(space, Op{xc, yc}, x.size(), oc, reduction, algorithm);
    } else {
      using Op = Impl::LossNoneOp<decltype(xc), decltype(yc), decltype(oc)>;
      Impl::Map<ExecSpace, Op>::run(space, Op{xc, yc, oc}, x.size(), algorithm);
    }
  };
  const bool flat = OutView::rank() == 0 ? Impl::flat_compatible(x, y) : Impl::flat_compatible(x, y, out);
  if (flat) run.template operator()<true>();
  else run.template operator()<false>();
}

/// \brief As loss(space, x, y, out, ...) on a default instance of x's execution space.
template <class XView, class YView, class OutView>
  requires(Kokkos::is_view_v<XView> && Kokkos::is_view_v<OutView>)
void loss(const XView& x, const YView& y, const OutView& out, Reduction reduction = Reduction::Mean,
          Algorithm algorithm = Algorithm::Auto) {
  loss(typename XView::execution_space(), x, y, out, reduction, algorithm);
}

/// \brief SoftMarginLoss of x against y reduced to a host scalar (Sum or Mean); blocks until it is ready.
///
/// Same computation and checks as the non-blocking form; the device writes the value to host-pinned memory and
/// `space` is fenced before it is returned.
template <class ExecSpace, class XView, class YView>
  requires(Kokkos::is_execution_space_v<ExecSpace> && Kokkos::is_view_v<XView>)
typename XView::non_const_value_type loss(const ExecSpace& space, const XView& x, const YView& y,
                                          Reduction reduction = Reduction::Mean,
                                          Algorithm algorithm = Algorithm::Auto) {
  using T = typename XView::non_const_value_type;
  Impl::static_check_inputs<ExecSpace, XView, YView>();
  if (reduction == Reduction::None)
    throw std::invalid_argument("softmargin::loss: reduction none gives one loss per element; pass an out View");
  auto slot = Impl::HostResult<ExecSpace, T>::acquire(space);
  loss(space, x, y, slot->value, reduction, algorithm);
  space.fence("softmargin::loss: blocking result");
  return slot->value();
}

/// \brief As loss(space, x, y, ...) on a default instance of x's execution space; blocks.
template <class XView, class YView>
  requires(Kokkos::is_view_v<XView> && Kokkos::is_view_v<YView>)
typename XView::non_const_value_type loss(const XView& x, const YView& y, Reduction reduction = Reduction::Mean,
                                          Algorithm algorithm = Algorithm::Auto) {
  return loss(typename XView::execution_space(), x, y, reduction, algorithm);
}

// =================================================================================================================
// Backward

/// \brief Gradient of SoftMarginLoss with respect to x, without blocking.
///
/// grad_x_i = g_i * (-y_i sigmoid(-y_i x_i)), computed stably (finite at every margin, NaN in gives NaN out), with
///  - reduction Sum: g_i = grad_loss; Mean: g_i = grad_loss / N. grad_loss is a host scalar or a rank-0 View
///    (read on the device, so it may be the output of earlier device work);
///  - reduction None: g_i = grad_loss_i, a View of x's shape.
/// There is no gradient for y (PyTorch gives none either).
///
/// \param grad_loss upstream gradient of the loss (see above)
/// \param grad_x output, a View of x's shape (any layout; it may be x, y or grad_loss itself: in place)
/// \throws std::invalid_argument, before anything is launched or written: as loss(), for grad_x and grad_loss.
template <class ExecSpace, class XView, class YView, class Upstream, class GradView>
  requires(Kokkos::is_execution_space_v<ExecSpace> && Kokkos::is_view_v<GradView>)
void backward(const ExecSpace& space, const XView& x, const YView& y, const Upstream& grad_loss,
              const GradView& grad_x, Reduction reduction = Reduction::Mean, Algorithm algorithm = Algorithm::Auto) {
  Impl::static_check_inputs<ExecSpace, XView, YView>();
  Impl::static_check_output<ExecSpace, XView, GradView>();
  Impl::static_check_upstream<ExecSpace, XView, Upstream>();
  static_assert(GradView::rank() == XView::rank(), "softmargin::backward: grad_x must have x's rank");
  constexpr const char* where = "softmargin::backward";
  Impl::check_inputs(where, reduction, algorithm, x, y);
  Impl::check_allocated(where, "grad_x", grad_x);
  Impl::check_same_shape(where, "x", x, "grad_x", grad_x);
  Impl::check_alias(where, "grad_x", grad_x, "x", x, y);
  Impl::check_alias(where, "grad_x", grad_x, "y", y, x);
  constexpr bool per_element = [] {
    if constexpr (Kokkos::is_view_v<Upstream>) return Upstream::rank() != 0;
    else return false;
  }();
  if constexpr (Kokkos::is_view_v<Upstream>) {
    Impl::check_allocated(where, "grad_loss", grad_loss);
    Impl::check_reduced_or_elementwise(where, "grad_loss", reduction, grad_loss, x);
    if constexpr (per_element) Impl::check_alias(where, "grad_x", grad_x, "grad_loss", grad_loss, x, y);
    else Impl::check_alias(where, "grad_x", grad_x, "grad_loss", grad_loss);
  } else if (reduction == Reduction::None) {
    throw std::invalid_argument(
        "softmargin::backward: reduction none needs grad_loss as a View of x's shape, but it is a scalar");
  }

  using T = typename XView::non_const_value_type;
  Impl::ToolsRegion region(where);
  const auto run = [&]<bool Flat>() {
    auto xc = Impl::canonical<ExecSpace, Flat, const T>(x);
    auto yc = Impl::canonical<ExecSpace, Flat, const T>(y);
    auto gc = Impl::canonical<ExecSpace, Flat, T>(grad_x);
    if constexpr (per_element) {
      auto uc = Impl::canonical<ExecSpace, Flat, const T>(grad_loss);
      using Op = Impl::GradOp<decltype(xc), decltype(yc), decltype(gc), decltype(uc)>;
      Impl::Map<ExecSpace, Op>::run(space, Op{xc, yc, gc, uc}, x.size(), algorithm);
    } else {
      const auto up = Impl::scalar_upstream<ExecSpace, T>(grad_loss, x.size(), reduction);
      using Op = Impl::GradOp<decltype(xc), decltype(yc), decltype(gc), decltype(up.view)>;
      Impl::Map<ExecSpace, Op>::run(space, Op{xc, yc, gc, up}, x.size(), algorithm);
    }
  };
  bool flat;
  if constexpr (per_element) flat = Impl::flat_compatible(x, y, grad_x, grad_loss);
  else flat = Impl::flat_compatible(x, y, grad_x);
  if (flat) run.template operator()<true>();
  else run.template operator()<false>();
}

/// \brief As backward(space, ...) on a default instance of x's execution space.
template <class XView, class YView, class Upstream, class GradView>
  requires(Kokkos::is_view_v<XView> && Kokkos::is_view_v<GradView>)
void backward(const XView& x, const YView& y, const Upstream& grad_loss, const GradView& grad_x,
              Reduction reduction = Reduction::Mean, Algorithm algorithm = Algorithm::Auto) {
  backward(typename XView::execution_space(), x, y, grad_loss, grad_x, reduction, algorithm);
}

// =================================================================================================================
// Fused forward + backward

/// \brief Reduced SoftMarginLoss and its gradient with respect to x in one pass, without blocking.
///
/// One kernel reads x and y once, writes grad_x once and reduces the loss: for a training step whose upstream
/// gradient of the (scalar) loss is known before the loss value, typically 1. Equal to loss() followed by
/// backward() with the same grad_loss, at the memory traffic of backward() alone.
///
/// \param loss_out rank-0 View: the sum or mean of the losses
/// \param grad_x View of x's shape: grad_loss * d loss / d x (grad_loss / N for Mean); may be x or y (in place)
/// \param reduction Sum or Mean (default Mean)
/// \param grad_loss upstream gradient of the loss: a host scalar (default 1) or a rank-0 View
/// \throws std::invalid_argument, before anything is launched or written: as loss() and backward().
template <class ExecSpace, class XView, class YView, class LossView, class GradView,
          class Upstream = typename XView::non_const_value_type>
  requires(Kokkos::is_execution_space_v<ExecSpace> && Kokkos::is_view_v<LossView> && Kokkos::is_view_v<GradView>)
void loss_and_grad(const ExecSpace& space, const XView& x, const YView& y, const LossView& loss_out,
                   const GradView& grad_x, Reduction reduction = Reduction::Mean, const Upstream& grad_loss = Upstream(1),
                   Algorithm algorithm = Algorithm::Auto) {
  Impl::static_check_inputs<ExecSpace, XView, YView>();
  Impl::static_check_output<ExecSpace, XView, LossView>();
  Impl::static_check_output<ExecSpace, XView, GradView>();
  Impl::static_check_upstream<ExecSpace, XView, Upstream>();
  static_assert(LossView::rank() == 0, "softmargin::loss_and_grad: loss_out must be a rank-0 View");
  static_assert(GradView::rank() == XView::rank(), "softmargin::loss_and_grad: grad_x must have x's rank");
  if constexpr (Kokkos::is_view_v<Upstream>)
    static_assert(Upstream::rank() == 0, "softmargin::loss_and_grad: grad_loss must be a scalar or a rank-0 View");
  constexpr const char* where = "softmargin::loss_and_grad";
  Impl::check_inputs(where, reduction, algorithm, x, y);
  if (reduction == Reduction::None)
    throw std::invalid_argument(
        "softmargin::loss_and_grad: reduction none has no scalar loss; use loss() and backward()");
  Impl::check_allocated(where, "loss_out", loss_out);
  Impl::check_allocated(where, "grad_x", grad_x);
  Impl::check_same_shape(where, "x", x, "grad_x", grad_x);
  Impl::check_alias(where, "grad_x", grad_x, "x", x, y);
  Impl::check_alias(where, "grad_x", grad_x, "y", y, x);
  Impl::check_alias(where, "loss_out", loss_out, "x", x);
  Impl::check_alias(where, "loss_out", loss_out, "y", y);
  Impl::check_alias(where, "loss_out", loss_out, "grad_x", grad_x);
  if constexpr (Kokkos::is_view_v<Upstream>) {
    Impl::check_allocated(where, "grad_loss", grad_loss);
    Impl::check_alias(where, "grad_x", grad_x, "grad_loss", grad_loss);
    Impl::check_alias(where, "loss_out", loss_out, "grad_loss", grad_loss);
  }

  using T = typename XView::non_const_value_type;
  Impl::ToolsRegion region(where);
  const auto up = Impl::scalar_upstream<ExecSpace, T>(grad_loss, x.size(), reduction);
  const auto run = [&]<bool Flat>() {
    auto xc = Impl::canonical<ExecSpace, Flat, const T>(x);
    auto yc = Impl::canonical<ExecSpace, Flat, const T>(y);
    auto gc = Impl::canonical<ExecSpace, Flat, T>(grad_x);
    auto lc = Impl::canonical<ExecSpace, Flat, T>(loss_out);
    using Op = Impl::LossGradOp<decltype(xc), decltype(yc), decltype(gc), decltype(up.view)>;
    Impl::Reduce<ExecSpace, Op, decltype(lc)>::run(space, Op{xc, yc, gc, up}, x.size(), lc, reduction, algorithm);
  };
  if (Impl::flat_compatible(x, y, grad_x)) run.template operator()<true>();
  else run.template operator()<false>();
}

/// \brief As loss_and_grad(space, ...) on a default instance of x's execution space.
template <class XView, class YView, class LossView, class GradView,
          class Upstream = typename XView::non_const_value_type>
  requires(Kokkos::is_view_v<XView> && Kokkos::is_view_v<LossView> && Kokkos::is_view_v<GradView>)
void loss_and_grad(const XView& x, const YView& y, const LossView& loss_out, const GradView& grad_x,
                   Reduction reduction = Reduction::Mean, const Upstream& grad_loss = Upstream(1),
                   Algorithm algorithm = Algorithm::Auto) {
  loss_and_grad(typename XView::execution_space(), x, y, loss_out, grad_x, reduction, grad_loss, algorithm);
}

/// \brief Blocking fused pass: writes grad_x and returns the reduced loss as a host scalar.
template <class ExecSpace, class XView, class YView, class GradView,
          class Upstream = typename XView::non_const_value_type>
  requires(Kokkos::is_execution_space_v<ExecSpace> && Kokkos::is_view_v<XView> && Kokkos::is_view_v<GradView>)
typename XView::non_const_value_type loss_and_grad(const ExecSpace& space, const XView& x, const YView& y,
                                                   const GradView& grad_x, Reduction reduction = Reduction::Mean,
                                                   const Upstream& grad_loss = Upstream(1),
                                                   Algorithm algorithm = Algorithm::Auto) {
  using T = typename XView::non_const_value_type;
  Impl::static_check_inputs<ExecSpace, XView, YView>();
  auto slot = Impl::HostResult<ExecSpace, T>::acquire(space);
  loss_and_grad(space, x, y, slot->value, grad_x, reduction, grad_loss, algorithm);
  space.fence("softmargin::loss_and_grad: blocking result");
  return slot->value();
}

}  // namespace softmargin

#endif

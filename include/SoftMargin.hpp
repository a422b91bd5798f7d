// SoftMargin: torch.nn.SoftMarginLoss on Kokkos, fused and numerically stable.
//
//   loss_i = log(1 + exp(-y_i x_i)),  reduction none | sum | mean (mean = sum / N)
//   d loss_i / d x_i = -y_i sigmoid(-y_i x_i)
//
// The library's public header: the options (SoftMargin_Types.hpp) and the three passes. Each overload checks its
// types (a mistake stops at the library's message), then forwards to softmargin::Impl (impl/SoftMargin_Dispatch.hpp),
// which runs the kernels of the hardware rooms (impl/SoftMargin_Rooms.hpp).
#ifndef SOFTMARGIN_HPP
#define SOFTMARGIN_HPP

#include <Kokkos_Core.hpp>
#include <stdexcept>
#include <type_traits>

#include "SoftMargin_Config.hpp"
#include "SoftMargin_Half.hpp"
#include "SoftMargin_Types.hpp"
#include "impl/SoftMargin_Checks.hpp"
#include "impl/SoftMargin_Dispatch.hpp"
#include "impl/SoftMargin_Passes.hpp"
#include "impl/SoftMargin_Rooms.hpp"

// Generated (cmake/SoftMarginETI.cmake): the instantiations the library holds, declared extern.
#include "SoftMargin_ETI.hpp"

namespace softmargin {

// =================================================================================================================
// Forward

/// \brief SoftMarginLoss of x against targets y, written to out, without blocking.
///
/// Computes loss_i = log(1 + exp(-y_i x_i)) stably as softplus(-y_i x_i) in one fused pass, and
///  - reduction None: writes loss_i into out, a View of x's shape;
///  - reduction Sum or Mean: reduces in the same pass (accumulating in double) into out, a rank-0 View.
///    The mean of an empty input is NaN and the sum 0, as in PyTorch.
/// out may hold float, double, bf16 or fp16 (e.g. a double result for float inputs, a bf16 loss per element for bf16
/// inputs): the value is computed in float (double for double x) and rounded to it once.
/// The kernels are enqueued on `space` and the call returns without fencing.
///
/// \param space execution space instance that runs the kernels
/// \param x input View of rank >= 1 of float, double, bf16 or fp16 (softmargin::bf16, softmargin::fp16 or Kokkos'
///   half types; SoftMargin_Half.hpp), any layout (strided subviews too), accessible from space
/// \param y targets, a View of x's shape holding x's value type (typically +-1; real values are used as given),
///   int8_t (used by its value) or bool (true = +1, false = -1); strides of 0 (a broadcast y) are allowed
/// \param out rank-0 View (Sum, Mean) or View of x's shape (None). In place: out may be x or y itself, element for
///   element (the same data, extents and strides); any other overlap with x or y is refused.
/// \param reduction None, Sum or Mean (default Mean, as PyTorch)
/// \param algorithm kernel (default Auto)
/// \throws std::invalid_argument, before anything is launched or written: a non-empty View is not allocated; y's or
///   out's extents differ from x's; out's rank does not suit the reduction; out overlaps x or y other than in place;
///   out has a zero stride; reduction or algorithm is not one of the enumerators.
template <class ExecSpace, class XView, class YView, class OutView>
requires(Kokkos::is_execution_space_v<ExecSpace> &&
         !Impl::is_reduction_arg_v<OutView>) void loss(const ExecSpace& space, const XView& x, const YView& y,
                                                       const OutView& out, ReduceBy reduction = Reduction::Mean,
                                                       Algorithm algorithm = Algorithm::Auto) {
  if constexpr (Impl::check_input_types<ExecSpace, XView, YView>() &&
                Impl::check_loss_output_type<ExecSpace, XView, OutView>())
    Impl::loss_pass(space, Impl::SoftMarginInputs<XView, YView>{x, y, {}}, out, reduction, algorithm);
}

/// \brief As loss(space, x, y, out, ...) on a default instance of x's execution space.
template <class XView, class YView, class OutView>
requires(Kokkos::is_view_v<XView> &&
         !Impl::is_reduction_arg_v<OutView>) void loss(const XView& x, const YView& y, const OutView& out,
                                                       ReduceBy reduction = Reduction::Mean,
                                                       Algorithm algorithm = Algorithm::Auto) {
  loss(typename XView::execution_space(), x, y, out, reduction, algorithm);
}

/// \brief SoftMarginLoss of x against y reduced to a host scalar (Sum or Mean) of x's type (float for 16-bit x);
/// blocks until it is ready.
///
/// Same computation and checks as the non-blocking form; the device writes the value to host-pinned memory and
/// `space` is fenced before it is returned.
template <class ExecSpace, class XView, class YView>
requires(Kokkos::is_execution_space_v<ExecSpace>&& Kokkos::is_view_v<XView>)
    Impl::host_result_t<typename XView::non_const_value_type> loss(const ExecSpace& space, const XView& x,
                                                                   const YView& y, ReduceBy reduction = Reduction::Mean,
                                                                   Algorithm algorithm = Algorithm::Auto) {
  using T = Impl::host_result_t<typename XView::non_const_value_type>;
  if constexpr (Impl::check_input_types<ExecSpace, XView, YView>()) {
    if (reduction.reduction() == Reduction::None)
      throw std::invalid_argument("softmargin::loss: reduction none gives one loss per element; pass an out View");
    return Impl::blocking<T>(
        space,
        [&](const auto& out) {
          Impl::loss_pass(space, Impl::SoftMarginInputs<XView, YView>{x, y, {}}, out, reduction, algorithm);
        },
        "softmargin::loss: blocking result");
  } else {
    return T();
  }
}

/// \brief As loss(space, x, y, ...) on a default instance of x's execution space; blocks.
template <class XView, class YView>
requires(Kokkos::is_view_v<XView>&& Kokkos::is_view_v<YView>)
    Impl::host_result_t<typename XView::non_const_value_type> loss(const XView& x, const YView& y,
                                                                   ReduceBy reduction = Reduction::Mean,
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
/// \param grad_x output, a View of x's shape holding x's value type or float (computed in float, double for double x,
///   and rounded once); in place on x, y or grad_loss element for element
/// \throws std::invalid_argument, before anything is launched or written: as loss(), for grad_x and grad_loss.
template <class ExecSpace, class XView, class YView, class Upstream, class GradView>
requires(Kokkos::is_execution_space_v<ExecSpace> &&
         !Impl::is_reduction_arg_v<GradView>) void backward(const ExecSpace& space, const XView& x, const YView& y,
                                                            const Upstream& grad_loss, const GradView& grad_x,
                                                            ReduceBy reduction = Reduction::Mean,
                                                            Algorithm algorithm = Algorithm::Auto) {
  if constexpr (Impl::check_input_types<ExecSpace, XView, YView>() &&
                Impl::check_grad_type<ExecSpace, XView, GradView>() &&
                Impl::check_upstream_type<ExecSpace, XView, Upstream, true>())
    Impl::backward_pass(space, Impl::SoftMarginInputs<XView, YView>{x, y, {}}, grad_loss, grad_x, reduction, algorithm);
}

/// \brief As backward(space, ...) on a default instance of x's execution space.
template <class XView, class YView, class Upstream, class GradView>
requires(Kokkos::is_view_v<XView> &&
         !Impl::is_reduction_arg_v<GradView>) void backward(const XView& x, const YView& y, const Upstream& grad_loss,
                                                            const GradView& grad_x,
                                                            ReduceBy reduction = Reduction::Mean,
                                                            Algorithm algorithm = Algorithm::Auto) {
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
/// \param loss_out rank-0 View of float, double, bf16 or fp16: the sum or mean of the losses
/// \param grad_x View of x's shape holding x's value type or float: grad_loss * d loss / d x (grad_loss / N for
///   Mean); in place on x or y element for element
/// \param reduction Sum or Mean (default Mean)
/// \param grad_loss upstream gradient of the loss: a host scalar (default 1) or a rank-0 View
/// \throws std::invalid_argument, before anything is launched or written: as loss() and backward().
template <class ExecSpace, class XView, class YView, class LossView, class GradView,
          class Upstream = Impl::host_result_t<typename XView::non_const_value_type>>
requires(Kokkos::is_execution_space_v<ExecSpace>&& Kokkos::is_view_v<LossView> &&
         !Impl::is_reduction_arg_v<GradView>) void loss_and_grad(const ExecSpace& space, const XView& x, const YView& y,
                                                                 const LossView& loss_out, const GradView& grad_x,
                                                                 ReduceBy reduction = Reduction::Mean,
                                                                 const Upstream& grad_loss = Upstream(1),
                                                                 Algorithm algorithm = Algorithm::Auto) {
  if constexpr (Impl::check_input_types<ExecSpace, XView, YView>() &&
                Impl::check_loss_output_type<ExecSpace, XView, LossView>() &&
                Impl::check_grad_type<ExecSpace, XView, GradView>() &&
                Impl::check_upstream_type<ExecSpace, XView, Upstream, false>()) {
    static_assert(LossView::rank() == 0, "softmargin::loss_and_grad: loss_out must be a rank-0 View");
    if constexpr (LossView::rank() == 0)
      Impl::loss_and_grad_pass(space, Impl::SoftMarginInputs<XView, YView>{x, y, {}}, loss_out, grad_x, reduction,
                               grad_loss, algorithm);
  }
}

/// \brief As loss_and_grad(space, ...) on a default instance of x's execution space.
template <class XView, class YView, class LossView, class GradView,
          class Upstream = Impl::host_result_t<typename XView::non_const_value_type>>
requires(Kokkos::is_view_v<XView>&& Kokkos::is_view_v<LossView>&& Kokkos::is_view_v<GradView>) void loss_and_grad(
    const XView& x, const YView& y, const LossView& loss_out, const GradView& grad_x,
    ReduceBy reduction = Reduction::Mean, const Upstream& grad_loss = Upstream(1),
    Algorithm algorithm = Algorithm::Auto) {
  loss_and_grad(typename XView::execution_space(), x, y, loss_out, grad_x, reduction, grad_loss, algorithm);
}

/// \brief Blocking fused pass: writes grad_x and returns the reduced loss as a host scalar of x's type (float for
/// 16-bit x).
template <class ExecSpace, class XView, class YView, class GradView,
          class Upstream = Impl::host_result_t<typename XView::non_const_value_type>>
requires(Kokkos::is_execution_space_v<ExecSpace>&& Kokkos::is_view_v<XView> && !Impl::is_reduction_arg_v<GradView>)
    Impl::host_result_t<typename XView::non_const_value_type> loss_and_grad(const ExecSpace& space, const XView& x,
                                                                            const YView& y, const GradView& grad_x,
                                                                            ReduceBy reduction = Reduction::Mean,
                                                                            const Upstream& grad_loss = Upstream(1),
                                                                            Algorithm algorithm = Algorithm::Auto) {
  using T = Impl::host_result_t<typename XView::non_const_value_type>;
  if constexpr (Impl::check_input_types<ExecSpace, XView, YView>() &&
                Impl::check_grad_type<ExecSpace, XView, GradView>() &&
                Impl::check_upstream_type<ExecSpace, XView, Upstream, false>()) {
    return Impl::blocking<T>(
        space,
        [&](const auto& out) {
          Impl::loss_and_grad_pass(space, Impl::SoftMarginInputs<XView, YView>{x, y, {}}, out, grad_x, reduction,
                                   grad_loss, algorithm);
        },
        "softmargin::loss_and_grad: blocking result");
  } else {
    return T();
  }
}

}  // namespace softmargin

#include "SoftMargin_Family.hpp"  // the rest of the family on the same passes

#endif

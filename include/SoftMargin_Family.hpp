// SoftMargin: the logistic-loss family on the same kernels. A descriptor names a loss and its inputs; the three passes
// take it in place of x and y, with the same outputs, reductions (mean_over included), algorithms and checks:
//
//   softmargin::loss(space, softmargin::bce_with_logits(x, t, weight, pos_weight), out, Reduction::Mean);
//   softmargin::loss_and_grad(space, softmargin::soft_margin(x, y, weight), loss_out, grad_x);
//   softmargin::backward(space, softmargin::pairwise(a, b, 0.5), 1.0, softmargin::grads(grad_a, grad_b));
//
//  - soft_margin(x, y[, weight]): SoftMarginLoss, w_i log(1 + exp(-y_i x_i)).
//  - bce_with_logits(x, t[, weight[, pos_weight]]): BCEWithLogitsLoss, w_i ((1 - t_i) x_i + (1 + (p_i - 1) t_i)
//    softplus(-x_i)); targets of x's type (soft labels in [0, 1]), int8_t (0 or 1) or bool; p the pos_weight.
//  - pairwise(a, b[, margin]): softplus(-(a_i - b_i - m_i)), m a host scalar or a View; its gradient has two outputs,
//    softmargin::grads(grad_a, grad_b) (grad_b = -grad_a), written in the same pass.
// weight, pos_weight and a margin View have the first input's shape and value type; strides of 0 broadcast them
// (PyTorch's pos_weight of shape (C,) is a View of x's shape with stride 0 in every dimension but the last). Pass
// softmargin::no_weight for an absent weight. SoftMargin_ETI.hpp lists the instantiations the library holds
// (SoftMarginLoss without weights); the rest compile in the caller.
#ifndef SOFTMARGIN_FAMILY_HPP
#define SOFTMARGIN_FAMILY_HPP

#include <Kokkos_Core.hpp>
#include <type_traits>

#include "SoftMargin_Types.hpp"
#include "impl/SoftMargin_Checks.hpp"
#include "impl/SoftMargin_Dispatch.hpp"
#include "impl/SoftMargin_Inputs.hpp"
#include "impl/SoftMargin_Passes.hpp"

namespace softmargin {

/// An absent weight (bce_with_logits(x, t, no_weight, pos_weight)).
inline constexpr Impl::NoView no_weight{};

template <class XView, class YView, class WView = Impl::NoView>
Impl::SoftMarginInputs<XView, YView, WView> soft_margin(const XView& x, const YView& y, const WView& weight = {}) {
  return {x, y, weight};
}

template <class XView, class TView, class WView = Impl::NoView, class PView = Impl::NoView>
Impl::BCEWithLogitsInputs<XView, TView, WView, PView> bce_with_logits(const XView& x, const TView& target,
                                                                      const WView& weight = {},
                                                                      const PView& pos_weight = {}) {
  return {x, target, weight, pos_weight};
}

template <class AView, class BView>
Impl::PairwiseInputs<AView, BView> pairwise(const AView& a, const BView& b, double margin = 0.0) {
  return {a, b, {}, margin};
}
template <class AView, class BView, class MView>
requires(Kokkos::is_view_v<MView>) Impl::PairwiseInputs<AView, BView, MView> pairwise(const AView& a, const BView& b,
                                                                                      const MView& margin) {
  return {a, b, margin, 0.0};
}

/// The gradient outputs of a pairwise loss: d loss / d a into grad_a and d loss / d b into grad_b.
template <class GA, class GB>
Impl::GradPair<GA, GB> grads(const GA& grad_a, const GB& grad_b) {
  return {grad_a, grad_b};
}

namespace Impl {
template <class T>
inline constexpr bool is_inputs_v = false;
template <class... V>
inline constexpr bool is_inputs_v<SoftMarginInputs<V...>> = true;
template <class... V>
inline constexpr bool is_inputs_v<BCEWithLogitsInputs<V...>> = true;
template <class... V>
inline constexpr bool is_inputs_v<PairwiseInputs<V...>> = true;

/// The gradient outputs of In: one View of its first input's type (or float), or a GradPair for a pairwise loss.
template <class Exec, class In, class G>
constexpr bool check_grads_type() {
  using X = typename In::first_view;
  if constexpr (In::grads == 2) {
    static_assert(!Kokkos::is_view_v<G>, "softmargin: a pairwise loss has two gradients: pass grads(grad_a, grad_b)");
    if constexpr (!Kokkos::is_view_v<G>)
      return check_grad_type<Exec, X, decltype(G::a)>() && check_grad_type<Exec, X, decltype(G::b)>();
    return false;
  } else {
    return check_grad_type<Exec, X, G>();
  }
}
template <class In>
using family_result_t = host_result_t<value_t<typename In::first_view>>;
}  // namespace Impl

/// The loss of a family member (see the file comment), as loss(space, x, y, out, ...).
template <class ExecSpace, class In, class OutView, class Alg = Algorithm>
requires(Kokkos::is_execution_space_v<ExecSpace>&& Impl::is_inputs_v<In>&& Kokkos::is_view_v<OutView>&&
             Impl::is_algorithm_v<Alg>) void loss(const ExecSpace& space, const In& in, const OutView& out,
                                                  ReduceBy reduction = Reduction::Mean,
                                                  Alg algorithm = Algorithm::Auto) {
  if constexpr (In::template check_types<ExecSpace>() &&
                Impl::check_loss_output_type<ExecSpace, typename In::first_view, OutView>())
    Impl::loss_pass(space, in, out, reduction, algorithm);
}
template <class In, class OutView>
requires(Impl::is_inputs_v<In>&& Kokkos::is_view_v<OutView>) void loss(const In& in, const OutView& out,
                                                                       ReduceBy reduction = Reduction::Mean,
                                                                       Algorithm algorithm = Algorithm::Auto) {
  loss(typename In::first_view::execution_space(), in, out, reduction, algorithm);
}
/// Blocking: the reduced loss as a host scalar of the first input's type (float for 16-bit inputs).
template <class ExecSpace, class In>
requires(Kokkos::is_execution_space_v<ExecSpace>&& Impl::is_inputs_v<In>) Impl::family_result_t<In> loss(
    const ExecSpace& space, const In& in, ReduceBy reduction = Reduction::Mean, Algorithm algorithm = Algorithm::Auto) {
  using T = Impl::family_result_t<In>;
  if constexpr (In::template check_types<ExecSpace>()) {
    if (reduction.reduction() == Reduction::None)
      throw std::invalid_argument(std::string(In::names.loss) +
                                  ": reduction none gives one loss per element; pass an out View");
    return Impl::blocking<T>(
        space, [&](const auto& out) { Impl::loss_pass(space, in, out, reduction, algorithm); },
        "softmargin::loss: blocking");
  } else {
    return T();
  }
}

/// The gradient of a family member with respect to its first input (both inputs for pairwise: grads(grad_a, grad_b)),
/// as backward(space, x, y, grad_loss, grad_x, ...).
template <class ExecSpace, class In, class Upstream, class G, class Alg = Algorithm>
requires(Kokkos::is_execution_space_v<ExecSpace>&& Impl::is_inputs_v<In> && !Impl::is_reduction_arg_v<G> &&
         Impl::is_algorithm_v<Alg>) void backward(const ExecSpace& space, const In& in, const Upstream& grad_loss,
                                                  const G& grad, ReduceBy reduction = Reduction::Mean,
                                                  Alg algorithm = Algorithm::Auto) {
  if constexpr (In::template check_types<ExecSpace>() && Impl::check_grads_type<ExecSpace, In, G>() &&
                Impl::check_upstream_type<ExecSpace, typename In::first_view, Upstream, true>())
    Impl::backward_pass(space, in, grad_loss, grad, reduction, algorithm);
}
template <class In, class Upstream, class G>
requires(Impl::is_inputs_v<In> && !Impl::is_reduction_arg_v<G>) void backward(const In& in, const Upstream& grad_loss,
                                                                              const G& grad,
                                                                              ReduceBy reduction = Reduction::Mean,
                                                                              Algorithm algorithm = Algorithm::Auto) {
  backward(typename In::first_view::execution_space(), in, grad_loss, grad, reduction, algorithm);
}

/// The reduced loss of a family member and its gradient in one pass, as loss_and_grad(space, x, y, loss_out, ...).
template <class ExecSpace, class In, class LossView, class G, class Upstream = Impl::family_result_t<In>,
          class Alg = Algorithm>
requires(Kokkos::is_execution_space_v<ExecSpace>&& Impl::is_inputs_v<In>&& Kokkos::is_view_v<LossView> &&
         !Impl::is_reduction_arg_v<G> &&
         Impl::is_algorithm_v<Alg>) void loss_and_grad(const ExecSpace& space, const In& in, const LossView& loss_out,
                                                       const G& grad, ReduceBy reduction = Reduction::Mean,
                                                       const Upstream& grad_loss = Upstream(1),
                                                       Alg algorithm = Algorithm::Auto) {
  using X = typename In::first_view;
  if constexpr (In::template check_types<ExecSpace>() && Impl::check_loss_output_type<ExecSpace, X, LossView>() &&
                Impl::check_grads_type<ExecSpace, In, G>() &&
                Impl::check_upstream_type<ExecSpace, X, Upstream, false>()) {
    static_assert(LossView::rank() == 0, "softmargin::loss_and_grad: loss_out must be a rank-0 View");
    if constexpr (LossView::rank() == 0)
      Impl::loss_and_grad_pass(space, in, loss_out, grad, reduction, grad_loss, algorithm);
  }
}
/// Blocking fused pass: writes the gradient and returns the reduced loss as a host scalar.
template <class ExecSpace, class In, class G, class Upstream = Impl::family_result_t<In>>
requires(Kokkos::is_execution_space_v<ExecSpace>&& Impl::is_inputs_v<In> &&
         !Impl::is_reduction_arg_v<G>) Impl::family_result_t<In> loss_and_grad(const ExecSpace& space, const In& in,
                                                                               const G& grad,
                                                                               ReduceBy reduction = Reduction::Mean,
                                                                               const Upstream& grad_loss = Upstream(1),
                                                                               Algorithm algorithm = Algorithm::Auto) {
  using T = Impl::family_result_t<In>;
  using X = typename In::first_view;
  if constexpr (In::template check_types<ExecSpace>() && Impl::check_grads_type<ExecSpace, In, G>() &&
                Impl::check_upstream_type<ExecSpace, X, Upstream, false>()) {
    return Impl::blocking<T>(
        space,
        [&](const auto& out) { Impl::loss_and_grad_pass(space, in, out, grad, reduction, grad_loss, algorithm); },
        "softmargin::loss_and_grad: blocking");
  } else {
    return T();
  }
}

}  // namespace softmargin

#endif

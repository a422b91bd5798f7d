// SoftMargin for PyTorch: the autograd kernels of softmargin::loss and softmargin::bce_with_logits (no Python on the
// path).
//
// With grad enabled and the input requiring grad, the reduced losses run the fused kernel (loss_and_grad): the
// gradient of the loss is ready after the forward, and the backward only scales it by the incoming gradient, in
// place, which does nothing on the device when that is exactly 1 (loss.backward()). The first backward hands the
// buffer on as the input's gradient (so AccumulateGrad keeps it without a copy); a second one (retain_graph=True)
// recomputes from the saved tensors. Under tracing (torch.compile, make_fx) the backward is the functional mul, and
// with create_graph=True a differentiable composite of torch operators. Reduction none saves nothing extra and runs
// the backward operator.
//
// bce_with_logits is differentiable with respect to its target, weight and pos_weight too. Those gradients are
// computed in the backward from torch operators (differentiable, so create_graph=True works for them as well).
// pairwise_logistic is differentiable with respect to chosen, rejected and a margin tensor: its fused pass writes the
// gradients of chosen and rejected (the margin's is rejected's, summed to the margin's shape), and runs whenever one of
// the three requires grad.
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/TensorSubclassLikeUtils.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include <array>
#include <tuple>

#include "SoftMarginTorch_Ops.hpp"

namespace softmargin::torch_ops {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

/// Whether t is a plain CPU or CUDA tensor outside any tracing mode: only then may the backward write in place.
bool is_eager(const at::Tensor& t) {
  return (t.is_cpu() || t.is_cuda()) && !at::isTensorSubclassLike(t) &&
         !c10::impl::tls_is_dispatch_key_included(c10::DispatchKey::Python);
}

/// The input's gradient of a reduced loss whose forward ran the fused pass: its saved gradient (saved_data[key]) times
/// g, in place on the first eager backward (the buffer is handed on), else the functional product; recompute() once
/// handed on.
template <class Recompute>
at::Tensor fused_grad(AutogradContext* ctx, const at::Tensor& g, const at::Tensor& input, const Recompute& recompute,
                      const char* key = "grad") {
  const auto it = ctx->saved_data.find(key);
  if (it == ctx->saved_data.end()) return recompute();
  at::Tensor grad = it->second.toTensor();
  if (!(is_eager(grad) && is_eager(g) && g.device() == input.device())) return at::mul(grad, g);
  ctx->saved_data.erase(it);
#if defined(SOFTMARGIN_TORCH_CUDA)
  if (grad.is_cuda()) {
    scale_unless_one_cuda(grad, g);
    return grad;
  }
#endif
  scale_unless_one_cpu(grad, g);
  return grad;
}

// The backward runs on fake tensors with symbolic shapes under torch.compile(dynamic=True) and opcheck: shapes and
// counts are read as SymInts (sym_numel, sym_sizes), never as integers.

/// The upstream gradient of every element: g, divided for the mean by the normalizer (a 0-dimensional tensor, when
/// defined) or else by the element count.
at::Tensor per_element(const at::Tensor& g, const at::Tensor& x, std::int64_t reduction, const at::Tensor& normalizer) {
  if (reduction != kReductionMean) return g;
  return normalizer.defined() ? at::div(g, normalizer.to(g.scalar_type())) : at::div(g, c10::Scalar(x.sym_numel()));
}

bool present(const OptTensor& t) { return t.has_value() && t->defined(); }
OptTensor optional(const at::Tensor& t) { return t.defined() ? OptTensor(t) : c10::nullopt; }
at::Tensor or_undefined(const OptTensor& t) { return present(t) ? *t : at::Tensor(); }
bool requires_grad(const OptTensor& t) { return present(t) && t->requires_grad(); }

/// A normalizer is a count: not differentiable (PyTorch's message for such an argument).
void check_normalizer(const char* op, const OptTensor& normalizer) {
  TORCH_CHECK(!requires_grad(normalizer), "The function '", op, "' is not differentiable with respect to argument ",
              "'normalizer'. This input cannot have requires_grad True.");
}

/// The dtype the composite gradients are computed in: float for 16-bit inputs (rounded once, to the input's dtype, at
/// the end, as the kernels do), the input's otherwise.
at::ScalarType compute_type(const at::Tensor& x) {
  return at::isReducedFloatingType(x.scalar_type()) ? at::kFloat : x.scalar_type();
}

/// grad (of the input's shape) as the gradient of `like`: summed over the dimensions `like` broadcasts along, of its
/// dtype and on its device.
at::Tensor reduce_like(const at::Tensor& grad, const at::Tensor& like) {
  const at::Tensor summed = at::sum_to(grad, like.sym_sizes());
  return summed.scalar_type() == like.scalar_type() && summed.device() == like.device()
             ? summed
             : summed.to(like.device(), like.scalar_type());
}

/// The gradients of loss from torch operators, differentiable (for create_graph=True), in compute_type and rounded
/// once to each tensor's dtype: with u the upstream gradient of the element and w the weight (1 without),
/// d/dx = -y sigmoid(-y x) w u and d/dw = softplus(-y x) u. saved: x, y, w (may be undefined); want: x, w.
std::array<at::Tensor, 2> composite_grads(const at::Tensor& g, const std::array<at::Tensor, 3>& saved,
                                          std::int64_t reduction, const at::Tensor& normalizer,
                                          const std::array<bool, 2>& want) {
  const at::Tensor& x = saved[0];
  const at::ScalarType ct = compute_type(x);
  const at::Tensor xc = x.to(ct), yx = saved[1].to(x.device(), ct);
  const at::Tensor up = per_element(g.to(ct), x, reduction, normalizer);
  std::array<at::Tensor, 2> out;
  if (want[0]) {
    const at::Tensor w = saved[2].defined() ? up * saved[2].to(x.device(), ct) : up;
    out[0] = (-yx * at::sigmoid(-yx * xc) * w).expand_symint(x.sym_sizes()).to(x.scalar_type());
  }
  if (want[1]) {
    const at::Tensor z = -yx * xc;
    const at::Tensor softplus = at::clamp_min(z, 0) + at::log1p(at::exp(-at::abs(z)));
    out[1] = reduce_like((softplus * up).expand_symint(x.sym_sizes()), saved[2]);
  }
  return out;
}

class SoftMarginLossBackward : public torch::autograd::Function<SoftMarginLossBackward> {
 public:
  /// below: the call's dispatch keys below autograd (loss_and_grad takes the same tensors, so the same keys); fuse:
  /// the input requires grad (else the function runs for the weight alone).
  static at::Tensor forward(AutogradContext* ctx, c10::DispatchKeySet below, const at::Tensor& input,
                            const at::Tensor& target, std::int64_t reduction, const OptTensor& weight,
                            const OptTensor& normalizer, bool fuse) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    ctx->saved_data["reduction"] = reduction;
    ctx->save_for_backward({input, target, or_undefined(weight), or_undefined(normalizer)});
    if (reduction == kReductionNone || !fuse)
      return loss_op().redispatch(below, input, target, reduction, weight, normalizer);
    auto [loss, grad] = loss_and_grad_op().redispatch(below, input, target, reduction, weight, normalizer);
    ctx->saved_data["grad"] = grad;
    return loss;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const std::int64_t reduction = ctx->saved_data["reduction"].toInt();
    const auto v = ctx->get_saved_variables();
    const std::array<at::Tensor, 3> saved{v[0], v[1], v[2]};
    const at::Tensor& normalizer = v[3];
    const at::Tensor& g = grads[0];
    // needs_input_grad counts the forward's tensors that are present: input 0, target 1, then the weight.
    std::array<bool, 2> want{ctx->needs_input_grad(0), saved[2].defined() && ctx->needs_input_grad(2)};
    at::Tensor grad_input;
    if (want[0] && !at::GradMode::is_enabled()) {
      const auto recompute = [&] {
        return backward_op().call(g, saved[0], saved[1], reduction, optional(saved[2]), optional(normalizer));
      };
      grad_input = reduction == kReductionNone ? recompute() : fused_grad(ctx, g, saved[0], recompute);
      want[0] = false;
    }
    auto out =
        want[0] || want[1] ? composite_grads(g, saved, reduction, normalizer, want) : std::array<at::Tensor, 2>{};
    if (grad_input.defined()) out[0] = grad_input;
    return {at::Tensor(), out[0], at::Tensor(), at::Tensor(), out[1], at::Tensor(), at::Tensor()};
  }
};

/// Redispatches below autograd with the call's own dispatch keys (no second key computation).
at::Tensor loss_autograd(c10::DispatchKeySet keys, const at::Tensor& input, const at::Tensor& target,
                         std::int64_t reduction, const OptTensor& weight, const OptTensor& normalizer) {
  const c10::DispatchKeySet below = keys & c10::after_autograd_keyset;
  if (at::GradMode::is_enabled()) {
    check_normalizer("softmargin::loss", normalizer);
    TORCH_CHECK(!target.requires_grad(),
                "The function 'softmargin::loss' is not differentiable with respect to argument 'target'. This input "
                "cannot have requires_grad True.");
    if (input.requires_grad() || requires_grad(weight))
      return SoftMarginLossBackward::apply(below, input, target, reduction, weight, normalizer, input.requires_grad());
  }
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  return loss_op().redispatch(below, input, target, reduction, weight, normalizer);
}

/// The gradients of bce_with_logits from torch operators, differentiable, in compute_type and rounded once to each
/// tensor's dtype (reduce_like). With c = 1 + (p - 1) t and
/// s = softplus(-x): d/dx = w ((1 - t) - c sigmoid(-x)), d/dt = w (-x + (p - 1) s), d/dw = (1 - t) x + c s,
/// d/dp = w t s, each times the upstream gradient of the element. want: x, t, w, p; w and p may be undefined.
std::array<at::Tensor, 4> bce_composite_grads(const at::Tensor& g, const std::array<at::Tensor, 4>& saved,
                                              std::int64_t reduction, const at::Tensor& normalizer,
                                              const std::array<bool, 4>& want) {
  const at::ScalarType ct = compute_type(saved[0]);
  const auto as_x = [&](const at::Tensor& v) { return v.defined() ? v.to(saved[0].device(), ct) : v; };
  const at::Tensor x = as_x(saved[0]), t = as_x(saved[1]), w = as_x(saved[2]), p = as_x(saved[3]);
  const at::Tensor up = per_element(g.to(ct), x, reduction, normalizer);
  const at::Tensor weighted = w.defined() ? up * w : up;
  const at::Tensor s = at::clamp_min(-x, 0) + at::log1p(at::exp(-at::abs(x)));
  const auto times_c = [&](const at::Tensor& v) { return p.defined() ? (1 + (p - 1) * t) * v : v; };
  std::array<at::Tensor, 4> out;
  if (want[0]) out[0] = ((1 - t) - times_c(at::sigmoid(-x))) * weighted;
  if (want[1]) out[1] = (p.defined() ? (p - 1) * s - x : -x) * weighted;
  if (want[2]) out[2] = ((1 - t) * x + times_c(s)) * up;
  if (want[3]) out[3] = t * s * weighted;
  for (std::size_t i = 0; i < out.size(); ++i)
    if (out[i].defined()) out[i] = reduce_like(out[i].expand_symint(x.sym_sizes()), saved[i]);
  return out;
}

class BCEWithLogitsLossBackward : public torch::autograd::Function<BCEWithLogitsLossBackward> {
 public:
  /// fuse: the input requires grad (else the function runs for target, weight or pos_weight alone).
  static at::Tensor forward(AutogradContext* ctx, c10::DispatchKeySet below, const at::Tensor& input,
                            const at::Tensor& target, const OptTensor& weight, const OptTensor& pos_weight,
                            std::int64_t reduction, const OptTensor& normalizer, bool fuse) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    ctx->saved_data["reduction"] = reduction;
    ctx->save_for_backward({input, target, or_undefined(weight), or_undefined(pos_weight), or_undefined(normalizer)});
    if (reduction == kReductionNone || !fuse)
      return bce_op().redispatch(below, input, target, weight, pos_weight, reduction, normalizer);
    auto [loss, grad] =
        bce_loss_and_grad_op().redispatch(below, input, target, weight, pos_weight, reduction, normalizer);
    ctx->saved_data["grad"] = grad;
    return loss;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const std::int64_t reduction = ctx->saved_data["reduction"].toInt();
    const auto v = ctx->get_saved_variables();
    const std::array<at::Tensor, 4> saved{v[0], v[1], v[2], v[3]};
    const at::Tensor& normalizer = v[4];
    const at::Tensor& g = grads[0];
    // needs_input_grad counts the forward's tensors that are present: input 0, target 1, then weight, pos_weight.
    const bool has_w = saved[2].defined();
    std::array<bool, 4> want{ctx->needs_input_grad(0), ctx->needs_input_grad(1), has_w && ctx->needs_input_grad(2),
                             saved[3].defined() && ctx->needs_input_grad(has_w ? 3 : 2)};
    const bool composite_input = want[0] && at::GradMode::is_enabled();
    at::Tensor grad_input;
    if (want[0] && !composite_input) {
      const auto recompute = [&] {
        return bce_backward_op().call(g, saved[0], saved[1], optional(saved[2]), optional(saved[3]), reduction,
                                      optional(normalizer));
      };
      grad_input = reduction == kReductionNone ? recompute() : fused_grad(ctx, g, saved[0], recompute);
      want[0] = false;
    }
    auto out = want[0] || want[1] || want[2] || want[3] ? bce_composite_grads(g, saved, reduction, normalizer, want)
                                                        : std::array<at::Tensor, 4>{};
    if (grad_input.defined()) out[0] = grad_input;
    return {at::Tensor(), out[0], out[1], out[2], out[3], at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

at::Tensor bce_autograd(c10::DispatchKeySet keys, const at::Tensor& input, const at::Tensor& target,
                        const OptTensor& weight, const OptTensor& pos_weight, std::int64_t reduction,
                        const OptTensor& normalizer) {
  const c10::DispatchKeySet below = keys & c10::after_autograd_keyset;
  if (at::GradMode::is_enabled()) check_normalizer("softmargin::bce_with_logits", normalizer);
  if (at::GradMode::is_enabled() &&
      (input.requires_grad() || target.requires_grad() || requires_grad(weight) || requires_grad(pos_weight)))
    return BCEWithLogitsLossBackward::apply(below, input, target, weight, pos_weight, reduction, normalizer,
                                            input.requires_grad());
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  return bce_op().redispatch(below, input, target, weight, pos_weight, reduction, normalizer);
}

/// The gradients of pairwise_logistic from torch operators, differentiable, in compute_type and rounded once to each
/// tensor's dtype (reduce_like): with d = -sigmoid(-(c - r - m)) times the upstream gradient of the element, chosen's
/// is d, rejected's and the margin's -d. saved: chosen, rejected, margin (undefined: margin_value).
std::array<at::Tensor, 3> pairwise_composite_grads(const at::Tensor& g, const std::array<at::Tensor, 3>& saved,
                                                   double margin_value, std::int64_t reduction,
                                                   const at::Tensor& normalizer, const std::array<bool, 3>& want) {
  const at::ScalarType ct = compute_type(saved[0]);
  const at::Tensor c = saved[0].to(ct), r = saved[1].to(c.device(), ct);
  const at::Tensor z = saved[2].defined() ? c - r - saved[2].to(c.device(), ct) : c - r - margin_value;
  const at::Tensor up = per_element(g.to(ct), c, reduction, normalizer);
  const at::Tensor d = (-at::sigmoid(-z) * up).expand_symint(c.sym_sizes());
  std::array<at::Tensor, 3> out;
  if (want[0]) out[0] = reduce_like(d, saved[0]);
  if (want[1]) out[1] = reduce_like(-d, saved[1]);
  if (want[2]) out[2] = reduce_like(-d, saved[2]);
  return out;
}

class PairwiseLossBackward : public torch::autograd::Function<PairwiseLossBackward> {
 public:
  static at::Tensor forward(AutogradContext* ctx, c10::DispatchKeySet below, const at::Tensor& chosen,
                            const at::Tensor& rejected, const OptTensor& margin, double margin_value,
                            std::int64_t reduction, const OptTensor& normalizer) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    ctx->saved_data["reduction"] = reduction;
    ctx->saved_data["margin_value"] = margin_value;
    ctx->save_for_backward({chosen, rejected, or_undefined(margin), or_undefined(normalizer)});
    if (reduction == kReductionNone)
      return pairwise_op().redispatch(below, chosen, rejected, margin, margin_value, reduction, normalizer);
    auto [loss, grad_c, grad_r] =
        pairwise_loss_and_grad_op().redispatch(below, chosen, rejected, margin, margin_value, reduction, normalizer);
    ctx->saved_data["grad"] = grad_c;
    ctx->saved_data["grad_rejected"] = grad_r;
    return loss;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const std::int64_t reduction = ctx->saved_data["reduction"].toInt();
    const double margin_value = ctx->saved_data["margin_value"].toDouble();
    const auto v = ctx->get_saved_variables();
    const std::array<at::Tensor, 3> saved{v[0], v[1], v[2]};
    const at::Tensor& normalizer = v[3];
    const at::Tensor& g = grads[0];
    // needs_input_grad counts the forward's tensors that are present: chosen 0, rejected 1, then the margin.
    const std::array<bool, 3> want{ctx->needs_input_grad(0), ctx->needs_input_grad(1),
                                   saved[2].defined() && ctx->needs_input_grad(2)};
    std::array<at::Tensor, 3> out;
    if (at::GradMode::is_enabled()) {
      out = pairwise_composite_grads(g, saved, margin_value, reduction, normalizer, want);
    } else {
      const auto backward_call = [&] {
        return pairwise_backward_op().call(g, saved[0], saved[1], optional(saved[2]), margin_value, reduction,
                                           optional(normalizer));
      };
      at::Tensor grad_c, grad_r;
      if (reduction == kReductionNone) {
        std::tie(grad_c, grad_r) = backward_call();
      } else {
        if (want[0]) grad_c = fused_grad(ctx, g, saved[0], [&] { return std::get<0>(backward_call()); });
        if (want[1] || want[2])
          grad_r = fused_grad(
              ctx, g, saved[0], [&] { return std::get<1>(backward_call()); }, "grad_rejected");
      }
      if (want[0]) out[0] = grad_c;
      if (want[1]) out[1] = reduce_like(grad_r, saved[1]);
      if (want[2]) {
        out[2] = reduce_like(grad_r, saved[2]);
        if (want[1] && out[2].is_alias_of(out[1])) out[2] = out[2].clone();  // each its own buffer
      }
    }
    return {at::Tensor(), out[0], out[1], out[2], at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

at::Tensor pairwise_autograd(c10::DispatchKeySet keys, const at::Tensor& chosen, const at::Tensor& rejected,
                             const OptTensor& margin, double margin_value, std::int64_t reduction,
                             const OptTensor& normalizer) {
  const c10::DispatchKeySet below = keys & c10::after_autograd_keyset;
  if (at::GradMode::is_enabled()) check_normalizer("softmargin::pairwise_logistic", normalizer);
  if (at::GradMode::is_enabled() && (chosen.requires_grad() || rejected.requires_grad() || requires_grad(margin)))
    return PairwiseLossBackward::apply(below, chosen, rejected, margin, margin_value, reduction, normalizer);
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  return pairwise_op().redispatch(below, chosen, rejected, margin, margin_value, reduction, normalizer);
}

}  // namespace
}  // namespace softmargin::torch_ops

TORCH_LIBRARY_IMPL(softmargin, Autograd, m) {
  m.impl("loss", &softmargin::torch_ops::loss_autograd);
  m.impl("bce_with_logits", &softmargin::torch_ops::bce_autograd);
  m.impl("pairwise_logistic", &softmargin::torch_ops::pairwise_autograd);
}

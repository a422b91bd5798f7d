// SoftMargin for PyTorch: the autograd kernel of softmargin::loss (every torch version, no Python on the path).
//
// With grad enabled and the input requiring grad, the reduced losses run the fused kernel (loss_and_grad): the
// gradient of the loss is ready after the forward, and the backward only scales it by the incoming gradient, in
// place, which does nothing on the device when that is exactly 1 (loss.backward()). The first backward hands the
// buffer on as the input's gradient (so AccumulateGrad keeps it without a copy); a second one (retain_graph=True)
// recomputes from the saved input and target. Under tracing (torch.compile, make_fx) the backward is the functional
// mul, and with create_graph=True a differentiable composite of torch operators. Reduction none saves nothing extra
// and runs softmargin::backward.
#include <ATen/ATen.h>
#include <ATen/TensorSubclassLikeUtils.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/autograd.h>
#include <torch/library.h>

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

/// d loss / d input from torch operators, differentiable (for create_graph=True): -y sigmoid(-y x) g [/ N].
at::Tensor composite_grad(const at::Tensor& g, const at::Tensor& x, const at::Tensor& y, std::int64_t reduction) {
  const at::Tensor yx = y.to(x.scalar_type());
  at::Tensor d = -yx * at::sigmoid(-yx * x) * g;
  if (reduction == kReductionMean) d = d / static_cast<double>(x.numel());
  return d.expand(x.sizes());
}

class SoftMarginLossBackward : public torch::autograd::Function<SoftMarginLossBackward> {
 public:
  /// below: the call's dispatch keys below autograd (loss_and_grad takes the same tensors, so the same keys).
  static at::Tensor forward(AutogradContext* ctx, c10::DispatchKeySet below, const at::Tensor& input,
                            const at::Tensor& target, std::int64_t reduction) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    ctx->saved_data["reduction"] = reduction;
    ctx->save_for_backward({input, target});
    if (reduction == kReductionNone) return loss_op().redispatch(below, input, target, reduction);
    auto [loss, grad] = loss_and_grad_op().redispatch(below, input, target, reduction);
    ctx->saved_data["grad"] = grad;
    return loss;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const std::int64_t reduction = ctx->saved_data["reduction"].toInt();
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& input = saved[0];
    const at::Tensor& target = saved[1];
    const at::Tensor& g = grads[0];
    at::Tensor grad_input;
    if (at::GradMode::is_enabled()) {
      grad_input = composite_grad(g, input, target, reduction);
    } else if (reduction == kReductionNone) {
      grad_input = backward_op().call(g, input, target, reduction);
    } else {
      const auto it = ctx->saved_data.find("grad");
      if (it == ctx->saved_data.end()) {
        grad_input = backward_op().call(g, input, target, reduction);
      } else if (is_eager(it->second.toTensor()) && is_eager(g) && g.device() == input.device()) {
        grad_input = it->second.toTensor();
        ctx->saved_data.erase(it);
#if defined(SOFTMARGIN_TORCH_CUDA)
        if (grad_input.is_cuda())
          scale_unless_one_cuda(grad_input, g);
        else
          scale_unless_one_cpu(grad_input, g);
#else
        scale_unless_one_cpu(grad_input, g);
#endif
      } else {
        grad_input = at::mul(it->second.toTensor(), g);
      }
    }
    return {at::Tensor(), grad_input, at::Tensor(), at::Tensor()};
  }
};

/// Redispatches below autograd with the call's own dispatch keys (no second key computation).
at::Tensor loss_autograd(c10::DispatchKeySet keys, const at::Tensor& input, const at::Tensor& target,
                         std::int64_t reduction) {
  const c10::DispatchKeySet below = keys & c10::after_autograd_keyset;
  if (at::GradMode::is_enabled()) {
    TORCH_CHECK(!target.requires_grad(),
                "The function 'softmargin::loss' is not differentiable with respect to argument 'target'. This input "
                "cannot have requires_grad True.");
    if (input.requires_grad()) return SoftMarginLossBackward::apply(below, input, target, reduction);
  }
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  return loss_op().redispatch(below, input, target, reduction);
}

}  // namespace
}  // namespace softmargin::torch_ops

TORCH_LIBRARY_IMPL(softmargin, Autograd, m) { m.impl("loss", &softmargin::torch_ops::loss_autograd); }

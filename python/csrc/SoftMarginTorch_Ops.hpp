// SoftMargin for PyTorch: the operators of namespace softmargin, shared by their translation units.
//
//   softmargin::loss(Tensor input, Tensor target, int reduction=1, Tensor? weight=None, Tensor? normalizer=None)
//       -> Tensor
//   softmargin::backward(Tensor grad_output, Tensor input, Tensor target, int reduction=1, Tensor? weight=None,
//                        Tensor? normalizer=None) -> Tensor
//   softmargin::loss_and_grad(Tensor input, Tensor target, int reduction=1, Tensor? weight=None,
//                             Tensor? normalizer=None) -> (Tensor, Tensor)
//   softmargin::bce_with_logits(Tensor input, Tensor target, Tensor? weight=None, Tensor? pos_weight=None,
//                               int reduction=1, Tensor? normalizer=None) -> Tensor
//   softmargin::bce_with_logits_backward(Tensor grad_output, Tensor input, Tensor target, Tensor? weight=None,
//                                        Tensor? pos_weight=None, int reduction=1, Tensor? normalizer=None) -> Tensor
//   softmargin::bce_with_logits_loss_and_grad(Tensor input, Tensor target, Tensor? weight=None,
//                                             Tensor? pos_weight=None, int reduction=1, Tensor? normalizer=None)
//       -> (Tensor, Tensor)
//   softmargin::pairwise_logistic(Tensor chosen, Tensor rejected, Tensor? margin=None, float margin_value=0.,
//                                 int reduction=1, Tensor? normalizer=None) -> Tensor
//   softmargin::pairwise_logistic_backward(Tensor grad_output, Tensor chosen, Tensor rejected, Tensor? margin=None,
//                                          float margin_value=0., int reduction=1, Tensor? normalizer=None)
//       -> (Tensor, Tensor)
//   softmargin::pairwise_logistic_loss_and_grad(Tensor chosen, Tensor rejected, Tensor? margin=None,
//                                               float margin_value=0., int reduction=1, Tensor? normalizer=None)
//       -> (Tensor, Tensor, Tensor)
//
// reduction is torch's enumerator (0 none, 1 mean, 2 sum). A normalizer (0-dimensional, on the CPU or the input's
// device; with reduction mean) replaces the mean's element count: the loss is the sum divided by it, and so are the
// gradients (a tensor on the device is read by the kernel that divides, without a synchronization). The loss has the
// input's shape and dtype (float32, float64, bfloat16 or float16); the target broadcasts to the input's shape and is
// converted to its dtype, as in torch.nn.functional.soft_margin_loss (int8 targets are read as they are; for
// bce_with_logits bool targets too). weight (per element: SoftMarginLoss's loss times it, BCEWithLogits' as PyTorch's)
// and pos_weight broadcast to the input's shape. The backward and loss_and_grad operators return the gradient with
// respect to the input (loss_and_grad: of the reduced loss, upstream gradient 1). softmargin::loss and
// bce_with_logits are differentiable with respect to the input, the target (BCEWithLogits) and the weights
// (SoftMarginTorch_Autograd.cpp): with grad enabled and the input requiring it, their forward runs the fused operator.
// The pairwise loss is softplus(-(chosen - rejected - margin)) (margin: the tensor, else margin_value); rejected and
// margin broadcast to chosen's shape and are converted to its dtype; its backward and fused operators return the
// gradients with respect to chosen and to rejected (of chosen's shape), and it is differentiable with respect to the
// three tensors, with the fused pass whenever one of them requires grad.
#ifndef SOFTMARGIN_TORCH_OPS_HPP
#define SOFTMARGIN_TORCH_OPS_HPP

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <cstdint>
#include <tuple>

namespace softmargin::torch_ops {

inline constexpr std::int64_t kReductionNone = 0;
inline constexpr std::int64_t kReductionMean = 1;

using OptTensor = c10::optional<at::Tensor>;

/// The operators, called through the dispatcher (below autograd, from the autograd kernel).
using LossSignature = at::Tensor(const at::Tensor&, const at::Tensor&, std::int64_t, const OptTensor&,
                                 const OptTensor&);
using BackwardSignature = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, std::int64_t,
                                     const OptTensor&, const OptTensor&);
using FusedSignature = std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&, std::int64_t,
                                                          const OptTensor&, const OptTensor&);
const c10::TypedOperatorHandle<LossSignature>& loss_op();
const c10::TypedOperatorHandle<BackwardSignature>& backward_op();
const c10::TypedOperatorHandle<FusedSignature>& loss_and_grad_op();

using BCESignature = at::Tensor(const at::Tensor&, const at::Tensor&, const OptTensor&, const OptTensor&, std::int64_t,
                                const OptTensor&);
using BCEBackwardSignature = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const OptTensor&,
                                        const OptTensor&, std::int64_t, const OptTensor&);
using BCEFusedSignature = std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&, const OptTensor&,
                                                             const OptTensor&, std::int64_t, const OptTensor&);
const c10::TypedOperatorHandle<BCESignature>& bce_op();
const c10::TypedOperatorHandle<BCEBackwardSignature>& bce_backward_op();
const c10::TypedOperatorHandle<BCEFusedSignature>& bce_loss_and_grad_op();

using PairwiseSignature = at::Tensor(const at::Tensor&, const at::Tensor&, const OptTensor&, double, std::int64_t,
                                     const OptTensor&);
using PairwiseBackwardSignature = std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&,
                                                                     const at::Tensor&, const OptTensor&, double,
                                                                     std::int64_t, const OptTensor&);
using PairwiseFusedSignature = std::tuple<at::Tensor, at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&,
                                                                              const OptTensor&, double, std::int64_t,
                                                                              const OptTensor&);
const c10::TypedOperatorHandle<PairwiseSignature>& pairwise_op();
const c10::TypedOperatorHandle<PairwiseBackwardSignature>& pairwise_backward_op();
const c10::TypedOperatorHandle<PairwiseFusedSignature>& pairwise_loss_and_grad_op();

/// grad *= g in place, unless g (a 0-dimensional tensor on grad's device) is exactly 1: on CUDA one kernel on the
/// current stream that reads g on the device and returns at once if it is 1 (no synchronization), on the CPU a test.
/// grad is a fresh, non-overlapping and dense tensor of the operators' own.
void scale_unless_one_cpu(at::Tensor& grad, const at::Tensor& g);
#if defined(SOFTMARGIN_TORCH_CUDA)
void scale_unless_one_cuda(at::Tensor& grad, const at::Tensor& g);
#endif

}  // namespace softmargin::torch_ops

#endif

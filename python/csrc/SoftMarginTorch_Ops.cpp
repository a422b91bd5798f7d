// SoftMargin for PyTorch: the operators' schemas and their CPU kernels (Kokkos' default host backend).
#include "SoftMarginTorch_Ops.hpp"

#include <torch/library.h>

#include "SoftMarginTorch_Args.hpp"
#include "SoftMarginTorch_Kernels.hpp"
#include "SoftMarginTorch_Runtime.hpp"

namespace softmargin::torch_ops {
namespace {

using Host = Kokkos::DefaultHostExecutionSpace;
constexpr auto kCPU = c10::DeviceType::CPU;
constexpr OpNames kSoftMargin = op_names(Loss::SoftMargin);
constexpr OpNames kBCE = op_names(Loss::BCEWithLogits);
constexpr OpNames kPairwise = op_names(Loss::Pairwise);

at::Tensor loss_cpu(const at::Tensor& input, const at::Tensor& target, std::int64_t reduction, const OptTensor& weight,
                    const OptTensor& normalizer) {
  const auto args = check_args(kSoftMargin.loss, input, target, weight, normalizer, reduction, kCPU);
  ensure_kokkos();
  return Kernels<Host, Loss::SoftMargin>::loss(Host(), args);
}

at::Tensor backward_cpu(const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& target,
                        std::int64_t reduction, const OptTensor& weight, const OptTensor& normalizer) {
  const auto args = check_args(kSoftMargin.backward, input, target, weight, normalizer, reduction, kCPU);
  const auto g = check_upstream(kSoftMargin.backward, grad_output, args);
  ensure_kokkos();
  return Kernels<Host, Loss::SoftMargin>::backward(Host(), g, args);
}

std::tuple<at::Tensor, at::Tensor> loss_and_grad_cpu(const at::Tensor& input, const at::Tensor& target,
                                                     std::int64_t reduction, const OptTensor& weight,
                                                     const OptTensor& normalizer) {
  const auto args = check_args(kSoftMargin.loss_and_grad, input, target, weight, normalizer, reduction, kCPU);
  ensure_kokkos();
  return Kernels<Host, Loss::SoftMargin>::loss_and_grad(Host(), args);
}

at::Tensor bce_cpu(const at::Tensor& input, const at::Tensor& target, const OptTensor& weight,
                   const OptTensor& pos_weight, std::int64_t reduction, const OptTensor& normalizer) {
  const auto args = check_bce_args(kBCE.loss, input, target, weight, pos_weight, normalizer, reduction, kCPU);
  ensure_kokkos();
  return Kernels<Host, Loss::BCEWithLogits>::loss(Host(), args);
}

at::Tensor bce_backward_cpu(const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& target,
                            const OptTensor& weight, const OptTensor& pos_weight, std::int64_t reduction,
                            const OptTensor& normalizer) {
  const auto args = check_bce_args(kBCE.backward, input, target, weight, pos_weight, normalizer, reduction, kCPU);
  const auto g = check_upstream(kBCE.backward, grad_output, args);
  ensure_kokkos();
  return Kernels<Host, Loss::BCEWithLogits>::backward(Host(), g, args);
}

std::tuple<at::Tensor, at::Tensor> bce_loss_and_grad_cpu(const at::Tensor& input, const at::Tensor& target,
                                                         const OptTensor& weight, const OptTensor& pos_weight,
                                                         std::int64_t reduction, const OptTensor& normalizer) {
  const auto args = check_bce_args(kBCE.loss_and_grad, input, target, weight, pos_weight, normalizer, reduction, kCPU);
  ensure_kokkos();
  return Kernels<Host, Loss::BCEWithLogits>::loss_and_grad(Host(), args);
}

at::Tensor pairwise_cpu(const at::Tensor& chosen, const at::Tensor& rejected, const OptTensor& margin,
                        double margin_value, std::int64_t reduction, const OptTensor& normalizer) {
  const auto args =
      check_pairwise_args(kPairwise.loss, chosen, rejected, margin, margin_value, normalizer, reduction, kCPU);
  ensure_kokkos();
  return Kernels<Host, Loss::Pairwise>::loss(Host(), args);
}

std::tuple<at::Tensor, at::Tensor> pairwise_backward_cpu(const at::Tensor& grad_output, const at::Tensor& chosen,
                                                         const at::Tensor& rejected, const OptTensor& margin,
                                                         double margin_value, std::int64_t reduction,
                                                         const OptTensor& normalizer) {
  const auto args =
      check_pairwise_args(kPairwise.backward, chosen, rejected, margin, margin_value, normalizer, reduction, kCPU);
  const auto g = check_upstream(kPairwise.backward, grad_output, args);
  ensure_kokkos();
  return Kernels<Host, Loss::Pairwise>::backward(Host(), g, args);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> pairwise_loss_and_grad_cpu(const at::Tensor& chosen,
                                                                          const at::Tensor& rejected,
                                                                          const OptTensor& margin, double margin_value,
                                                                          std::int64_t reduction,
                                                                          const OptTensor& normalizer) {
  const auto args =
      check_pairwise_args(kPairwise.loss_and_grad, chosen, rejected, margin, margin_value, normalizer, reduction, kCPU);
  ensure_kokkos();
  return Kernels<Host, Loss::Pairwise>::loss_and_grad(Host(), args);
}

template <class Signature>
c10::TypedOperatorHandle<Signature> find_op(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Signature>();
}

}  // namespace

#define SOFTMARGIN_OP_HANDLE(FUNCTION, SIGNATURE, NAME)   \
  const c10::TypedOperatorHandle<SIGNATURE>& FUNCTION() { \
    static const auto op = find_op<SIGNATURE>(NAME);      \
    return op;                                            \
  }
SOFTMARGIN_OP_HANDLE(loss_op, LossSignature, kSoftMargin.loss)
SOFTMARGIN_OP_HANDLE(backward_op, BackwardSignature, kSoftMargin.backward)
SOFTMARGIN_OP_HANDLE(loss_and_grad_op, FusedSignature, kSoftMargin.loss_and_grad)
SOFTMARGIN_OP_HANDLE(bce_op, BCESignature, kBCE.loss)
SOFTMARGIN_OP_HANDLE(bce_backward_op, BCEBackwardSignature, kBCE.backward)
SOFTMARGIN_OP_HANDLE(bce_loss_and_grad_op, BCEFusedSignature, kBCE.loss_and_grad)
SOFTMARGIN_OP_HANDLE(pairwise_op, PairwiseSignature, kPairwise.loss)
SOFTMARGIN_OP_HANDLE(pairwise_backward_op, PairwiseBackwardSignature, kPairwise.backward)
SOFTMARGIN_OP_HANDLE(pairwise_loss_and_grad_op, PairwiseFusedSignature, kPairwise.loss_and_grad)
#undef SOFTMARGIN_OP_HANDLE

void set_launch_options(bool programmatic_dependent_launch, std::int64_t blocks_per_sm) {
  TORCH_CHECK_VALUE(blocks_per_sm >= 0, "softmargin::set_launch_options: blocks_per_sm = ", blocks_per_sm,
                    " must be 0 (tuned) or positive");
  softmargin::set_launch_options({programmatic_dependent_launch, static_cast<int>(blocks_per_sm)});
}

void scale_unless_one_cpu(at::Tensor& grad, const at::Tensor& g) {
  if (g.item<double>() != 1.0) grad.mul_(g);
}

}  // namespace softmargin::torch_ops

TORCH_LIBRARY(softmargin, m) {
  m.def("loss(Tensor input, Tensor target, int reduction=1, Tensor? weight=None, Tensor? normalizer=None) -> Tensor");
  m.def(
      "backward(Tensor grad_output, Tensor input, Tensor target, int reduction=1, Tensor? weight=None, "
      "Tensor? normalizer=None) -> Tensor");
  m.def(
      "loss_and_grad(Tensor input, Tensor target, int reduction=1, Tensor? weight=None, Tensor? normalizer=None) -> "
      "(Tensor, Tensor)");
  // The library's process-wide launch settings of its CUDA kernels (softmargin::LaunchOptions), for measurements.
  m.def("set_launch_options(bool programmatic_dependent_launch=True, int blocks_per_sm=0) -> ()",
        &softmargin::torch_ops::set_launch_options);
  m.def(
      "bce_with_logits(Tensor input, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, int reduction=1, "
      "Tensor? normalizer=None) -> Tensor");
  m.def(
      "bce_with_logits_backward(Tensor grad_output, Tensor input, Tensor target, Tensor? weight=None, "
      "Tensor? pos_weight=None, int reduction=1, Tensor? normalizer=None) -> Tensor");
  m.def(
      "bce_with_logits_loss_and_grad(Tensor input, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, "
      "int reduction=1, Tensor? normalizer=None) -> (Tensor, Tensor)");
  m.def(
      "pairwise_logistic(Tensor chosen, Tensor rejected, Tensor? margin=None, float margin_value=0., "
      "int reduction=1, Tensor? normalizer=None) -> Tensor");
  m.def(
      "pairwise_logistic_backward(Tensor grad_output, Tensor chosen, Tensor rejected, Tensor? margin=None, "
      "float margin_value=0., int reduction=1, Tensor? normalizer=None) -> (Tensor, Tensor)");
  m.def(
      "pairwise_logistic_loss_and_grad(Tensor chosen, Tensor rejected, Tensor? margin=None, float margin_value=0., "
      "int reduction=1, Tensor? normalizer=None) -> (Tensor, Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(softmargin, CPU, m) {
  m.impl("loss", &softmargin::torch_ops::loss_cpu);
  m.impl("backward", &softmargin::torch_ops::backward_cpu);
  m.impl("loss_and_grad", &softmargin::torch_ops::loss_and_grad_cpu);
  m.impl("bce_with_logits", &softmargin::torch_ops::bce_cpu);
  m.impl("bce_with_logits_backward", &softmargin::torch_ops::bce_backward_cpu);
  m.impl("bce_with_logits_loss_and_grad", &softmargin::torch_ops::bce_loss_and_grad_cpu);
  m.impl("pairwise_logistic", &softmargin::torch_ops::pairwise_cpu);
  m.impl("pairwise_logistic_backward", &softmargin::torch_ops::pairwise_backward_cpu);
  m.impl("pairwise_logistic_loss_and_grad", &softmargin::torch_ops::pairwise_loss_and_grad_cpu);
}

// SoftMargin for PyTorch: the operators' schemas and their CPU kernels (Kokkos' default host backend).
#include "SoftMarginTorch_Ops.hpp"

#include <torch/library.h>

#include "SoftMarginTorch_Args.hpp"
#include "SoftMarginTorch_Kernels.hpp"
#include "SoftMarginTorch_Runtime.hpp"

namespace softmargin::torch_ops {
namespace {

using Host = Kokkos::DefaultHostExecutionSpace;

at::Tensor loss_cpu(const at::Tensor& input, const at::Tensor& target, std::int64_t reduction) {
  const auto args = check_args("softmargin::loss", input, target, reduction, c10::DeviceType::CPU);
  ensure_kokkos();
  return Kernels<Host>::loss(Host(), args);
}

at::Tensor backward_cpu(const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& target,
                        std::int64_t reduction) {
  const auto args = check_args("softmargin::backward", input, target, reduction, c10::DeviceType::CPU);
  const auto g = check_upstream("softmargin::backward", grad_output, args);
  ensure_kokkos();
  return Kernels<Host>::backward(Host(), g, args);
}

std::tuple<at::Tensor, at::Tensor> loss_and_grad_cpu(const at::Tensor& input, const at::Tensor& target,
                                                     std::int64_t reduction) {
  const auto args = check_args("softmargin::loss_and_grad", input, target, reduction, c10::DeviceType::CPU);
  ensure_kokkos();
  return Kernels<Host>::loss_and_grad(Host(), args);
}

}  // namespace

const c10::TypedOperatorHandle<at::Tensor(const at::Tensor&, const at::Tensor&, std::int64_t)>& loss_op() {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("softmargin::loss", "")
                             .typed<at::Tensor(const at::Tensor&, const at::Tensor&, std::int64_t)>();
  return op;
}

const c10::TypedOperatorHandle<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, std::int64_t)>&
backward_op() {
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("softmargin::backward", "")
          .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, std::int64_t)>();
  return op;
}

const c10::TypedOperatorHandle<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&, std::int64_t)>&
loss_and_grad_op() {
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("softmargin::loss_and_grad", "")
          .typed<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&, std::int64_t)>();
  return op;
}

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
  m.def("loss(Tensor input, Tensor target, int reduction=1) -> Tensor");
  m.def("backward(Tensor grad_output, Tensor input, Tensor target, int reduction=1) -> Tensor");
  m.def("loss_and_grad(Tensor input, Tensor target, int reduction=1) -> (Tensor, Tensor)");
  // The library's process-wide launch settings of its CUDA kernels (softmargin::LaunchOptions), for measurements.
  m.def("set_launch_options(bool programmatic_dependent_launch=True, int blocks_per_sm=0) -> ()",
        &softmargin::torch_ops::set_launch_options);
}

TORCH_LIBRARY_IMPL(softmargin, CPU, m) {
  m.impl("loss", &softmargin::torch_ops::loss_cpu);
  m.impl("backward", &softmargin::torch_ops::backward_cpu);
  m.impl("loss_and_grad", &softmargin::torch_ops::loss_and_grad_cpu);
}

// SoftMargin for PyTorch: the operators' argument checks.
#include "SoftMarginTorch_Args.hpp"

#include <ATen/ExpandUtils.h>

#include <limits>

namespace softmargin::torch_ops {

softmargin::Reduction to_reduction(const char* op, std::int64_t reduction) {
  switch (reduction) {
    case 0:
      return softmargin::Reduction::None;
    case 1:
      return softmargin::Reduction::Mean;
    case 2:
      return softmargin::Reduction::Sum;
    default:
      TORCH_CHECK_VALUE(false, op, ": reduction = ", reduction, " is not a valid value for reduction (0: none, ",
                        "1: mean, 2: sum)");
  }
  return softmargin::Reduction::Mean;
}

LossArgs check_args(const char* op, const at::Tensor& input, const at::Tensor& target, std::int64_t reduction,
                    c10::DeviceType device_type) {
  LossArgs args{input, target, to_reduction(op, reduction)};
  TORCH_CHECK(input.defined() && target.defined(), op, ": input and target must be defined tensors");
  TORCH_CHECK(input.layout() == c10::kStrided, op, ": input must be a strided (dense) tensor, but it has layout ",
              input.layout());
  TORCH_CHECK(target.layout() == c10::kStrided, op, ": target must be a strided (dense) tensor, but it has layout ",
              target.layout());
  const auto dtype = input.scalar_type();
  TORCH_CHECK(dtype == at::kFloat || dtype == at::kDouble || dtype == at::kBFloat16 || dtype == at::kHalf, op,
              ": input has dtype ", dtype, "; SoftMargin computes float32, float64, bfloat16 and float16 inputs");
  // PyTorch computes the loss in the input's dtype (in place on a copy of it): any real target is converted.
  TORCH_CHECK(!at::isComplexType(target.scalar_type()), "result type ", target.scalar_type(),
              " can't be cast to the desired output type ", dtype);
  // A 0-dimensional CPU target is a scalar, as in PyTorch's element-wise operators; other devices must match.
  const bool cpu_scalar_target = target.dim() == 0 && target.device().is_cpu();
  TORCH_CHECK(target.device() == input.device() || cpu_scalar_target,
              "Expected all tensors to be on the same device, but found at least two devices, ", input.device(),
              " and ", target.device(), "!");
  TORCH_CHECK(input.device().type() == device_type, op, ": input is on ", input.device(), " but this kernel runs on ",
              device_type);
  if (target.device() != input.device()) {
    args.y = target.to(input.device(), dtype);
  } else if (target.scalar_type() != dtype && target.scalar_type() != at::kChar) {
    args.y = target.to(dtype);
  }
  if (args.y.sizes() != input.sizes()) {
    const auto shape = at::infer_size(input.sizes(), args.y.sizes());  // PyTorch's message if they do not broadcast
    TORCH_CHECK(c10::IntArrayRef(shape) == input.sizes(), "output with shape ", input.sizes(),
                " doesn't match the broadcast shape ", c10::IntArrayRef(shape));
    args.y = args.y.expand(input.sizes());
  }
  return args;
}

at::Tensor check_upstream(const char* op, const at::Tensor& grad_output, const LossArgs& args) {
  TORCH_CHECK(grad_output.defined(), op, ": grad_output must be a defined tensor");
  TORCH_CHECK(grad_output.layout() == c10::kStrided, op, ": grad_output must be a strided (dense) tensor");
  TORCH_CHECK(!at::isComplexType(grad_output.scalar_type()), op, ": grad_output has the complex dtype ",
              grad_output.scalar_type());
  TORCH_CHECK(grad_output.device() == args.x.device(), "Expected all tensors to be on the same device, but found at ",
              "least two devices, ", args.x.device(), " and ", grad_output.device(), "!");
  at::Tensor g = grad_output.scalar_type() == args.x.scalar_type() ? grad_output : grad_output.to(args.x.scalar_type());
  if (args.reduction != softmargin::Reduction::None) {
    TORCH_CHECK(g.numel() == 1, op, ": grad_output of a reduced loss must hold one element, but it has shape ",
                g.sizes());
    return g.dim() == 0 ? g : g.reshape({});
  }
  if (g.sizes() != args.x.sizes()) {
    TORCH_CHECK(at::is_expandable_to(g.sizes(), args.x.sizes()), op, ": grad_output of shape ", g.sizes(),
                " does not broadcast to the input's shape ", args.x.sizes());
    g = g.expand(args.x.sizes());
  }
  return g;
}

at::Tensor empty_reduction(const at::Tensor& x, softmargin::Reduction reduction) {
  const double value = reduction == softmargin::Reduction::Mean ? std::numeric_limits<double>::quiet_NaN() : 0.0;
  return at::full({}, value, x.options());
}

}  // namespace softmargin::torch_ops

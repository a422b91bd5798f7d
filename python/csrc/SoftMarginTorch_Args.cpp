// SoftMargin for PyTorch: the operators' argument checks.
#include "SoftMarginTorch_Args.hpp"

#include <ATen/ExpandUtils.h>

#include <cmath>
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

namespace {

/// Checks x: strided, of a dtype the operators compute.
void check_input(const char* op, const at::Tensor& input) {
  TORCH_CHECK(input.layout() == c10::kStrided, op, ": input must be a strided (dense) tensor, but it has layout ",
              input.layout());
  const auto dtype = input.scalar_type();
  TORCH_CHECK(dtype == at::kFloat || dtype == at::kDouble || dtype == at::kBFloat16 || dtype == at::kHalf, op,
              ": input has dtype ", dtype, "; SoftMargin computes float32, float64, bfloat16 and float16 inputs");
}

/// A tensor of the call beside x (target, weight, pos_weight), named `name`: on x's device (a 0-dimensional CPU
/// tensor is a scalar, as in PyTorch's element-wise operators, and is moved there), of x's dtype unless it holds
/// `keep` (PyTorch computes in x's dtype, in place on a copy of it: any real dtype is converted), and expanded to x's
/// shape (stride 0 where it broadcasts, no copy).
at::Tensor operand(const char* op, const char* name, const at::Tensor& t, const at::Tensor& x, c10::ScalarType keep) {
  TORCH_CHECK(t.layout() == c10::kStrided, op, ": ", name, " must be a strided (dense) tensor, but it has layout ",
              t.layout());
  const auto dtype = x.scalar_type();
  TORCH_CHECK(!at::isComplexType(t.scalar_type()), "result type ", t.scalar_type(),
              " can't be cast to the desired output type ", dtype);
  const bool cpu_scalar = t.dim() == 0 && t.device().is_cpu();
  TORCH_CHECK(t.device() == x.device() || cpu_scalar,
              "Expected all tensors to be on the same device, but found at least two devices, ", x.device(), " and ",
              t.device(), "!");
  at::Tensor out = t;
  if (t.device() != x.device()) {
    out = t.to(x.device(), dtype);
  } else if (t.scalar_type() != dtype && t.scalar_type() != keep) {
    out = t.to(dtype);
  }
  if (out.sizes() != x.sizes()) {
    const auto shape = at::infer_size(x.sizes(), out.sizes());  // PyTorch's message if they do not broadcast
    TORCH_CHECK(c10::IntArrayRef(shape) == x.sizes(), "output with shape ", x.sizes(),
                " doesn't match the broadcast shape ", c10::IntArrayRef(shape));
    out = out.expand(x.sizes());
  }
  return out;
}

void check_device_type(const char* op, const at::Tensor& input, c10::DeviceType device_type) {
  TORCH_CHECK(input.device().type() == device_type, op, ": input is on ", input.device(), " but this kernel runs on ",
              device_type);
}

bool present(const OptionalTensor& t) { return t.has_value() && t->defined(); }

/// The normalizer of a reduced call (see LossArgs), checked: 0-dimensional, real, on the CPU or x's device, positive
/// where it is read here; reduction mean.
void set_normalizer(const char* op, LossArgs& a, const OptionalTensor& normalizer) {
  a.by = a.reduction;
  if (!present(normalizer)) return;
  const at::Tensor& n = *normalizer;
  TORCH_CHECK_VALUE(a.reduction == softmargin::Reduction::Mean, op,
                    ": a normalizer divides the sum of the losses in place of the element count: it needs reduction "
                    "mean, not ",
                    a.reduction == softmargin::Reduction::Sum ? "sum" : "none");
  TORCH_CHECK(n.layout() == c10::kStrided && n.dim() == 0, op,
              ": normalizer must be a number or a 0-dimensional tensor (the count to divide the sum by), but it has "
              "shape ",
              n.sizes());
  TORCH_CHECK(!at::isComplexType(n.scalar_type()) && n.scalar_type() != at::kBool, op, ": normalizer has dtype ",
              n.scalar_type(), "; it must be a real number");
  TORCH_CHECK(n.device().is_cpu() || n.device() == a.x.device(), "Expected all tensors to be on the same device, but ",
              "found at least two devices, ", a.x.device(), " and ", n.device(), "!");
  a.reduction = softmargin::Reduction::Sum;
  if (n.device().is_cpu()) {
    const double count = n.item<double>();
    TORCH_CHECK_VALUE(count > 0 && std::isfinite(count), op, ": normalizer = ", count,
                      " must be a positive, finite count");
    a.by = softmargin::mean_over(count);
    return;
  }
  const auto t = n.scalar_type();
  a.normalizer = t == at::kDouble || t == at::kFloat || t == at::kLong || t == at::kInt ? n : n.to(at::kDouble);
  a.by = softmargin::Reduction::Sum;  // the kernels' ReduceBy reads a.normalizer (TypedKernels)
}

}  // namespace

LossArgs check_args(const char* op, const at::Tensor& input, const at::Tensor& target, const OptionalTensor& weight,
                    const OptionalTensor& normalizer, std::int64_t reduction, c10::DeviceType device_type) {
  LossArgs args{input, target, to_reduction(op, reduction)};
  TORCH_CHECK(input.defined() && target.defined(), op, ": input and target must be defined tensors");
  check_input(op, input);
  args.y = operand(op, "target", target, input, at::kChar);
  if (present(weight)) args.weight = operand(op, "weight", *weight, input, input.scalar_type());
  set_normalizer(op, args, normalizer);
  check_device_type(op, input, device_type);
  return args;
}

LossArgs check_bce_args(const char* op, const at::Tensor& input, const at::Tensor& target, const OptionalTensor& weight,
                        const OptionalTensor& pos_weight, const OptionalTensor& normalizer, std::int64_t reduction,
                        c10::DeviceType device_type) {
  LossArgs args{input, target, to_reduction(op, reduction)};
  TORCH_CHECK(input.defined() && target.defined(), op, ": input and target must be defined tensors");
  check_input(op, input);
  // A bool target holds 0 and 1 in one byte: read as int8, it is the target PyTorch's conversion gives.
  const bool as_int8 = target.scalar_type() == at::kBool && target.layout() == c10::kStrided;
  args.y = operand(op, "target", as_int8 ? target.view(at::kChar) : target, input, at::kChar);
  if (present(weight)) args.weight = operand(op, "weight", *weight, input, input.scalar_type());
  if (present(pos_weight)) args.pos_weight = operand(op, "pos_weight", *pos_weight, input, input.scalar_type());
  set_normalizer(op, args, normalizer);
  check_device_type(op, input, device_type);
  return args;
}

LossArgs check_pairwise_args(const char* op, const at::Tensor& chosen, const at::Tensor& rejected,
                             const OptionalTensor& margin, double margin_value, const OptionalTensor& normalizer,
                             std::int64_t reduction, c10::DeviceType device_type) {
  LossArgs args{chosen, rejected, to_reduction(op, reduction)};
  args.margin_value = margin_value;
  TORCH_CHECK(chosen.defined() && rejected.defined(), op, ": chosen and rejected must be defined tensors");
  check_input(op, chosen);
  args.y = operand(op, "rejected", rejected, chosen, chosen.scalar_type());
  if (present(margin)) args.margin = operand(op, "margin", *margin, chosen, chosen.scalar_type());
  set_normalizer(op, args, normalizer);
  check_device_type(op, chosen, device_type);
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

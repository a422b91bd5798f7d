// SoftMargin for PyTorch: the operators' argument checks, with PyTorch's wording where PyTorch has one.
#ifndef SOFTMARGIN_TORCH_ARGS_HPP
#define SOFTMARGIN_TORCH_ARGS_HPP

#include <ATen/ATen.h>

#include <SoftMargin.hpp>
#include <cstdint>

namespace softmargin::torch_ops {

/// torch's reduction enumerators (at::Reduction): none 0, mean 1, sum 2.
softmargin::Reduction to_reduction(const char* op, std::int64_t reduction);

/// A call's tensors, checked: x float32, float64, bfloat16 or float16 and strided; y (the target) on x's device (a CPU
/// scalar is moved there), of x's dtype (converted from any real dtype, as PyTorch's in-place multiply does) or int8
/// (read as it is: its values are exact in every x dtype, so the result is the converted target's, at one byte an
/// element), and expanded to x's shape (stride 0 where it broadcasts, no copy). weight and pos_weight (undefined when
/// absent) likewise, of x's dtype. The loss has x's shape and dtype, as in PyTorch. For the pairwise loss x is chosen,
/// y rejected and margin (undefined: margin_value) the margin, all of x's dtype.
///
/// A normalizer (a 0-dimensional tensor: the caller's count) turns the mean into the sum divided by it: reduction is
/// then Sum and `by` the library's mean_over, of the host value where the normalizer is a CPU tensor (read here), else
/// of the normalizer in x's device memory (`normalizer`, float64, float32, int64 or int32), read where the kernel
/// divides: no synchronization.
struct LossArgs {
  at::Tensor x;
  at::Tensor y;
  softmargin::Reduction reduction = softmargin::Reduction::Mean;
  at::Tensor weight;
  at::Tensor pos_weight;
  at::Tensor margin;
  double margin_value = 0.0;
  softmargin::ReduceBy by = softmargin::Reduction::Mean;
  at::Tensor normalizer;
};

using OptionalTensor = c10::optional<at::Tensor>;

/// Checks input and target for the op named `op` on a kernel of `device_type`; throws c10::Error naming the problem.
LossArgs check_args(const char* op, const at::Tensor& input, const at::Tensor& target, const OptionalTensor& weight,
                    const OptionalTensor& normalizer, std::int64_t reduction, c10::DeviceType device_type);

/// As check_args for BCEWithLogits: a bool target is read as int8 (0 or 1, the same bytes), weight and pos_weight
/// (optional) are converted to x's dtype and expanded to x's shape with PyTorch's broadcasting.
LossArgs check_bce_args(const char* op, const at::Tensor& input, const at::Tensor& target, const OptionalTensor& weight,
                        const OptionalTensor& pos_weight, const OptionalTensor& normalizer, std::int64_t reduction,
                        c10::DeviceType device_type);

/// As check_args for the pairwise loss: rejected and margin (optional; margin_value when absent) are converted to
/// chosen's dtype and expanded to its shape with PyTorch's broadcasting.
LossArgs check_pairwise_args(const char* op, const at::Tensor& chosen, const at::Tensor& rejected,
                             const OptionalTensor& margin, double margin_value, const OptionalTensor& normalizer,
                             std::int64_t reduction, c10::DeviceType device_type);

/// The upstream gradient of a backward call as a tensor of x's dtype on x's device: a 0-dimensional one (sum, mean:
/// grad_output must hold one element) or one of x's shape (none: grad_output broadcasts to it, stride 0, no copy).
at::Tensor check_upstream(const char* op, const at::Tensor& grad_output, const LossArgs& args);

/// The reduced loss of an empty input: 0 for sum, NaN for mean (PyTorch's values).
at::Tensor empty_reduction(const at::Tensor& x, softmargin::Reduction reduction);

}  // namespace softmargin::torch_ops

#endif

// SoftMargin for PyTorch: the operators' work on one Kokkos execution-space instance, dispatched on the dtypes.
//
// Kernels<Exec, L> finds a call's element types (x's, and the target's: x's or int8) and forwards to
// TypedKernels<Exec, T, Y, L> for loss L. Those are defined in SoftMarginTorch_TypedKernels.hpp and compiled once per
// backend, loss and type pair, in files the build generates (python/CMakeLists.txt): the pairs compile in parallel,
// and the files that dispatch compile no kernel.
#ifndef SOFTMARGIN_TORCH_KERNELS_HPP
#define SOFTMARGIN_TORCH_KERNELS_HPP

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>

#include <cstdint>
#include <tuple>

#include "SoftMarginTorch_Args.hpp"

/// The dtypes the operators compute: float32, float64, bfloat16 and float16.
#define SOFTMARGIN_DISPATCH_TYPES(TYPE, NAME, ...) \
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, TYPE, NAME, __VA_ARGS__)

/// Runs the lambda (the last argument) with scalar_t, x's element type, and target_t, the target's: int8_t for an int8
/// target (read as it is), scalar_t otherwise (check_args converted it).
#define SOFTMARGIN_DISPATCH_X_Y(X, Y, NAME, ...)           \
  SOFTMARGIN_DISPATCH_TYPES((X).scalar_type(), NAME, [&] { \
    if ((Y).scalar_type() == at::kChar) {                  \
      using target_t = std::int8_t;                        \
      (__VA_ARGS__)();                                     \
    } else {                                               \
      using target_t = scalar_t;                           \
      (__VA_ARGS__)();                                     \
    }                                                      \
  })

namespace softmargin::torch_ops {

/// The losses of the operators: softmargin::loss & co. (SoftMarginLoss), softmargin::bce_with_logits & co. and
/// softmargin::pairwise_logistic & co. (the pairwise margin loss softplus(-(chosen - rejected - margin))).
enum class Loss { SoftMargin, BCEWithLogits, Pairwise };

/// The names of a loss's operators: the loss, its backward and the fused pass.
struct OpNames {
  const char* loss;
  const char* backward;
  const char* loss_and_grad;
};
constexpr OpNames op_names(Loss l) {
  switch (l) {
    case Loss::SoftMargin:
      return {"softmargin::loss", "softmargin::backward", "softmargin::loss_and_grad"};
    case Loss::BCEWithLogits:
      return {"softmargin::bce_with_logits", "softmargin::bce_with_logits_backward",
              "softmargin::bce_with_logits_loss_and_grad"};
    default:
      return {"softmargin::pairwise_logistic", "softmargin::pairwise_logistic_backward",
              "softmargin::pairwise_logistic_loss_and_grad"};
  }
}

/// The operators' work for loss L, x of torch element type T and a target of element type Y (T or int8_t) on Exec,
/// for arguments that check_args or check_bce_args (and check_upstream) accepted.
template <class Exec, class T, class Y, Loss L>
struct TypedKernels {
  /// The loss: x's shape (reduction none) or a 0-dimensional tensor.
  static at::Tensor loss(const Exec& space, const LossArgs& a);
  /// The gradient with respect to x: g * d loss / d x, g a 0-dimensional tensor (sum, mean) or of x's shape (none).
  static at::Tensor backward(const Exec& space, const at::Tensor& g, const LossArgs& a);
  /// The reduced loss and its gradient with respect to x (upstream gradient 1) in one pass.
  static std::tuple<at::Tensor, at::Tensor> loss_and_grad(const Exec& space, const LossArgs& a);
};

/// The pairwise loss's gradient passes for chosen of torch element type T (rejected and margin of the same type) on
/// Exec: both gradients, d loss / d chosen and d loss / d rejected (its negation), of chosen's shape, in one pass.
/// Its loss is TypedKernels<Exec, T, T, Loss::Pairwise>::loss.
template <class Exec, class T>
struct PairwiseKernels {
  /// g * d loss / d chosen and g * d loss / d rejected (g as in TypedKernels::backward).
  static std::tuple<at::Tensor, at::Tensor> backward(const Exec& space, const at::Tensor& g, const LossArgs& a);
  /// The reduced loss and both gradients (upstream gradient 1) in one pass.
  static std::tuple<at::Tensor, at::Tensor, at::Tensor> loss_and_grad(const Exec& space, const LossArgs& a);
};

template <class Exec, Loss L>
struct Kernels {
  static at::Tensor loss(const Exec& space, const LossArgs& a) {
    at::Tensor out;
    SOFTMARGIN_DISPATCH_X_Y(a.x, a.y, op_names(L).loss,
                            [&] { out = TypedKernels<Exec, scalar_t, target_t, L>::loss(space, a); });
    return out;
  }

  static at::Tensor backward(const Exec& space, const at::Tensor& g, const LossArgs& a) {
    at::Tensor grad;
    SOFTMARGIN_DISPATCH_X_Y(a.x, a.y, op_names(L).backward,
                            [&] { grad = TypedKernels<Exec, scalar_t, target_t, L>::backward(space, g, a); });
    return grad;
  }

  static std::tuple<at::Tensor, at::Tensor> loss_and_grad(const Exec& space, const LossArgs& a) {
    std::tuple<at::Tensor, at::Tensor> out;
    SOFTMARGIN_DISPATCH_X_Y(a.x, a.y, op_names(L).loss_and_grad,
                            [&] { out = TypedKernels<Exec, scalar_t, target_t, L>::loss_and_grad(space, a); });
    return out;
  }
};

template <class Exec>
struct Kernels<Exec, Loss::Pairwise> {
  static constexpr OpNames names = op_names(Loss::Pairwise);

  static at::Tensor loss(const Exec& space, const LossArgs& a) {
    at::Tensor out;
    SOFTMARGIN_DISPATCH_TYPES(a.x.scalar_type(), names.loss,
                              [&] { out = TypedKernels<Exec, scalar_t, scalar_t, Loss::Pairwise>::loss(space, a); });
    return out;
  }

  static std::tuple<at::Tensor, at::Tensor> backward(const Exec& space, const at::Tensor& g, const LossArgs& a) {
    std::tuple<at::Tensor, at::Tensor> grads;
    SOFTMARGIN_DISPATCH_TYPES(a.x.scalar_type(), names.backward,
                              [&] { grads = PairwiseKernels<Exec, scalar_t>::backward(space, g, a); });
    return grads;
  }

  static std::tuple<at::Tensor, at::Tensor, at::Tensor> loss_and_grad(const Exec& space, const LossArgs& a) {
    std::tuple<at::Tensor, at::Tensor, at::Tensor> out;
    SOFTMARGIN_DISPATCH_TYPES(a.x.scalar_type(), names.loss_and_grad,
                              [&] { out = PairwiseKernels<Exec, scalar_t>::loss_and_grad(space, a); });
    return out;
  }
};

}  // namespace softmargin::torch_ops

#endif

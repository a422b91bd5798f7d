// SoftMargin for PyTorch: the operators' work on one Kokkos execution-space instance.
//
// Outputs are allocated by torch's allocator of the device (the caching allocator on CUDA) directly, without a
// dispatch, in x's layout (empty_like where x is not contiguous), and every tensor is passed to the library as an
// unmanaged View (SoftMarginTorch_Layout.hpp). On CUDA nothing else is allocated per call
// (the library keeps its workspace per instance) and nothing waits: the instance enqueues on torch's current stream.
// Host backends finish before returning, as a CPU operator must.
#ifndef SOFTMARGIN_TORCH_KERNELS_HPP
#define SOFTMARGIN_TORCH_KERNELS_HPP

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/EmptyTensor.h>

#include <SoftMargin.hpp>
#include <array>
#include <cstdint>
#include <tuple>
#include <utility>

#include "SoftMarginTorch_Args.hpp"
#include "SoftMarginTorch_Layout.hpp"

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

#if defined(SOFTMARGIN_TORCH_CUDA)
/// A new contiguous tensor on the current CUDA device from torch's caching allocator (SoftMarginTorch_Cuda.cpp).
at::Tensor empty_cuda(c10::IntArrayRef sizes, c10::ScalarType dtype);
#endif

template <class Exec>
struct Kernels {
  using device = Kokkos::Device<Exec, typename Exec::memory_space>;
  template <class T>
  using Scalar = Kokkos::View<T, device, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  /// Host backends may return before their kernels finish (Kokkos' semantics): wait, as a CPU operator must.
  static void finish(const Exec& space) {
    if constexpr (Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible)
      space.fence("softmargin::torch: host operator");
  }

  /// A new contiguous tensor of x's dtype on Exec's device, straight from the device's allocator.
  static at::Tensor empty(c10::IntArrayRef sizes, const at::Tensor& x) {
    if constexpr (softmargin::Impl::is_host_space_v<Exec>) {
      return at::Tensor(at::detail::empty_cpu(sizes, x.scalar_type()));
    } else {
#if defined(SOFTMARGIN_TORCH_CUDA)
      return empty_cuda(sizes, x.scalar_type());
#else
      static_assert(softmargin::Impl::is_host_space_v<Exec>, "device outputs need the CUDA build");
#endif
    }
  }

  /// A new tensor of x's shape, dtype and layout (empty_like's strides where x is not contiguous).
  static at::Tensor empty_like(const at::Tensor& x) {
    return x.is_contiguous() ? empty(x.sizes(), x) : at::empty_like(x);
  }

  /// The loss: x's shape (reduction none) or a 0-dimensional tensor.
  static at::Tensor loss(const Exec& space, const LossArgs& a) {
    const auto r = a.reduction;
    if (r == softmargin::Reduction::None) {
      at::Tensor out = empty_like(a.x);
      if (a.x.numel() == 0) return out;
      SOFTMARGIN_DISPATCH_X_Y(a.x, a.y, "softmargin::loss", [&] {
        with_views<scalar_t, device, target_t>(std::array<at::Tensor, 1>{out}, std::array<at::Tensor, 2>{a.x, a.y},
                                               [&](auto o, auto x, auto y) { softmargin::loss(space, x, y, o, r); });
      });
      finish(space);
      return out;
    }
    if (a.x.numel() == 0) return empty_reduction(a.x, r);
    at::Tensor out = empty({}, a.x);
    SOFTMARGIN_DISPATCH_X_Y(a.x, a.y, "softmargin::loss", [&] {
      const Scalar<lib_value_t<scalar_t>> o(lib_data<scalar_t>(out));
      with_views<scalar_t, device, target_t>(std::array<at::Tensor, 0>{}, std::array<at::Tensor, 2>{a.x, a.y},
                                             [&](auto x, auto y) { softmargin::loss(space, x, y, o, r); });
    });
    finish(space);
    return out;
  }

  /// The gradient with respect to x: g * d loss / d x, g a 0-dimensional tensor (sum, mean) or of x's shape (none),
  /// both checked by check_upstream.
  static at::Tensor backward(const Exec& space, const at::Tensor& g, const LossArgs& a) {
    at::Tensor grad = empty_like(a.x);
    if (a.x.numel() == 0) return grad;
    const auto r = a.reduction;
    SOFTMARGIN_DISPATCH_X_Y(a.x, a.y, "softmargin::backward", [&] {
      if (r == softmargin::Reduction::None) {
        with_views<scalar_t, device, target_t>(
            std::array<at::Tensor, 1>{grad}, std::array<at::Tensor, 3>{a.x, a.y, g},
            [&](auto gx, auto x, auto y, auto up) { softmargin::backward(space, x, y, up, gx, r); });
      } else {
        const Scalar<const lib_value_t<scalar_t>> up(lib_data<scalar_t>(g));
        with_views<scalar_t, device, target_t>(
            std::array<at::Tensor, 1>{grad}, std::array<at::Tensor, 2>{a.x, a.y},
            [&](auto gx, auto x, auto y) { softmargin::backward(space, x, y, up, gx, r); });
      }
    });
    finish(space);
    return grad;
  }

  /// The reduced loss and its gradient with respect to x (upstream gradient 1) in one pass.
  static std::tuple<at::Tensor, at::Tensor> loss_and_grad(const Exec& space, const LossArgs& a) {
    const auto r = a.reduction;
    TORCH_CHECK(r != softmargin::Reduction::None,
                "softmargin::loss_and_grad: reduction none has no scalar loss; use softmargin::loss and "
                "softmargin::backward");
    at::Tensor grad = empty_like(a.x);
    if (a.x.numel() == 0) return {empty_reduction(a.x, r), grad};
    at::Tensor out = empty({}, a.x);
    SOFTMARGIN_DISPATCH_X_Y(a.x, a.y, "softmargin::loss_and_grad", [&] {
      const Scalar<lib_value_t<scalar_t>> o(lib_data<scalar_t>(out));
      with_views<scalar_t, device, target_t>(
          std::array<at::Tensor, 1>{grad}, std::array<at::Tensor, 2>{a.x, a.y},
          [&](auto gx, auto x, auto y) { softmargin::loss_and_grad(space, x, y, o, gx, r); });
    });
    finish(space);
    return {out, grad};
  }
};

}  // namespace softmargin::torch_ops

#endif

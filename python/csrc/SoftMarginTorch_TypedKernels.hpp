// SoftMargin for PyTorch: the definitions of TypedKernels (SoftMarginTorch_Kernels.hpp), included by the files the
// build generates, one per backend and type pair.
//
// Every pass is called with softmargin::auto_only: the kernels of the backend's Auto algorithm alone are compiled here
// (the library's explicit instantiations serve run-time algorithms, which the operators never take).
//
// Outputs are allocated by torch's allocator of the device (the caching allocator on CUDA) directly, without a
// dispatch, in x's layout (empty_like where x is not contiguous), and every tensor is passed to the library as an
// unmanaged View (SoftMarginTorch_Layout.hpp). On CUDA nothing else is allocated per call
// (the library keeps its workspace per instance) and nothing waits: the instance enqueues on torch's current stream.
// Host backends finish before returning, as a CPU operator must.
#ifndef SOFTMARGIN_TORCH_TYPED_KERNELS_HPP
#define SOFTMARGIN_TORCH_TYPED_KERNELS_HPP

#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>

#include <SoftMargin.hpp>
#include <array>
#include <cstdint>
#include <tuple>

#include "SoftMarginTorch_Args.hpp"
#include "SoftMarginTorch_Kernels.hpp"
#include "SoftMarginTorch_Layout.hpp"

namespace softmargin::torch_ops {

#if defined(SOFTMARGIN_TORCH_CUDA)
/// A new contiguous tensor on the current CUDA device from torch's caching allocator (SoftMarginTorch_Cuda.cpp).
at::Tensor empty_cuda(c10::IntArrayRef sizes, c10::ScalarType dtype);
#endif

/// Outputs and completion on Exec.
template <class Exec>
struct Outputs {
  using device = Kokkos::Device<Exec, typename Exec::memory_space>;
  template <class V>
  using Scalar = Kokkos::View<V, device, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

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
};

/// The reduction of a call on Device: a.by, or the mean over the normalizer in Device's memory (LossArgs).
template <class Device>
softmargin::ReduceBy reduce_by(const LossArgs& a) {
  if (!a.normalizer.defined()) return a.by;
  using M = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  const at::Tensor& n = a.normalizer;
  switch (n.scalar_type()) {
    case at::kDouble:
      return softmargin::mean_over(Kokkos::View<const double, Device, M>(n.data_ptr<double>()));
    case at::kFloat:
      return softmargin::mean_over(Kokkos::View<const float, Device, M>(n.data_ptr<float>()));
    case at::kLong:
      return softmargin::mean_over(Kokkos::View<const std::int64_t, Device, M>(n.data_ptr<std::int64_t>()));
    default:
      return softmargin::mean_over(Kokkos::View<const std::int32_t, Device, M>(n.data_ptr<std::int32_t>()));
  }
}

/// The input tensors of loss L and its descriptor (SoftMargin_Family.hpp): Inputs<L>::with(a, f) calls f(ins, make),
/// ins the call's inputs (x first, the target second, then those present of weight and pos_weight) and make a function
/// of their Views, in that order, that returns the library's descriptor of the call.
template <Loss L>
struct Inputs;

template <>
struct Inputs<Loss::SoftMargin> {
  template <class F>
  static void with(const LossArgs& a, F&& f) {
    using softmargin::soft_margin;
    if (a.weight.defined()) {
      f(std::array<at::Tensor, 3>{a.x, a.y, a.weight},
        [](const auto& x, const auto& y, const auto& w) { return soft_margin(x, y, w); });
    } else {
      f(std::array<at::Tensor, 2>{a.x, a.y}, [](const auto& x, const auto& y) { return soft_margin(x, y); });
    }
  }
};

template <>
struct Inputs<Loss::BCEWithLogits> {
  template <class F>
  static void with(const LossArgs& a, F&& f) {
    using softmargin::bce_with_logits;
    const bool weight = a.weight.defined(), pos_weight = a.pos_weight.defined();
    if (weight && pos_weight) {
      f(std::array<at::Tensor, 4>{a.x, a.y, a.weight, a.pos_weight},
        [](const auto& x, const auto& t, const auto& w, const auto& p) { return bce_with_logits(x, t, w, p); });
    } else if (weight) {
      f(std::array<at::Tensor, 3>{a.x, a.y, a.weight},
        [](const auto& x, const auto& t, const auto& w) { return bce_with_logits(x, t, w); });
    } else if (pos_weight) {
      f(std::array<at::Tensor, 3>{a.x, a.y, a.pos_weight},
        [](const auto& x, const auto& t, const auto& p) { return bce_with_logits(x, t, softmargin::no_weight, p); });
    } else {
      f(std::array<at::Tensor, 2>{a.x, a.y}, [](const auto& x, const auto& t) { return bce_with_logits(x, t); });
    }
  }
};

template <>
struct Inputs<Loss::Pairwise> {
  template <class F>
  static void with(const LossArgs& a, F&& f) {
    using softmargin::pairwise;
    if (a.margin.defined()) {
      f(std::array<at::Tensor, 3>{a.x, a.y, a.margin},
        [](const auto& c, const auto& r, const auto& m) { return pairwise(c, r, m); });
    } else {
      f(std::array<at::Tensor, 2>{a.x, a.y},
        [m = a.margin_value](const auto& c, const auto& r) { return pairwise(c, r, m); });
    }
  }
};

template <class Exec, class T, class Y, Loss L>
at::Tensor TypedKernels<Exec, T, Y, L>::loss(const Exec& space, const LossArgs& a) {
  using O = Outputs<Exec>;
  using device = typename O::device;
  const auto r = a.reduction;
  const bool none = r == softmargin::Reduction::None;
  if (a.x.numel() == 0) return none ? O::empty_like(a.x) : empty_reduction(a.x, r);
  at::Tensor out = none ? O::empty_like(a.x) : O::empty({}, a.x);
  Inputs<L>::with(a, [&](const auto& ins, const auto& make) {
    if (none) {
      with_views<T, device, Y>(std::array<at::Tensor, 1>{out}, ins, [&](auto o, auto... in) {
        softmargin::loss(space, make(in...), o, r, softmargin::auto_only);
      });
    } else {
      const typename O::template Scalar<lib_value_t<T>> o(lib_data<T>(out));
      const softmargin::ReduceBy by = reduce_by<device>(a);
      with_views<T, device, Y>(std::array<at::Tensor, 0>{}, ins,
                               [&](auto... in) { softmargin::loss(space, make(in...), o, by, softmargin::auto_only); });
    }
  });
  O::finish(space);
  return out;
}

template <class Exec, class T, class Y, Loss L>
at::Tensor TypedKernels<Exec, T, Y, L>::backward(const Exec& space, const at::Tensor& g, const LossArgs& a) {
  using O = Outputs<Exec>;
  using device = typename O::device;
  at::Tensor grad = O::empty_like(a.x);
  if (a.x.numel() == 0) return grad;
  const auto r = a.reduction;
  Inputs<L>::with(a, [&](const auto& ins, const auto& make) {
    if (r == softmargin::Reduction::None) {  // g of x's shape: the last input
      with_views<T, device, Y>(std::array<at::Tensor, 1>{grad}, append(ins, g), [&](auto gx, auto... in) {
        last_first(
            [&](auto up, auto... v) { softmargin::backward(space, make(v...), up, gx, r, softmargin::auto_only); },
            in...);
      });
    } else {
      const typename O::template Scalar<const lib_value_t<T>> up(lib_data<T>(g));
      const softmargin::ReduceBy by = reduce_by<device>(a);
      with_views<T, device, Y>(std::array<at::Tensor, 1>{grad}, ins, [&](auto gx, auto... in) {
        softmargin::backward(space, make(in...), up, gx, by, softmargin::auto_only);
      });
    }
  });
  O::finish(space);
  return grad;
}

template <class Exec, class T, class Y, Loss L>
std::tuple<at::Tensor, at::Tensor> TypedKernels<Exec, T, Y, L>::loss_and_grad(const Exec& space, const LossArgs& a) {
  using O = Outputs<Exec>;
  using device = typename O::device;
  const auto r = a.reduction;
  constexpr OpNames names = op_names(L);
  TORCH_CHECK(r != softmargin::Reduction::None, names.loss_and_grad, ": reduction none has no scalar loss; use ",
              names.loss, " and ", names.backward);
  at::Tensor grad = O::empty_like(a.x);
  if (a.x.numel() == 0) return {empty_reduction(a.x, r), grad};
  at::Tensor out = O::empty({}, a.x);
  const typename O::template Scalar<lib_value_t<T>> o(lib_data<T>(out));
  const softmargin::ReduceBy by = reduce_by<device>(a);
  Inputs<L>::with(a, [&](const auto& ins, const auto& make) {
    with_views<T, device, Y>(std::array<at::Tensor, 1>{grad}, ins, [&](auto gx, auto... in) {
      const auto desc = make(in...);
      softmargin::loss_and_grad(space, desc, o, gx, by, softmargin::Impl::family_result_t<decltype(desc)>(1),
                                softmargin::auto_only);
    });
  });
  O::finish(space);
  return {out, grad};
}

template <class Exec, class T>
std::tuple<at::Tensor, at::Tensor> PairwiseKernels<Exec, T>::backward(const Exec& space, const at::Tensor& g,
                                                                      const LossArgs& a) {
  using O = Outputs<Exec>;
  using device = typename O::device;
  at::Tensor grad_c = O::empty_like(a.x), grad_r = O::empty_like(a.x);
  if (a.x.numel() == 0) return {grad_c, grad_r};
  const auto r = a.reduction;
  Inputs<Loss::Pairwise>::with(a, [&](const auto& ins, const auto& make) {
    const std::array<at::Tensor, 2> outs{grad_c, grad_r};
    if (r == softmargin::Reduction::None) {  // g of x's shape: the last input
      with_views<T, device>(outs, append(ins, g), [&](auto gc, auto gr, auto... in) {
        last_first(
            [&](auto up, auto... v) {
              softmargin::backward(space, make(v...), up, softmargin::grads(gc, gr), r, softmargin::auto_only);
            },
            in...);
      });
    } else {
      const typename O::template Scalar<const lib_value_t<T>> up(lib_data<T>(g));
      const softmargin::ReduceBy by = reduce_by<device>(a);
      with_views<T, device>(outs, ins, [&](auto gc, auto gr, auto... in) {
        softmargin::backward(space, make(in...), up, softmargin::grads(gc, gr), by, softmargin::auto_only);
      });
    }
  });
  O::finish(space);
  return {grad_c, grad_r};
}

template <class Exec, class T>
std::tuple<at::Tensor, at::Tensor, at::Tensor> PairwiseKernels<Exec, T>::loss_and_grad(const Exec& space,
                                                                                       const LossArgs& a) {
  using O = Outputs<Exec>;
  using device = typename O::device;
  const auto r = a.reduction;
  constexpr OpNames names = op_names(Loss::Pairwise);
  TORCH_CHECK(r != softmargin::Reduction::None, names.loss_and_grad, ": reduction none has no scalar loss; use ",
              names.loss, " and ", names.backward);
  at::Tensor grad_c = O::empty_like(a.x), grad_r = O::empty_like(a.x);
  if (a.x.numel() == 0) return {empty_reduction(a.x, r), grad_c, grad_r};
  at::Tensor out = O::empty({}, a.x);
  const typename O::template Scalar<lib_value_t<T>> o(lib_data<T>(out));
  const softmargin::ReduceBy by = reduce_by<device>(a);
  Inputs<Loss::Pairwise>::with(a, [&](const auto& ins, const auto& make) {
    with_views<T, device>(std::array<at::Tensor, 2>{grad_c, grad_r}, ins, [&](auto gc, auto gr, auto... in) {
      const auto desc = make(in...);
      softmargin::loss_and_grad(space, desc, o, softmargin::grads(gc, gr), by,
                                softmargin::Impl::family_result_t<decltype(desc)>(1), softmargin::auto_only);
    });
  });
  O::finish(space);
  return {out, grad_c, grad_r};
}

}  // namespace softmargin::torch_ops

#endif

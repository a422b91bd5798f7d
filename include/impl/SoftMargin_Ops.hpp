// SoftMargin: element operations. Each names the views it reads and writes; the kernels in SoftMargin_Kernels.hpp
// run any of them (map: apply to every element; reduce: sum what it returns).
#ifndef SOFTMARGIN_IMPL_OPS_HPP
#define SOFTMARGIN_IMPL_OPS_HPP

#include <Kokkos_Core.hpp>

#include <type_traits>

#include "SoftMargin_Math.hpp"
#include "SoftMargin_Views.hpp"

namespace softmargin::Impl {

/// The upstream gradient of a reduced loss: a device scalar (rank-0 view, may be null) or else a host value, times
/// 1/divisor (N for mean, 1 for sum).
template <class UV>
struct ScalarUpstream {
  using T = typename UV::non_const_value_type;
  using A = accum_t<T>;
  UV view;  ///< read on the device when not null
  A value;  ///< used when view is null
  A divisor;
  KOKKOS_INLINE_FUNCTION T get() const {
    return static_cast<T>((view.data() != nullptr ? static_cast<A>(view()) : value) / divisor);
  }
};

/// loss(x_i, y_i), summed by a reduction.
template <class XV, class YV>
struct LossOp {
  static constexpr const char* range_label = "softmargin::loss::range_reduce";
  static constexpr const char* team_label = "softmargin::loss::team_scratch";
  using value_type = typename XV::non_const_value_type;
  using accum_type = accum_t<value_type>;
  XV x;
  YV y;

  KOKKOS_INLINE_FUNCTION value_type scale() const { return value_type(1); }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION accum_type operator()(const Index i, const value_type) const {
    return static_cast<accum_type>(loss<value_type>(at(x, i), at(y, i)));
  }
};

/// out_i = loss(x_i, y_i) (reduction none).
template <class XV, class YV, class OV>
struct LossNoneOp {
  static constexpr const char* range_label = "softmargin::loss_none::range_reduce";
  static constexpr const char* team_label = "softmargin::loss_none::team_scratch";
  using value_type = typename XV::non_const_value_type;
  XV x;
  YV y;
  OV out;

  KOKKOS_INLINE_FUNCTION value_type scale() const { return value_type(1); }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Index i, const value_type) const {
    const value_type l = loss<value_type>(at(x, i), at(y, i));
    at(out, i) = l;
  }
};

/// grad_i = g_i * dloss/dx(x_i, y_i): g_i is the scalar upstream (sum, mean: UpV of rank 0, wrapped in a
/// ScalarUpstream) or upstream_i (none: UpV of x's rank).
template <class XV, class YV, class GV, class UpV>
struct GradOp {
  static constexpr const char* range_label = "softmargin::backward::range_reduce";
  static constexpr const char* team_label = "softmargin::backward::team_scratch";
  using value_type = typename XV::non_const_value_type;
  static constexpr bool per_element = UpV::rank() != 0;
  XV x;
  YV y;
  GV grad;
  std::conditional_t<per_element, UpV, ScalarUpstream<UpV>> upstream;

  KOKKOS_INLINE_FUNCTION value_type scale() const {
    if constexpr (per_element) return value_type(1);
    else return upstream.get();
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Index i, const value_type s) const {
    const value_type d = dloss_dx<value_type>(at(x, i), at(y, i));
    if constexpr (per_element) at(grad, i) = at(upstream, i) * d;
    else at(grad, i) = s * d;
  }
};

/// Fused: grad_i = s * dloss/dx(x_i, y_i), returns loss(x_i, y_i) for the reduction, sharing exp(-|z|).
template <class XV, class YV, class GV, class UV>
struct LossGradOp {
  static constexpr const char* range_label = "softmargin::loss_and_grad::range_reduce";
  static constexpr const char* team_label = "softmargin::loss_and_grad::team_scratch";
  using value_type = typename XV::non_const_value_type;
  using accum_type = accum_t<value_type>;
  XV x;
  YV y;
  GV grad;
  ScalarUpstream<UV> scalar;

  KOKKOS_INLINE_FUNCTION value_type scale() const { return scalar.get(); }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION accum_type operator()(const Index i, const value_type s) const {
    value_type g;
    const value_type l = loss_and_dloss_dx<value_type>(at(x, i), at(y, i), g);
    at(grad, i) = s * g;
    return static_cast<accum_type>(l);
  }
};

}  // namespace softmargin::Impl

#endif

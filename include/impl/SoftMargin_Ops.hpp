// SoftMargin: the element operations. Each names the views it reads and writes, its kind (map, reduce, fused) and
// its kernel labels; the backends run any of them through for_share (SoftMargin_Packs.hpp).
//
// An op provides: op(i, scale) for element i (returning its value to sum unless it is a map), scale() (the factor of
// a gradient, read once per thread), and, where its views allow packs (`packable`): load(p), the inputs of pack p,
// and apply(inputs, p, scale), which computes pack p (returning its values to sum unless it is a map).
#ifndef SOFTMARGIN_IMPL_OPS_HPP
#define SOFTMARGIN_IMPL_OPS_HPP

#include <Kokkos_Core.hpp>
#include <type_traits>

#include "SoftMargin_Math.hpp"
#include "SoftMargin_Packs.hpp"
#include "SoftMargin_Views.hpp"

namespace softmargin::Impl {

/// Kokkos Tools labels of an op's kernels, one per algorithm.
struct KernelLabels {
  const char* range;
  const char* team;
  const char* native;
};

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

/// The x and y packs of elements [p W, p W + W), read only by the op's kernels: read-only loads.
template <class XV, class YV, class P>
struct InputPacks {
  P x, y;
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION static InputPacks load(const XV& x, const YV& y, const Index p) {
    return {load_pack_readonly<P>(x.data(), p), load_pack_readonly<P>(y.data(), p)};
  }
};

/// Reduce: loss(x_i, y_i), summed.
template <class XV, class YV>
struct LossOp {
  static constexpr OpKind kind = OpKind::Reduce;
  static constexpr KernelLabels labels{"softmargin::loss::range_reduce", "softmargin::loss::team_scratch",
                                       "softmargin::loss::native"};
  using value_type = typename XV::non_const_value_type;
  using pack_type = PackFor<value_type, typename XV::execution_space>;
  using accum_type = accum_t<value_type>;
  using inputs_type = InputPacks<XV, YV, pack_type>;
  static constexpr bool packable = is_flat_v<XV> && is_flat_v<YV>;
  XV x;
  YV y;

  bool aligned() const { return aligned_to<pack_type::bytes>(x, y); }
  KOKKOS_INLINE_FUNCTION value_type scale() const { return value_type(1); }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION accum_type operator()(const Index i, const value_type) const {
    return static_cast<accum_type>(loss<value_type>(at(x, i), at(y, i)));
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION inputs_type load(const Index p) const {
    return inputs_type::load(x, y, p);
  }
  /// The losses of a pack, in value_type (LaneSums adds them so that losses near its max do not overflow).
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION pack_type apply(const inputs_type& in, const Index, const value_type) const {
    pack_type l;
    for (int k = 0; k < pack_type::width; ++k) l.v[k] = loss<value_type>(in.x.v[k], in.y.v[k]);
    return l;
  }
};

/// Map: out_i = loss(x_i, y_i) (reduction none), rounded once to out's value type.
template <class XV, class YV, class OV>
struct LossNoneOp {
  static constexpr OpKind kind = OpKind::Map;
  static constexpr KernelLabels labels{"softmargin::loss_none::range_for", "softmargin::loss_none::team_for",
                                       "softmargin::loss_none::native"};
  using value_type = typename XV::non_const_value_type;
  using out_type = typename OV::non_const_value_type;
  using pack_type = PackFor<value_type, typename XV::execution_space>;
  using inputs_type = InputPacks<XV, YV, pack_type>;
  static constexpr bool packable =
      is_flat_v<XV> && is_flat_v<YV> && is_flat_v<OV> && std::is_same_v<out_type, value_type>;
  XV x;
  YV y;
  OV out;

  bool aligned() const { return aligned_to<pack_type::bytes>(x, y, out); }
  KOKKOS_INLINE_FUNCTION value_type scale() const { return value_type(1); }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Index i, const value_type) const {
    const value_type l = loss<value_type>(at(x, i), at(y, i));
    at(out, i) = static_cast<out_type>(l);
  }
  /// Plain loads: out may be x or y itself (in place).
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION inputs_type load(const Index p) const {
    return {load_pack<pack_type>(x.data(), p), load_pack<pack_type>(y.data(), p)};
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION void apply(const inputs_type& in, const Index p, const value_type) const {
    pack_type o;
    for (int k = 0; k < pack_type::width; ++k) o.v[k] = loss<value_type>(in.x.v[k], in.y.v[k]);
    store_pack(out.data(), p, o);
  }
};

/// Map: grad_i = g_i * dloss/dx(x_i, y_i). g_i is the scalar upstream (sum, mean: UpV of rank 0, wrapped in a
/// ScalarUpstream) or upstream_i (none: UpV of x's rank).
template <class XV, class YV, class GV, class UpV>
struct GradOp {
  static constexpr OpKind kind = OpKind::Map;
  static constexpr KernelLabels labels{"softmargin::backward::range_for", "softmargin::backward::team_for",
                                       "softmargin::backward::native"};
  using value_type = typename XV::non_const_value_type;
  using pack_type = PackFor<value_type, typename XV::execution_space>;
  static constexpr bool per_element = UpV::rank() != 0;
  struct inputs_type {
    pack_type x, y, g;
  };
  static constexpr bool packable = is_flat_v<XV> && is_flat_v<YV> && is_flat_v<GV> && (!per_element || is_flat_v<UpV>);
  XV x;
  YV y;
  GV grad;
  std::conditional_t<per_element, UpV, ScalarUpstream<UpV>> upstream;

  bool aligned() const {
    if constexpr (per_element)
      return aligned_to<pack_type::bytes>(x, y, grad, upstream);
    else
      return aligned_to<pack_type::bytes>(x, y, grad);
  }
  KOKKOS_INLINE_FUNCTION value_type scale() const {
    if constexpr (per_element)
      return value_type(1);
    else
      return upstream.get();
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Index i, const value_type s) const {
    const value_type d = dloss_dx<value_type>(at(x, i), at(y, i));
    if constexpr (per_element)
      at(grad, i) = at(upstream, i) * d;
    else
      at(grad, i) = s * d;
  }
  /// Plain loads: grad may be x, y or the upstream itself (in place).
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION inputs_type load(const Index p) const {
    inputs_type in{load_pack<pack_type>(x.data(), p), load_pack<pack_type>(y.data(), p), {}};
    if constexpr (per_element) in.g = load_pack<pack_type>(upstream.data(), p);
    return in;
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION void apply(const inputs_type& in, const Index p, const value_type s) const {
    pack_type g;
    for (int k = 0; k < pack_type::width; ++k)
      g.v[k] = (per_element ? in.g.v[k] : s) * dloss_dx<value_type>(in.x.v[k], in.y.v[k]);
    store_pack(grad.data(), p, g);
  }
};

/// Fused: grad_i = s * dloss/dx(x_i, y_i), and loss(x_i, y_i) summed, sharing exp(-|z|).
template <class XV, class YV, class GV, class UV>
struct LossGradOp {
  static constexpr OpKind kind = OpKind::Fused;
  static constexpr KernelLabels labels{"softmargin::loss_and_grad::range_reduce",
                                       "softmargin::loss_and_grad::team_scratch", "softmargin::loss_and_grad::native"};
  using value_type = typename XV::non_const_value_type;
  using pack_type = PackFor<value_type, typename XV::execution_space>;
  using accum_type = accum_t<value_type>;
  struct inputs_type {
    pack_type x, y;
  };
  static constexpr bool packable = is_flat_v<XV> && is_flat_v<YV> && is_flat_v<GV>;
  XV x;
  YV y;
  GV grad;
  ScalarUpstream<UV> scalar;

  bool aligned() const { return aligned_to<pack_type::bytes>(x, y, grad); }
  KOKKOS_INLINE_FUNCTION value_type scale() const { return scalar.get(); }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION accum_type operator()(const Index i, const value_type s) const {
    value_type g;
    const value_type l = loss_and_dloss_dx<value_type>(at(x, i), at(y, i), g);
    at(grad, i) = s * g;
    return static_cast<accum_type>(l);
  }
  /// Plain loads: grad may be x or y itself (in place).
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION inputs_type load(const Index p) const {
    return {load_pack<pack_type>(x.data(), p), load_pack<pack_type>(y.data(), p)};
  }
  /// Stores the gradients of pack p and returns its losses.
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION pack_type apply(const inputs_type& in, const Index p, const value_type s) const {
    pack_type g, l;
    for (int k = 0; k < pack_type::width; ++k) {
      l.v[k] = loss_and_dloss_dx<value_type>(in.x.v[k], in.y.v[k], g.v[k]);
      g.v[k] *= s;
    }
    store_pack(grad.data(), p, g);
    return l;
  }
};

/// Whether the kernels may read and write Op's views a pack at a time.
template <class Op>
bool use_packs(const Op& op) {
  if constexpr (Op::packable)
    return op.aligned();
  else
    return false;
}

}  // namespace softmargin::Impl

#endif

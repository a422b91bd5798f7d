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
#include "SoftMargin_OpTypes.hpp"
#include "SoftMargin_Packs.hpp"
#include "SoftMargin_Values.hpp"
#include "SoftMargin_Views.hpp"

namespace softmargin::Impl {

/// Reduce: loss(x_i, y_i), summed.
template <class XV, class YV>
struct LossOp : OpTypes<XV, YV, OpKind::Reduce> {
  using types = OpTypes<XV, YV, OpKind::Reduce>;
  using typename types::accum_type;
  using typename types::pack_type;
  using typename types::value_type;
  using hw = typename types::hardware;
  static constexpr KernelLabels labels{"softmargin::loss::range_reduce", "softmargin::loss::team_scratch",
                                       "softmargin::loss::native"};
  using inputs_type = InputPacks<XV, YV, OpKind::Reduce>;
  static constexpr bool packable = is_flat_v<XV> && is_flat_v<YV>;
  static constexpr bool vector_lane_sums = types::vector_packs;
  /// The loss of one element: the fast form for 16-bit x (its sum is what the pass returns).
  KOKKOS_FORCEINLINE_FUNCTION static value_type loss_of(const value_type xv, const value_type yv) {
    if constexpr (types::fast_x)
      return hw::loss_fast(xv, yv);
    else
      return loss(xv, yv);
  }
  XV x;
  YV y;

  LossOp(const XV& x_, const YV& y_) : x(x_), y(y_) {}
  bool aligned() const { return types::aligned(x, y); }
  KOKKOS_INLINE_FUNCTION value_type scale() const { return value_type(1); }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION accum_type operator()(const Index i, const value_type) const {
    return static_cast<accum_type>(loss_of(types::x_at(x, i), types::y_at(y, i)));
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION inputs_type load(const Index p) const {
    return inputs_type::load_readonly(x, y, p);
  }
  /// The losses of a pack, in value_type (LaneSums adds them so that losses near its max do not overflow).
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION pack_type apply(const inputs_type& in, const Index, const value_type) const {
    pack_type xc, yc, l;
    in.widen(xc, yc);
    if constexpr (types::vector_packs)
      hw::template loss_pack<types::fast_x>(xc.v, yc.v, l.v);
    else
      for (int k = 0; k < pack_type::width; ++k) l.v[k] = loss_of(xc.v[k], yc.v[k]);
    return l;
  }
};

/// Map: out_i = loss(x_i, y_i) (reduction none), rounded once to out's value type.
template <class XV, class YV, class OV>
struct LossNoneOp : OpTypes<XV, YV, OpKind::Map> {
  using types = OpTypes<XV, YV, OpKind::Map>;
  using typename types::pack_type;
  using typename types::value_type;
  using hw = typename types::hardware;
  static constexpr KernelLabels labels{"softmargin::loss_none::range_for", "softmargin::loss_none::team_for",
                                       "softmargin::loss_none::native"};
  using out_type = typename OV::non_const_value_type;
  using inputs_type = InputPacks<XV, YV, OpKind::Map>;
  static constexpr bool packable = is_flat_v<XV> && is_flat_v<YV> && is_flat_v<OV>;
  /// The loss of one element: the fast form for 16-bit x into a 16-bit output (rounded to 8 or 11 bits).
  KOKKOS_FORCEINLINE_FUNCTION static value_type loss_of(const value_type xv, const value_type yv) {
    if constexpr (types::template fast_into<out_type>)
      return hw::loss_fast(xv, yv);
    else
      return loss(xv, yv);
  }
  XV x;
  YV y;
  OV out;

  LossNoneOp(const XV& x_, const YV& y_, const OV& out_) : x(x_), y(y_), out(out_) {}
  bool aligned() const { return types::aligned(x, y, out); }
  KOKKOS_INLINE_FUNCTION value_type scale() const { return value_type(1); }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Index i, const value_type) const {
    at(out, i) = types::template round<out_type>(loss_of(types::x_at(x, i), types::y_at(y, i)));
  }
  /// Plain loads: out may be x or y itself (in place).
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION inputs_type load(const Index p) const {
    return inputs_type::load(x, y, p);
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION void apply(const inputs_type& in, const Index p, const value_type) const {
    pack_type xc, yc;
    in.widen(xc, yc);
    pack_type l;
    if constexpr (types::vector_packs)
      hw::template loss_pack<types::template fast_into<out_type>>(xc.v, yc.v, l.v);
    else
      for (int k = 0; k < pack_type::width; ++k) l.v[k] = loss_of(xc.v[k], yc.v[k]);
    typename types::template pack_of<OV> o;
    hw::round_scaled(value_type(1), l.v, o.v);
    store_pack(out.data(), p, o);
  }
};

/// Map: grad_i = g_i * dloss/dx(x_i, y_i), rounded once to grad's value type. g_i is the scalar upstream (sum, mean:
/// UpV of rank 0, wrapped in a ScalarUpstream) or upstream_i (none: UpV of x's rank).
template <class XV, class YV, class GV, class UpV>
struct GradOp : OpTypes<XV, YV, OpKind::Map> {
  using types = OpTypes<XV, YV, OpKind::Map>;
  using typename types::pack_type;
  using typename types::value_type;
  using hw = typename types::hardware;
  static constexpr KernelLabels labels{"softmargin::backward::range_for", "softmargin::backward::team_for",
                                       "softmargin::backward::native"};
  using grad_type = typename GV::non_const_value_type;
  static constexpr bool per_element = UpV::rank() != 0;
  using upstream_pack = std::conditional_t<per_element, typename types::template pack_of<UpV>, int>;
  struct inputs_type : InputPacks<XV, YV, OpKind::Map> {
    upstream_pack g;
  };
  static constexpr bool packable = is_flat_v<XV> && is_flat_v<YV> && is_flat_v<GV> && (!per_element || is_flat_v<UpV>);
  using upstream_type = std::conditional_t<per_element, UpV, ScalarUpstream<UpV, value_type>>;
  XV x;
  YV y;
  GV grad;
  upstream_type upstream;

  GradOp(const XV& x_, const YV& y_, const GV& grad_, const upstream_type& up)
      : x(x_), y(y_), grad(grad_), upstream(up) {}
  bool aligned() const {
    if constexpr (per_element)
      return types::aligned(x, y, grad, upstream);
    else
      return types::aligned(x, y, grad);
  }
  KOKKOS_INLINE_FUNCTION value_type scale() const {
    if constexpr (per_element)
      return value_type(1);
    else
      return upstream.get();
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Index i, const value_type s) const {
    const value_type d = dloss_dx<value_type>(types::x_at(x, i), types::y_at(y, i));
    if constexpr (per_element)
      at(grad, i) = types::template round<grad_type>(hw::template to_compute<value_type>(at(upstream, i)) * d);
    else
      at(grad, i) = types::template round<grad_type>(s * d);
  }
  /// Plain loads: grad may be x, y or the upstream itself (in place).
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION inputs_type load(const Index p) const {
    inputs_type in{InputPacks<XV, YV, OpKind::Map>::load(x, y, p), {}};
    if constexpr (per_element) in.g = load_pack<upstream_pack>(upstream.data(), p);
    return in;
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION void apply(const inputs_type& in, const Index p, const value_type s) const {
    pack_type xc, yc, d;
    in.widen(xc, yc);
    if constexpr (types::vector_packs)
      hw::template grad_pack<types::template fast_into<grad_type>>(xc.v, yc.v, d.v);
    else
      for (int k = 0; k < pack_type::width; ++k) d.v[k] = dloss_dx<value_type>(xc.v[k], yc.v[k]);
    typename types::template pack_of<GV> g;
    if constexpr (per_element) {
      pack_type u;
      hw::widen_values(in.g.v, u.v);
      for (int k = 0; k < pack_type::width; ++k) d.v[k] *= u.v[k];
      hw::round_scaled(value_type(1), d.v, g.v);
    } else {
      hw::round_scaled(s, d.v, g.v);
    }
    store_pack(grad.data(), p, g);
  }
};

/// Fused: grad_i = s * dloss/dx(x_i, y_i), and loss(x_i, y_i) summed, sharing exp(-|z|).
template <class XV, class YV, class GV, class UV>
struct LossGradOp : OpTypes<XV, YV, OpKind::Fused> {
  using types = OpTypes<XV, YV, OpKind::Fused>;
  using typename types::accum_type;
  using typename types::pack_type;
  using typename types::value_type;
  using hw = typename types::hardware;
  static constexpr KernelLabels labels{"softmargin::loss_and_grad::range_reduce",
                                       "softmargin::loss_and_grad::team_scratch", "softmargin::loss_and_grad::native"};
  using grad_type = typename GV::non_const_value_type;
  using inputs_type = InputPacks<XV, YV, OpKind::Fused>;
  static constexpr bool packable = is_flat_v<XV> && is_flat_v<YV> && is_flat_v<GV>;
  static constexpr bool vector_lane_sums = types::vector_packs;
  /// Loss and gradient of one element: the fast form for 16-bit x with a 16-bit gradient (the loss is summed).
  KOKKOS_FORCEINLINE_FUNCTION static value_type loss_and_grad_of(const value_type xv, const value_type yv,
                                                                 value_type& g) {
    if constexpr (types::template fast_into<grad_type>)
      return hw::loss_and_dloss_dx_fast(xv, yv, g);
    else
      return loss_and_dloss_dx(xv, yv, g);
  }
  XV x;
  YV y;
  GV grad;
  ScalarUpstream<UV, value_type> scalar;

  LossGradOp(const XV& x_, const YV& y_, const GV& grad_, const ScalarUpstream<UV, value_type>& up)
      : x(x_), y(y_), grad(grad_), scalar(up) {}
  bool aligned() const { return types::aligned(x, y, grad); }
  KOKKOS_INLINE_FUNCTION value_type scale() const { return scalar.get(); }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION accum_type operator()(const Index i, const value_type s) const {
    value_type g;
    const value_type l = loss_and_grad_of(types::x_at(x, i), types::y_at(y, i), g);
    at(grad, i) = types::template round<grad_type>(s * g);
    return static_cast<accum_type>(l);
  }
  /// Plain loads: grad may be x or y itself (in place).
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION inputs_type load(const Index p) const {
    return inputs_type::load(x, y, p);
  }
  /// Stores the gradients of pack p and returns its losses.
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION pack_type apply(const inputs_type& in, const Index p, const value_type s) const {
    pack_type xc, yc, l, d;
    in.widen(xc, yc);
    if constexpr (types::vector_packs)
      hw::template loss_and_grad_pack<types::template fast_into<grad_type>>(xc.v, yc.v, l.v, d.v);
    else
      for (int k = 0; k < pack_type::width; ++k) l.v[k] = loss_and_grad_of(xc.v[k], yc.v[k], d.v[k]);
    typename types::template pack_of<GV> g;
    hw::round_scaled(s, d.v, g.v);
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

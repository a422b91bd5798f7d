// SoftMargin: the four passes as ops the backends run (for_share, SoftMargin_Packs.hpp), written once on an element
// op E of the family (SoftMargin_Elements.hpp, optionally Weighted): the reduced loss (LossOp), the loss per element
// (LossNoneOp), the gradient (GradOp) and both in one pass (LossGradOp). The gradient ops write through a sink: one
// View (GradSink), or the two of a pairwise loss (GradPairSink: d and -d).
//
// An op provides: op(i, scale) for element i (returning its value to sum unless it is a map), scale() (the factor of
// a gradient, read once per thread), and, where its views allow packs (`packable`): load(p), the inputs of pack p,
// and apply(inputs, p, scale), which computes pack p (returning its values to sum unless it is a map).
#ifndef SOFTMARGIN_IMPL_OPS_HPP
#define SOFTMARGIN_IMPL_OPS_HPP

#include <Kokkos_Core.hpp>
#include <type_traits>

#include "SoftMargin_BCEWithLogits.hpp"
#include "SoftMargin_Elements.hpp"
#include "SoftMargin_Math.hpp"
#include "SoftMargin_OpTypes.hpp"
#include "SoftMargin_Packs.hpp"
#include "SoftMargin_Pairwise.hpp"
#include "SoftMargin_Values.hpp"
#include "SoftMargin_Views.hpp"
#include "SoftMargin_Weighted.hpp"

namespace softmargin::Impl {

/// Writes gradients into one View of E's shape, rounded once to its value type.
template <class GV>
struct GradSink {
  using grad_type = typename GV::non_const_value_type;
  static constexpr bool packable = is_flat_v<GV>;
  GV grad;
  template <class types>
  bool aligned() const {
    return types::aligned(grad);
  }
  template <class types, class Index>
  KOKKOS_FORCEINLINE_FUNCTION void store(const Index i, const typename types::value_type v) const {
    at(grad, i) = types::template round<grad_type>(v);
  }
  /// s d of pack p.
  template <class types, class Index, class P>
  KOKKOS_FORCEINLINE_FUNCTION void store_pack(const Index p, const typename types::value_type s, const P& d) const {
    typename types::template pack_of<GV> g;
    types::hardware::round_scaled(s, d.v, g.v);
    Impl::store_pack(grad.data(), p, g);
  }
};

/// Writes d into ga and -d into gb (the gradients of a pairwise loss with respect to a and b).
template <class GA, class GB>
struct GradPairSink {
  using grad_type = typename GA::non_const_value_type;
  static constexpr bool packable = is_flat_v<GA> && is_flat_v<GB>;
  GA ga;
  GB gb;
  template <class types>
  bool aligned() const {
    return types::aligned(ga, gb);
  }
  template <class types, class Index>
  KOKKOS_FORCEINLINE_FUNCTION void store(const Index i, const typename types::value_type v) const {
    at(ga, i) = types::template round<grad_type>(v);
    at(gb, i) = types::template round<typename GB::non_const_value_type>(-v);
  }
  template <class types, class Index, class P>
  KOKKOS_FORCEINLINE_FUNCTION void store_pack(const Index p, const typename types::value_type s, const P& d) const {
    typename types::template pack_of<GA> a;
    typename types::template pack_of<GB> b;
    types::hardware::round_scaled(s, d.v, a.v);
    types::hardware::round_scaled(-s, d.v, b.v);
    Impl::store_pack(ga.data(), p, a);
    Impl::store_pack(gb.data(), p, b);
  }
};

/// Reduce: the losses of E, summed.
template <class E>
struct LossOp : E::types {
  using types = typename E::types;
  static_assert(types::kind == OpKind::Reduce);
  using typename types::accum_type;
  using typename types::pack_type;
  using typename types::value_type;
  static constexpr KernelLabels labels = E::labels.loss;
  using inputs_type = typename E::inputs_type;
  static constexpr bool packable = E::packable;
  static constexpr bool vector_lane_sums = E::vector_packs;
  /// The fast form for 16-bit x (its sum is what the pass returns).
  static constexpr bool fast = types::fast_x;
  E e;
  SumScale<value_type> sum_scale;

  bool aligned() const { return e.aligned(); }
  KOKKOS_INLINE_FUNCTION value_type scale() const { return value_type(1); }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION accum_type operator()(const Index i, const value_type) const {
    return sum_scale(static_cast<accum_type>(e.template loss<fast>(i)));
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION inputs_type load(const Index p) const {
    return e.load_readonly(p);
  }
  /// The losses of a pack, in value_type (LaneSums adds them so that losses near its max do not overflow).
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION pack_type apply(const inputs_type& in, const Index, const value_type) const {
    pack_type l;
    e.template loss_pack<fast>(in, l);
    sum_scale.apply(l);
    return l;
  }
};

/// Map: out_i = loss_i of E (reduction none), rounded once to out's value type.
template <class E, class OV>
struct LossNoneOp : E::types {
  using types = typename E::types;
  using typename types::pack_type;
  using typename types::value_type;
  static constexpr KernelLabels labels = E::labels.loss_none;
  using out_type = typename OV::non_const_value_type;
  using inputs_type = typename E::inputs_type;
  static constexpr bool packable = E::packable && is_flat_v<OV>;
  /// The fast form for 16-bit x into a 16-bit output (rounded to 8 or 11 bits).
  static constexpr bool fast = types::template fast_into<out_type>;
  E e;
  OV out;

  bool aligned() const { return e.aligned() && types::aligned(out); }
  KOKKOS_INLINE_FUNCTION value_type scale() const { return value_type(1); }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Index i, const value_type) const {
    at(out, i) = types::template round<out_type>(e.template loss<fast>(i));
  }
  /// Plain loads: out may be an input itself (in place).
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION inputs_type load(const Index p) const {
    return e.load(p);
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION void apply(const inputs_type& in, const Index p, const value_type) const {
    pack_type l;
    e.template loss_pack<fast>(in, l);
    typename types::template pack_of<OV> o;
    types::hardware::round_scaled(value_type(1), l.v, o.v);
    store_pack(out.data(), p, o);
  }
};

/// Map: grad_i = g_i * d_i of E, through the sink S. g_i is the scalar upstream (sum, mean: UpV of rank 0, wrapped in
/// a ScalarUpstream) or upstream_i (none: UpV of E's rank).
template <class E, class S, class UpV>
struct GradOp : E::types {
  using types = typename E::types;
  using typename types::pack_type;
  using typename types::value_type;
  using hw = typename types::hardware;
  static constexpr KernelLabels labels = E::labels.backward;
  static constexpr bool per_element = UpV::rank() != 0;
  using upstream_pack = std::conditional_t<per_element, typename types::template pack_of<UpV>, int>;
  struct inputs_type {
    typename E::inputs_type in;
    upstream_pack g;
  };
  static constexpr bool packable = E::packable && S::packable && (!per_element || is_flat_v<UpV>);
  static constexpr bool fast = types::template fast_into<typename S::grad_type>;
  using upstream_type = std::conditional_t<per_element, UpV, ScalarUpstream<UpV, value_type>>;
  E e;
  S sink;
  upstream_type upstream;

  bool aligned() const {
    if constexpr (per_element)
      return e.aligned() && sink.template aligned<types>() && types::aligned(upstream);
    else
      return e.aligned() && sink.template aligned<types>();
  }
  KOKKOS_INLINE_FUNCTION value_type scale() const {
    if constexpr (per_element)
      return value_type(1);
    else
      return upstream.get();
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Index i, const value_type s) const {
    const value_type d = e.dloss(i);
    if constexpr (per_element)
      sink.template store<types>(i, hw::template to_compute<value_type>(at(upstream, i)) * d);
    else
      sink.template store<types>(i, s * d);
  }
  /// Plain loads: a gradient may be an input or the upstream itself (in place).
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION inputs_type load(const Index p) const {
    inputs_type in{e.load(p), {}};
    if constexpr (per_element) in.g = load_pack<upstream_pack>(upstream.data(), p);
    return in;
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION void apply(const inputs_type& in, const Index p, const value_type s) const {
    pack_type d;
    e.template grad_pack<fast>(in.in, d);
    if constexpr (per_element) {
      pack_type u;
      hw::widen_values(in.g.v, u.v);
      for (int k = 0; k < pack_type::width; ++k) d.v[k] *= u.v[k];
      sink.template store_pack<types>(p, value_type(1), d);
    } else {
      sink.template store_pack<types>(p, s, d);
    }
  }
};

/// Fused: grad_i = s * d_i through the sink S, and the losses of E summed, sharing their exponential.
template <class E, class S, class UV>
struct LossGradOp : E::types {
  using types = typename E::types;
  using typename types::accum_type;
  using typename types::pack_type;
  using typename types::value_type;
  static constexpr KernelLabels labels = E::labels.fused;
  using inputs_type = typename E::inputs_type;
  static constexpr bool packable = E::packable && S::packable;
  static constexpr bool vector_lane_sums = E::vector_packs;
  /// The fast form for 16-bit x with a 16-bit gradient (the loss is summed).
  static constexpr bool fast = types::template fast_into<typename S::grad_type>;
  E e;
  S sink;
  ScalarUpstream<UV, value_type> scalar;
  SumScale<value_type> sum_scale;

  bool aligned() const { return e.aligned() && sink.template aligned<types>(); }
  KOKKOS_INLINE_FUNCTION value_type scale() const { return scalar.get(); }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION accum_type operator()(const Index i, const value_type s) const {
    value_type d;
    const value_type l = e.template loss_and_dloss<fast>(i, d);
    sink.template store<types>(i, s * d);
    return sum_scale(static_cast<accum_type>(l));
  }
  /// Plain loads: a gradient may be an input itself (in place).
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION inputs_type load(const Index p) const {
    return e.load(p);
  }
  /// Stores the gradients of pack p and returns its losses.
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION pack_type apply(const inputs_type& in, const Index p, const value_type s) const {
    pack_type l, d;
    e.template loss_and_grad_pack<fast>(in, l, d);
    sink.template store_pack<types>(p, s, d);
    sum_scale.apply(l);
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

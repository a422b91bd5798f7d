// SoftMargin: the element ops of the logistic-loss family, softplus of a margin at every element. Each owns its input
// views and gives, at element i and for a pack of W elements, the loss, its derivative d with respect to its first
// input, or both; the passes (SoftMargin_Ops.hpp) are written once on this interface:
//   types (OpTypes), inputs_type, packable, aligned(), load(p), load_readonly(p),
//   loss<Fast>(i), dloss(i), loss_and_dloss<Fast>(i, d), loss_pack<Fast>(in, l), grad_pack<Fast>(in, d),
//   loss_and_grad_pack<Fast>(in, l, d), and the Kokkos Tools labels of its kernels.
// Fast: the fast form of SoftMargin's loss where the pass allows it (16-bit x; OpTypes::fast_x); the other members
// of the family compute the accurate form always.
#ifndef SOFTMARGIN_IMPL_ELEMENTS_HPP
#define SOFTMARGIN_IMPL_ELEMENTS_HPP

#include <Kokkos_Core.hpp>
#include <type_traits>

#include "SoftMargin_Math.hpp"
#include "SoftMargin_OpTypes.hpp"
#include "SoftMargin_Packs.hpp"
#include "SoftMargin_Views.hpp"

namespace softmargin::Impl {

/// Kokkos Tools labels of a family member's kernels, one set a pass.
struct PassLabels {
  KernelLabels loss, loss_none, backward, fused;
};

/// SoftMarginLoss: softplus(-y x); d = -y sigmoid(-y x). The room's vector kernels compute its packs where it has
/// them (hosts: float).
template <class XV, class YV, OpKind Kind>
struct SoftMarginElement : OpTypes<XV, YV, Kind> {
  using types = OpTypes<XV, YV, Kind>;
  using typename types::pack_type;
  using typename types::value_type;
  using hw = typename types::hardware;
  using inputs_type = InputPacks<XV, YV, Kind>;
  static constexpr PassLabels labels{
      {"softmargin::loss::range_reduce", "softmargin::loss::team_scratch", "softmargin::loss::native"},
      {"softmargin::loss_none::range_for", "softmargin::loss_none::team_for", "softmargin::loss_none::native"},
      {"softmargin::backward::range_for", "softmargin::backward::team_for", "softmargin::backward::native"},
      {"softmargin::loss_and_grad::range_reduce", "softmargin::loss_and_grad::team_scratch",
       "softmargin::loss_and_grad::native"}};
  static constexpr bool packable = is_flat_v<XV> && is_flat_v<YV>;
  static constexpr bool vector_packs = types::vector_packs;
  XV x;
  YV y;

  bool aligned() const { return types::aligned(x, y); }
  template <bool Fast, class Index>
  KOKKOS_FORCEINLINE_FUNCTION value_type loss(const Index i) const {
    if constexpr (Fast)
      return hw::loss_fast(types::x_at(x, i), types::y_at(y, i));
    else
      return Impl::loss(types::x_at(x, i), types::y_at(y, i));
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION value_type dloss(const Index i) const {
    return dloss_dx<value_type>(types::x_at(x, i), types::y_at(y, i));
  }
  template <bool Fast, class Index>
  KOKKOS_FORCEINLINE_FUNCTION value_type loss_and_dloss(const Index i, value_type& d) const {
    if constexpr (Fast)
      return hw::loss_and_dloss_dx_fast(types::x_at(x, i), types::y_at(y, i), d);
    else
      return loss_and_dloss_dx(types::x_at(x, i), types::y_at(y, i), d);
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION inputs_type load(const Index p) const {
    return inputs_type::load(x, y, p);
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION inputs_type load_readonly(const Index p) const {
    return inputs_type::load_readonly(x, y, p);
  }
  template <bool Fast>
  KOKKOS_FORCEINLINE_FUNCTION void loss_pack(const inputs_type& in, pack_type& l) const {
    pack_type xc, yc;
    in.widen(xc, yc);
    if constexpr (vector_packs)
      hw::template loss_pack<Fast>(xc.v, yc.v, l.v);
    else
      for (int k = 0; k < pack_type::width; ++k)
        l.v[k] = Fast ? hw::loss_fast(xc.v[k], yc.v[k]) : Impl::loss(xc.v[k], yc.v[k]);
  }
  template <bool Fast>
  KOKKOS_FORCEINLINE_FUNCTION void grad_pack(const inputs_type& in, pack_type& d) const {
    pack_type xc, yc;
    in.widen(xc, yc);
    if constexpr (vector_packs)
      hw::template grad_pack<Fast>(xc.v, yc.v, d.v);
    else
      for (int k = 0; k < pack_type::width; ++k) d.v[k] = dloss_dx<value_type>(xc.v[k], yc.v[k]);
  }
  template <bool Fast>
  KOKKOS_FORCEINLINE_FUNCTION void loss_and_grad_pack(const inputs_type& in, pack_type& l, pack_type& d) const {
    pack_type xc, yc;
    in.widen(xc, yc);
    if constexpr (vector_packs)
      hw::template loss_and_grad_pack<Fast>(xc.v, yc.v, l.v, d.v);
    else
      for (int k = 0; k < pack_type::width; ++k)
        l.v[k] =
            Fast ? hw::loss_and_dloss_dx_fast(xc.v[k], yc.v[k], d.v[k]) : loss_and_dloss_dx(xc.v[k], yc.v[k], d.v[k]);
  }
};

/// No view: an absent optional input (weight, pos_weight, margin View).
struct NoView {
  using array_layout = Kokkos::LayoutRight;  // flat: it constrains no pack loop
  static constexpr int rank() { return 1; }
};

/// An optional input V of an element op with OpTypes T: its pack (int where V is absent) and whether it allows packs
/// (flat, or absent). Chosen by specialization: NoView has no value type nor layout.
template <class T, class V, bool = std::is_same_v<V, NoView>>
struct OptionalInput {
  using pack = typename T::template pack_of<V>;
  static constexpr bool flat = is_flat_v<V>;
};
template <class T, class V>
struct OptionalInput<T, V, true> {
  using pack = int;
  static constexpr bool flat = true;
};

/// BCEWithLogitsLoss: (1 - t) x + c softplus(-x) with c = 1 + (p - 1) t (p the pos_weight, 1 without one), written
/// so that nothing cancels for hard labels: m + c log1p(e) with e = exp(-|x|) and m = (1 - t) x for x > 0, -p t x
/// else; d = ((1 - t) - p t e) / (1 + e) for x >= 0, ((1 - t) e - p t) / (1 + e) else. Targets: x's type (soft labels
/// in [0, 1]), int8 (0 or 1) or bool.
template <class XV, class TV, class PV, OpKind Kind>
struct BCEWithLogitsElement : OpTypes<XV, TV, Kind> {
  using types = OpTypes<XV, TV, Kind>;
  using typename types::pack_type;
  using typename types::value_type;
  using hw = typename types::hardware;
  static constexpr bool has_pos = !std::is_same_v<PV, NoView>;
  using pos_pack = typename OptionalInput<types, PV>::pack;
  struct inputs_type : InputPacks<XV, TV, Kind> {
    pos_pack p;
  };
  static constexpr PassLabels labels{
      {"softmargin::bce_with_logits::loss::range_reduce", "softmargin::bce_with_logits::loss::team_scratch",
       "softmargin::bce_with_logits::loss::native"},
      {"softmargin::bce_with_logits::loss_none::range_for", "softmargin::bce_with_logits::loss_none::team_for",
       "softmargin::bce_with_logits::loss_none::native"},
      {"softmargin::bce_with_logits::backward::range_for", "softmargin::bce_with_logits::backward::team_for",
       "softmargin::bce_with_logits::backward::native"},
      {"softmargin::bce_with_logits::loss_and_grad::range_reduce",
       "softmargin::bce_with_logits::loss_and_grad::team_scratch",
       "softmargin::bce_with_logits::loss_and_grad::native"}};
  static constexpr bool packable = is_flat_v<XV> && is_flat_v<TV> && OptionalInput<types, PV>::flat;
  static constexpr bool vector_packs = false;
  XV x;
  TV t;
  PV pos;

  bool aligned() const {
    if constexpr (has_pos)
      return types::aligned(x, t, pos);
    else
      return types::aligned(x, t);
  }
  /// Loss and derivative at x for target t (a bool target's +-1 from y_at mapped to 1 and 0) and pos_weight p.
  KOKKOS_FORCEINLINE_FUNCTION static value_type target(const value_type y) {
    if constexpr (std::is_same_v<typename types::y_type, bool>)
      return (y + value_type(1)) * value_type(0.5);
    else
      return y;
  }
  KOKKOS_FORCEINLINE_FUNCTION static value_type both(const value_type x, const value_type t, const value_type p,
                                                     value_type& d) {
    const value_type e = exp_nonpos(-Kokkos::abs(x));
    const value_type u = value_type(1) - t, pt = p * t;
    d = (x >= value_type(0) ? u - pt * e : u * e - pt) / (value_type(1) + e);
    const value_type c = value_type(1) + (p - value_type(1)) * t;
    return (x > value_type(0) ? u * x : -pt * x) + c * log1p_unit(e);
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION value_type p_at(const Index i) const {
    if constexpr (has_pos)
      return hw::template to_compute<value_type>(at(pos, i));
    else
      return value_type(1);
  }
  template <bool Fast, class Index>
  KOKKOS_FORCEINLINE_FUNCTION value_type loss(const Index i) const {
    value_type d;
    return both(types::x_at(x, i), target(types::y_at(t, i)), p_at(i), d);
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION value_type dloss(const Index i) const {
    value_type d;
    both(types::x_at(x, i), target(types::y_at(t, i)), p_at(i), d);
    return d;
  }
  template <bool Fast, class Index>
  KOKKOS_FORCEINLINE_FUNCTION value_type loss_and_dloss(const Index i, value_type& d) const {
    return both(types::x_at(x, i), target(types::y_at(t, i)), p_at(i), d);
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION inputs_type load(const Index p) const {
    inputs_type in{InputPacks<XV, TV, Kind>::load(x, t, p), {}};
    if constexpr (has_pos) in.p = load_pack<pos_pack>(pos.data(), p);
    return in;
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION inputs_type load_readonly(const Index p) const {
    inputs_type in{InputPacks<XV, TV, Kind>::load_readonly(x, t, p), {}};
    if constexpr (has_pos) in.p = hw::template load_readonly<pos_pack>(pos.data(), p);
    return in;
  }
  template <bool Fast>
  KOKKOS_FORCEINLINE_FUNCTION void loss_and_grad_pack(const inputs_type& in, pack_type& l, pack_type& d) const {
    pack_type xc, tc, pc;
    in.widen(xc, tc);
    if constexpr (has_pos) hw::widen_values(in.p.v, pc.v);
    for (int k = 0; k < pack_type::width; ++k)
      l.v[k] = both(xc.v[k], target(tc.v[k]), has_pos ? pc.v[k] : value_type(1), d.v[k]);
  }
  template <bool Fast>
  KOKKOS_FORCEINLINE_FUNCTION void loss_pack(const inputs_type& in, pack_type& l) const {
    pack_type d;
    loss_and_grad_pack<Fast>(in, l, d);
  }
  template <bool Fast>
  KOKKOS_FORCEINLINE_FUNCTION void grad_pack(const inputs_type& in, pack_type& d) const {
    pack_type l;
    loss_and_grad_pack<Fast>(in, l, d);
  }
};

/// Pairwise margin loss: softplus(-(a - b - m)) = SoftMargin's loss at z = a - b - m and y = 1; d is its derivative
/// with respect to a (with respect to b it is -d). m: a scalar (MV = NoView, `margin`) or a View broadcast against a.
template <class AV, class BV, class MV, OpKind Kind>
struct PairwiseElement : OpTypes<AV, BV, Kind> {
  using types = OpTypes<AV, BV, Kind>;
  using typename types::pack_type;
  using typename types::value_type;
  using hw = typename types::hardware;
  static constexpr bool has_view = !std::is_same_v<MV, NoView>;
  using margin_pack = typename OptionalInput<types, MV>::pack;
  struct inputs_type : InputPacks<AV, BV, Kind> {
    margin_pack m;
  };
  static constexpr PassLabels labels{
      {"softmargin::pairwise::loss::range_reduce", "softmargin::pairwise::loss::team_scratch",
       "softmargin::pairwise::loss::native"},
      {"softmargin::pairwise::loss_none::range_for", "softmargin::pairwise::loss_none::team_for",
       "softmargin::pairwise::loss_none::native"},
      {"softmargin::pairwise::backward::range_for", "softmargin::pairwise::backward::team_for",
       "softmargin::pairwise::backward::native"},
      {"softmargin::pairwise::loss_and_grad::range_reduce", "softmargin::pairwise::loss_and_grad::team_scratch",
       "softmargin::pairwise::loss_and_grad::native"}};
  static constexpr bool packable = is_flat_v<AV> && is_flat_v<BV> && OptionalInput<types, MV>::flat;
  static constexpr bool vector_packs = types::vector_packs;
  AV a;
  BV b;
  MV m;
  value_type margin;  ///< used without a margin View

  bool aligned() const {
    if constexpr (has_view)
      return types::aligned(a, b, m);
    else
      return types::aligned(a, b);
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION value_type z_at(const Index i) const {
    const value_type mi = has_view ? m_at(i) : margin;
    return (types::x_at(a, i) - hw::template to_compute<value_type>(at(b, i))) - mi;
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION value_type m_at(const Index i) const {
    if constexpr (has_view)
      return hw::template to_compute<value_type>(at(m, i));
    else
      return margin;
  }
  template <bool Fast, class Index>
  KOKKOS_FORCEINLINE_FUNCTION value_type loss(const Index i) const {
    return Fast ? hw::loss_fast(z_at(i), value_type(1)) : Impl::loss(z_at(i), value_type(1));
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION value_type dloss(const Index i) const {
    return dloss_dx<value_type>(z_at(i), value_type(1));
  }
  template <bool Fast, class Index>
  KOKKOS_FORCEINLINE_FUNCTION value_type loss_and_dloss(const Index i, value_type& d) const {
    if constexpr (Fast)
      return hw::loss_and_dloss_dx_fast(z_at(i), value_type(1), d);
    else
      return loss_and_dloss_dx(z_at(i), value_type(1), d);
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION inputs_type load(const Index p) const {
    inputs_type in{{load_pack<typename types::template pack_of<AV>>(a.data(), p),
                    load_pack<typename types::template pack_of<BV>>(b.data(), p)},
                   {}};
    if constexpr (has_view) in.m = load_pack<margin_pack>(m.data(), p);
    return in;
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION inputs_type load_readonly(const Index p) const {
    inputs_type in{InputPacks<AV, BV, Kind>::load_readonly(a, b, p), {}};
    if constexpr (has_view) in.m = hw::template load_readonly<margin_pack>(m.data(), p);
    return in;
  }
  /// z = a - b - m of a pack, and a pack of ones (the targets).
  KOKKOS_FORCEINLINE_FUNCTION void margins(const inputs_type& in, pack_type& z, pack_type& ones) const {
    pack_type bc, mc;
    hw::widen_values(in.x.v, z.v);
    hw::widen_values(in.y.v, bc.v);
    if constexpr (has_view) hw::widen_values(in.m.v, mc.v);
    for (int k = 0; k < pack_type::width; ++k) {
      z.v[k] = (z.v[k] - bc.v[k]) - (has_view ? mc.v[k] : margin);
      ones.v[k] = value_type(1);
    }
  }
  template <bool Fast>
  KOKKOS_FORCEINLINE_FUNCTION void loss_pack(const inputs_type& in, pack_type& l) const {
    pack_type z, ones;
    margins(in, z, ones);
    if constexpr (vector_packs)
      hw::template loss_pack<Fast>(z.v, ones.v, l.v);
    else
      for (int k = 0; k < pack_type::width; ++k)
        l.v[k] = Fast ? hw::loss_fast(z.v[k], value_type(1)) : Impl::loss(z.v[k], value_type(1));
  }
  template <bool Fast>
  KOKKOS_FORCEINLINE_FUNCTION void grad_pack(const inputs_type& in, pack_type& d) const {
    pack_type z, ones;
    margins(in, z, ones);
    if constexpr (vector_packs)
      hw::template grad_pack<Fast>(z.v, ones.v, d.v);
    else
      for (int k = 0; k < pack_type::width; ++k) d.v[k] = dloss_dx<value_type>(z.v[k], value_type(1));
  }
  template <bool Fast>
  KOKKOS_FORCEINLINE_FUNCTION void loss_and_grad_pack(const inputs_type& in, pack_type& l, pack_type& d) const {
    pack_type z, ones;
    margins(in, z, ones);
    if constexpr (vector_packs)
      hw::template loss_and_grad_pack<Fast>(z.v, ones.v, l.v, d.v);
    else
      for (int k = 0; k < pack_type::width; ++k)
        l.v[k] = Fast ? hw::loss_and_dloss_dx_fast(z.v[k], value_type(1), d.v[k])
                      : loss_and_dloss_dx(z.v[k], value_type(1), d.v[k]);
  }
};

}  // namespace softmargin::Impl

#endif

// SoftMargin: the element op of BCEWithLogitsLoss (the interface: SoftMargin_Elements.hpp).
#ifndef SOFTMARGIN_IMPL_BCEWITHLOGITS_HPP
#define SOFTMARGIN_IMPL_BCEWITHLOGITS_HPP

#include <Kokkos_Core.hpp>
#include <type_traits>

#include "SoftMargin_Elements.hpp"
#include "SoftMargin_Math.hpp"
#include "SoftMargin_OpTypes.hpp"
#include "SoftMargin_Packs.hpp"
#include "SoftMargin_Views.hpp"

namespace softmargin::Impl {

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
    // Every multiply-add a madd (SoftMargin_Math.hpp): the same roundings element by element as in the pack loops,
    // which compilers vectorize.
    const value_type u = value_type(1) - t, pt = p * t;
    d = (x >= value_type(0) ? madd(-pt, e, u) : madd(u, e, -pt)) / (value_type(1) + e);
    const value_type c = madd(p - value_type(1), t, value_type(1));
    return madd(c, log1p_unit(e), x > value_type(0) ? u * x : -pt * x);
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

}  // namespace softmargin::Impl

#endif

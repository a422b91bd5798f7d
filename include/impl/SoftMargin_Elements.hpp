// SoftMargin: the element ops of the logistic-loss family, softplus of a margin at every element. Each owns its input
// views and gives, at element i and for a pack of W elements, the loss, its derivative d with respect to its first
// input, or both; the passes (SoftMargin_Ops.hpp) are written once on this interface:
//   types (OpTypes), inputs_type, packable, aligned(), load(p), load_readonly(p),
//   loss<Fast>(i), dloss(i), loss_and_dloss<Fast>(i, d), loss_pack<Fast>(in, l), grad_pack<Fast>(in, d),
//   loss_and_grad_pack<Fast>(in, l, d), and the Kokkos Tools labels of its kernels.
// Fast: the fast form of the loss where the pass allows it (16-bit x; OpTypes::fast_x): SoftMarginLoss and the
// pairwise loss (SoftMargin_Pairwise.hpp) take it; BCEWithLogits (SoftMargin_BCEWithLogits.hpp) is accurate always.
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

}  // namespace softmargin::Impl

#endif

// SoftMargin: the element op of the pairwise margin loss (the interface: SoftMargin_Elements.hpp).
#ifndef SOFTMARGIN_IMPL_PAIRWISE_HPP
#define SOFTMARGIN_IMPL_PAIRWISE_HPP

#include <Kokkos_Core.hpp>
#include <type_traits>

#include "SoftMargin_Elements.hpp"
#include "SoftMargin_Math.hpp"
#include "SoftMargin_OpTypes.hpp"
#include "SoftMargin_Packs.hpp"
#include "SoftMargin_Views.hpp"

namespace softmargin::Impl {

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

// SoftMargin: per-element weights over any element op of the family (SoftMargin_Elements.hpp): w_i times the loss
// and its derivative. w is a View of the first input's shape (strides of 0 broadcast it) of that input's value type.
#ifndef SOFTMARGIN_IMPL_WEIGHTED_HPP
#define SOFTMARGIN_IMPL_WEIGHTED_HPP

#include <Kokkos_Core.hpp>

#include "SoftMargin_Packs.hpp"
#include "SoftMargin_Views.hpp"

namespace softmargin::Impl {

template <class E, class WV>
struct Weighted : E {
  using types = typename E::types;
  using typename types::pack_type;
  using typename types::value_type;
  using hw = typename types::hardware;
  using weight_pack = typename types::template pack_of<WV>;
  struct inputs_type {
    typename E::inputs_type base;
    weight_pack w;
  };
  static constexpr bool packable = E::packable && is_flat_v<WV>;
  WV w;

  bool aligned() const { return E::aligned() && types::aligned(w); }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION value_type w_at(const Index i) const {
    return hw::template to_compute<value_type>(at(w, i));
  }
  template <bool Fast, class Index>
  KOKKOS_FORCEINLINE_FUNCTION value_type loss(const Index i) const {
    return w_at(i) * E::template loss<Fast>(i);
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION value_type dloss(const Index i) const {
    return w_at(i) * E::dloss(i);
  }
  template <bool Fast, class Index>
  KOKKOS_FORCEINLINE_FUNCTION value_type loss_and_dloss(const Index i, value_type& d) const {
    const value_type wi = w_at(i);
    const value_type l = E::template loss_and_dloss<Fast>(i, d);
    d *= wi;
    return wi * l;
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION inputs_type load(const Index p) const {
    return {E::load(p), load_pack<weight_pack>(w.data(), p)};
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION inputs_type load_readonly(const Index p) const {
    return {E::load_readonly(p), hw::template load_readonly<weight_pack>(w.data(), p)};
  }
  template <bool Fast>
  KOKKOS_FORCEINLINE_FUNCTION void loss_pack(const inputs_type& in, pack_type& l) const {
    pack_type wc;
    E::template loss_pack<Fast>(in.base, l);
    hw::widen_values(in.w.v, wc.v);
    for (int k = 0; k < pack_type::width; ++k) l.v[k] *= wc.v[k];
  }
  template <bool Fast>
  KOKKOS_FORCEINLINE_FUNCTION void grad_pack(const inputs_type& in, pack_type& d) const {
    pack_type wc;
    E::template grad_pack<Fast>(in.base, d);
    hw::widen_values(in.w.v, wc.v);
    for (int k = 0; k < pack_type::width; ++k) d.v[k] *= wc.v[k];
  }
  template <bool Fast>
  KOKKOS_FORCEINLINE_FUNCTION void loss_and_grad_pack(const inputs_type& in, pack_type& l, pack_type& d) const {
    pack_type wc;
    E::template loss_and_grad_pack<Fast>(in.base, l, d);
    hw::widen_values(in.w.v, wc.v);
    for (int k = 0; k < pack_type::width; ++k) {
      l.v[k] *= wc.v[k];
      d.v[k] *= wc.v[k];
    }
  }
};

}  // namespace softmargin::Impl

#endif

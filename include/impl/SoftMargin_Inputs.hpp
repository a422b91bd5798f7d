// SoftMargin: the inputs of a pass, one descriptor a member of the family (softmargin::soft_margin,
// bce_with_logits, pairwise). A descriptor holds the caller's Views and gives the generic passes
// (SoftMargin_Dispatch.hpp) what differs between losses: its names, its run-time checks, and its element op over the
// canonical views of a call. Everything else (outputs, upstream, reduction, algorithm, kernels) is shared.
#ifndef SOFTMARGIN_IMPL_INPUTS_HPP
#define SOFTMARGIN_IMPL_INPUTS_HPP

#include <Kokkos_Core.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "SoftMargin_BCEWithLogits.hpp"
#include "SoftMargin_Checks.hpp"
#include "SoftMargin_Elements.hpp"
#include "SoftMargin_Pairwise.hpp"
#include "SoftMargin_Views.hpp"
#include "SoftMargin_Weighted.hpp"

namespace softmargin::Impl {

/// The names of a family member's passes in messages and Tools regions.
struct PassNames {
  const char* loss;
  const char* backward;
  const char* loss_and_grad;
};

/// An absent optional input imposes no memory order.
inline unsigned memory_orders(const NoView&) { return ~0u; }

template <class V>
inline constexpr bool has_view_v = !std::is_same_v<V, NoView>;

/// An optional input (weight, pos_weight, margin View) of the first input's shape, broadcast by strides of 0: allocated
/// and of that shape.
template <class First, class V>
void check_optional(const char* where, const char* first_name, const First& first, const char* name, const V& v) {
  if constexpr (has_view_v<V>) {
    check_allocated(where, name, v);
    check_same_shape(where, first_name, first, name, v);
  }
}
template <class Out, class V>
void check_alias_optional(const char* where, const char* out_name, const Out& out, const char* name, const V& v) {
  if constexpr (has_view_v<V>) check_alias(where, out_name, out, name, v);
}

/// Static checks of an optional input: a View of the first input's rank holding its value type.
template <class Exec, class First, class V>
constexpr bool check_optional_type(const char* /*name*/) {
  if constexpr (!has_view_v<V>) {
    return true;
  } else {
    static_assert(Kokkos::is_view_v<V>, "softmargin: a weight, pos_weight or margin must be a Kokkos::View");
    if constexpr (Kokkos::is_view_v<V>) {
      constexpr bool rank = V::rank() == First::rank();
      constexpr bool type = std::is_same_v<storage_t<value_t<V>>, storage_t<value_t<First>>>;
      constexpr bool access = Kokkos::SpaceAccessibility<Exec, typename V::memory_space>::accessible;
      static_assert(rank,
                    "softmargin: a weight, pos_weight or margin View must have x's rank (broadcast by strides of 0)");
      static_assert(type, "softmargin: a weight, pos_weight or margin View must hold x's value type");
      static_assert(access,
                    "softmargin: a weight, pos_weight or margin View is not accessible from the execution space");
      return rank && type && access;
    }
    return false;
  }
}

template <class Exec, bool Flat, class V>
auto canonical_optional(const V& v) {
  if constexpr (has_view_v<V>)
    return canonical<Exec, Flat, true>(v);
  else
    return NoView{};
}

/// SoftMarginLoss of x against y, with optional per-element weights w.
template <class XV, class YV, class WV = NoView>
struct SoftMarginInputs {
  using first_view = XV;
  static constexpr PassNames names{"softmargin::loss", "softmargin::backward", "softmargin::loss_and_grad"};
  static constexpr const char* first_name = "x";
  static constexpr int grads = 1;
  XV x;
  YV y;
  WV w;

  template <class Exec>
  static constexpr bool check_types() {
    return check_input_types<Exec, XV, YV>() && check_optional_type<Exec, XV, WV>("weight");
  }
  const XV& first() const { return x; }
  void check(const char* where) const {
    check_allocated(where, "x", x);
    check_allocated(where, "y", y);
    check_same_shape(where, "x", x, "y", y);
    check_optional(where, "x", x, "weight", w);
  }
  template <class Out>
  void check_alias_of(const char* where, const char* name, const Out& out) const {
    check_alias(where, name, out, "x", x);
    check_alias(where, name, out, "y", y);
    check_alias_optional(where, name, out, "weight", w);
  }
  template <class... Outs>
  bool flat(const Outs&... outs) const {
    return flat_compatible(x, y, w, outs...);
  }
  template <class Exec, bool Flat, OpKind Kind>
  auto element() const {
    auto xc = canonical<Exec, Flat, true>(x);
    auto yc = canonical<Exec, Flat, true>(y);
    using E = SoftMarginElement<decltype(xc), decltype(yc), Kind>;
    if constexpr (has_view_v<WV>) {
      auto wc = canonical<Exec, Flat, true>(w);
      return Weighted<E, decltype(wc)>{E{{}, xc, yc}, wc};
    } else {
      return E{{}, xc, yc};
    }
  }
};

/// BCEWithLogitsLoss of x against targets t, with optional weights w and pos_weight p (Views of x's shape).
template <class XV, class TV, class WV = NoView, class PV = NoView>
struct BCEWithLogitsInputs {
  using first_view = XV;
  static constexpr PassNames names{"softmargin::loss (bce_with_logits)", "softmargin::backward (bce_with_logits)",
                                   "softmargin::loss_and_grad (bce_with_logits)"};
  static constexpr const char* first_name = "x";
  static constexpr int grads = 1;
  XV x;
  TV t;
  WV w;
  PV p;

  template <class Exec>
  static constexpr bool check_types() {
    return check_input_types<Exec, XV, TV>() && check_optional_type<Exec, XV, WV>("weight") &&
           check_optional_type<Exec, XV, PV>("pos_weight");
  }
  const XV& first() const { return x; }
  void check(const char* where) const {
    check_allocated(where, "x", x);
    check_allocated(where, "target", t);
    check_same_shape(where, "x", x, "target", t);
    check_optional(where, "x", x, "weight", w);
    check_optional(where, "x", x, "pos_weight", p);
  }
  template <class Out>
  void check_alias_of(const char* where, const char* name, const Out& out) const {
    check_alias(where, name, out, "x", x);
    check_alias(where, name, out, "target", t);
    check_alias_optional(where, name, out, "weight", w);
    check_alias_optional(where, name, out, "pos_weight", p);
  }
  template <class... Outs>
  bool flat(const Outs&... outs) const {
    return flat_compatible(x, t, w, p, outs...);
  }
  template <class Exec, bool Flat, OpKind Kind>
  auto element() const {
    auto xc = canonical<Exec, Flat, true>(x);
    auto tc = canonical<Exec, Flat, true>(t);
    auto pc = canonical_optional<Exec, Flat>(p);
    using E = BCEWithLogitsElement<decltype(xc), decltype(tc), decltype(pc), Kind>;
    if constexpr (has_view_v<WV>) {
      auto wc = canonical<Exec, Flat, true>(w);
      return Weighted<E, decltype(wc)>{E{{}, xc, tc, pc}, wc};
    } else {
      return E{{}, xc, tc, pc};
    }
  }
};

/// The pairwise margin loss softplus(-(a - b - m)): m a host scalar (MV = NoView) or a View of a's shape.
template <class AV, class BV, class MV = NoView>
struct PairwiseInputs {
  using first_view = AV;
  static constexpr PassNames names{"softmargin::loss (pairwise)", "softmargin::backward (pairwise)",
                                   "softmargin::loss_and_grad (pairwise)"};
  static constexpr const char* first_name = "a";
  static constexpr int grads = 2;
  AV a;
  BV b;
  MV m;
  double margin;

  template <class Exec>
  static constexpr bool check_types() {
    static_assert(!Kokkos::is_view_v<AV> || !Kokkos::is_view_v<BV> ||
                      std::is_same_v<storage_t<value_t<AV>>, storage_t<value_t<BV>>>,
                  "softmargin: pairwise a and b must hold the same value type");
    return check_input_types<Exec, AV, BV>() && check_optional_type<Exec, AV, MV>("margin");
  }
  const AV& first() const { return a; }
  void check(const char* where) const {
    check_allocated(where, "a", a);
    check_allocated(where, "b", b);
    check_same_shape(where, "a", a, "b", b);
    check_optional(where, "a", a, "margin", m);
  }
  template <class Out>
  void check_alias_of(const char* where, const char* name, const Out& out) const {
    check_alias(where, name, out, "a", a);
    check_alias(where, name, out, "b", b);
    check_alias_optional(where, name, out, "margin", m);
  }
  template <class... Outs>
  bool flat(const Outs&... outs) const {
    return flat_compatible(a, b, m, outs...);
  }
  template <class Exec, bool Flat, OpKind Kind>
  auto element() const {
    auto ac = canonical<Exec, Flat, true>(a);
    auto bc = canonical<Exec, Flat, true>(b);
    auto mc = canonical_optional<Exec, Flat>(m);
    using E = PairwiseElement<decltype(ac), decltype(bc), decltype(mc), Kind>;
    return E{{}, ac, bc, mc, static_cast<typename E::value_type>(margin)};
  }
};

/// The two gradient outputs of a pairwise loss (softmargin::grads).
template <class GA, class GB>
struct GradPair {
  GA a;
  GB b;
};

}  // namespace softmargin::Impl

#endif

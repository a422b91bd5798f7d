// SoftMargin: the three passes, once for the whole family. Each checks its arguments at run time, chooses flat or
// strided canonical views, takes the element op of its inputs' descriptor (SoftMargin_Inputs.hpp) and hands the pass's
// op (SoftMargin_Ops.hpp) to the Reduce or Map launcher (SoftMargin_Dispatch.hpp).
#ifndef SOFTMARGIN_IMPL_PASSES_HPP
#define SOFTMARGIN_IMPL_PASSES_HPP

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "../SoftMargin_Types.hpp"
#include "SoftMargin_Checks.hpp"
#include "SoftMargin_Dispatch.hpp"
#include "SoftMargin_Inputs.hpp"
#include "SoftMargin_Ops.hpp"
#include "SoftMargin_Views.hpp"

namespace softmargin::Impl {

/// Runs f.template operator()<Flat>() with Flat true when every view of the call maps logical element i to data()[i]
/// in one common order (rank-1 canonical views, packs), else false (strided views of the original rank).
template <class F>
void with_flat_or_strided(const F& f, const bool flat) {
  if (flat)
    f.template operator()<true>();
  else
    f.template operator()<false>();
}

/// A caller's count: a positive finite host number, or a View the execution space can read.
inline void check_count(const char* where, const ReduceBy& r, const bool host_exec) {
  if (!r.has_count()) return;
  if (r.count_data() == nullptr) {
    if (!(r.count() > 0) || !std::isfinite(r.count()))
      throw std::invalid_argument(std::string(where) +
                                  ": mean_over's count must be a positive finite number, but it is " +
                                  std::to_string(r.count()));
  } else if (host_exec ? !r.count_host_accessible() : !r.count_device_accessible()) {
    throw std::invalid_argument(std::string(where) +
                                ": mean_over's count View is not accessible from the execution space");
  }
}

template <class In, class Alg>
void check_common(const char* where, const In& in, const ReduceBy& reduction, Alg algorithm, bool host_exec) {
  check_reduction(where, reduction.reduction());
  check_algorithm(where, algorithm);
  in.check(where);
  check_count(where, reduction, host_exec);
}

/// An element-wise output of the first input's shape: allocated, distinct elements, and apart from every input
/// unless in place.
template <class In, class OutView>
void check_elementwise(const char* where, const char* name, const OutView& out, const In& in) {
  check_allocated(where, name, out);
  check_same_shape(where, In::first_name, in.first(), name, out);
  check_distinct_elements(where, name, out);
  in.check_alias_of(where, name, out);
}

/// The gradient outputs: one View, or the two Views of GradPair, which must not overlap each other.
template <class In, class G>
void check_grads(const char* where, const G& grad, const In& in) {
  if constexpr (Kokkos::is_view_v<G>) {
    check_elementwise(where, "grad_x", grad, in);
  } else {
    check_elementwise(where, "grad_a", grad.a, in);
    check_elementwise(where, "grad_b", grad.b, in);
    if (overlaps(grad.a, grad.b))
      throw std::invalid_argument(std::string(where) + ": grad_b overlaps the memory of grad_a");
  }
}
template <class Out, class G>
void check_alias_grads(const char* where, const char* name, const Out& out, const G& grad) {
  if constexpr (Kokkos::is_view_v<G>) {
    check_alias(where, name, out, "grad_x", grad);
  } else {
    check_alias(where, name, out, "grad_a", grad.a);
    check_alias(where, name, out, "grad_b", grad.b);
  }
}
template <class Exec, bool Flat, class G>
auto make_sink(const G& grad) {
  if constexpr (Kokkos::is_view_v<G>) {
    auto gc = canonical<Exec, Flat, false>(grad);
    return GradSink<decltype(gc)>{gc};
  } else {
    auto ac = canonical<Exec, Flat, false>(grad.a);
    auto bc = canonical<Exec, Flat, false>(grad.b);
    return GradPairSink<decltype(ac), decltype(bc)>{ac, bc};
  }
}
template <class In, class G, class... More>
bool flat_with_grads(const In& in, const G& grad, const More&... more) {
  if constexpr (Kokkos::is_view_v<G>)
    return in.flat(grad, more...);
  else
    return in.flat(grad.a, grad.b, more...);
}

/// A scalar upstream gradient (host value or rank-0 View) as a ScalarUpstream in the compute type C, divided by the
/// reduction's divisor.
template <class Exec, class C, class Upstream>
auto scalar_upstream(const Upstream& g, const Divisor<accum_t<C>>& divisor) {
  using A = accum_t<C>;
  if constexpr (Kokkos::is_view_v<Upstream>) {
    using UV = ScalarView<const storage_t<value_t<Upstream>>, Exec, typename Upstream::memory_space>;
    return ScalarUpstream<UV, C>{UV(reinterpret_cast<typename UV::const_value_type*>(g.data())), A(0), divisor};
  } else {
    using UV = ScalarView<const C, Exec>;
    return ScalarUpstream<UV, C>{UV(nullptr), static_cast<A>(g), divisor};
  }
}

template <class Exec, class In, class OutView, class Alg>
void loss_pass(const Exec& space, const In& in, const OutView& out, const ReduceBy& reduction, Alg algorithm) {
  const char* where = In::names.loss;
  check_common(where, in, reduction, algorithm, is_host_space_v<Exec>);
  check_reduced_or_elementwise(where, "out", reduction.reduction(), out, in.first());
  if constexpr (OutView::rank() == 0) {
    check_allocated(where, "out", out);
    in.check_alias_of(where, "out", out);
  } else {
    check_elementwise(where, "out", out, in);
  }

  ToolsRegion region(where);
  const std::size_t n = in.first().size();
  const auto run = [&]<bool Flat>() {
    auto oc = canonical<Exec, Flat, false>(out);
    if constexpr (OutView::rank() == 0) {
      const auto e = in.template element<Exec, Flat, OpKind::Reduce>();
      using Op = LossOp<std::remove_const_t<decltype(e)>>;
      Reduce<Exec, Op, decltype(oc)>::run(space, Op{{}, e}, n, oc, reduction, algorithm);
    } else {
      const auto e = in.template element<Exec, Flat, OpKind::Map>();
      using Op = LossNoneOp<std::remove_const_t<decltype(e)>, decltype(oc)>;
      Map<Exec, Op>::run(space, Op{{}, e, oc}, n, algorithm);
    }
  };
  if constexpr (OutView::rank() == 0)
    with_flat_or_strided(run, in.flat());
  else
    with_flat_or_strided(run, in.flat(out));
}

template <class Exec, class In, class Upstream, class G, class Alg>
void backward_pass(const Exec& space, const In& in, const Upstream& grad_loss, const G& grad, const ReduceBy& reduction,
                   Alg algorithm) {
  const char* where = In::names.backward;
  constexpr bool per_element = [] {
    if constexpr (Kokkos::is_view_v<Upstream>)
      return Upstream::rank() != 0;
    else
      return false;
  }();
  check_common(where, in, reduction, algorithm, is_host_space_v<Exec>);
  check_grads(where, grad, in);
  if constexpr (Kokkos::is_view_v<Upstream>) {
    check_reduced_or_elementwise(where, "grad_loss", reduction.reduction(), grad_loss, in.first());
    check_allocated(where, "grad_loss", grad_loss);
    check_alias_grads(where, "grad_loss", grad_loss, grad);
  } else if (reduction.reduction() == Reduction::None) {
    throw std::invalid_argument(std::string(where) +
                                ": reduction none needs grad_loss as a View of x's shape, but it is a scalar");
  }

  using C = compute_t<value_t<typename In::first_view>>;
  ToolsRegion region(where);
  const std::size_t n = in.first().size();
  const auto run = [&]<bool Flat>() {
    const auto e = in.template element<Exec, Flat, OpKind::Map>();
    using E = std::remove_const_t<decltype(e)>;
    const auto sink = make_sink<Exec, Flat>(grad);
    using S = std::remove_const_t<decltype(sink)>;
    if constexpr (per_element) {
      auto uc = canonical<Exec, Flat, true>(grad_loss);
      using Op = GradOp<E, S, decltype(uc)>;
      Map<Exec, Op>::run(space, Op{{}, e, sink, uc}, n, algorithm);
    } else {
      const auto up = scalar_upstream<Exec, C>(grad_loss, divisor_of<accum_t<C>>(reduction, n));
      using Op = GradOp<E, S, decltype(up.view)>;
      Map<Exec, Op>::run(space, Op{{}, e, sink, up}, n, algorithm);
    }
  };
  if constexpr (per_element)
    with_flat_or_strided(run, flat_with_grads(in, grad, grad_loss));
  else
    with_flat_or_strided(run, flat_with_grads(in, grad));
}

template <class Exec, class In, class LossView, class G, class Upstream, class Alg>
void loss_and_grad_pass(const Exec& space, const In& in, const LossView& loss_out, const G& grad,
                        const ReduceBy& reduction, const Upstream& grad_loss, Alg algorithm) {
  const char* where = In::names.loss_and_grad;
  check_common(where, in, reduction, algorithm, is_host_space_v<Exec>);
  if (reduction.reduction() == Reduction::None)
    throw std::invalid_argument(std::string(where) + ": reduction none has no scalar loss; use loss() and backward()");
  check_allocated(where, "loss_out", loss_out);
  check_grads(where, grad, in);
  in.check_alias_of(where, "loss_out", loss_out);
  check_alias_grads(where, "loss_out", loss_out, grad);
  if constexpr (Kokkos::is_view_v<Upstream>) {
    check_allocated(where, "grad_loss", grad_loss);
    check_alias_grads(where, "grad_loss", grad_loss, grad);
    check_alias(where, "loss_out", loss_out, "grad_loss", grad_loss);
  }

  using C = compute_t<value_t<typename In::first_view>>;
  ToolsRegion region(where);
  const std::size_t n = in.first().size();
  const auto up = scalar_upstream<Exec, C>(grad_loss, divisor_of<accum_t<C>>(reduction, n));
  const auto run = [&]<bool Flat>() {
    const auto e = in.template element<Exec, Flat, OpKind::Fused>();
    const auto sink = make_sink<Exec, Flat>(grad);
    auto lc = canonical<Exec, Flat, false>(loss_out);
    using Op = LossGradOp<std::remove_const_t<decltype(e)>, std::remove_const_t<decltype(sink)>, decltype(up.view)>;
    Reduce<Exec, Op, decltype(lc)>::run(space, Op{{}, e, sink, up}, n, lc, reduction, algorithm);
  };
  with_flat_or_strided(run, flat_with_grads(in, grad));
}

}  // namespace softmargin::Impl

#endif

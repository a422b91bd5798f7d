// SoftMargin: element operations. Each names the views it reads and writes; the kernels in SoftMargin_Kernels.hpp
// run any of them (map: apply to every element; reduce: sum what it returns).
#ifndef SOFTMARGIN_IMPL_OPS_HPP
#define SOFTMARGIN_IMPL_OPS_HPP

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <type_traits>

#include "SoftMargin_Math.hpp"
#include "SoftMargin_Views.hpp"
#include "SoftMargin_Workspace.hpp"

namespace softmargin::Impl {

/// Bytes contiguous bytes of T (aligned to Bytes), loaded and stored as one vector. Devices read 16 bytes per thread
/// (the widest load); hosts 64 (one cache line, an AVX-512 register), enough for the compiler to vectorize the loss.
template <class T, int Bytes>
struct alignas(Bytes) Pack {
  using value_type = T;
  static constexpr int bytes = Bytes;
  static constexpr int width = static_cast<int>(Bytes / sizeof(T));
  T v[width];
};

template <class T, class Exec>
using PackFor = Pack<T, is_host_space_v<Exec> ? 64 : 16>;

/// d[0] + ... + d[W-1] by halving (d[k] += d[k + W/2], W a power of two), one level per instantiation so that every
/// loop has a constant trip count: compilers unroll it into whole-vector adds.
template <int W, class A>
KOKKOS_FORCEINLINE_FUNCTION A halving_sum(A* d) {
  static_assert((W & (W - 1)) == 0, "pack widths are powers of two");
  if constexpr (W == 1) {
    return d[0];
  } else {
    for (int k = 0; k < W / 2; ++k) d[k] += d[k + W / 2];
    return halving_sum<W / 2>(d);
  }
}

/// Running sum of packs in A (the accumulation type, wider than the packs' T).
///  - Wide (host, 64-byte) packs: one sum per lane (whole-vector converts and adds), added up pairwise at the end.
///  - Narrow (device, 16-byte) packs: the pack's values are added pairwise in T first and the pack sum converted
///    once: on GPUs a conversion to double costs the issue slots of 8 float operations (16 a clock per
///    multiprocessor on sm_90, against 128 FMAs), a quarter of the loss's arithmetic when done per element. Where
///    that sum is not finite in T (a pack of losses near T's max, or inf, or NaN) the values are added in A instead,
///    so nothing overflows that the A sum would not.
template <class A, class P>
struct LaneSums {
  using T = typename P::value_type;
  static constexpr bool narrow = P::bytes <= 16 && !std::is_same_v<A, T>;
  A v[narrow ? 1 : P::width] = {};
  KOKKOS_FORCEINLINE_FUNCTION void add(const P& p) {
    if constexpr (narrow) {
      T d[P::width];
      for (int k = 0; k < P::width; ++k) d[k] = p.v[k];
      const T s = halving_sum<P::width>(d);
      if (Kokkos::abs(s) <= Kokkos::Experimental::finite_max_v<T>) {
        v[0] += static_cast<A>(s);
      } else {
        for (int k = 0; k < P::width; ++k) v[0] += static_cast<A>(p.v[k]);
      }
    } else {
      for (int k = 0; k < P::width; ++k) v[k] += static_cast<A>(p.v[k]);
    }
  }
  /// add() of K packs, for the narrow kind with one finiteness test for all of them (a branch per pack keeps the GPU
  /// compiler from overlapping the packs' arithmetic): where any of the K float sums is not finite, all K packs'
  /// values are added in A. With the loads of the K packs issued first (LossOp::load), 6.20 us a call in a stream at
  /// the reference problem on the H200 against 6.40 with a test per pack (docs/PERFORMANCE.md, fifth session).
  template <int K>
  KOKKOS_FORCEINLINE_FUNCTION void add(const P (&p)[K]) {
    if constexpr (narrow) {
      T s[K];
      bool finite = true;
      for (int j = 0; j < K; ++j) {
        T d[P::width];
        for (int k = 0; k < P::width; ++k) d[k] = p[j].v[k];
        s[j] = halving_sum<P::width>(d);
        finite &= Kokkos::abs(s[j]) <= Kokkos::Experimental::finite_max_v<T>;
      }
      if (finite) {
        for (int j = 0; j < K; ++j) v[0] += static_cast<A>(s[j]);
      } else {
        for (int j = 0; j < K; ++j)
          for (int k = 0; k < P::width; ++k) v[0] += static_cast<A>(p[j].v[k]);
      }
    } else {
      for (int j = 0; j < K; ++j) add(p[j]);
    }
  }
  KOKKOS_FORCEINLINE_FUNCTION A total() {
    if constexpr (narrow)
      return v[0];
    else
      return halving_sum<P::width>(v);
  }
};

template <class P, class T, class Index>
KOKKOS_FORCEINLINE_FUNCTION P load_pack(T* p, const Index i) {
  return reinterpret_cast<const P*>(p)[i];
}
/// load_pack for inputs that nothing writes while the kernel runs: through the read-only data cache on CUDA devices
/// (non-coherent loads, as `const __restrict__` pointers would give), a plain load elsewhere.
template <class P, class T, class Index>
KOKKOS_FORCEINLINE_FUNCTION P load_pack_readonly(const T* p, const Index i) {
#if defined(__CUDA_ARCH__)
  if constexpr (P::bytes == 16 && std::is_same_v<T, float>) {
    const float4 v = __ldg(reinterpret_cast<const float4*>(p) + i);
    return P{{v.x, v.y, v.z, v.w}};
  } else if constexpr (P::bytes == 16 && std::is_same_v<T, double>) {
    const double2 v = __ldg(reinterpret_cast<const double2*>(p) + i);
    return P{{v.x, v.y}};
  }
#endif
  return load_pack<P>(p, i);
}
template <class P, class T, class Index>
KOKKOS_FORCEINLINE_FUNCTION void store_pack(T* p, const Index i, const P& v) {
  reinterpret_cast<P*>(p)[i] = v;
}

/// Whether a view is a FlatView (contiguous rank 1): the only kind the packed (vector) loops read and write.
template <class V>
inline constexpr bool is_flat_v = V::rank() == 1 && std::is_same_v<typename V::array_layout, Kokkos::LayoutRight>;

template <int Bytes, class... V>
bool aligned_to(const V&... v) {
  return ((reinterpret_cast<std::uintptr_t>(v.data()) % Bytes == 0) && ...);
}

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

/// loss(x_i, y_i), summed by a reduction.
template <class XV, class YV>
struct LossOp {
  static constexpr const char* range_label = "softmargin::loss::range_reduce";
  static constexpr const char* team_label = "softmargin::loss::team_scratch";
  static constexpr const char* native_label = "softmargin::loss::native";
  using value_type = typename XV::non_const_value_type;
  using pack_type = PackFor<value_type, typename XV::execution_space>;
  using accum_type = accum_t<value_type>;
  XV x;
  YV y;

  KOKKOS_INLINE_FUNCTION value_type scale() const { return value_type(1); }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION accum_type operator()(const Index i, const value_type) const {
    return static_cast<accum_type>(loss<value_type>(at(x, i), at(y, i)));
  }

  static constexpr bool packed = is_flat_v<XV> && is_flat_v<YV>;
  bool aligned() const { return aligned_to<pack_type::bytes>(x, y); }
  /// The inputs of elements [p W, p W + W). Loaded apart from their losses so that a kernel can issue the loads of
  /// several packs before the arithmetic of any (the GPU compiler keeps that source order; pack() leaves each pack's
  /// loads next to its arithmetic). x and y are only read by this op's kernels: read-only loads.
  struct inputs_type {
    pack_type x, y;
  };
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION inputs_type load(const Index p) const {
    return {load_pack_readonly<pack_type>(x.data(), p), load_pack_readonly<pack_type>(y.data(), p)};
  }
  /// The losses of a pack's inputs, for a LaneSums<accum_type> (losses near float max must not overflow).
  KOKKOS_FORCEINLINE_FUNCTION pack_type losses(const inputs_type& in, const value_type) const {
    pack_type l;
    for (int k = 0; k < pack_type::width; ++k) l.v[k] = loss<value_type>(in.x.v[k], in.y.v[k]);
    return l;
  }
  /// The losses of elements [p W, p W + W).
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION pack_type pack(const Index p, const value_type s) const {
    return losses(load(p), s);
  }
};

/// out_i = loss(x_i, y_i) (reduction none).
template <class XV, class YV, class OV>
struct LossNoneOp {
  static constexpr const char* range_label = "softmargin::loss_none::range_reduce";
  static constexpr const char* team_label = "softmargin::loss_none::team_scratch";
  static constexpr const char* native_label = "softmargin::loss_none::native";
  using value_type = typename XV::non_const_value_type;
  using pack_type = PackFor<value_type, typename XV::execution_space>;
  XV x;
  YV y;
  OV out;

  KOKKOS_INLINE_FUNCTION value_type scale() const { return value_type(1); }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Index i, const value_type) const {
    const value_type l = loss<value_type>(at(x, i), at(y, i));
    at(out, i) = l;
  }

  static constexpr bool packed = is_flat_v<XV> && is_flat_v<YV> && is_flat_v<OV>;
  bool aligned() const { return aligned_to<pack_type::bytes>(x, y, out); }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION void pack(const Index p, const value_type) const {
    const auto a = load_pack<pack_type>(x.data(), p), b = load_pack<pack_type>(y.data(), p);
    pack_type o;
    for (int k = 0; k < pack_type::width; ++k) o.v[k] = loss<value_type>(a.v[k], b.v[k]);
    store_pack(out.data(), p, o);
  }
};

/// grad_i = g_i * dloss/dx(x_i, y_i): g_i is the scalar upstream (sum, mean: UpV of rank 0, wrapped in a
/// ScalarUpstream) or upstream_i (none: UpV of x's rank).
template <class XV, class YV, class GV, class UpV>
struct GradOp {
  static constexpr const char* range_label = "softmargin::backward::range_reduce";
  static constexpr const char* team_label = "softmargin::backward::team_scratch";
  static constexpr const char* native_label = "softmargin::backward::native";
  using value_type = typename XV::non_const_value_type;
  using pack_type = PackFor<value_type, typename XV::execution_space>;
  static constexpr bool per_element = UpV::rank() != 0;
  XV x;
  YV y;
  GV grad;
  std::conditional_t<per_element, UpV, ScalarUpstream<UpV>> upstream;

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

  static constexpr bool packed = is_flat_v<XV> && is_flat_v<YV> && is_flat_v<GV> && (!per_element || is_flat_v<UpV>);
  bool aligned() const {
    if constexpr (per_element)
      return aligned_to<pack_type::bytes>(x, y, grad, upstream);
    else
      return aligned_to<pack_type::bytes>(x, y, grad);
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION void pack(const Index p, const value_type s) const {
    const auto a = load_pack<pack_type>(x.data(), p), b = load_pack<pack_type>(y.data(), p);
    pack_type g{};
    if constexpr (per_element) g = load_pack<pack_type>(upstream.data(), p);
    for (int k = 0; k < pack_type::width; ++k)
      g.v[k] = (per_element ? g.v[k] : s) * dloss_dx<value_type>(a.v[k], b.v[k]);
    store_pack(grad.data(), p, g);
  }
};

/// Fused: grad_i = s * dloss/dx(x_i, y_i), returns loss(x_i, y_i) for the reduction, sharing exp(-|z|).
template <class XV, class YV, class GV, class UV>
struct LossGradOp {
  static constexpr const char* range_label = "softmargin::loss_and_grad::range_reduce";
  static constexpr const char* team_label = "softmargin::loss_and_grad::team_scratch";
  static constexpr const char* native_label = "softmargin::loss_and_grad::native";
  using value_type = typename XV::non_const_value_type;
  using pack_type = PackFor<value_type, typename XV::execution_space>;
  using accum_type = accum_t<value_type>;
  XV x;
  YV y;
  GV grad;
  ScalarUpstream<UV> scalar;

  KOKKOS_INLINE_FUNCTION value_type scale() const { return scalar.get(); }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION accum_type operator()(const Index i, const value_type s) const {
    value_type g;
    const value_type l = loss_and_dloss_dx<value_type>(at(x, i), at(y, i), g);
    at(grad, i) = s * g;
    return static_cast<accum_type>(l);
  }

  static constexpr bool packed = is_flat_v<XV> && is_flat_v<YV> && is_flat_v<GV>;
  bool aligned() const { return aligned_to<pack_type::bytes>(x, y, grad); }
  /// Stores the gradients of elements [p W, p W + W) and returns their losses, as LossOp::pack.
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION pack_type pack(const Index p, const value_type s) const {
    const auto a = load_pack<pack_type>(x.data(), p), b = load_pack<pack_type>(y.data(), p);
    pack_type g, l;
    for (int k = 0; k < pack_type::width; ++k) {
      l.v[k] = loss_and_dloss_dx<value_type>(a.v[k], b.v[k], g.v[k]);
      g.v[k] *= s;
    }
    store_pack(grad.data(), p, g);
    return l;
  }
};

}  // namespace softmargin::Impl

#endif

// SoftMargin host room: Hardware<Exec> for every host execution space (Serial, OpenMP, Threads, HPX). Host backends
// run the portable kernels (SoftMargin_Kokkos.hpp) with packs of whole vectors: converted a vector at a time
// (SoftMargin_HostConvert.hpp), computed by the pack kernels on Kokkos SIMD where the target has a Kokkos SIMD ABI
// (SoftMargin_HostPacks.hpp), and summed lane by lane.
#ifndef SOFTMARGIN_IMPL_HOST_HPP
#define SOFTMARGIN_IMPL_HOST_HPP

#include <Kokkos_Core.hpp>
#include <type_traits>

#include "../SoftMargin_Hardware.hpp"
#include "SoftMargin_HostConvert.hpp"
#include "SoftMargin_HostPacks.hpp"
#include "SoftMargin_HostTarget.hpp"

namespace softmargin::Impl {

/// Vectors in a host pack of float arithmetic: the kernels compute such a pack stage by stage, so that four chains of
/// the loss's dependent operations overlap (one vector's chain alone leaves the core waiting on their latency: on one
/// core the bf16 fused pass took 1.24x the time of four, the fp32 fused pass 1.10x). A pack's views need only a
/// vector's alignment (of their own type).
inline constexpr int kHostPackVectors = 4;

template <class Exec>
struct Hardware<Exec, std::enable_if_t<is_host_space_v<Exec>>> : PortableHardware<Exec> {
  /// kHostPackVectors vectors for float arithmetic, except the map passes of float x, which take one (GCC keeps a
  /// float pack of four vectors on the stack, not in registers, and those passes copy it there and back: the fp32
  /// backward pass took 2x the time; 16-bit x is widened into a pack of floats anyway).
  template <class X, class C, OpKind K>
  static constexpr int pack_vectors = std::is_same_v<C, float> && (sizeof(X) < sizeof(C) || K != OpKind::Map)
                                          ? kHostPackVectors
                                          : 1;
  template <class X, class C, OpKind K>
  static constexpr int pack_width = kHostVectorBytes / static_cast<int>(sizeof(C)) * pack_vectors<X, C, K>;

  template <int W>
  static constexpr bool vector_packs = host_packs_v<W>;

#if defined(SOFTMARGIN_IMPL_AVX512)
  template <class A, class P, bool Vector>
  using lane_sums = std::conditional_t<Vector && std::is_same_v<A, double> &&
                                           std::is_same_v<typename P::value_type, float> && P::width % 16 == 0,
                                       HalvedLaneSums<P>, LaneSums<A, P, false>>;
#else
  template <class A, class P, bool Vector>
  using lane_sums = LaneSums<A, P, false>;
#endif

  template <class C, class T, int W>
  KOKKOS_FORCEINLINE_FUNCTION static void widen_values(const T (&in)[W], C (&out)[W]) {
    HostConvert::widen_values(in, out);
  }
  template <class C, class Y, int W>
  KOKKOS_FORCEINLINE_FUNCTION static void widen_targets(const Y (&in)[W], C (&out)[W]) {
    HostConvert::widen_targets(in, out);
  }
  template <class O, class C, int W>
  KOKKOS_FORCEINLINE_FUNCTION static void round_scaled(const C scale, const C (&in)[W], O (&out)[W]) {
    HostConvert::round_scaled(scale, in, out);
  }

  template <bool Fast, int W>
  KOKKOS_FORCEINLINE_FUNCTION static void loss_pack(const float (&x)[W], const float (&y)[W], float (&loss)[W]) {
    Impl::loss_pack<Fast>(x, y, loss);
  }
  template <bool Fast, int W>
  KOKKOS_FORCEINLINE_FUNCTION static void grad_pack(const float (&x)[W], const float (&y)[W], float (&grad)[W]) {
    Impl::grad_pack<Fast>(x, y, grad);
  }
  template <bool Fast, int W>
  KOKKOS_FORCEINLINE_FUNCTION static void loss_and_grad_pack(const float (&x)[W], const float (&y)[W], float (&loss)[W],
                                                             float (&grad)[W]) {
    Impl::loss_and_grad_pack<Fast>(x, y, loss, grad);
  }
};

}  // namespace softmargin::Impl

#endif

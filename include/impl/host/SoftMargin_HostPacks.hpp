// SoftMargin host room: the loss and its gradient in float a pack at a time on Kokkos SIMD (SoftMargin_HostSimd.hpp),
// in the accurate form or the fast one (Fast: the passes of 16-bit x whose float results are summed or rounded to 16
// bits).
//
// Compilers vectorize the element-wise loss (SoftMargin_Math.hpp) but not all of it tightly: the exp's clamp becomes
// a comparison and masked constants, its 2^n an integer add, a shift and two multiplies. Here each is one vector
// operation (on AVX-512 one instruction: vscalefps) around the same polynomials and the same madds (an FMA where the
// element form has one, and no other multiply-add: SoftMargin_Math.hpp's madd), which gives the same exp(-|z|), losses
// and float gradients bit for bit at every optimization level (TestWidened and TestFamily compare them). The fast
// form's sigmoid divides by the reciprocal estimate where the target has one (AVX-512's vrcp14ps, within 2^-14
// relative: a gradient rounded to bf16 or fp16 stays within one unit of the correctly rounded one), and a gradient
// computed alone (the backward pass into 16 bits) takes a coarser exp still (margin_coarse). Targets without a Kokkos
// SIMD ABI compute the pack element by element (host_packs_v is false). On AVX-512 the lane sums of such packs
// (HalvedLaneSums) add each vector's halves in float first.
#ifndef SOFTMARGIN_IMPL_HOST_PACKS_HPP
#define SOFTMARGIN_IMPL_HOST_PACKS_HPP

#include <Kokkos_Macros.hpp>
#include <type_traits>

#include "../SoftMargin_Math.hpp"
#include "../SoftMargin_Packs.hpp"
#include "SoftMargin_HostSimd.hpp"
#include "SoftMargin_HostTarget.hpp"

namespace softmargin::Impl {

/// Whether this target computes packs of W floats here: whole vectors of Kokkos SIMD's native ABI.
template <int W>
inline constexpr bool host_packs_v =
#if defined(SOFTMARGIN_IMPL_HOST_SIMD)
    W % host_simd::width == 0;
#else
    false;
#endif

#if defined(SOFTMARGIN_IMPL_AVX512)
/// The running sum in double of packs of float that the kernels below computed: each vector's two halves are added
/// in float first, each times 1/2 so that no pair overflows (one rounding, as the device packs' sums; the total is
/// doubled), then the 8 lanes converted and added: a convert and an add fewer a vector than LaneSums, the fp32 mean
/// about 8% faster on one core. Written out as vector operations, since compilers do not vectorize a sum that starts
/// from a vector's lanes (GCC 12 left it scalar).
template <class P>
struct HalvedLaneSums {
  static_assert(std::is_same_v<typename P::value_type, float> && P::width % 16 == 0, "packs of whole vectors");
  static constexpr int lanes = 8;
  double v[lanes] = {};
  template <int K>
  KOKKOS_FORCEINLINE_FUNCTION void add(const P (&p)[K]) {
    const __m256 half = _mm256_set1_ps(0.5f);
    for (int j = 0; j < K; ++j)
      for (int k = 0; k < P::width; k += 16) {
        const __m512 f = _mm512_loadu_ps(p[j].v + k);
        const __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(f), 1));
        const __m256 m = _mm256_fmadd_ps(_mm512_castps512_ps256(f), half, _mm256_mul_ps(hi, half));
        _mm512_storeu_pd(v, _mm512_add_pd(_mm512_loadu_pd(v), _mm512_cvtps_pd(m)));
      }
  }
  KOKKOS_FORCEINLINE_FUNCTION void add(const P& p) {
    const P one[1] = {p};
    add(one);
  }
  KOKKOS_FORCEINLINE_FUNCTION double total() { return 2 * halving_sum<lanes>(v); }
};

#endif

#if defined(SOFTMARGIN_IMPL_HOST_SIMD)
namespace host_simd {

/// z = -y x, -y and e = exp(-|z|) of one vector (exp_nonpos_poly<Fast>(-|z|) bit for bit).
struct Margin {
  F z, neg_y, e;
};

/// z = -y x, -y, and what both exps start from: their argument m = -|z| clamped to -104 (e^-104 rounds to 0; the
/// maximum's second operand, -|z|, passes a NaN on every ABI) and exponent n = round(m log2(e)). Into references, not
/// returned as one struct: GCC kept such a struct's vectors in memory as well, three stores a vector in the fp32
/// backward pass's loop (4% longer at 2^18-2^20).
KOKKOS_FORCEINLINE_FUNCTION void reduce(const float* x, const float* y, F& z, F& neg_y, F& m, F& n) {
  neg_y = negate(load(y));
  z = neg_y * load(x);
  m = Kokkos::max(F(-104.0f), neg_abs(z));
  n = round_product(m, F(kLog2e));
}

template <bool Fast>
KOKKOS_FORCEINLINE_FUNCTION Margin margin(const float* x, const float* y) {
  F z, neg_y, m, n;
  reduce(x, y, z, neg_y, m, n);
  // r = m - n ln2, each term one rounding as in exp_nonpos_poly
  const F r = Madd<F>::apply(n, F(-kLn2Lo), Madd<F>::apply(n, F(-kLn2Hi), m));
  return {z, neg_y, times_pow2(exp_reduced<Fast>(r), n)};
}

/// margin for a gradient that is rounded to 16 bits and nothing else (grad_pack's fast form): m - n ln2 in one
/// rounding (n ln2's error, at most 3e-7, is far below what such a gradient resolves) and a degree-3 polynomial
/// fitted for relative error, so e within 7.5e-5 of exp(-|z|). With the reciprocal estimate (6.1e-5) the gradient
/// stays within 1.4e-4 of its value, under a third of an fp16 unit and a thirtieth of a bf16 one: the rounded gradient
/// is within one unit of the correctly rounded one. Subnormal and zero gradients as in margin.
KOKKOS_FORCEINLINE_FUNCTION Margin margin_coarse(const float* x, const float* y) {
  F z, neg_y, m, n;
  reduce(x, y, z, neg_y, m, n);
  const F r = Madd<F>::apply(n, F(-0.693147180559945309f), m);
  const F p = horner(r, 1.656684235e-01f, 5.049632642e-01f, 1.000164186e+00f, 9.999280735e-01f);
  return {z, neg_y, times_pow2(p, n)};
}

/// d loss / d x = -y (z >= 0 ? 1 : e) / (1 + e); the fast form multiplies by the reciprocal estimate.
template <bool Fast>
KOKKOS_FORCEINLINE_FUNCTION F dloss_dx(const Margin& m) {
  const F one(1.0f);
  // z >= 0 is false where z is NaN: e carries it
  if constexpr (Fast) {
    const F r = reciprocal_estimate(one + m.e);
    return m.neg_y * times_where_negative(m.z, r, m.e);
  } else {
    return m.neg_y * (KE::condition(m.z >= F(0.0f), one, m.e) / (one + m.e));
  }
}

/// loss = max(z, 0) + log1p(e); where z is NaN the maximum may be 0 (x86) or NaN (Arm): e carries the NaN either way.
template <bool Fast>
KOKKOS_FORCEINLINE_FUNCTION F loss(const Margin& m) {
  return Madd<F>::apply(log1p_unit_q<Fast>(m.e), m.e, Kokkos::max(m.z, F(0.0f)));  // as add_log1p_unit
}

/// Vectors of a pack computed stage by stage together: four, so that their dependency chains overlap (one vector's
/// chain alone is latency-bound) while their values stay in registers.
template <int W>
inline constexpr int kGroup = W / width < 4 ? W / width : 4;

}  // namespace host_simd
#endif

// A pack of W floats is W / width vectors, taken in groups whose every stage is done for all of the group's vectors
// before the next.

/// The losses of a pack of W floats (host_packs_v<W>).
template <bool Fast, int W>
KOKKOS_FORCEINLINE_FUNCTION void loss_pack(const float (&x)[W], const float (&y)[W], float (&loss)[W]) {
  static_assert(host_packs_v<W>, "a target without the host pack kernels");
#if defined(SOFTMARGIN_IMPL_HOST_SIMD)
  using namespace host_simd;
  constexpr int G = kGroup<W>;
  for (int g = 0; g < W; g += G * width) {
    Margin m[G];
    for (int k = 0; k < G; ++k) m[k] = margin<Fast>(x + g + width * k, y + g + width * k);
    for (int k = 0; k < G; ++k) store(loss + g + width * k, host_simd::loss<Fast>(m[k]));
  }
#endif
}

/// The gradients of a pack of W floats (host_packs_v<W>); the fast form is for gradients rounded to 16 bits.
template <bool Fast, int W>
KOKKOS_FORCEINLINE_FUNCTION void grad_pack(const float (&x)[W], const float (&y)[W], float (&grad)[W]) {
  static_assert(host_packs_v<W>, "a target without the host pack kernels");
#if defined(SOFTMARGIN_IMPL_HOST_SIMD)
  using namespace host_simd;
  constexpr int G = kGroup<W>;
  for (int g = 0; g < W; g += G * width) {
    Margin m[G];
    for (int k = 0; k < G; ++k)
      m[k] = Fast ? margin_coarse(x + g + width * k, y + g + width * k)
                  : margin<false>(x + g + width * k, y + g + width * k);
    for (int k = 0; k < G; ++k) store(grad + g + width * k, dloss_dx<Fast>(m[k]));
  }
#endif
}

/// The losses and gradients of a pack of W floats (host_packs_v<W>), sharing exp(-|z|).
template <bool Fast, int W>
KOKKOS_FORCEINLINE_FUNCTION void loss_and_grad_pack(const float (&x)[W], const float (&y)[W], float (&loss)[W],
                                                    float (&grad)[W]) {
  static_assert(host_packs_v<W>, "a target without the host pack kernels");
#if defined(SOFTMARGIN_IMPL_HOST_SIMD)
  using namespace host_simd;
  constexpr int G = kGroup<W>;
  for (int g = 0; g < W; g += G * width) {
    Margin m[G];
    for (int k = 0; k < G; ++k) m[k] = margin<Fast>(x + g + width * k, y + g + width * k);
    for (int k = 0; k < G; ++k) store(grad + g + width * k, dloss_dx<Fast>(m[k]));
    for (int k = 0; k < G; ++k) store(loss + g + width * k, host_simd::loss<Fast>(m[k]));
  }
#endif
}

}  // namespace softmargin::Impl

#endif

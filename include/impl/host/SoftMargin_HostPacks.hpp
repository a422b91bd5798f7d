// SoftMargin host room: the loss and its gradient in float a pack at a time on AVX-512 hosts, in the accurate form or
// the fast one (Fast: the passes of 16-bit x whose float results are summed or rounded to 16 bits).
//
// Compilers vectorize the element-wise loss (SoftMargin_Math.hpp) but not all of it tightly: the exp's clamp becomes
// a comparison and masked constants, its 2^n an integer add, a shift and two multiplies, its rounding of n an add and
// a subtract. Here each is one instruction (vminps, vscalefps, vrndscaleps) around the same polynomials, which gives
// the same exp(-|z|) bit for bit and the same losses and float gradients to within their last rounding (compilers may
// fuse the element form's last multiply and add). The fast form's sigmoid divides by the reciprocal estimate
// (vrcp14ps, within 2^-14 relative: a gradient rounded to bf16 or fp16 stays within one unit of the correctly rounded
// one), and a gradient computed alone (the backward pass into 16 bits) takes a coarser exp still (margin_coarse).
// Other targets compute the pack element by element (host_packs_v is false). The lane sums of such packs
// (HalvedLaneSums) add each vector's halves in float first.
#ifndef SOFTMARGIN_IMPL_HOST_PACKS_HPP
#define SOFTMARGIN_IMPL_HOST_PACKS_HPP

#include <Kokkos_Macros.hpp>
#include <type_traits>

#include "../SoftMargin_Math.hpp"
#include "../SoftMargin_Packs.hpp"
#include "SoftMargin_HostTarget.hpp"
#include "SoftMargin_HostVectors.hpp"

namespace softmargin::Impl {

/// Whether this target computes packs of W floats here.
template <int W>
inline constexpr bool host_packs_v =
#if defined(SOFTMARGIN_IMPL_AVX512)
    W % 16 == 0;
#else
    false;
#endif

#if defined(SOFTMARGIN_IMPL_AVX512)
/// madd for 16 floats: the core's polynomials (SoftMargin_Math.hpp) evaluated on AVX-512 vectors. (__m512 as a
/// template argument is this vector type: its may_alias attribute does not take part.)
template <>
struct Madd<host_vector_t<float, 16>> {
  using V = host_vector_t<float, 16>;
  KOKKOS_FORCEINLINE_FUNCTION static V apply(const V a, const V b, const V c) { return _mm512_fmadd_ps(a, b, c); }
};

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

namespace avx512 {

/// z = -y x, -y and e = exp(-|z|) of 16 elements (exp_nonpos_poly<Fast>(-|z|) bit for bit).
struct Margin {
  __m512 z, neg_y, e;
};

/// z = -y x, -y, and exp(-|z|)'s argument a = |z| clamped to 104 (e^-104 rounds to 0; vminps returns its second
/// operand, |z|, where that is NaN) and exponent n = round(-a log2(e)): what both exps start from.
struct Reduction {
  __m512 z, neg_y, a, n;
};
inline Reduction reduction(const float* x, const float* y) {
  const __m512 neg_y =
      _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(_mm512_loadu_ps(y)), _mm512_set1_epi32(INT32_MIN)));
  const __m512 z = _mm512_mul_ps(neg_y, _mm512_loadu_ps(x));
  const __m512 a = _mm512_min_ps(_mm512_set1_ps(104.0f), _mm512_abs_ps(z));
  const __m512 n =
      _mm512_roundscale_ps(_mm512_mul_ps(a, _mm512_set1_ps(-kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return {z, neg_y, a, n};
}

template <bool Fast>
inline Margin margin(const float* x, const float* y) {
  const Reduction d = reduction(x, y);
  // r = -a - n ln2, each term one rounding as in exp_nonpos_poly
  const __m512 r = _mm512_fnmadd_ps(d.n, _mm512_set1_ps(kLn2Lo), _mm512_fnmsub_ps(d.n, _mm512_set1_ps(kLn2Hi), d.a));
  return {d.z, d.neg_y, _mm512_scalef_ps(exp_reduced<Fast>(r), d.n)};  // p 2^n, rounded once where subnormal
}

/// margin for a gradient that is rounded to 16 bits and nothing else (grad_pack's fast form): -|z| - n ln2 in one
/// rounding (n ln2's error, at most 3e-7, is far below what such a gradient resolves) and a degree-3 polynomial
/// fitted for relative error, so e within 7.5e-5 of exp(-|z|). With the reciprocal estimate (6.1e-5) the gradient
/// stays within 1.4e-4 of its value, under a third of an fp16 unit and a thirtieth of a bf16 one: the rounded gradient
/// is within one unit of the correctly rounded one. Subnormal and zero gradients as in margin.
inline Margin margin_coarse(const float* x, const float* y) {
  const Reduction d = reduction(x, y);
  const __m512 r = _mm512_fnmsub_ps(d.n, _mm512_set1_ps(0.693147180559945309f), d.a);
  const __m512 p = horner(r, 1.656684235e-01f, 5.049632642e-01f, 1.000164186e+00f, 9.999280735e-01f);
  return {d.z, d.neg_y, _mm512_scalef_ps(p, d.n)};
}

/// d loss / d x = -y (z >= 0 ? 1 : e) / (1 + e); the fast form divides by the reciprocal estimate.
template <bool Fast>
inline __m512 dloss_dx(const Margin& m) {
  const __m512 one = _mm512_set1_ps(1.0f);
  if constexpr (Fast) {  // 1 / (1 + e), times e where z < 0 (or is NaN)
    const __m512 r = _mm512_rcp14_ps(_mm512_add_ps(one, m.e));
    return _mm512_mul_ps(m.neg_y,
                         _mm512_mask_mul_ps(r, _mm512_cmp_ps_mask(m.z, _mm512_setzero_ps(), _CMP_NGE_UQ), r, m.e));
  } else {
    const __m512 num = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(m.z, _mm512_setzero_ps(), _CMP_GE_OQ), m.e, one);
    return _mm512_mul_ps(m.neg_y, _mm512_div_ps(num, _mm512_add_ps(one, m.e)));
  }
}

/// loss = max(z, 0) + log1p(e): vmaxps gives 0 for a NaN z, as the element form does; the NaN comes through e.
template <bool Fast>
inline __m512 loss(const Margin& m) {
  const __m512 pos = _mm512_max_ps(m.z, _mm512_setzero_ps());
  if constexpr (Fast)
    return _mm512_add_ps(pos, log1p_unit_fast(m.e));
  else
    return _mm512_add_ps(pos, log1p_unit(m.e));
}

}  // namespace avx512
#endif

// A pack of W floats is W / 16 vectors, each stage done for all of them before the next: their dependency chains
// then overlap (one vector's chain alone is latency-bound).

/// The losses of a pack of W floats (host_packs_v<W>).
template <bool Fast, int W>
KOKKOS_FORCEINLINE_FUNCTION void loss_pack(const float (&x)[W], const float (&y)[W], float (&loss)[W]) {
  static_assert(host_packs_v<W>, "a target without the host pack kernels");
#if defined(SOFTMARGIN_IMPL_AVX512)
  avx512::Margin m[W / 16];
  for (int k = 0; k < W / 16; ++k) m[k] = avx512::margin<Fast>(x + 16 * k, y + 16 * k);
  for (int k = 0; k < W / 16; ++k) _mm512_storeu_ps(loss + 16 * k, avx512::loss<Fast>(m[k]));
#endif
}

/// The gradients of a pack of W floats (host_packs_v<W>); the fast form is for gradients rounded to 16 bits.
template <bool Fast, int W>
KOKKOS_FORCEINLINE_FUNCTION void grad_pack(const float (&x)[W], const float (&y)[W], float (&grad)[W]) {
  static_assert(host_packs_v<W>, "a target without the host pack kernels");
#if defined(SOFTMARGIN_IMPL_AVX512)
  avx512::Margin m[W / 16];
  for (int k = 0; k < W / 16; ++k)
    m[k] = Fast ? avx512::margin_coarse(x + 16 * k, y + 16 * k) : avx512::margin<false>(x + 16 * k, y + 16 * k);
  for (int k = 0; k < W / 16; ++k) _mm512_storeu_ps(grad + 16 * k, avx512::dloss_dx<Fast>(m[k]));
#endif
}

/// The losses and gradients of a pack of W floats (host_packs_v<W>), sharing exp(-|z|).
template <bool Fast, int W>
KOKKOS_FORCEINLINE_FUNCTION void loss_and_grad_pack(const float (&x)[W], const float (&y)[W], float (&loss)[W],
                                                    float (&grad)[W]) {
  static_assert(host_packs_v<W>, "a target without the host pack kernels");
#if defined(SOFTMARGIN_IMPL_AVX512)
  avx512::Margin m[W / 16];
  for (int k = 0; k < W / 16; ++k) m[k] = avx512::margin<Fast>(x + 16 * k, y + 16 * k);
  for (int k = 0; k < W / 16; ++k) _mm512_storeu_ps(grad + 16 * k, avx512::dloss_dx<Fast>(m[k]));
  for (int k = 0; k < W / 16; ++k) _mm512_storeu_ps(loss + 16 * k, avx512::loss<Fast>(m[k]));
#endif
}

}  // namespace softmargin::Impl

#endif

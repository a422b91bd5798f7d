// SoftMargin host room: x86's own conversions of packs (AVX-512, AVX2, F16C, AVX512-BF16) where the target has
// them; each returns false (or takes the generic vector form) where it has none for W lanes.
#ifndef SOFTMARGIN_IMPL_HOST_CONVERT_X86_HPP
#define SOFTMARGIN_IMPL_HOST_CONVERT_X86_HPP

#include <cstdint>

#include "../../SoftMargin_Half.hpp"
#include "SoftMargin_HostTarget.hpp"
#include "SoftMargin_HostVectors.hpp"

#if defined(SOFTMARGIN_IMPL_HOST_VECTORS)

namespace softmargin::Impl {

// Vectors wider than the target's registers change the calling convention of functions that pass or return them
// (GCC's -Wpsabi note, reported where such a function is called); the helpers below are inlined into their callers.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

/// out[k] = in[k] for W int8 values: the x86 sign-extending conversions where the target has them (compilers turn a
/// generic int8-to-int32 vector conversion into one insert a lane), else a conversion through int32 lanes.
template <int W>
inline void widen_int8(const std::int8_t (&in)[W], float (&out)[W]) {
#if defined(__x86_64__) && defined(__AVX512F__)
  if constexpr (W % 16 == 0) {
    for (int k = 0; k < W; k += 16)
      _mm512_storeu_ps(
          out + k, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + k)))));
    return;
  }
#endif
#if defined(__x86_64__) && defined(__AVX2__)
  if constexpr (W % 8 == 0) {
    for (int k = 0; k < W; k += 8)
      _mm256_storeu_ps(
          out + k, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(in + k)))));
    return;
  }
#endif
  const auto i =
      __builtin_convertvector(load_vector<host_vector_t<std::int8_t, W>>(in), host_vector_t<std::int32_t, W>);
  store_vector(out, __builtin_convertvector(i, host_vector_t<float, W>));
}

/// The x86 half-precision conversions (F16C, AVX-512): exact widening, and narrowing rounded to nearest even. Return
/// false where the target has none for W lanes.
template <int W>
inline bool widen_fp16_x86(const fp16 (&in)[W], float (&out)[W]) {
#if defined(__x86_64__) && defined(__AVX512F__)
  if constexpr (W % 16 == 0) {
    for (int k = 0; k < W; k += 16)
      _mm512_storeu_ps(out + k, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + k))));
    return true;
  }
#endif
#if defined(__x86_64__) && defined(__F16C__)
  if constexpr (W % 8 == 0) {
    for (int k = 0; k < W; k += 8)
      _mm256_storeu_ps(out + k, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + k))));
    return true;
  }
#endif
  return false;
}

/// Rounds v to bf16 into out as round_to does, by AVX512-BF16's conversion where the target has it. That conversion
/// reads subnormal floats as zero: those lanes (where a pack has any) convert their bits with the exponent field set to
/// 1 instead, v + copysign(2^-126, v) (exact, and rounded at the bf16 subnormals' spacing), and subtract the bits of
/// 2^-126. A NaN keeps its sign and top payload bits and becomes quiet, as in round_to.
template <int W>
inline bool narrow_bf16_x86(const host_vector_t<float, W>& v, bf16 (&out)[W]) {
#if defined(__x86_64__) && defined(__AVX512BF16__) && defined(__AVX512DQ__) && defined(__AVX512BW__) && \
    defined(__AVX512VL__)
  if constexpr (W % 16 == 0) {
    for (int k = 0; k < W; k += 16) {
      const __m512 f = _mm512_loadu_ps(reinterpret_cast<const float*>(&v) + k);
      const __mmask16 sub = _mm512_fpclass_ps_mask(f, 0x20);  // subnormal lanes
      __m256i b;
      if (sub == 0) {  // the common case, two instructions fewer
        b = (__m256i)_mm512_cvtneps_pbh(f);
      } else {
        const __m512i u = _mm512_castps_si512(f);
        b = (__m256i)_mm512_cvtneps_pbh(
            _mm512_castsi512_ps(_mm512_mask_or_epi32(u, sub, u, _mm512_set1_epi32(0x00800000))));
        b = _mm256_mask_sub_epi16(b, sub, b, _mm256_set1_epi16(0x0080));
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k), b);
    }
    return true;
  }
#endif
  (void)v;
  (void)out;
  return false;
}

/// Rounds v to binary16 into out as round_to does: the hardware's conversion keeps a NaN's payload, round_to gives
/// the canonical quiet NaN of its sign.
template <int W>
inline bool narrow_fp16_x86(const host_vector_t<float, W>& v, fp16 (&out)[W]) {
#if defined(__x86_64__) && (defined(__F16C__) || defined(__AVX512F__))
  constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
#endif
#if defined(__x86_64__) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
  if constexpr (W % 16 == 0) {
    for (int k = 0; k < W; k += 16) {
      const __m512 f = _mm512_loadu_ps(reinterpret_cast<const float*>(&v) + k);
      __m256i h = _mm512_cvtps_ph(f, kRound);
      const __mmask16 nan_lanes = _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q);
      if (nan_lanes != 0) {  // (h & sign) | canonical NaN
        const __m256i nan = _mm256_ternarylogic_epi32(h, _mm256_set1_epi16(-0x8000), _mm256_set1_epi16(0x7E00), 0xEA);
        h = _mm256_mask_mov_epi16(h, nan_lanes, nan);
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k), h);
    }
    return true;
  }
#endif
#if defined(__x86_64__) && defined(__F16C__)
  if constexpr (W % 8 == 0) {
    using U16 = host_vector_t<std::uint16_t, W>;
    for (int k = 0; k < W; k += 8) {
      const __m256 f = _mm256_loadu_ps(reinterpret_cast<const float*>(&v) + k);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + k), _mm256_cvtps_ph(f, kRound));
    }
    const U16 nan = (U16) __builtin_convertvector(v != v, host_vector_t<std::int16_t, W>);
    const U16 bits = load_vector<U16>(out);
    store_vector(out, (bits & ~nan) | (((bits & 0x8000u) | 0x7E00u) & nan));
    return true;
  }
#endif
  (void)v;
  (void)out;
  return false;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

}  // namespace softmargin::Impl

#endif
#endif

// SoftMargin: packs of values converted between their storage types and the compute type, a pack at a time.
//
// On devices a pack converts value by value (one register each), bf16 values and int8 targets from the 32-bit words
// that hold them (widen_words). On hosts int8_t and bool targets, fp16 values and roundings to bf16 and fp16 convert
// as whole vectors (GCC and Clang vector extensions, and x86's own conversions where the target has them: F16C for
// fp16, AVX512-BF16 for rounding to bf16): left to the compilers' vectorizers, these conversions, inlined into the
// kernels' unrolled loops, stay (partly) scalar (one int-to-float conversion or one 16-bit rounding an element), which
// makes 16-bit passes slower than float ones on hosts. The results are the same bits either way (Values.hpp's
// to_compute, target_value and round_to).
#ifndef SOFTMARGIN_IMPL_PACK_CONVERT_HPP
#define SOFTMARGIN_IMPL_PACK_CONVERT_HPP

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "SoftMargin_Values.hpp"

#if !defined(__CUDACC__) && !defined(__HIPCC__) && (defined(__GNUC__) || defined(__clang__))
#define SOFTMARGIN_IMPL_HOST_VECTORS 1
#if defined(__x86_64__) && (defined(__AVX2__) || defined(__F16C__))
#include <immintrin.h>
#endif
#endif

namespace softmargin::Impl {

// Vectors wider than the target's registers change the calling convention of functions that pass or return them
// (GCC's -Wpsabi note, reported where such a function is called); the helpers below are inlined into their callers.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

#if defined(SOFTMARGIN_IMPL_HOST_VECTORS)
/// W values of T as one vector (of W * sizeof(T) bytes).
template <class T, int W>
struct HostVector {
  typedef T type __attribute__((vector_size(sizeof(T) * W)));
};
template <class T, int W>
using host_vector_t = typename HostVector<T, W>::type;

template <class V, class T>
inline V load_vector(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T, class V>
inline void store_vector(T* p, const V& v) {
  std::memcpy(p, &v, sizeof v);
}

/// The lanes of Half.hpp's bit algorithms for W values as host vectors: comparisons give all-ones lanes where true.
template <int W>
struct VectorLanes {
  using U = host_vector_t<std::uint32_t, W>;
  using F = host_vector_t<float, W>;
  static F as_float(const U u) { return (F)u; }
  static U as_bits(const F f) { return (U)f; }
  template <class C, class A, class B>
  static U select(const C c, const A a, const B b) {
    return ((U)c & a) | (~(U)c & b);
  }
};

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
#endif

/// bf16 and int8 values widened from the 32-bit words that hold them (devices): the high bf16 of a word as
/// `w & 0xffff0000`, byte k as the signed byte of `w >> 8k`. Given the values one at a time, nvcc widens the high
/// bf16 by a byte permute and a shift.
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void widen_words(const bf16 (&in)[W], float (&out)[W]) {
  static_assert(W % 2 == 0, "whole words");
  std::uint32_t w[W / 2];
  std::memcpy(w, in, sizeof w);
  for (int j = 0; j < W / 2; ++j) {
    out[2 * j] = Kokkos::bit_cast<float>(w[j] << 16);
    out[2 * j + 1] = Kokkos::bit_cast<float>(w[j] & 0xffff0000u);
  }
}
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void widen_words(const std::int8_t (&in)[W], float (&out)[W]) {
  static_assert(W % 4 == 0, "whole words");
  std::uint32_t w[W / 4];
  std::memcpy(w, in, sizeof w);
  for (int j = 0; j < W / 4; ++j)
    for (int k = 0; k < 4; ++k)
      out[4 * j + k] = static_cast<float>(static_cast<std::int8_t>((w[j] >> (8 * k)) & 0xffu));
}

/// out[k] = to_compute<C>(in[k]) for a pack of W values.
template <class C, class T, int W>
KOKKOS_FORCEINLINE_FUNCTION void widen_values(const T (&in)[W], C (&out)[W]) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<C, float> &&
                ((std::is_same_v<T, bf16> && W % 2 == 0) || (std::is_same_v<T, std::int8_t> && W % 4 == 0)))
    widen_words(in, out);
  else
    for (int k = 0; k < W; ++k) out[k] = to_compute<C>(in[k]);
#else
#if defined(SOFTMARGIN_IMPL_HOST_VECTORS)
  if constexpr (std::is_same_v<C, float> && std::is_same_v<T, fp16>) {
    if (widen_fp16_x86(in, out)) return;
    const auto w =
        __builtin_convertvector(load_vector<host_vector_t<std::uint16_t, W>>(in), host_vector_t<std::uint32_t, W>);
    store_vector(out, fp16_widen_bits<VectorLanes<W>>(w << 16));
    return;
  } else if constexpr (std::is_same_v<C, float> && std::is_same_v<T, std::int8_t>) {
    widen_int8(in, out);
    return;
  }
#endif
  for (int k = 0; k < W; ++k) out[k] = to_compute<C>(in[k]);
#endif
}

/// out[k] = target_value<C>(in[k]) for a pack of W targets.
template <class C, class Y, int W>
KOKKOS_FORCEINLINE_FUNCTION void widen_targets(const Y (&in)[W], C (&out)[W]) {
  if constexpr (std::is_same_v<Y, bool>) {
#if defined(SOFTMARGIN_IMPL_HOST_VECTORS)
    if constexpr (std::is_same_v<C, float>) {
      // bool's bytes are 0 and 1: widened as int8 values, then 2 b - 1 (exact)
      std::int8_t bytes[W];
      std::memcpy(bytes, in, W);
      widen_int8(bytes, out);
      for (int k = 0; k < W; ++k) out[k] = 2.0f * out[k] - 1.0f;
      return;
    }
#endif
    for (int k = 0; k < W; ++k) out[k] = target_value<C>(in[k]);
  } else {
    widen_values(in, out);
  }
}

/// out[k] = round_to<O>(scale * in[k]) for a pack of W values.
template <class O, class C, int W>
KOKKOS_FORCEINLINE_FUNCTION void round_scaled(const C scale, const C (&in)[W], O (&out)[W]) {
#if defined(SOFTMARGIN_IMPL_HOST_VECTORS)
  if constexpr (std::is_same_v<C, float> && (std::is_same_v<O, bf16> || std::is_same_v<O, fp16>)) {
    using F32 = host_vector_t<float, W>;
    using U16 = host_vector_t<std::uint16_t, W>;
    const F32 v = load_vector<F32>(in) * scale;
    if constexpr (std::is_same_v<O, bf16>) {
      if (narrow_bf16_x86(v, out)) return;
      store_vector(out,
                   __builtin_convertvector(bf16_round_bits<VectorLanes<W>>((host_vector_t<std::uint32_t, W>)v), U16));
    } else {
      if (narrow_fp16_x86(v, out)) return;
      store_vector(out, __builtin_convertvector(fp16_round_bits<VectorLanes<W>>(v), U16));
    }
    return;
  }
#endif
  for (int k = 0; k < W; ++k) out[k] = round_to<O>(scale * in[k]);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

}  // namespace softmargin::Impl

#endif

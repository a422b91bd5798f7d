// SoftMargin host room: the host's float vector on Kokkos SIMD (the native ABI of the architecture Kokkos was built
// for: AVX-512, AVX2, SVE or NEON) and the few operations the pack kernels need that Kokkos SIMD does not offer, each
// written once on its float and int32 simd types; where AVX-512 has one instruction for it, that instruction.
// Defined where SoftMargin_HostTarget.hpp finds a Kokkos SIMD ABI (SOFTMARGIN_IMPL_HOST_SIMD).
#ifndef SOFTMARGIN_IMPL_HOST_SIMD_HPP
#define SOFTMARGIN_IMPL_HOST_SIMD_HPP

#include "SoftMargin_HostTarget.hpp"

#if defined(SOFTMARGIN_IMPL_HOST_SIMD)

#include <Kokkos_SIMD.hpp>
#include <climits>
#include <cstdint>

#include "../SoftMargin_Math.hpp"

namespace softmargin::Impl {

namespace host_simd {

namespace KE = Kokkos::Experimental;

#if defined(KOKKOS_ARCH_AVX512XEON)
using abi = KE::simd_abi::avx512_fixed_size<16>;
// The one-instruction forms below: AVX-512 vectors (Kokkos_SIMD.hpp requires AVX-512F with this architecture).
#define SOFTMARGIN_IMPL_HOST_SIMD_AVX512 1
#elif defined(KOKKOS_ARCH_AVX2)
using abi = KE::simd_abi::avx2_fixed_size<8>;
#elif defined(KOKKOS_ARCH_ARM_SVE)
using abi = KE::simd_abi::sve_fixed_size<__ARM_FEATURE_SVE_BITS / 32>;
#else
using abi = KE::simd_abi::neon_fixed_size<4>;
#endif

/// One vector of floats, and of their bits.
using F = KE::basic_simd<float, abi>;
using I = KE::basic_simd<std::int32_t, abi>;
inline constexpr int width = static_cast<int>(F::size());

}  // namespace host_simd

/// madd for a vector: the core's polynomials (SoftMargin_Math.hpp) evaluated on host_simd::F, and every multiply-add
/// of the pack kernels, rounded as the element form's madd: one FMA where it has one. Never a * b + c where the other
/// is fused: GCC fuses Kokkos SIMD's AVX-512, AVX2 and NEON operators (the compiler's own vector operations) from -O2
/// on only, and SVE's (intrinsics) never.
template <>
struct Madd<host_simd::F> {
  using F = host_simd::F;
  KOKKOS_FORCEINLINE_FUNCTION static F apply(const F& a, const F& b, const F& c) {
#if defined(FP_FAST_FMAF)
    return Kokkos::fma(a, b, c);
#else
    return a * b + c;
#endif
  }
};

namespace host_simd {

KOKKOS_FORCEINLINE_FUNCTION F load(const float* p) { return KE::simd_unchecked_load<F>(p, KE::simd_flag_default); }
KOKKOS_FORCEINLINE_FUNCTION void store(float* p, const F& v) { KE::simd_unchecked_store(v, p, KE::simd_flag_default); }

/// The bits of a vector of floats and back, by the compiler's bit cast (GCC and Clang, the compilers of the host room's
/// vectors), which stays in registers: Kokkos::bit_cast copies through its argument's address.
KOKKOS_FORCEINLINE_FUNCTION I bits(const F& v) { return __builtin_bit_cast(I, v); }
KOKKOS_FORCEINLINE_FUNCTION F from_bits(const I& v) { return __builtin_bit_cast(F, v); }

/// -v by its sign bit (-0 for +0, as the element form's negation; Kokkos SIMD's unary minus is 0 - v): adding 2^31
/// to the bits flips the top one.
KOKKOS_FORCEINLINE_FUNCTION F negate(const F& v) { return from_bits(bits(v) + I(INT32_MIN)); }

/// -|v|.
KOKKOS_FORCEINLINE_FUNCTION F neg_abs(const F& v) {
#if defined(SOFTMARGIN_IMPL_HOST_SIMD_AVX512)
  return F(_mm512_or_ps(static_cast<__m512>(v), _mm512_set1_ps(-0.0f)));
#else
  return negate(Kokkos::abs(v));
#endif
}

/// a b rounded to the nearest integer, ties to even, for |a b| < 2^22, as exp_nonpos_poly's n: one madd of a b and
/// 1.5 2^23 (whose ulp is 1), minus 1.5 2^23.
KOKKOS_FORCEINLINE_FUNCTION F round_product(const F& a, const F& b) {
  return Madd<F>::apply(a, b, F(12582912.0f)) - F(12582912.0f);
}

/// p 2^n for integral n in [-151, 0] (NaN gives NaN), rounded once where the result is subnormal: AVX-512's scalef;
/// else times 2^(n + 64) (its exponent field n + 64 + 127 from the bits of 1.5 2^23 + n) and 2^-64, as
/// exp_nonpos_poly.
KOKKOS_FORCEINLINE_FUNCTION F times_pow2(const F& p, const F& n) {
#if defined(SOFTMARGIN_IMPL_HOST_SIMD_AVX512)
  return F(_mm512_scalef_ps(static_cast<__m512>(p), static_cast<__m512>(n)));
#else
  const I e = (bits(n + F(12582912.0f)) - I(0x4B400000 - 191)) << 23;
  return p * from_bits(e) * F(0x1p-64f);
#endif
}

/// 1 / v: AVX-512's estimate (within 2^-14 relative), else the quotient.
KOKKOS_FORCEINLINE_FUNCTION F reciprocal_estimate(const F& v) {
#if defined(SOFTMARGIN_IMPL_HOST_SIMD_AVX512)
  return F(_mm512_rcp14_ps(static_cast<__m512>(v)));
#else
  return F(1.0f) / v;
#endif
}

/// v where z >= 0, else v w (z < 0 or NaN): AVX-512's masked multiply (Kokkos SIMD's condition of v and v w made the
/// 16-bit backward passes 4-7% slower there), else that condition.
KOKKOS_FORCEINLINE_FUNCTION F times_where_negative(const F& z, const F& v, const F& w) {
#if defined(SOFTMARGIN_IMPL_HOST_SIMD_AVX512)
  const __m512 vv = static_cast<__m512>(v);
  return F(_mm512_mask_mul_ps(vv, _mm512_cmp_ps_mask(static_cast<__m512>(z), _mm512_setzero_ps(), _CMP_NGE_UQ), vv,
                              static_cast<__m512>(w)));
#else
  return KE::condition(z >= F(0.0f), v, v * w);
#endif
}

}  // namespace host_simd

}  // namespace softmargin::Impl

#endif
#endif

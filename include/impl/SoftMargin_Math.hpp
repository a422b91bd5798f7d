// SoftMargin: the element-wise loss, computed stably.
#ifndef SOFTMARGIN_IMPL_MATH_HPP
#define SOFTMARGIN_IMPL_MATH_HPP

#include <Kokkos_BitManipulation.hpp>
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>
#include <type_traits>

#if !defined(__CUDACC__) && !defined(__HIPCC__) && (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && \
    defined(__AVX512F__)
#define SOFTMARGIN_IMPL_AVX512 1
#include <immintrin.h>
#endif

namespace softmargin::Impl {

/// Type the reductions accumulate in: at least double, so that a float mean over 2^31 elements stays within a few
/// float ulps of the exact value and sums of losses near float max do not overflow before the final division.
template <class T>
using accum_t = std::conditional_t<(sizeof(T) < sizeof(double)), double, T>;

/// a * b + c, fused where that is one instruction (devices; hosts built with FMA, e.g. Kokkos_ARCH_NATIVE), else
/// as two roundings: a library fma call per term would cost more than the whole loss.
KOKKOS_FORCEINLINE_FUNCTION float madd(const float a, const float b, const float c) {
  KOKKOS_IF_ON_DEVICE((return Kokkos::fma(a, b, c);))
#if defined(FP_FAST_FMAF)
  KOKKOS_IF_ON_HOST((return Kokkos::fma(a, b, c);))
#else
  KOKKOS_IF_ON_HOST((return a * b + c;))
#endif
}

#if defined(SOFTMARGIN_IMPL_AVX512)
/// madd for 16 floats on AVX-512 hosts: the polynomials below also serve the host pack kernels
/// (SoftMargin_HostPacks.hpp).
inline __m512 madd(const __m512 a, const __m512 b, const __m512 c) { return _mm512_fmadd_ps(a, b, c); }
#endif

/// c in every lane of T: float, or a vector of floats (GCC and Clang broadcast a scalar operand).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T splat(const float c) {
  return T{} + c;
}

/// The polynomial with coefficients c (highest degree first) at x, by Horner's rule in madd: one FMA a degree.
template <class T, class... C>
KOKKOS_FORCEINLINE_FUNCTION T horner(const T x, const float highest, const C... rest) {
  T p = splat<T>(highest);
  ((p = madd(p, x, splat<T>(rest))), ...);
  return p;
}

/// e^r for |r| <= ln2/2, the reduced argument of exp_nonpos_poly: accurate (Fast false), e^r's degree-7 Taylor
/// polynomial; fast, 1 + r q(r), q of degree 4 fitted to (e^r - 1) / r for the least relative error (9.2e-8), two
/// FMAs fewer.
template <bool Fast, class T>
KOKKOS_FORCEINLINE_FUNCTION T exp_reduced(const T r) {
  if constexpr (Fast)
    return horner(r, 8.290211607e-03f, 4.189780289e-02f, 1.666763933e-01f, 4.999915071e-01f, 9.999997048e-01f, 1.0f);
  else
    return horner(r, 1.0f / 5040.0f, 1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f, 1.0f);
}

/// The Cody-Waite split of ln2 for exp's argument reduction: ln2 = kLn2Hi + kLn2Lo, kLn2Hi with 12 significant bits
/// (n kLn2Hi is exact for |n| < 2^12).
inline constexpr float kLn2Hi = 0.693145751953125f, kLn2Lo = 1.428606765330187e-06f, kLog2e = 1.44269504088896341f;

/// exp(a) for a <= 0 (or NaN) in float, branch-free, for hosts: a = n ln2 + r (Cody-Waite, |r| <= ln2/2), e^r by
/// exp_reduced, times 2^(n + 64) (exact: n >= -150) and 2^-64, so that a subnormal result is rounded once, as it
/// should be; n comes from the bits of the rounding sum 1.5 2^23 + n, with no float-to-int conversion. Within 0.94
/// ulp of fp64 exp for every float in [-104, 0] with FMA, 1.22 ulp where madd is two roundings; the fast polynomial
/// (the fast form of the loss, FastLoss) within 1.99 and 2.28 ulp (both checked exhaustively). 0 below -104, NaN for
/// NaN.
template <bool Fast = false>
KOKKOS_FORCEINLINE_FUNCTION float exp_nonpos_poly(float a) {
  a = a < -104.0f ? -104.0f : a;  // e^-104 rounds to 0; a NaN passes
  float nf = a * kLog2e;
  const float shifted = nf + 12582912.0f;  // n = round(nf) in the low bits (|nf| < 2^22)
  nf = shifted - 12582912.0f;
  const float r = madd(nf, -kLn2Lo, madd(nf, -kLn2Hi, a));
  // 2^(n + 64): exponent field n + 64 + 127 = bits(shifted) - 0x4B400000 + 191 (for a NaN some scale: p is NaN)
  const std::uint32_t e = (Kokkos::bit_cast<std::uint32_t>(shifted) - (0x4B400000u - 191u)) << 23;
  return exp_reduced<Fast>(r) * Kokkos::bit_cast<float>(e) * 0x1p-64f;
}

/// exp(a) for a <= 0 (or NaN): the only range softplus needs. Devices use their exp (CUDA's expf: a few
/// instructions). On hosts the library expf is an opaque call that keeps compilers from vectorizing the loss, so
/// float uses exp_nonpos_poly.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T exp_nonpos(const T a) {
  if constexpr (std::is_same_v<T, float>) {
    KOKKOS_IF_ON_DEVICE((return Kokkos::exp(a);))
    KOKKOS_IF_ON_HOST((return exp_nonpos_poly(a);))
  } else {
    return Kokkos::exp(a);
  }
}

/// log1p(e) for e in [0, 1], the only range softplus needs. For float: e q(e), q a degree-9 polynomial fitted to
/// log1p(e)/e on [0, 1] (Chebyshev interpolation, approximation error 5e-9 relative), evaluated by Horner's rule in
/// 10 FMAs and no division: within 1.55 ulp of fp64 log1p for every normal float e in [0, 1] (checked exhaustively,
/// every third float; the unit tests check a sample on each backend), and about a third of the instructions of
/// log1pf. Double uses Kokkos::log1p.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T log1p_unit(const T e) {
  if constexpr (std::is_same_v<T, double>) {
    return Kokkos::log1p(e);
  } else {  // float, or a vector of floats on hosts
    return horner(e, -3.176056929e-03f, 1.954252686e-02f, -5.637361209e-02f, 1.054362372e-01f, -1.526966703e-01f,
                  1.966327424e-01f, -2.495161626e-01f, 3.332971050e-01f, -4.999989265e-01f, 9.999999947e-01f) *
           e;
  }
}

/// log1p(e) for e in [0, 1] in the fast form: e q(e), q a degree-7 polynomial (Chebyshev interpolation of
/// log1p(e)/e on [0, 1], 2.4e-7 relative), two FMAs fewer than log1p_unit. T: float, or a vector of floats on hosts.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T log1p_unit_fast(const T e) {
  return horner(e, -8.371152915e-03f, 4.349390045e-02f, -1.068500280e-01f, 1.768747717e-01f, -2.447477430e-01f,
                3.327192962e-01f, -4.999717474e-01f, 9.999997616e-01f) *
         e;
}

/// The fast form of the loss, for passes whose float results are reduced or rounded to 16 bits (16-bit inputs),
/// which read 3 or 4 bytes an element and are bound by the loss's arithmetic. On CUDA devices the accurate form's exp
/// and log1p take about 30 instructions an element; here exp(-|z|) is the multi-function unit's 2^t (ex2.approx,
/// within 2 ulp, subnormal results kept), t = -|z| log2(e) rounded to float, times 1 + (the rounding error of t) ln 2:
/// without that correction the error of t alone would reach 1e-6 relative at |z| = 17. Its log1p is log1p_unit_fast.
/// Hosts take exp_nonpos_poly's fast polynomial and log1p_unit_fast (with AVX-512, a pack at a time:
/// SoftMargin_HostPacks.hpp). The unit tests bound the fast form at 8 float ulps of fp64 for
/// every bf16 x and y in {-1, 1, 3, -7} on every backend; NaN in gives NaN, inf gives inf or 0. Double: the accurate
/// form.
struct FastLoss {
  static constexpr float log2e = 1.44269504088896341f, log2e_lo = 1.925963033500011e-08f, ln2 = 0.693147180559945309f;
#if defined(__CUDA_ARCH__)
  /// e = exp(-|z|), |z| clamped to 128 (e = 0 there in float); a NaN z gives NaN.
  __device__ static float exp_neg_abs(const float z) {
    const float a = min_nan(fabsf(z), 128.0f);
    const float t = -a * log2e;
    const float q_err = fmaf(a, log2e_lo, fmaf(a, log2e, t));  // t - (-|z| log2(e)), log2(e) = log2e + log2e_lo
    float e0;
    asm("ex2.approx.f32 %0, %1;" : "=f"(e0) : "f"(t));
    return fmaf(e0, q_err * -ln2, e0);
  }
  /// min(a, b) that keeps a NaN (min.NaN).
  __device__ static float min_nan(const float a, const float b) {
    float r;
    asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
  }
  /// max(z, 0) that keeps a NaN z (max.NaN).
  __device__ static float pos(const float z) {
    float r;
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(z), "f"(0.0f));
    return r;
  }
  __device__ static float rcp(const float v) {
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
    return r;
  }
#endif
};

/// loss(x, y) in the fast form for float (FastLoss), the accurate one for double.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T loss_fast(const T x, const T y);
/// loss(x, y) and d loss / d x into grad in the fast form for float (on CUDA devices the sigmoid through the unit's
/// reciprocal, rcp.approx).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T loss_and_dloss_dx_fast(const T x, const T y, T& grad);

/// loss(x, y) = log(1 + exp(-y x)), computed as softplus(z) = max(z, 0) + log1p(exp(-|z|)) with z = -y x.
/// Finite for every finite margin (no exp overflow), exact to a few ulps, and NaN in x or y gives NaN:
/// the log1p term carries the NaN even where the max() would drop it.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T loss(const T x, const T y) {
  const T z = -y * x;
  const T pos = z > T(0) ? z : T(0);
  return pos + log1p_unit(exp_nonpos(-Kokkos::abs(z)));
}

/// d loss / d x = -y sigmoid(z), z = -y x, with sigmoid(z) = 1 / (1 + e) for z >= 0 and e / (1 + e) below,
/// e = exp(-|z|): no overflow at any margin (the gradient tends to 0 or to -y), NaN in gives NaN out.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T dloss_dx(const T x, const T y) {
  const T z = -y * x;
  const T e = exp_nonpos(-Kokkos::abs(z));
  return -y * ((z >= T(0) ? T(1) : e) / (T(1) + e));
}

/// loss(x, y), and d loss / d x into grad, sharing exp(-|z|).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T loss_and_dloss_dx(const T x, const T y, T& grad) {
  const T z = -y * x;
  const T e = exp_nonpos(-Kokkos::abs(z));
  grad = -y * ((z >= T(0) ? T(1) : e) / (T(1) + e));
  return (z > T(0) ? z : T(0)) + log1p_unit(e);
}

template <class T>
KOKKOS_FORCEINLINE_FUNCTION T loss_fast(const T x, const T y) {
  if constexpr (std::is_same_v<T, float>) {
    const float z = -y * x;
#if defined(__CUDA_ARCH__)
    return FastLoss::pos(z) + log1p_unit_fast(FastLoss::exp_neg_abs(z));
#else
    return (z > 0.0f ? z : 0.0f) + log1p_unit_fast(exp_nonpos_poly<true>(-Kokkos::abs(z)));
#endif
  } else {
    return loss(x, y);
  }
}

template <class T>
KOKKOS_FORCEINLINE_FUNCTION T loss_and_dloss_dx_fast(const T x, const T y, T& grad) {
  if constexpr (std::is_same_v<T, float>) {
    const float z = -y * x;
#if defined(__CUDA_ARCH__)
    const float e = FastLoss::exp_neg_abs(z);
    grad = -y * ((z >= 0.0f ? 1.0f : e) * FastLoss::rcp(1.0f + e));
    return FastLoss::pos(z) + log1p_unit_fast(e);
#else
    const float e = exp_nonpos_poly<true>(-Kokkos::abs(z));
    grad = -y * ((z >= 0.0f ? 1.0f : e) / (1.0f + e));
    return (z > 0.0f ? z : 0.0f) + log1p_unit_fast(e);
#endif
  } else {
    return loss_and_dloss_dx(x, y, grad);
  }
}

}  // namespace softmargin::Impl

#endif

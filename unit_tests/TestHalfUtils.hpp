// Test helpers for 16-bit inputs and compact targets: value conversions on the host, the correctly rounded
// reference and the tolerance of reduced results, views of every layout, and the inputs (random values with the
// special ones mixed in).
#ifndef SOFTMARGIN_TEST_HALF_UTILS_HPP
#define SOFTMARGIN_TEST_HALF_UTILS_HPP

#include <gtest/gtest.h>

#include <SoftMargin.hpp>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace softmargin::test::half {

/// One combination: x's type X, y's type Y, the type O of the element-wise outputs, and the layout of the views.
template <class X, class Y, class O, class L>
struct Case {
  using x_type = X;
  using y_type = Y;
  using out_type = O;
  using layout = L;
};

template <class T>
inline constexpr bool is16_v = std::is_same_v<T, bf16> || std::is_same_v<T, fp16>;

/// The exact value of a stored x, y or output.
template <class T>
double to_double(const T v) {
  if constexpr (std::is_same_v<T, bool>)
    return v ? 1.0 : -1.0;
  else if constexpr (is16_v<T>)
    return static_cast<float>(v);
  else
    return static_cast<double>(v);
}

template <class T>
T from_double(const double v) {
  if constexpr (std::is_same_v<T, bool>)
    return v > 0;
  else if constexpr (is16_v<T>)
    return T(static_cast<float>(v));
  else
    return static_cast<T>(v);
}

/// Largest finite value of a floating type.
template <class T>
double max_finite() {
  if constexpr (std::is_same_v<T, bf16>)
    return to_double(bf16::from_bits(0x7f7f));
  else if constexpr (std::is_same_v<T, fp16>)
    return 65504.0;
  else
    return static_cast<double>(std::numeric_limits<T>::max());
}

/// The value next to v in O towards +inf (up) or -inf, by its bits.
template <class O>
O neighbour(const O v, const bool up) {
  if constexpr (is16_v<O>) {
    const double d = to_double(v);
    if (std::isnan(d) || std::isinf(d)) return v;
    std::uint16_t b = v.bits;
    const bool negative = (b & 0x8000u) != 0;
    if ((b & 0x7fffu) == 0) return O::from_bits(up ? 0x0001 : 0x8001);
    b = static_cast<std::uint16_t>((up != negative) ? b + 1 : b - 1);
    return O::from_bits(b);
  } else {
    return std::nextafter(v, up ? std::numeric_limits<O>::infinity() : -std::numeric_limits<O>::infinity());
  }
}

/// Whether got is within one ulp of O of the correctly rounded ref (ref in fp64; rounding through float can differ
/// from the direct rounding only by ties, which the neighbours cover). NaN must match NaN.
template <class O>
bool within_one_ulp(const O got, const double ref) {
  const double g = to_double(got);
  if (std::isnan(ref)) return std::isnan(g);
  const O rn = from_double<O>(ref);
  return g == to_double(rn) || g == to_double(neighbour(rn, true)) || g == to_double(neighbour(rn, false));
}

/// The fp64 reference loss and gradient from the exact inputs. z = -y x is formed in the compute type (float for
/// every x but double), as the library and PyTorch do: a margin beyond float max is inf (then so is the loss).
template <class X>
double ref_z(const double x, const double y) {
  if constexpr (std::is_same_v<X, double>)
    return -y * x;
  else
    return static_cast<float>(-y * x);
}
template <class X>
double ref_loss(const double x, const double y) {
  const double z = ref_z<X>(x, y);
  if (std::isnan(z)) return std::numeric_limits<double>::quiet_NaN();
  return std::max(z, 0.0) + std::log1p(std::exp(-std::abs(z)));
}
template <class X>
double ref_grad(const double x, const double y) {
  const double z = ref_z<X>(x, y);
  if (std::isnan(z)) return std::numeric_limits<double>::quiet_NaN();
  const double e = std::exp(-std::abs(z));
  return -y * ((z >= 0 ? 1.0 : e) / (1.0 + e));
}

/// Whether an element-wise output agrees with its reference: one ulp of O for 16-bit outputs; for float and double
/// outputs the library's float and double bound (a few ulps, and eps |x y| relative for the rounding of z in the
/// compute type).
template <class X, class O>
::testing::AssertionResult element_ok(const O got, const double ref, const double x, const double y) {
  const double g = to_double(got);
  bool ok;
  if constexpr (is16_v<O>) {
    ok = within_one_ulp(got, ref);
  } else if (std::isnan(ref)) {
    ok = std::isnan(g);
  } else if (std::abs(ref) > max_finite<O>()) {
    ok = std::isinf(g) && (g > 0) == (ref > 0);
  } else {
    // Relative: a few ulps of the compute type C or of O, and the rounding of z in C; absolute: where exp(-|z|) is
    // subnormal in C, its rounding (one subnormal step) times |y| in the gradient.
    using C = std::conditional_t<std::is_same_v<X, double>, double, float>;
    const double eps = std::max<double>(std::numeric_limits<C>::epsilon(), std::numeric_limits<O>::epsilon());
    const double margin = std::isfinite(x * y) ? std::abs(x * y) : 0.0;
    const double tol = 4 * eps * (1 + margin) * std::abs(ref) +
                       4 * (1 + std::abs(y)) *
                           std::max<double>(std::numeric_limits<O>::denorm_min(), std::numeric_limits<C>::denorm_min());
    ok = std::abs(g - ref) <= tol;
  }
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << g << ", reference " << ref << " (x " << x << ", y " << y << ")";
}

/// A rank-2 view of T and layout L on Mem, and its parent allocation: LayoutStride views are every other column of
/// a larger one, so that they are not contiguous.
template <class T, class L, class Mem>
struct Data2 {
  static constexpr bool strided = std::is_same_v<L, Kokkos::LayoutStride>;
  using parent_type = Kokkos::View<T**, std::conditional_t<strided, Kokkos::LayoutRight, L>, Mem>;
  using view_type = Kokkos::View<T**, L, Mem>;
  std::size_t rows, cols;
  parent_type parent;
  view_type view;
  Data2(std::size_t r, std::size_t c) : rows(r), cols(c), parent("data", r, strided ? 2 * c : c) {
    if constexpr (strided)
      view = view_type(parent.data(), Kokkos::LayoutStride(r, 2 * c, c, 2));
    else
      view = parent;
  }
  /// Values in row-major logical order, copied through the contiguous parent (a strided View cannot be deep-copied
  /// between memory spaces).
  void upload(const std::vector<T>& values) {
    auto host = Kokkos::create_mirror_view(parent);
    for (std::size_t i = 0; i < values.size(); ++i) host(i / cols, (strided ? 2 : 1) * (i % cols)) = values[i];
    Kokkos::deep_copy(parent, host);
  }
  std::vector<T> download() const {
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), parent);
    std::vector<T> out(rows * cols);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = host(i / cols, (strided ? 2 : 1) * (i % cols));
    return out;
  }
};

/// Random x ~ U(-4, 4) in X, and targets: +-1 mostly, other values where Y allows them (int8_t: any value; X: a few
/// reals). With `specials`, x also takes +-0, +-inf, NaN, the largest finite values and the smallest subnormals.
template <class X, class Y>
void fill_inputs(std::uint64_t seed, std::size_t n, bool specials, std::vector<X>& x, std::vector<Y>& y) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> ux(-4.0, 4.0);
  std::uniform_int_distribution<int> pick(0, 15);
  const double big = max_finite<X>();
  const double tiny = std::is_same_v<X, fp16> ? 0x1.0p-24 : std::numeric_limits<float>::denorm_min();
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const double special[] = {0.0, -0.0, inf, -inf, nan, big, -big, tiny, -tiny, 40.0, -40.0, 1e4, -1e4};
  x.resize(n);
  y.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int k = pick(gen);
    double xv = ux(gen);
    if (specials && k < 4) xv = special[gen() % (sizeof(special) / sizeof(double))];
    x[i] = from_double<X>(xv);
    double yv = (gen() & 1) ? 1.0 : -1.0;
    if constexpr (std::is_same_v<Y, std::int8_t>) {
      if (k == 15) yv = static_cast<double>(static_cast<int>(gen() % 256) - 128);
    } else if constexpr (!std::is_same_v<Y, bool>) {
      if (k == 15) yv = 0.5 * std::round(ux(gen) * 4);
    }
    y[i] = from_double<Y>(yv);
  }
}

/// The fp64 reference of a sum or mean of the losses.
template <class X, class Y>
double ref_reduce(const std::vector<X>& x, const std::vector<Y>& y, Reduction r) {
  long double s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) s += ref_loss<X>(to_double(x[i]), to_double<Y>(y[i]));
  return static_cast<double>(r == Reduction::Mean ? s / static_cast<long double>(x.size()) : s);
}

/// A reduced result R of n losses against the reference: 1e-6 relative (1e-12 for double x into double) for float and
/// double results, one ulp for 16-bit ones. Each loss is computed in x's compute type, so one below that type's range
/// (float's, for 16-bit x) counts as 0 or its smallest subnormal: n of those are the absolute tolerance.
template <class X, class R>
void expect_reduced(const R got, const double ref, const std::size_t n) {
  if constexpr (is16_v<R>) {
    EXPECT_TRUE(within_one_ulp(got, ref)) << to_double(got) << " vs " << ref;
  } else {
    const double rtol = std::is_same_v<X, double> && std::is_same_v<R, double> ? 1e-12 : 1e-6;
    if (std::isnan(ref))
      EXPECT_TRUE(std::isnan(to_double(got))) << to_double(got);
    else if (std::abs(ref) > max_finite<R>())  // beyond R's range: infinity
      EXPECT_EQ(to_double(got), ref > 0 ? HUGE_VAL : -HUGE_VAL) << "reference " << ref;
    else
      EXPECT_NEAR(to_double(got), ref,
                  rtol * std::abs(ref) + std::numeric_limits<R>::denorm_min() +
                      static_cast<double>(n) * std::numeric_limits<Impl::compute_t<X>>::denorm_min())
          << "reference " << ref;  // a result below R's range rounds to R's subnormals or 0
  }
}

}  // namespace softmargin::test::half

#endif

// Inputs and outputs as a consumer passes them, compiled once per backend: empty Views (any data pointer), results of
// another floating type than x, in place on strided Views, and a broadcast y (zero strides).
#include <cmath>
#include <limits>
#include <vector>

#include "TestUtils.hpp"

namespace softmargin::test {

using IExec = TEST_EXECSPACE;
using IMem = typename IExec::memory_space;
using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;

/// x and y from host vectors, in IMem.
template <class T>
Kokkos::View<T*, IMem> device_copy(const std::vector<T>& v, const char* label) {
  Kokkos::View<T*, IMem> d(label, v.size());
  Kokkos::deep_copy(d, Kokkos::View<const T*, Kokkos::HostSpace, Unmanaged>(v.data(), v.size()));
  return d;
}

template <class V>
std::vector<typename V::non_const_value_type> host_copy(const V& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  std::vector<typename V::non_const_value_type> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = h.data()[i];
  return out;
}

/// Unmanaged Views of size 0 over a null pointer (an empty std::vector's data()) are valid input: mean NaN, sum 0,
/// nothing written, every pass and algorithm, rank 1 and rank 2 with a zero extent.
TEST(TEST_CATEGORY, empty_unmanaged_views_are_valid) {
  const IExec space;
  Kokkos::View<const float*, IMem, Unmanaged> x(nullptr, 0), y(nullptr, 0);
  Kokkos::View<float*, IMem, Unmanaged> out(nullptr, 0), grad(nullptr, 0);
  Kokkos::View<const double**, IMem, Unmanaged> x2(nullptr, 0, 5), y2(nullptr, 0, 5);
  Kokkos::View<double**, IMem, Unmanaged> grad2(nullptr, 0, 5);
  Kokkos::View<float, IMem> r("r");
  Kokkos::View<double, IMem> r2("r2");
  for (Algorithm a : kAlgorithms) {
    SCOPED_TRACE(to_string(a));
    loss(space, x, y, r, Reduction::Mean, a);
    float got;
    Kokkos::deep_copy(got, r);
    EXPECT_TRUE(std::isnan(got));
    loss(space, x, y, r, Reduction::Sum, a);
    Kokkos::deep_copy(got, r);
    EXPECT_EQ(got, 0.0f);
    loss(space, x, y, out, Reduction::None, a);
    backward(space, x, y, 1.0f, grad, Reduction::Mean, a);
    loss_and_grad(space, x, y, r, grad, Reduction::Sum, 1.0f, a);
    Kokkos::deep_copy(got, r);
    EXPECT_EQ(got, 0.0f);
    EXPECT_TRUE(std::isnan(loss(space, x2, y2, Reduction::Mean, a)));
    EXPECT_TRUE(std::isnan(loss_and_grad(space, x2, y2, grad2, Reduction::Mean, 1.0, a)));
    loss(space, x2, y2, r2, Reduction::Sum, a);
    double got2;
    Kokkos::deep_copy(got2, r2);
    EXPECT_EQ(got2, 0.0);
  }
  // A non-empty View over a null pointer is still refused.
  Kokkos::View<const float*, IMem, Unmanaged> bad(nullptr, 3);
  Kokkos::View<float*, IMem> ok("ok", 3);
  expect_invalid_argument([&] { loss(space, bad, ok, r); }, "View x is not allocated");
}

/// A float input reduced into a double result (and a double input into a float one), and `none` into a View of
/// another floating type: the value is rounded once to the output's type.
TEST(TEST_CATEGORY, results_of_any_floating_type) {
  const IExec space;
  const std::size_t n = 10007;
  const auto seed = fresh_seed();
  std::vector<float> xs(n), ys(n);
  fill_random(seed, xs, ys);
  const auto x = device_copy(xs, "x"), y = device_copy(ys, "y");
  std::vector<double> xd(xs.begin(), xs.end()), yd(ys.begin(), ys.end());
  const auto x64 = device_copy(xd, "x64"), y64 = device_copy(yd, "y64");
  Kokkos::View<double, IMem> r64("r64");
  Kokkos::View<float, IMem> r32("r32");
  Kokkos::View<double*, IMem> none64("none64", n), grad("grad", n);
  Kokkos::View<float*, IMem> grad32("grad32", n);
  for (Algorithm a : kAlgorithms) {
    for (Reduction red : {Reduction::Sum, Reduction::Mean}) {
      SCOPED_TRACE(std::string(to_string(a)) + " " + to_string(red) + " seed " + std::to_string(seed));
      const double ref = ref_reduce(xs, ys, red);
      loss(space, x, y, r64, red, a);
      double got;
      Kokkos::deep_copy(got, r64);
      EXPECT_NEAR(got, ref, 1e-6 * std::abs(ref));
      loss_and_grad(space, x, y, r64, grad32, red, 1.0f, a);
      Kokkos::deep_copy(got, r64);
      EXPECT_NEAR(got, ref, 1e-6 * std::abs(ref));
      loss(space, x64, y64, r32, red, a);
      float got32;
      Kokkos::deep_copy(got32, r32);
      const double ref64 = ref_reduce(xd, yd, red);
      const float nearest = static_cast<float>(ref64);
      const double half_ulp = 0.5 * (std::nextafter(std::abs(nearest), INFINITY) - std::abs(nearest));
      EXPECT_LE(std::abs(got32 - ref64), half_ulp * (1 + 1e-9)) << "one rounding of the double result";
    }
    loss(space, x, y, none64, Reduction::None, a);
    const auto got = host_copy(none64);
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_NEAR(got[i], ref_loss(xs[i], ys[i]), elem_tol<float>(xs[i], ys[i], ref_loss(xs[i], ys[i])))
          << "element " << i << " seed " << seed;
  }
}

/// In place on strided Views: out (or grad_x) the same elements as x or y, every other element of a larger array.
/// Any other overlap is refused before anything is written.
TEST(TEST_CATEGORY, in_place_on_strided_views) {
  const IExec space;
  const std::size_t rows = 37, cols = 29, n = rows * cols;
  const auto seed = fresh_seed();
  std::vector<double> xs(n), ys(n);
  fill_random(seed, xs, ys);
  Kokkos::View<double***, Kokkos::LayoutRight, IMem> px("px", rows, cols, 2), py("py", rows, cols, 2);
  auto x = Kokkos::subview(px, Kokkos::ALL, Kokkos::ALL, 1);
  auto y = Kokkos::subview(py, Kokkos::ALL, Kokkos::ALL, 0);
  // Device copies of strided Views go through their contiguous parents.
  const auto upload = [&] {
    auto hx = Kokkos::create_mirror_view(px);
    auto hy = Kokkos::create_mirror_view(py);
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < cols; ++j) hx(i, j, 1) = xs[i * cols + j], hy(i, j, 0) = ys[i * cols + j];
    Kokkos::deep_copy(px, hx);
    Kokkos::deep_copy(py, hy);
  };
  const auto check = [&](const auto& parent, int slot, auto ref) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), parent);
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < cols; ++j) {
        const std::size_t k = i * cols + j;
        ASSERT_NEAR(h(i, j, slot), ref(xs[k], ys[k]), 1e-13 * (1 + std::abs(ref(xs[k], ys[k]))))
            << k << " seed " << seed;
      }
  };
  for (Algorithm a : kAlgorithms) {
    SCOPED_TRACE(to_string(a));
    upload();
    loss(space, x, y, x, Reduction::None, a);
    check(px, 1, [](double u, double v) { return ref_loss(u, v); });
    upload();
    backward(space, x, y, 2.0, y, Reduction::Sum, a);  // grad_x is y
    check(py, 0, [](double u, double v) { return 2 * ref_grad(u, v); });
    upload();
    Kokkos::View<double, IMem> r("r");
    loss_and_grad(space, x, y, r, x, Reduction::Sum, 1.0, a);
    check(px, 1, [](double u, double v) { return ref_grad(u, v); });
  }
  // Shifted by one element: overlaps x without being x.
  upload();
  auto shifted = Kokkos::subview(px, Kokkos::ALL, Kokkos::ALL, 0);
  expect_invalid_argument([&] { loss(space, x, y, shifted, Reduction::None); }, "element for element");
  auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), px);
  EXPECT_EQ(hx(0, 0, 1), xs[0]) << "nothing written";
}

/// y broadcast against x, as PyTorch's expand gives it: a LayoutStride View with a zero stride, no copy.
TEST(TEST_CATEGORY, broadcast_targets_with_zero_strides) {
  const IExec space;
  const std::size_t rows = 513, cols = 7, n = rows * cols;
  const auto seed = fresh_seed();
  std::vector<float> xs(n), row(cols);
  std::vector<float> ignored(cols);
  fill_random(seed, xs, ignored);
  fill_random(seed + 1, row, ignored);
  for (auto& v : row) v = v * 0.75f;  // real-valued targets
  std::vector<float> ys(n);
  for (std::size_t k = 0; k < n; ++k) ys[k] = row[k % cols];
  const auto x1 = device_copy(xs, "x");
  const auto yrow = device_copy(row, "yrow");
  Kokkos::View<const float**, Kokkos::LayoutRight, IMem, Unmanaged> x(x1.data(), rows, cols);
  Kokkos::View<const float**, Kokkos::LayoutStride, IMem, Unmanaged> y(yrow.data(),
                                                                       Kokkos::LayoutStride(rows, 0, cols, 1));
  Kokkos::View<float**, Kokkos::LayoutRight, IMem> out("out", rows, cols), grad("grad", rows, cols);
  Kokkos::View<double, IMem> r("r");
  for (Algorithm a : kAlgorithms) {
    for (Reduction red : {Reduction::Sum, Reduction::Mean}) {
      SCOPED_TRACE(std::string(to_string(a)) + " " + to_string(red) + " seed " + std::to_string(seed));
      const double ref = ref_reduce(xs, ys, red);
      loss(space, x, y, r, red, a);
      double got;
      Kokkos::deep_copy(got, r);
      EXPECT_NEAR(got, ref, 1e-6 * std::abs(ref));
      loss_and_grad(space, x, y, r, grad, red, 1.0f, a);
      Kokkos::deep_copy(got, r);
      EXPECT_NEAR(got, ref, 1e-6 * std::abs(ref));
      const auto g = host_copy(grad);
      const double scale = red == Reduction::Mean ? 1.0 / n : 1.0;
      for (std::size_t k = 0; k < n; ++k)
        ASSERT_NEAR(g[k], scale * ref_grad(xs[k], ys[k]), 1e-6 * scale) << "element " << k;
    }
    loss(space, x, y, out, Reduction::None, a);
    const auto got = host_copy(out);
    for (std::size_t k = 0; k < n; ++k)
      ASSERT_NEAR(got[k], ref_loss(xs[k], ys[k]), elem_tol<float>(xs[k], ys[k], ref_loss(xs[k], ys[k])))
          << "element " << k;
  }
  // A broadcast View cannot be an output.
  Kokkos::View<float**, Kokkos::LayoutStride, IMem, Unmanaged> yw(const_cast<float*>(yrow.data()),
                                                                  Kokkos::LayoutStride(rows, 0, cols, 1));
  expect_invalid_argument([&] { loss(space, x, y, yw, Reduction::None); }, "stride 0");
}

}  // namespace softmargin::test

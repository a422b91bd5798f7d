// Backward and fused loss+gradient tests, compiled once per backend (TEST_EXECSPACE, TEST_CATEGORY).
#include "TestUtils.hpp"

namespace softmargin::test {

using BExec = TEST_EXECSPACE;
using BMem = typename BExec::memory_space;

template <class T, int Rank, class Layout>
using BViewOf = Kokkos::View<typename Impl::add_rank<T, Rank>::type, Layout, BMem>;

template <class T>
void expect_grad_near(T got, double ref, double x, double y, std::size_t i) {
  if (std::isnan(ref)) {
    ASSERT_TRUE(std::isnan(got)) << "element " << i;
  } else {
    ASSERT_TRUE(std::isfinite(got)) << "element " << i << " x " << x << " y " << y;
    ASSERT_NEAR(got, ref, elem_tol<T>(x, y, ref) + 4 * std::numeric_limits<T>::epsilon() * std::abs(ref))
        << "element " << i << " x " << x << " y " << y;
  }
}

/// Two reduced losses agree: both NaN, equal infinities, or within the reductions' accuracy bound.
template <class T>
void expect_same_loss(T a, T b) {
  if (std::isnan(b))
    ASSERT_TRUE(std::isnan(a)) << a;
  else if (std::isinf(b))
    ASSERT_EQ(a, b);
  else
    ASSERT_NEAR(a, b, reduce_rtol<T>() * std::abs(b));
}

template <class Case>
class Backward : public ::testing::Test {};

using BackwardCases = ::testing::Types<Case<float, Kokkos::LayoutRight, Kokkos::LayoutRight, Kokkos::LayoutRight>,
                                       Case<float, Kokkos::LayoutLeft, Kokkos::LayoutStride, Kokkos::LayoutRight>,
                                       Case<float, Kokkos::LayoutStride, Kokkos::LayoutStride, Kokkos::LayoutStride>,
                                       Case<double, Kokkos::LayoutRight, Kokkos::LayoutLeft, Kokkos::LayoutLeft>,
                                       Case<double, Kokkos::LayoutLeft, Kokkos::LayoutLeft, Kokkos::LayoutStride>>;
TYPED_TEST_SUITE(Backward, BackwardCases);

/// Every reduction, algorithm and form of upstream gradient on (x, y): backward against the fp64 analytic gradient,
/// and the fused pass against forward + backward.
template <class C>
void check_gradients(const std::array<std::size_t, 2>& shape, const std::vector<typename C::value_type>& xs,
                     const std::vector<typename C::value_type>& ys, std::uint64_t seed) {
  using T = typename C::value_type;
  const std::size_t n = xs.size();
  DeviceData<BViewOf<T, 2, typename C::x_layout>> x(shape, "x");
  DeviceData<BViewOf<T, 2, typename C::y_layout>> y(shape, "y");
  DeviceData<BViewOf<T, 2, typename C::out_layout>> grad(shape, "grad"), grad2(shape, "grad2"), up(shape, "up");
  x.upload(xs);
  y.upload(ys);
  std::mt19937_64 gen(seed ^ 0xABCDEFull);
  std::uniform_real_distribution<double> ug(-2.0, 2.0);
  std::vector<T> ups(n);
  for (auto& v : ups) v = static_cast<T>(ug(gen));
  up.upload(ups);
  const T g = static_cast<T>(0.75);
  Kokkos::View<T, BMem> g_dev("g"), loss_fused("loss_fused"), loss_plain("loss_plain");
  Kokkos::deep_copy(g_dev, g);
  const BExec space;
  const T poison = std::numeric_limits<T>::quiet_NaN();

  for (Algorithm a : kAlgorithms) {
    for (Reduction r : {Reduction::None, Reduction::Sum, Reduction::Mean}) {
      SCOPED_TRACE(std::string("seed ") + std::to_string(seed) + ", algorithm " + to_string(a) + ", reduction " +
                   to_string(r) + ", n " + std::to_string(n));
      const double divisor = r == Reduction::Mean ? static_cast<double>(n) : 1.0;
      for (int form = 0; form < 2; ++form) {  // none: per-element view; sum/mean: host scalar, then device scalar
        grad.upload(std::vector<T>(n, T(-99)), poison);
        if (r == Reduction::None) {
          if (form == 1) continue;
          backward(space, x.view, y.view, up.view, grad.view, r, a);
        } else if (form == 0) {
          backward(space, x.view, y.view, g, grad.view, r, a);
        } else {
          backward(space, x.view, y.view, g_dev, grad.view, r, a);
        }
        const auto got = grad.download();
        for (std::size_t i = 0; i < n; ++i) {
          const double upstream = r == Reduction::None ? static_cast<double>(ups[i]) : static_cast<double>(g) / divisor;
          expect_grad_near<T>(got[i], upstream * ref_grad(xs[i], ys[i]), xs[i], ys[i], i);
        }
        expect_nothing_written_outside(grad);
      }
      if (r == Reduction::None) continue;

      // Fused = forward + backward, with a device upstream.
      grad2.upload(std::vector<T>(n, T(-99)), poison);
      loss_and_grad(space, x.view, y.view, loss_fused, grad2.view, r, g_dev, a);
      loss(space, x.view, y.view, loss_plain, r, a);
      backward(space, x.view, y.view, g_dev, grad.view, r, a);
      T lf, lp;
      Kokkos::deep_copy(lf, loss_fused);
      Kokkos::deep_copy(lp, loss_plain);
      expect_same_loss(lf, lp);
      const auto gf = grad2.download(), gp = grad.download();
      for (std::size_t i = 0; i < n; ++i) {
        if (std::isnan(gp[i]))
          ASSERT_TRUE(std::isnan(gf[i])) << i;
        else
          ASSERT_NEAR(gf[i], gp[i], 2 * std::numeric_limits<T>::epsilon() * std::abs(gp[i])) << i;
      }
      // Blocking fused form, host upstream.
      const T lb = loss_and_grad(space, x.view, y.view, grad2.view, r, g, a);
      expect_same_loss(lb, lp);
    }
  }
}

template <class C>
void check_gradients_random(const std::array<std::size_t, 2>& shape) {
  using T = typename C::value_type;
  const auto seed = fresh_seed();
  std::vector<T> xs(shape[0] * shape[1]), ys(xs.size());
  fill_random(seed, xs, ys);
  check_gradients<C>(shape, xs, ys, seed);
}

TYPED_TEST(Backward, random) {
  for (auto s : std::vector<std::array<std::size_t, 2>>{{0, 3}, {1, 1}, {1, 33}, {7, 9}, {31, 33}, {257, 129}})
    check_gradients_random<TypeParam>(s);
}

TYPED_TEST(Backward, large_margins_nan_and_real_targets) {
  using T = typename TypeParam::value_type;
  const auto seed = fresh_seed();
  std::vector<T> xs(13 * 77), ys(xs.size());
  fill_random(seed, xs, ys);
  const T big = std::numeric_limits<float>::max();
  const std::vector<T> specials = {T(1e4), T(-1e4), T(3e38), T(-3e38), big, -big, T(100), T(-100), T(0)};
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-2.5, 2.5);
  for (std::size_t i = 0; i < xs.size(); i += 2) xs[i] = specials[gen() % specials.size()];
  for (std::size_t i = 1; i < xs.size(); i += 5) ys[i] = static_cast<T>(u(gen));  // real-valued targets
  check_gradients<TypeParam>({13, 77}, xs, ys, seed);
  // NaN in x and in y.
  xs[seed % xs.size()] = std::numeric_limits<T>::quiet_NaN();
  ys[(seed / 7) % ys.size()] = std::numeric_limits<T>::quiet_NaN();
  check_gradients<TypeParam>({13, 77}, xs, ys, seed);
}

TYPED_TEST(Backward, mismatched_extents_throw_and_write_nothing) {
  using C = TypeParam;
  using T = typename C::value_type;
  DeviceData<BViewOf<T, 2, typename C::x_layout>> x({4, 8}, "x");
  DeviceData<BViewOf<T, 2, typename C::y_layout>> y({4, 8}, "y"), y_bad({4, 6}, "y_bad");
  DeviceData<BViewOf<T, 2, typename C::out_layout>> grad({4, 8}, "grad"), grad_bad({3, 8}, "grad_bad"),
      up_bad({4, 9}, "up_bad");
  Kokkos::View<T, BMem> l("l");
  const T sentinel = T(42);
  Kokkos::deep_copy(l, sentinel);
  grad.upload(std::vector<T>(grad.size(), sentinel), sentinel);
  grad_bad.upload(std::vector<T>(grad_bad.size(), sentinel), sentinel);
  const BExec space;
  const auto expect_throw = [](auto&& call, const std::string& needle) { expect_invalid_argument(call, needle); };
  expect_throw([&] { backward(space, x.view, y_bad.view, T(1), grad.view, Reduction::Sum); }, "y.extent(1) = 6");
  expect_throw([&] { backward(space, x.view, y.view, T(1), grad_bad.view, Reduction::Mean); }, "grad_x.extent(0) = 3");
  expect_throw([&] { backward(space, x.view, y.view, up_bad.view, grad.view, Reduction::None); },
               "grad_loss.extent(1) = 9");
  expect_throw([&] { backward(space, x.view, y.view, T(1), grad.view, Reduction::None); }, "scalar");
  expect_throw([&] { loss_and_grad(space, x.view, y_bad.view, l, grad.view); }, "y.extent(1) = 6");
  expect_throw([&] { loss_and_grad(space, x.view, y.view, l, grad_bad.view); }, "grad_x.extent(0) = 3");
  expect_throw([&] { loss_and_grad(space, x.view, y.view, l, grad.view, Reduction::None); }, "reduction none");
  expect_throw([&] { (void)loss_and_grad(space, x.view, y_bad.view, grad.view); }, "does not match");
  space.fence();
  T after;
  Kokkos::deep_copy(after, l);
  EXPECT_EQ(after, sentinel);
  for (T v : grad.download_parent()) ASSERT_EQ(v, sentinel);
  for (T v : grad_bad.download_parent()) ASSERT_EQ(v, sentinel);
}

/// Central finite differences of the double loss against the gradient, on small inputs.
TEST(TEST_CATEGORY, backward_finite_differences) {
  const auto seed = fresh_seed();
  const std::size_t n = 9;
  std::vector<double> xs(n), ys(n);
  fill_random(seed, xs, ys);
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  for (std::size_t i = 0; i < n; i += 3) ys[i] = u(gen);  // real-valued targets too
  DeviceData<Kokkos::View<double*, BMem>> x({n}), y({n}), grad({n});
  y.upload(ys);
  for (Reduction r : {Reduction::Sum, Reduction::Mean}) {
    x.upload(xs);
    backward(x.view, y.view, 1.0, grad.view, r);
    const auto g = grad.download();
    for (std::size_t i = 0; i < n; ++i) {
      const double h = 1e-6;
      auto xp = xs, xm = xs;
      xp[i] += h;
      xm[i] -= h;
      x.upload(xp);
      const double lp = loss(x.view, y.view, r);
      x.upload(xm);
      const double lm = loss(x.view, y.view, r);
      EXPECT_NEAR(g[i], (lp - lm) / (2 * h), 1e-7) << "seed " << seed << " element " << i << " " << to_string(r);
    }
  }
}

TEST(TEST_CATEGORY, backward_in_place_and_aliasing) {
  const BExec space;
  const std::size_t n = 3001;
  const auto seed = fresh_seed();
  std::vector<float> xs(n), ys(n);
  fill_random(seed, xs, ys);
  DeviceData<Kokkos::View<float*, BMem>> x({n}), y({n});
  Kokkos::View<float, BMem> l("l");
  for (Algorithm a : {Algorithm::RangeReduce, Algorithm::TeamScratch, Algorithm::Native}) {
    x.upload(xs);
    y.upload(ys);
    backward(space, x.view, y.view, 2.0f, x.view, Reduction::Sum, a);  // grad_x is x
    auto got = x.download();
    for (std::size_t i = 0; i < n; ++i) expect_grad_near<float>(got[i], 2.0 * ref_grad(xs[i], ys[i]), xs[i], ys[i], i);
    x.upload(xs);
    loss_and_grad(space, x.view, y.view, l, x.view, Reduction::Sum, 1.0f, a);  // fused, in place
    got = x.download();
    for (std::size_t i = 0; i < n; ++i) expect_grad_near<float>(got[i], ref_grad(xs[i], ys[i]), xs[i], ys[i], i);
    float lv;
    Kokkos::deep_copy(lv, l);
    EXPECT_NEAR(lv, ref_reduce(xs, ys, Reduction::Sum), 1e-6 * ref_reduce(xs, ys, Reduction::Sum)) << seed;
  }
  // Shifted overlap and a loss inside grad_x are refused.
  Kokkos::View<float*, BMem> big("big", n + 1);
  auto shifted = Kokkos::subview(big, Kokkos::make_pair(std::size_t(1), n + 1));
  auto base = Kokkos::subview(big, Kokkos::make_pair(std::size_t(0), n));
  EXPECT_THROW(backward(space, base, y.view, 1.0f, shifted, Reduction::Sum), std::invalid_argument);
  Kokkos::View<float, BMem, Kokkos::MemoryTraits<Kokkos::Unmanaged>> inside(base.data() + 5);
  EXPECT_THROW(loss_and_grad(space, x.view, y.view, inside, base), std::invalid_argument);
}

}  // namespace softmargin::test

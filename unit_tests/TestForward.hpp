// Forward-pass tests, compiled once per backend (TEST_EXECSPACE, TEST_CATEGORY from the category header).
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "TestUtils.hpp"

namespace softmargin::test {

using Exec = TEST_EXECSPACE;
using Mem = typename Exec::memory_space;

constexpr Reduction kReductions[] = {Reduction::None, Reduction::Sum, Reduction::Mean};

template <class T, int Rank, class Layout>
using ViewOf = Kokkos::View<typename Impl::add_rank<T, Rank>::type, Layout, Mem>;

/// Runs every algorithm and reduction on (x, y) of the given shape and compares with the fp64 reference.
template <class C, int Rank>
void check_all(const std::array<std::size_t, Rank>& shape, const std::vector<typename C::value_type>& xs,
               const std::vector<typename C::value_type>& ys, std::uint64_t seed) {
  using T = typename C::value_type;
  DeviceData<ViewOf<T, Rank, typename C::x_layout>> x(shape, "x");
  DeviceData<ViewOf<T, Rank, typename C::y_layout>> y(shape, "y");
  DeviceData<ViewOf<T, Rank, typename C::out_layout>> out(shape, "out");
  x.upload(xs);
  y.upload(ys);
  Kokkos::View<T, Mem> result("result");
  const Exec space;

  for (Algorithm a : kAlgorithms) {
    for (Reduction r : kReductions) {
      SCOPED_TRACE(std::string("seed ") + std::to_string(seed) + ", algorithm " + to_string(a) + ", reduction " +
                   to_string(r) + ", n " + std::to_string(xs.size()));
      if (r == Reduction::None) {
        const T poison = std::numeric_limits<T>::quiet_NaN();
        out.upload(std::vector<T>(xs.size(), T(-1)), poison);
        loss(space, x.view, y.view, out.view, r, a);
        space.fence();
        const auto got = out.download();
        for (std::size_t i = 0; i < xs.size(); ++i) {
          const double ref = ref_loss(xs[i], ys[i]);
          if (std::isnan(ref)) {
            ASSERT_TRUE(std::isnan(got[i])) << "element " << i;
          } else if (std::isinf(ref) || std::abs(ref) > std::numeric_limits<T>::max()) {
            ASSERT_EQ(got[i], std::numeric_limits<T>::infinity()) << "element " << i;
          } else {
            ASSERT_NEAR(got[i], ref, elem_tol<T>(xs[i], ys[i], ref))
                << "element " << i << " x " << xs[i] << " y " << ys[i];
          }
        }
        expect_nothing_written_outside(out);  // strided views live inside a larger allocation
      } else {
        Kokkos::deep_copy(result, std::numeric_limits<T>::quiet_NaN());
        loss(space, x.view, y.view, result, r, a);
        T got;
        Kokkos::deep_copy(got, result);
        const double ref = ref_reduce(xs, ys, r);
        if (std::isnan(ref)) {
          ASSERT_TRUE(std::isnan(got));
        } else if (std::isinf(ref) || std::abs(ref) > std::numeric_limits<T>::max()) {
          ASSERT_TRUE(std::isinf(got)) << got;
        } else {
          ASSERT_NEAR(got, ref, reduce_rtol<T>() * std::abs(ref) + std::numeric_limits<T>::denorm_min()) << got;
        }
        // The blocking form gives the same value.
        const T blocking = loss(space, x.view, y.view, r, a);
        if (std::isnan(got))
          ASSERT_TRUE(std::isnan(blocking));
        else
          ASSERT_EQ(blocking, got);
      }
    }
  }
}

template <class C, int Rank>
void check_random(const std::array<std::size_t, Rank>& shape) {
  using T = typename C::value_type;
  std::size_t n = 1;
  for (auto e : shape) n *= e;
  if (size_left_out(n)) return;
  const auto seed = fresh_seed();
  std::vector<T> xs(n), ys(n);
  fill_random(seed, xs, ys);
  check_all<C, Rank>(shape, xs, ys, seed);
}

template <class C>
class Forward : public ::testing::Test {};

using Cases = ::testing::Types<Case<float, Kokkos::LayoutRight, Kokkos::LayoutRight, Kokkos::LayoutRight>,
                               Case<float, Kokkos::LayoutLeft, Kokkos::LayoutLeft, Kokkos::LayoutLeft>,
                               Case<float, Kokkos::LayoutStride, Kokkos::LayoutStride, Kokkos::LayoutStride>,
                               Case<float, Kokkos::LayoutRight, Kokkos::LayoutLeft, Kokkos::LayoutStride>,
                               Case<double, Kokkos::LayoutRight, Kokkos::LayoutRight, Kokkos::LayoutLeft>,
                               Case<double, Kokkos::LayoutLeft, Kokkos::LayoutStride, Kokkos::LayoutRight>,
                               Case<double, Kokkos::LayoutStride, Kokkos::LayoutRight, Kokkos::LayoutStride>>;
TYPED_TEST_SUITE(Forward, Cases);

TYPED_TEST(Forward, random_rank1) {
  for (std::size_t n : {0ul, 1ul, 2ul, 3ul, 31ul, 33ul, 1023ul, 1025ul, 65535ul, 65537ul, (1ul << 20) + 1})
    check_random<TypeParam, 1>({n});
}

TYPED_TEST(Forward, random_rank2) {
  for (auto s :
       std::vector<std::array<std::size_t, 2>>{{0, 5}, {5, 0}, {1, 1}, {3, 7}, {17, 33}, {64, 65}, {512, 4096}})
    check_random<TypeParam, 2>(s);
}

TYPED_TEST(Forward, large_margins) {
  using T = typename TypeParam::value_type;
  const T big = std::numeric_limits<float>::max();  // the product bound: margins up to float max
  const std::vector<T> specials = {T(1e4), T(-1e4), T(3e38), T(-3e38), big, -big, T(100), T(-100), T(0), T(-0.0)};
  const auto seed = fresh_seed();
  std::vector<T> xs(4099), ys(4099);
  fill_random(seed, xs, ys);
  std::mt19937_64 gen(seed);
  for (std::size_t i = 0; i < xs.size(); i += 3) xs[i] = specials[gen() % specials.size()];
  check_all<TypeParam, 2>({17, 4099 / 17 + 0}, std::vector<T>(xs.begin(), xs.begin() + 17 * (4099 / 17)),
                          std::vector<T>(ys.begin(), ys.begin() + 17 * (4099 / 17)), seed);
  // All margins wrong by float max: every loss is ~3.4e38, the mean is finite (the sum overflows float).
  check_all<TypeParam, 1>({1001}, std::vector<T>(1001, big), std::vector<T>(1001, T(-1)), seed);
  // x = 100, y = -1: PyTorch gives inf, the answer is 100.
  check_all<TypeParam, 1>({3}, std::vector<T>(3, T(100)), std::vector<T>(3, T(-1)), seed);
}

TYPED_TEST(Forward, nan_propagates) {
  using T = typename TypeParam::value_type;
  const auto seed = fresh_seed();
  for (int which = 0; which < 2; ++which) {
    std::vector<T> xs(3 * 1031), ys(3 * 1031);
    fill_random(seed, xs, ys);
    (which == 0 ? xs : ys)[seed % xs.size()] = std::numeric_limits<T>::quiet_NaN();
    check_all<TypeParam, 2>({3, 1031}, xs, ys, seed);
  }
}

TYPED_TEST(Forward, real_valued_targets) {
  using T = typename TypeParam::value_type;
  const auto seed = fresh_seed();
  std::vector<T> xs(70001), ys(70001);
  fill_random(seed, xs, ys);
  std::mt19937_64 gen(seed + 1);
  std::uniform_real_distribution<double> u(-2.5, 2.5);
  for (auto& v : ys) v = static_cast<T>(u(gen));
  check_all<TypeParam, 1>({70001}, xs, ys, seed);
}

TYPED_TEST(Forward, mismatched_extents_throw_and_write_nothing) {
  using C = TypeParam;
  using T = typename C::value_type;
  DeviceData<ViewOf<T, 2, typename C::x_layout>> x({4, 8}, "x");
  DeviceData<ViewOf<T, 2, typename C::y_layout>> y({4, 7}, "y");
  DeviceData<ViewOf<T, 2, typename C::y_layout>> y_ok({4, 8}, "y_ok");
  DeviceData<ViewOf<T, 2, typename C::out_layout>> out({5, 8}, "out");
  Kokkos::View<T, Mem> result("result");
  const T sentinel = T(42);
  Kokkos::deep_copy(result, sentinel);
  out.upload(std::vector<T>(out.size(), sentinel), sentinel);
  const Exec space;
  const auto expect_throw = [](auto&& call, const std::string& needle) { expect_invalid_argument(call, needle); };
  for (Algorithm a : kAlgorithms) {
    expect_throw([&] { loss(space, x.view, y.view, result, Reduction::Mean, a); }, "y.extent(1) = 7");
    expect_throw([&] { loss(space, x.view, y.view, result, Reduction::Sum, a); }, "x.extent(1) = 8");
    expect_throw([&] { loss(space, x.view, y_ok.view, out.view, Reduction::None, a); }, "out.extent(0) = 5");
    expect_throw([&] { (void)loss(space, x.view, y.view, Reduction::Mean, a); }, "does not match");
  }
  // The wrong output rank for the reduction.
  expect_throw([&] { loss(space, x.view, y_ok.view, result, Reduction::None); }, "rank-0");
  DeviceData<ViewOf<T, 2, typename C::out_layout>> out_ok({4, 8}, "out_ok");
  expect_throw([&] { loss(space, x.view, y_ok.view, out_ok.view, Reduction::Mean); }, "rank-0 out");
  space.fence();
  T after;
  Kokkos::deep_copy(after, result);
  EXPECT_EQ(after, sentinel);
  for (T v : out.download_parent()) ASSERT_EQ(v, sentinel);
}

/// Randomized interface check (seeded, bounded in time): random ranks and shapes (empty, tiny, odd, up to ~10^4
/// elements), the fixture's layouts, every algorithm and reduction, inputs mixed with special values (+-0, +-inf,
/// NaN, subnormals, float max, large margins), against the fp64 reference.
TYPED_TEST(Forward, fuzz) {
  using T = typename TypeParam::value_type;
  const auto seed = fresh_seed();
  std::mt19937_64 gen(seed);
  const T inf = std::numeric_limits<T>::infinity();
  const std::vector<T> specials = {T(0),
                                   T(-0.0),
                                   inf,
                                   -inf,
                                   std::numeric_limits<T>::quiet_NaN(),
                                   std::numeric_limits<float>::denorm_min(),
                                   -std::numeric_limits<float>::denorm_min(),
                                   std::numeric_limits<float>::max(),
                                   -std::numeric_limits<float>::max(),
                                   T(1e4),
                                   T(-1e4),
                                   T(88.7),
                                   T(-88.7),
                                   T(1e-30)};
  const auto start = std::chrono::steady_clock::now();
  int cases = 0;
  while (cases < 400 && std::chrono::steady_clock::now() - start < std::chrono::milliseconds(1500)) {
    ++cases;
    const bool rank2 = gen() % 2;
    const std::size_t n0 = gen() % 4 == 0 ? gen() % 3 : 1 + gen() % 97;
    const std::size_t n1 = rank2 ? (gen() % 4 == 0 ? gen() % 3 : 1 + gen() % 129) : 1;
    std::vector<T> xs(n0 * n1), ys(n0 * n1);
    fill_random(gen(), xs, ys);
    const double special_rate = (gen() % 4) / 8.0;  // 0, 1/8, 1/4 or 3/8 of the elements
    std::bernoulli_distribution pick(special_rate);
    std::uniform_real_distribution<double> real_y(-2.0, 2.0);
    for (std::size_t i = 0; i < xs.size(); ++i) {
      if (pick(gen)) xs[i] = specials[gen() % specials.size()];
      if (pick(gen)) ys[i] = gen() % 3 == 0 ? specials[gen() % specials.size()] : static_cast<T>(real_y(gen));
    }
    SCOPED_TRACE("fuzz seed " + std::to_string(seed) + ", case " + std::to_string(cases));
    if (rank2)
      check_all<TypeParam, 2>({n0, n1}, xs, ys, seed);
    else
      check_all<TypeParam, 1>({n0}, xs, ys, seed);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(cases, 0);
}

TEST(TEST_CATEGORY, forward_invalid_arguments) {
  const Exec space;
  Kokkos::View<float*, Mem> x("x", 10), y("y", 10), out("out", 10);
  Kokkos::View<float, Mem> result("result");
  Kokkos::View<float*, Mem> unallocated;
  EXPECT_THROW(loss(space, x, y, result, static_cast<Reduction>(7)), std::invalid_argument);
  EXPECT_THROW(loss(space, x, y, result, Reduction::Mean, static_cast<Algorithm>(9)), std::invalid_argument);
  EXPECT_THROW(loss(space, unallocated, y, result), std::invalid_argument);
  EXPECT_THROW(loss(space, x, unallocated, result), std::invalid_argument);
  EXPECT_THROW(loss(space, x, y, unallocated, Reduction::None), std::invalid_argument);
  EXPECT_THROW((void)loss(space, x, y, Reduction::None), std::invalid_argument);
  // A result inside an input, and an element-wise out that overlaps an input shifted by one.
  Kokkos::View<float, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>> inside(x.data() + 3);
  EXPECT_THROW(loss(space, x, y, inside), std::invalid_argument);
  Kokkos::View<float*, Mem> big("big", 11);
  auto shifted = Kokkos::subview(big, Kokkos::make_pair(1, 11));
  auto base = Kokkos::subview(big, Kokkos::make_pair(0, 10));
  EXPECT_THROW(loss(space, base, y, shifted, Reduction::None), std::invalid_argument);
}

TEST(TEST_CATEGORY, forward_in_place) {
  const Exec space;
  const std::size_t n = 4097;
  const auto seed = fresh_seed();
  std::vector<double> xs(n), ys(n);
  fill_random(seed, xs, ys);
  DeviceData<Kokkos::View<double*, Mem>> x({n}), y({n});
  for (Algorithm a : kAlgorithms) {
    x.upload(xs);
    y.upload(ys);
    loss(space, x.view, y.view, x.view, Reduction::None, a);  // out is x
    const auto got = x.download();
    for (std::size_t i = 0; i < n; ++i) ASSERT_NEAR(got[i], ref_loss(xs[i], ys[i]), 1e-14) << "seed " << seed;
  }
}

TEST(TEST_CATEGORY, forward_rank3_and_default_space) {
  // Rank 3, contiguous and strided, goes through the header-only instantiations.
  const auto seed = fresh_seed();
  const std::size_t n0 = 3, n1 = 5, n2 = 7;
  std::vector<float> xs(n0 * n1 * n2), ys(xs.size());
  fill_random(seed, xs, ys);
  Kokkos::View<float***, Kokkos::LayoutRight, Mem> x("x", n0, n1, n2), y("y", n0, n1, n2);
  Kokkos::View<float****, Kokkos::LayoutLeft, Mem> y_parent("yp", 2, n0, n1, n2);
  auto y_strided = Kokkos::subview(y_parent, 1, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
  auto hx = Kokkos::create_mirror_view(x);
  auto hy = Kokkos::create_mirror_view(y);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    hx.data()[i] = xs[i];
    hy.data()[i] = ys[i];
  }
  Kokkos::deep_copy(x, hx);
  Kokkos::deep_copy(y, hy);
  Kokkos::View<float***, Kokkos::LayoutRight, Mem> y_copy("y_copy", n0, n1, n2);
  Kokkos::deep_copy(y_copy, y);
  copy_rank3<Exec>(y_strided, y_copy);
  const double ref = ref_reduce(xs, ys, Reduction::Mean);
  for (Algorithm a : kAlgorithms) {
    EXPECT_NEAR(loss(x, y, Reduction::Mean, a), ref, 1e-6 * ref) << "seed " << seed;
    EXPECT_NEAR(loss(x, y_strided, Reduction::Mean, a), ref, 1e-6 * ref) << "seed " << seed;
    Kokkos::View<float, Mem> r("r");
    loss(x, y_strided, r, Reduction::Sum, a);
    float got;
    Kokkos::deep_copy(got, r);
    EXPECT_NEAR(got, ref * xs.size(), 1e-6 * ref * xs.size()) << "seed " << seed;
  }
}

/// Contiguous inputs at every 4-byte offset: aligned ones take the packed (16-byte) loops, the others the scalar
/// ones; both cover the n % 4 tail.
TEST(TEST_CATEGORY, forward_and_backward_every_alignment) {
  const Exec space;
  const std::size_t n = 1027;
  const auto seed = fresh_seed();
  std::vector<float> xs(n + 3), ys(n + 3);
  fill_random(seed, xs, ys);
  DeviceData<Kokkos::View<float*, Mem>> x({n + 3}), y({n + 3}), g({n + 3});
  x.upload(xs);
  y.upload(ys);
  Kokkos::View<float, Mem> r("r");
  for (std::size_t off = 0; off < 4; ++off) {
    const auto range = Kokkos::make_pair(off, off + n - off % 2);  // odd and even lengths
    auto xo = Kokkos::subview(x.view, range);
    auto yo = Kokkos::subview(y.view, range);
    auto go = Kokkos::subview(g.view, range);
    const std::vector<float> xv(xs.begin() + off, xs.begin() + range.second),
        yv(ys.begin() + off, ys.begin() + range.second);
    for (Algorithm a : kAlgorithms) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " offset " + std::to_string(off) + " " + to_string(a));
      const double ref = ref_reduce(xv, yv, Reduction::Sum);
      loss_and_grad(space, xo, yo, r, go, Reduction::Sum, 1.0f, a);
      float got;
      Kokkos::deep_copy(got, r);
      EXPECT_NEAR(got, ref, 1e-6 * ref);
      const auto gv = g.download();
      for (std::size_t i = 0; i < xv.size(); ++i) {
        const double z = -double(yv[i]) * xv[i], e = std::exp(-std::abs(z));
        const double gref = -yv[i] * ((z >= 0 ? 1.0 : e) / (1.0 + e));
        ASSERT_NEAR(gv[off + i], gref, 1e-6) << i;
      }
      EXPECT_NEAR(loss(space, xo, yo, Reduction::Sum, a), ref, 1e-6 * ref);
    }
  }
}

/// N = 2^28 fp32 (2 GiB of inputs): the mean stays within 1e-6 of an fp64 reduction. Runs on device backends, and
/// on host backends when SOFTMARGIN_TEST_LARGE is set (it takes seconds there).
TEST(TEST_CATEGORY, forward_mean_accuracy_2pow28) {
  if (Impl::is_host_space_v<Exec> && std::getenv("SOFTMARGIN_TEST_LARGE") == nullptr)
    GTEST_SKIP() << "set SOFTMARGIN_TEST_LARGE=1 to run on a host backend";
  const std::size_t n = std::size_t(1) << 28;
  const auto seed = fresh_seed();
  Kokkos::View<float*, Mem> x(Kokkos::view_alloc(Kokkos::WithoutInitializing, "x"), n);
  Kokkos::View<float*, Mem> y(Kokkos::view_alloc(Kokkos::WithoutInitializing, "y"), n);
  fill_counter_random<Exec>(x, y, seed);
  const double ref = fp64_mean<Exec>(x, y);
  for (Algorithm a : kAlgorithms) {
    const float got = loss(x, y, Reduction::Mean, a);
    EXPECT_LE(std::abs(got - ref) / ref, 1e-6)
        << "seed " << seed << " algorithm " << to_string(a) << " got " << got << " ref " << ref;
  }
}

}  // namespace softmargin::test

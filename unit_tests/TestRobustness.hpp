// Robustness tests, compiled once per backend: concurrent calls on several execution-space instances, losses near
// float's largest value, and a very large N (opt-in).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "TestUtils.hpp"

namespace softmargin::test {

using RExec = TEST_EXECSPACE;
using RMem = typename RExec::memory_space;

/// Calls on separate instances from separate host threads, each on its own data, all at once: every result is right
/// (the per-instance workspaces and host-result slots are not shared between instances).
TEST(TEST_CATEGORY, concurrent_instances) {
  constexpr int kInstances = 2;
  const auto instances = Kokkos::Experimental::partition_space(RExec(), 1, 1);
  const auto seed = fresh_seed();
  const std::size_t n = 200003;
  std::vector<std::vector<float>> xs(kInstances, std::vector<float>(n)), ys(kInstances, std::vector<float>(n));
  std::vector<Kokkos::View<float*, RMem>> x, y, grad;
  std::vector<Kokkos::View<float, RMem>> r;
  std::vector<double> ref(kInstances);
  for (int k = 0; k < kInstances; ++k) {
    fill_random(seed + k, xs[k], ys[k]);
    for (auto& v : xs[k]) v *= static_cast<float>(k + 1);  // different data, different answers
    x.emplace_back("x", n);
    y.emplace_back("y", n);
    grad.emplace_back("grad", n);
    r.emplace_back("r");
    Kokkos::deep_copy(x[k], Kokkos::View<const float*, Kokkos::HostSpace>(xs[k].data(), n));
    Kokkos::deep_copy(y[k], Kokkos::View<const float*, Kokkos::HostSpace>(ys[k].data(), n));
    ref[k] = ref_reduce(xs[k], ys[k], Reduction::Mean);
  }
  std::vector<double> blocking(kInstances), fused(kInstances);
  std::vector<std::thread> threads;
  for (int k = 0; k < kInstances; ++k) {
    threads.emplace_back([&, k] {
      const auto& space = instances[k];
      for (int rep = 0; rep < 20; ++rep) {
        loss(space, x[k], y[k], r[k], Reduction::Mean, kAlgorithms[rep % 4]);
        blocking[k] = loss(space, x[k], y[k]);
        fused[k] = loss_and_grad(space, x[k], y[k], grad[k]);
      }
      space.fence();
    });
  }
  for (auto& t : threads) t.join();
  for (int k = 0; k < kInstances; ++k) {
    float got;
    Kokkos::deep_copy(got, r[k]);
    EXPECT_NEAR(got, ref[k], 1e-6 * ref[k]) << "instance " << k << " seed " << seed;
    EXPECT_NEAR(blocking[k], ref[k], 1e-6 * ref[k]) << "instance " << k << " seed " << seed;
    EXPECT_NEAR(fused[k], ref[k], 1e-6 * ref[k]) << "instance " << k << " seed " << seed;
  }
}

/// Calls in a row on one instance, alternating algorithms that share its workspace: every native call gives the
/// same bits (the partials are combined in a fixed order), and each algorithm the right mean.
TEST(TEST_CATEGORY, repeated_calls_are_reproducible) {
  const auto seed = fresh_seed();
  for (const std::size_t n : {std::size_t(300007), std::size_t(1) << 20}) {
    std::vector<float> xs(n), ys(n);
    fill_random(seed, xs, ys);
    Kokkos::View<float*, RMem> x("x", n), y("y", n);
    Kokkos::deep_copy(x, Kokkos::View<const float*, Kokkos::HostSpace>(xs.data(), n));
    Kokkos::deep_copy(y, Kokkos::View<const float*, Kokkos::HostSpace>(ys.data(), n));
    const double ref = ref_reduce(xs, ys, Reduction::Mean);
    const RExec space;
    constexpr int kCalls = 24;
    Kokkos::View<float*, RMem> results("results", kCalls);
    for (int k = 0; k < kCalls; ++k) {
      const Algorithm a = k % 2 == 0 ? Algorithm::Native : kAlgorithms[(k / 2) % 4];
      loss(space, x, y, Kokkos::subview(results, k), Reduction::Mean, a);
    }
    std::vector<float> got(kCalls);
    Kokkos::deep_copy(Kokkos::View<float*, Kokkos::HostSpace>(got.data(), kCalls), results);
    for (int k = 0; k < kCalls; ++k) {
      EXPECT_NEAR(got[k], ref, 1e-6 * ref) << "call " << k << " n " << n << " seed " << seed;
      if (k % 2 == 0) {
        EXPECT_EQ(got[k], got[0]) << "native call " << k << " n " << n << " seed " << seed;
      }
    }
  }
}

namespace tools_log {
inline std::vector<std::string> regions, kernels;
inline void push_region(const char* name) { regions.emplace_back(name); }
inline void begin_kernel(const char* name, std::uint32_t, std::uint64_t* id) {
  kernels.emplace_back(name);
  *id = kernels.size();
}
}  // namespace tools_log

/// With a Kokkos Tools listener: every public call is a region named after the call, and every kernel it launches
/// (any algorithm) carries a softmargin:: label naming the pass and the algorithm.
TEST(TEST_CATEGORY, kokkos_tools_regions_and_kernel_labels) {
  const std::size_t n = 1003;
  std::vector<float> xs(n), ys(n);
  fill_random(fresh_seed(), xs, ys);
  Kokkos::View<float*, RMem> x("x", n), y("y", n), grad("grad", n);
  Kokkos::View<float, RMem> r("r");
  Kokkos::deep_copy(x, Kokkos::View<const float*, Kokkos::HostSpace>(xs.data(), n));
  Kokkos::deep_copy(y, Kokkos::View<const float*, Kokkos::HostSpace>(ys.data(), n));
  const RExec space;
  const auto calls = [&] {
    loss(space, x, y, r, Reduction::Mean, Algorithm::RangeReduce);
    loss(space, x, y, r, Reduction::Mean, Algorithm::TeamScratch);
    backward(space, x, y, 1.0f, grad, Reduction::Mean, Algorithm::RangeReduce);
    loss_and_grad(space, x, y, r, grad);
  };
  calls();  // workspaces allocated outside the record
  space.fence();
  namespace T = Kokkos::Tools::Experimental;
  const auto saved = T::get_callbacks();
  tools_log::regions.clear();
  tools_log::kernels.clear();
  T::set_push_region_callback(tools_log::push_region);
  T::set_begin_parallel_for_callback(tools_log::begin_kernel);
  T::set_begin_parallel_reduce_callback(tools_log::begin_kernel);
  calls();
  space.fence();
  T::set_callbacks(saved);
  const std::vector<std::string> regions = {"softmargin::loss", "softmargin::loss", "softmargin::backward",
                                            "softmargin::loss_and_grad"};
  EXPECT_EQ(tools_log::regions, regions);
  const auto launched = [&](const std::string& prefix) {
    int k = 0;
    for (const auto& name : tools_log::kernels) k += name.rfind(prefix, 0) == 0;
    return k;
  };
  EXPECT_EQ(launched("softmargin::loss::range_reduce"), 1);
  EXPECT_EQ(launched("softmargin::loss::team_scratch"), 1);
  EXPECT_EQ(launched("softmargin::backward::range_for"), 1);
  EXPECT_EQ(launched("softmargin::loss_and_grad::"), 1);
  // The rest: the library's own kernels, or Kokkos' initialization of a View it allocates (host backends give each
  // call its own workspace), named after that View.
  for (const auto& name : tools_log::kernels)
    EXPECT_TRUE(name.rfind("softmargin::", 0) == 0 || name.find("[softmargin::") != std::string::npos) << name;
  // Without a listener nothing is recorded (the callbacks are restored).
  tools_log::kernels.clear();
  calls();
  space.fence();
  EXPECT_TRUE(tools_log::kernels.empty());
}

/// Losses near float's largest value summed into a double result: the sum is finite however the backend adds them
/// (no partial sum in float may overflow), for float x and for bf16 x with int8 targets, by every algorithm.
TEST(TEST_CATEGORY, losses_beyond_float_range_sum_into_double) {
  const std::size_t n = 1001;
  Kokkos::View<float*, RMem> xf("xf", n), yf("yf", n);
  Kokkos::View<bf16*, RMem> xb("xb", n);
  Kokkos::View<std::int8_t*, RMem> yb("yb", n);
  const float big = std::numeric_limits<float>::max();
  const bf16 big16 = bf16::from_bits(0x7f7f);  // bf16's largest finite value
  Kokkos::deep_copy(xf, -big);
  Kokkos::deep_copy(yf, 1.0f);
  Kokkos::deep_copy(xb, bf16::from_bits(0xff7f));  // -big16
  Kokkos::deep_copy(yb, std::int8_t(1));
  Kokkos::View<double, RMem> r("r");
  for (Algorithm a : {Algorithm::Auto, Algorithm::RangeReduce, Algorithm::TeamScratch, Algorithm::Native}) {
    SCOPED_TRACE(to_string(a));
    double got;
    loss(RExec(), xf, yf, r, Reduction::Sum, a);
    Kokkos::deep_copy(got, r);
    EXPECT_NEAR(got, n * double(big), 1e-6 * n * double(big));
    loss(RExec(), xb, yb, r, Reduction::Sum, a);
    Kokkos::deep_copy(got, r);
    const double b = static_cast<float>(big16);
    EXPECT_NEAR(got, n * b, 1e-6 * n * b);
  }
}

/// Double losses whose sum overflows double although their mean fits: the mean, a caller's count (host and device)
/// and the fused pass's loss are finite and right, strided too (sum scaled by a power of two, Impl::SumScale), by
/// every algorithm; the sum itself is inf, as it is.
TEST(TEST_CATEGORY, double_mean_finite_where_the_sum_overflows) {
  const std::size_t n = 1003;
  const double big = 1.0789e308;  // two of them overflow double
  Kokkos::View<double*, RMem> x("x", n), y("y", n), grad("grad", n);
  Kokkos::View<double**, Kokkos::LayoutLeft, RMem> x2("x2", 17, 59), y2("y2", 17, 59);
  Kokkos::deep_copy(x, -big);
  Kokkos::deep_copy(y, 1.0);
  Kokkos::deep_copy(x2, -big);
  Kokkos::deep_copy(y2, 1.0);
  const auto x2s = Kokkos::subview(x2, Kokkos::pair<int, int>(1, 17), Kokkos::ALL);  // strided: 16 x 59
  const auto y2s = Kokkos::subview(y2, Kokkos::pair<int, int>(1, 17), Kokkos::ALL);
  Kokkos::View<std::int64_t, RMem> count("count");
  Kokkos::deep_copy(count, std::int64_t(n));
  Kokkos::View<double, RMem> r("r");
  const auto expect_big = [&](double got) { EXPECT_NEAR(got, big, 1e-13 * big); };
  for (Algorithm a : kAlgorithms) {
    SCOPED_TRACE(to_string(a));
    double got;
    loss(RExec(), x, y, r, Reduction::Mean, a);
    Kokkos::deep_copy(got, r);
    expect_big(got);
    loss(RExec(), x, y, r, mean_over(static_cast<double>(n)), a);
    Kokkos::deep_copy(got, r);
    expect_big(got);
    loss(RExec(), x, y, r, mean_over(count), a);
    Kokkos::deep_copy(got, r);
    expect_big(got);
    loss_and_grad(RExec(), x, y, r, grad, Reduction::Mean, 1.0, a);
    Kokkos::deep_copy(got, r);
    expect_big(got);
    loss(RExec(), x2s, y2s, r, Reduction::Mean, a);
    Kokkos::deep_copy(got, r);
    expect_big(got);
    loss(RExec(), x, y, r, Reduction::Sum, a);
    Kokkos::deep_copy(got, r);
    EXPECT_EQ(got, std::numeric_limits<double>::infinity());
  }
  // Small losses keep their accuracy: the mean of the losses at 30 and -30 (scaled by 2^-k, still normal numbers).
  Kokkos::deep_copy(x, 30.0);
  const double small = std::log1p(std::exp(-30.0));
  EXPECT_NEAR(loss(RExec(), x, y, Reduction::Mean), small, 1e-12 * small);
}

/// N = 2^31 + 5 fp32 (x and y 8.6 GB each): 64-bit indexing gives the right mean. Opt-in (SOFTMARGIN_TEST_HUGE=1):
/// it needs about 18 GB of memory on the backend.
TEST(TEST_CATEGORY, huge_n_2pow31_plus_5) {
  if (std::getenv("SOFTMARGIN_TEST_HUGE") == nullptr) GTEST_SKIP() << "set SOFTMARGIN_TEST_HUGE=1 (needs ~18 GB)";
  const std::size_t n = (std::size_t(1) << 31) + 5;
  Kokkos::View<float*, RMem> x(Kokkos::view_alloc(Kokkos::WithoutInitializing, "x"), n);
  Kokkos::View<float*, RMem> y(Kokkos::view_alloc(Kokkos::WithoutInitializing, "y"), n);
  // Closed form: x = 1.5 everywhere, y alternating +1, -1 (starting with +1): the mean is
  // ((n+1)/2 softplus(-1.5) + (n-1)/2 softplus(1.5)) / n.
  Kokkos::deep_copy(x, 1.5f);
  alternate_signs<RExec>(y);
  const double sp_neg = std::log1p(std::exp(-1.5)), sp_pos = 1.5 + std::log1p(std::exp(-1.5));
  const double closed = ((n + 1) / 2 * sp_neg + (n - 1) / 2 * sp_pos) / static_cast<double>(n);
  for (Algorithm a : kAlgorithms) {
    const float got = loss(x, y, Reduction::Mean, a);
    EXPECT_LE(std::abs(got - closed) / closed, 1e-6) << to_string(a) << " got " << got << " closed form " << closed;
  }
  // Random data against an fp64 reduction.
  const auto seed = fresh_seed();
  fill_counter_random<RExec>(x, y, seed);
  const double ref = fp64_mean<RExec>(x, y);
  const float got = loss(x, y);
  EXPECT_LE(std::abs(got - ref) / ref, 1e-6) << "seed " << seed << " got " << got << " ref " << ref;
}

}  // namespace softmargin::test

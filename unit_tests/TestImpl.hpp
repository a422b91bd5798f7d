// White-box tests of softmargin::Impl, compiled once per backend: the polynomial log1p's accuracy and the native
// reduce's workspace between calls. The public API's suites are in TestForward, TestBackward, TestInputs and
// TestRobustness.
#include <vector>

#include "TestUtils.hpp"

namespace softmargin::test {

using WExec = TEST_EXECSPACE;
using WMem = typename WExec::memory_space;

/// The float log1p on [0, 1] that softplus uses, on this backend: within 2 ulp of fp64 log1p.
TEST(TEST_CATEGORY, log1p_unit_accuracy) {
  const double worst = log1p_unit_max_ulp<WExec>(1 << 22);
  EXPECT_LE(worst, 2.0);
  EXPECT_TRUE(std::isnan(Impl::log1p_unit(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(Impl::log1p_unit(0.0f), 0.0f);
}

/// Native calls in a row on one instance whose grids differ (a full grid, a few blocks, one block), with no fence
/// between them: every result is right and the same bits as the same size's first call, and afterwards the
/// instance's workspace is as a launch expects to find it (ticket 0), whatever the grid before it used.
TEST(TEST_CATEGORY, native_calls_of_changing_grids_leave_the_ticket_at_zero) {
  const auto seed = fresh_seed();
  const std::size_t sizes[] = {(std::size_t(1) << 21) + 3, 5003, 1, 100003};
  constexpr int kSizes = 4, kRounds = 5;
  const WExec space;
  std::vector<Kokkos::View<float*, WMem>> x, y;
  std::vector<double> ref;
  for (int s = 0; s < kSizes; ++s) {
    std::vector<float> xs(sizes[s]), ys(sizes[s]);
    fill_random(seed + s, xs, ys);
    x.emplace_back("x", sizes[s]);
    y.emplace_back("y", sizes[s]);
    Kokkos::deep_copy(x[s], Kokkos::View<const float*, Kokkos::HostSpace>(xs.data(), sizes[s]));
    Kokkos::deep_copy(y[s], Kokkos::View<const float*, Kokkos::HostSpace>(ys.data(), sizes[s]));
    ref.push_back(ref_reduce(xs, ys, Reduction::Mean));
  }
  Kokkos::View<float**, Kokkos::LayoutRight, WMem> results("results", kRounds, kSizes);
  for (int k = 0; k < kRounds; ++k)
    for (int s = 0; s < kSizes; ++s)
      loss(space, x[s], y[s], Kokkos::subview(results, k, s), Reduction::Mean, Algorithm::Native);
  auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), results);
  for (int k = 0; k < kRounds; ++k)
    for (int s = 0; s < kSizes; ++s) {
      EXPECT_NEAR(got(k, s), ref[s], 1e-6 * ref[s]) << "round " << k << " n " << sizes[s] << " seed " << seed;
      EXPECT_EQ(got(k, s), got(0, s)) << "round " << k << " n " << sizes[s] << " seed " << seed;
    }
  using WS = Impl::Workspace<WExec, Impl::accum_t<float>>;
  auto ws = WS::acquire(space, Impl::kMaxDeviceTeams);
  unsigned ticket = 1;
  Kokkos::deep_copy(ticket, ws->ticket);
  EXPECT_EQ(ticket, 0u);
}

}  // namespace softmargin::test

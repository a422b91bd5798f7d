// White-box tests of softmargin::Impl, compiled once per backend: the polynomial log1p's accuracy, the native
// reduce's workspace between calls, the fast form of the loss, and the host's whole-pack conversions and pack
// kernels. The public API's suites are in TestForward, TestBackward, TestInputs and TestRobustness.
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "TestUtils.hpp"

namespace softmargin::test {

/// The hardware of the host backends' kernels (the host room).
using HostHardware = Impl::Hardware<Kokkos::DefaultHostExecutionSpace>;

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

/// |got - ref| in units of the float spacing at ref (2^-149 below float's normal range).
KOKKOS_INLINE_FUNCTION double float_ulps(const float got, const double ref) {
  const float r = Kokkos::abs(static_cast<float>(ref));
  const float up = Kokkos::nextafter(r, Kokkos::Experimental::infinity<float>::value);
  return Kokkos::abs(static_cast<double>(got) - ref) / static_cast<double>(up - r);
}

/// Worst error, in float ulps of fp64 exp, of exp_nonpos for float on Exec over 2^22 floats spread evenly over the
/// bits of [-104, 0] (subnormal results below -87.3 included).
template <class Exec>
double exp_nonpos_worst_ulps() {
  constexpr std::int64_t kSamples = 1 << 22;
  const std::uint32_t top = Kokkos::bit_cast<std::uint32_t>(-104.0f) - 0x80000000u;
  double worst = 0;
  Kokkos::parallel_reduce(
      "exp_nonpos_accuracy", Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, kSamples + 1),
      KOKKOS_LAMBDA(const std::int64_t i, double& w) {
        const std::uint32_t bits =
            0x80000000u + static_cast<std::uint32_t>((static_cast<std::uint64_t>(top) * i) / kSamples);
        const float a = Kokkos::bit_cast<float>(bits);
        w = Kokkos::max(w, float_ulps(Impl::exp_nonpos(a), Kokkos::exp(static_cast<double>(a))));
      },
      Kokkos::Max<double>(worst));
  return worst;
}

/// exp_nonpos on Exec at -105, -inf, -0, NaN and -100 (a subnormal result).
template <class Exec>
Kokkos::View<float[5], Kokkos::HostSpace> exp_nonpos_specials() {
  Kokkos::View<float[5], typename Exec::memory_space> out("out");
  Kokkos::parallel_for(
      "exp_nonpos_specials", Kokkos::RangePolicy<Exec>(0, 1), KOKKOS_LAMBDA(int) {
        out(0) = Impl::exp_nonpos(-105.0f);
        out(1) = Impl::exp_nonpos(-Kokkos::Experimental::infinity<float>::value);
        out(2) = Impl::exp_nonpos(-0.0f);
        out(3) = Impl::exp_nonpos(Kokkos::Experimental::quiet_NaN<float>::value);
        out(4) = Impl::exp_nonpos(-100.0f);
      });
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
}

/// exp_nonpos for float on this backend (hosts: exp_nonpos_poly; CUDA: expf) against fp64 exp: within 1.25 float ulps
/// on hosts (0.94 with FMA, 1.22 without), 2 on devices; 0 below -104 and at -inf, 1 at -0, NaN for NaN.
TEST(TEST_CATEGORY, exp_nonpos_accuracy) {
  EXPECT_LE(exp_nonpos_worst_ulps<WExec>(), Impl::is_host_space_v<WExec> ? 1.25 : 2.0);
  const auto h = exp_nonpos_specials<WExec>();
  EXPECT_EQ(h(0), 0.0f);
  EXPECT_EQ(h(1), 0.0f);
  EXPECT_EQ(h(2), 1.0f);
  EXPECT_TRUE(std::isnan(h(3)));
  EXPECT_NEAR(h(4), std::exp(-100.0), 2 * 0x1p-149);
}

/// Worst errors, in float ulps of the fp64 values, of the fast form of the loss and its gradient on Exec for every
/// finite bf16 x and y in {-1, 1, 3, -7}.
template <class Exec>
void fast_loss_worst_ulps(double& worst_loss, double& worst_grad) {
  constexpr int kTargets = 4;
  Kokkos::parallel_reduce(
      "fast_loss_accuracy", Kokkos::RangePolicy<Exec>(0, 65536 * kTargets),
      KOKKOS_LAMBDA(const int i, double& wl, double& wg) {
        const float x = Kokkos::bit_cast<float>(static_cast<std::uint32_t>(i & 0xffff) << 16);
        const int t = i >> 16;
        const float y = t == 0 ? -1.0f : t == 1 ? 1.0f : t == 2 ? 3.0f : -7.0f;
        if (!Kokkos::isfinite(x)) return;
        float g = 0;
        const float l = Impl::Hardware<Exec>::loss_fast(x, y);
        const float l2 = Impl::Hardware<Exec>::loss_and_dloss_dx_fast(x, y, g);
        const double z = -static_cast<double>(y) * x;
        const double ref_l = (z > 0 ? z : 0.0) + Kokkos::log1p(Kokkos::exp(-Kokkos::abs(z)));
        const double ref_g = -static_cast<double>(y) / (1.0 + Kokkos::exp(-z));
        wl = Kokkos::max(wl, Kokkos::max(float_ulps(l, ref_l), float_ulps(l2, ref_l)));
        wg = Kokkos::max(wg, float_ulps(g, ref_g));
      },
      Kokkos::Max<double>(worst_loss), Kokkos::Max<double>(worst_grad));
}

/// The fast form on Exec at NaN, inf, the largest margins and a subnormal loss.
template <class Exec>
Kokkos::View<float[8], Kokkos::HostSpace> fast_loss_specials() {
  Kokkos::View<float[8], typename Exec::memory_space> out("out");
  Kokkos::parallel_for(
      "fast_loss_specials", Kokkos::RangePolicy<Exec>(0, 1), KOKKOS_LAMBDA(int) {
        const float inf = Kokkos::Experimental::infinity<float>::value;
        const float nan = Kokkos::Experimental::quiet_NaN<float>::value;
        using Hw = Impl::Hardware<Exec>;
        float g = 0;
        out(0) = Hw::loss_fast(nan, 1.0f);
        out(1) = Hw::loss_fast(inf, -1.0f);  // z = +inf
        out(2) = Hw::loss_fast(inf, 1.0f);   // z = -inf
        out(3) = Hw::loss_and_dloss_dx_fast(-3.0e38f, 1.0f, g);
        out(4) = g;
        out(5) = Hw::loss_and_dloss_dx_fast(nan, 1.0f, g);
        out(6) = g;
        out(7) = Hw::loss_fast(-100.0f, -1.0f);  // e^-100, a subnormal float
      });
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
}

/// The fast form of the loss and its gradient (Hardware<Exec>::loss_fast, loss_and_dloss_dx_fast: the exp2 of CUDA
/// devices, exp_nonpos_poly's fast polynomial on hosts, and log1p_unit_fast) for every finite bf16 x and y in {-1, 1,
/// 3, -7}, in float ulps of the fp64 values; NaN and inf as the accurate form gives them.
TEST(TEST_CATEGORY, fast_loss_accuracy_for_every_bf16_input) {
  double worst_loss = 0, worst_grad = 0;
  fast_loss_worst_ulps<WExec>(worst_loss, worst_grad);
  EXPECT_LE(worst_loss, 8.0);
  EXPECT_LE(worst_grad, 8.0);
  const auto h = fast_loss_specials<WExec>();
  EXPECT_TRUE(std::isnan(h(0)));
  EXPECT_EQ(h(1), std::numeric_limits<float>::infinity());
  EXPECT_EQ(h(2), 0.0f);
  EXPECT_EQ(h(3), 3.0e38f);
  EXPECT_EQ(h(4), -1.0f);
  EXPECT_TRUE(std::isnan(h(5)) && std::isnan(h(6)));
  EXPECT_NEAR(h(7), std::exp(-100.0), 0.05 * std::exp(-100.0));
}

/// The whole-pack conversions of the host kernels (the host room's widen_values, widen_targets, round_scaled: vector
/// code) and the devices' widenings from 32-bit words (Impl::widen_words) give the bits of the element conversions:
/// every bf16 and fp16 value and int8 and bool target widened, and floats around every rounding boundary (each pattern
/// of the upper 16 bits with low bits at, below and above the ties of bf16 and fp16, and random ones; NaN, infinities,
/// subnormals, in packs that mix them) rounded to bf16 and fp16.
TEST(TEST_CATEGORY, pack_conversions_equal_the_element_conversions) {
  constexpr int W = 16;
  for (std::uint32_t base = 0; base < 65536; base += W) {
    bf16 b[W];
    fp16 h[W];
    std::int8_t i8[W];
    bool t[W];
    for (int k = 0; k < W; ++k) {
      b[k] = bf16::from_bits(static_cast<std::uint16_t>(base + k));
      h[k] = fp16::from_bits(static_cast<std::uint16_t>(base + k));
      i8[k] = static_cast<std::int8_t>(static_cast<std::uint8_t>(base / W + k));
      t[k] = ((base / W + k) % 3) != 0;
    }
    float fb[W], fh[W], fi[W], ft[W], fbw[W], fiw[W];
    HostHardware::widen_values(b, fb);
    HostHardware::widen_values(h, fh);
    HostHardware::widen_values(i8, fi);
    HostHardware::widen_targets(t, ft);
    Impl::widen_words(b, fbw);  // the devices' form, from 32-bit words
    Impl::widen_words(i8, fiw);
    for (int k = 0; k < W; ++k) {
      ASSERT_EQ(Kokkos::bit_cast<std::uint32_t>(fb[k]), Kokkos::bit_cast<std::uint32_t>(static_cast<float>(b[k])));
      ASSERT_EQ(Kokkos::bit_cast<std::uint32_t>(fbw[k]), Kokkos::bit_cast<std::uint32_t>(static_cast<float>(b[k])));
      ASSERT_EQ(Kokkos::bit_cast<std::uint32_t>(fh[k]), Kokkos::bit_cast<std::uint32_t>(static_cast<float>(h[k])));
      ASSERT_EQ(fi[k], static_cast<float>(i8[k]));
      ASSERT_EQ(fiw[k], static_cast<float>(i8[k]));
      ASSERT_EQ(ft[k], t[k] ? 1.0f : -1.0f);
    }
  }
  std::mt19937 rng(fresh_seed());
  const std::uint32_t lows[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x2000, 0x3000, 0x7fff,
                                0x8000, 0x8001, 0xbfff, 0xc000, 0xffff, 0,      0,      0};
  for (std::uint32_t hi = 0; hi < 65536; ++hi) {
    float f[W];
    for (int k = 0; k < W; ++k) {
      const std::uint32_t low = k < 13 ? lows[k] : (rng() & 0xffffu);
      // odd lanes take another upper pattern (an odd multiplier is a permutation of them), so that packs mix
      // subnormals, NaNs and normal values
      const std::uint32_t upper = k % 2 ? (hi * 40503u + static_cast<std::uint32_t>(k)) & 0xffffu : hi;
      f[k] = Kokkos::bit_cast<float>((upper << 16) | low);
    }
    bf16 b[W];
    fp16 h[W];
    HostHardware::round_scaled(1.0f, f, b);
    HostHardware::round_scaled(1.0f, f, h);
    for (int k = 0; k < W; ++k) {
      ASSERT_EQ(b[k].bits, bf16(f[k]).bits) << "bf16 of float bits " << Kokkos::bit_cast<std::uint32_t>(f[k]);
      ASSERT_EQ(h[k].bits, fp16(f[k]).bits) << "fp16 of float bits " << Kokkos::bit_cast<std::uint32_t>(f[k]);
    }
  }
}

/// The host's pack kernels (impl/host/SoftMargin_HostPacks.hpp) in form Fast against the element form, for every bf16 x
/// (inf and NaN among them) with y in {-1, 1, 3, -7, 0}: losses within one rounding (compilers may fuse the element
/// form's last multiply and add); gradients within one rounding too, or for the fast form 2^-13 relative (the
/// reciprocal estimate's 2^-14 and the roundings) where the loss shares exp(-|z|) and 2^-12 for the gradient alone (its
/// coarser exp, 7.5e-5), and 2^-140 absolute for a subnormal gradient; NaN where the element form gives NaN.
template <bool Fast, int W>
void check_host_packs() {
  const float targets[] = {-1.0f, 1.0f, 3.0f, -7.0f, 0.0f};
  const double grad_tol = Fast ? 0x1p-13 : 0x1p-23;
  for (const float t : targets) {
    for (std::uint32_t base = 0; base < 65536; base += W) {
      float x[W], y[W], l[W], l2[W], g[W], g2[W];
      for (int k = 0; k < W; ++k) {
        x[k] = Kokkos::bit_cast<float>((base + k) << 16);
        y[k] = t;
      }
      HostHardware::template loss_pack<Fast>(x, y, l);
      HostHardware::template loss_and_grad_pack<Fast>(x, y, l2, g);
      HostHardware::template grad_pack<Fast>(x, y, g2);
      for (int k = 0; k < W; ++k) {
        float ge = 0;
        const float le = Fast ? Impl::loss_and_dloss_dx_fast(x[k], y[k], ge) : Impl::loss_and_dloss_dx(x[k], y[k], ge);
        const auto bits = [](float f) { return Kokkos::bit_cast<std::uint32_t>(f); };
        ASSERT_EQ(bits(l[k]), bits(l2[k])) << "x " << x[k] << ", y " << t;
        if (!Fast) ASSERT_EQ(bits(g[k]), bits(g2[k])) << "x " << x[k] << ", y " << t;
        if (std::isnan(le))
          ASSERT_TRUE(std::isnan(l[k])) << "x " << x[k] << ", y " << t;
        else if (l[k] != le)
          ASSERT_LE(std::abs(static_cast<double>(l[k]) - le), 0x1p-23 * std::abs(le) + 0x1p-149)
              << "x " << x[k] << ", y " << t << ": " << l[k] << " against " << le;
        if (std::isnan(ge)) {
          ASSERT_TRUE(std::isnan(g[k])) << "x " << x[k] << ", y " << t;
          ASSERT_TRUE(std::isnan(g2[k])) << "x " << x[k] << ", y " << t;
        } else {
          if (g[k] != ge)
            ASSERT_LE(std::abs(static_cast<double>(g[k]) - ge), grad_tol * std::abs(ge) + 0x1p-140)
                << "x " << x[k] << ", y " << t << ": " << g[k] << " against " << ge;
          if (g2[k] != ge)
            ASSERT_LE(std::abs(static_cast<double>(g2[k]) - ge), 2 * grad_tol * std::abs(ge) + 0x1p-140)
                << "gradient alone, x " << x[k] << ", y " << t << ": " << g2[k] << " against " << ge;
        }
      }
    }
  }
}

/// Both forms where the target has the pack kernels.
template <int W>
void check_host_packs_if_any() {
  if constexpr (HostHardware::vector_packs<W>) {
    check_host_packs<true, W>();
    check_host_packs<false, W>();
  } else {
    GTEST_SKIP() << "no pack kernels on this target";
  }
}

TEST(TEST_CATEGORY, host_packs_equal_the_element_form) { check_host_packs_if_any<16>(); }

#if !defined(SOFTMARGIN_TEST_HOST_PATH)
#define SOFTMARGIN_TEST_HOST_PATH ""
#endif
#if !defined(SOFTMARGIN_TEST_HOST_ISA)
#define SOFTMARGIN_TEST_HOST_ISA ""
#endif

/// The host pack path and vector instructions this build compiles are the ones the build expects
/// (SOFTMARGIN_TEST_HOST_PATH and SOFTMARGIN_TEST_HOST_ISA of unit_tests/CMakeLists.txt; empty: not checked), so that a
/// build that falls back to narrower or scalar code fails.
TEST(TEST_CATEGORY, host_path_is_the_expected_one) {
  const std::string path = Impl::kHostPackPath, isa = Impl::kHostVectorIsa;
  const std::string expected_path = SOFTMARGIN_TEST_HOST_PATH, expected_isa = SOFTMARGIN_TEST_HOST_ISA;
  if (expected_path.empty() && expected_isa.empty())
    GTEST_SKIP() << "host pack path " << path << ", vector instructions " << isa << " (not checked)";
  if (!expected_path.empty()) EXPECT_EQ(path, expected_path) << "the host pack path this build compiles";
  if (!expected_isa.empty()) EXPECT_EQ(isa, expected_isa) << "the vector instructions this build targets";
}

/// The instantiations the library holds are the pairs listed in src/CMakeLists.txt (declared extern by the
/// generated SoftMargin_ETI.hpp); other pairs, bool targets for one, compile in the caller (as every test of them
/// does).
TEST(TEST_CATEGORY, instantiations_follow_the_list) {
#if defined(SOFTMARGIN_ENABLE_ETI)
  static_assert(Impl::eti_spec_avail<WExec, float, float>::value && Impl::eti_spec_avail<WExec, double, double>::value);
  static_assert(Impl::eti_spec_avail<WExec, bf16, std::int8_t>::value &&
                Impl::eti_spec_avail<WExec, fp16, fp16>::value);
#endif
  static_assert(!Impl::eti_spec_avail<WExec, float, bool>::value &&
                !Impl::eti_spec_avail<WExec, float, std::int8_t>::value);
}

}  // namespace softmargin::test

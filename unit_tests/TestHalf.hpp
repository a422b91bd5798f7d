// 16-bit inputs and compact targets, compiled once per backend (TEST_EXECSPACE, TEST_CATEGORY from the category
// header): the 2-byte conversions, and every pass with every algorithm and layout against the fp64 reference
// computed from the (exact) stored inputs.
#include "TestHalfUtils.hpp"

namespace softmargin::test::half {

using Exec = TEST_EXECSPACE;
using Mem = typename Exec::memory_space;
constexpr Algorithm kAlgorithms[] = {Algorithm::Auto, Algorithm::RangeReduce, Algorithm::TeamScratch,
                                     Algorithm::Native};

// ---------------------------------------------------------------------------------------------------------------
// Conversions, as the backend's kernels make them (Hardware<Exec>: CUDA devices use the hardware's).

/// Mismatches of T's conversions over every 16-bit pattern h: to float against the decoded value, and back from
/// float at h, at the midpoints to its neighbours and one float ulp either side of them (round to nearest even,
/// overflow to infinity, NaN kept).
template <class T>
std::int64_t conversion_mismatches() {
  std::int64_t bad = 0;
  Kokkos::parallel_reduce(
      "conversions", Kokkos::RangePolicy<Exec>(0, 65536),
      KOKKOS_LAMBDA(const int i, std::int64_t& count) {
        using Hw = Impl::Hardware<Exec>;
        const auto widen = [](const T v) { return Hw::template to_compute<float>(v); };
        const auto round = [](const float v) { return Hw::template round_to<T>(v); };
        const std::uint16_t h = static_cast<std::uint16_t>(i);
        const float f = widen(T::from_bits(h));
        const bool is_bf16 = std::is_same_v<T, bf16>;
        const int mant = is_bf16 ? 7 : 10, bias = is_bf16 ? 127 : 15, emax = is_bf16 ? 255 : 31;
        const int e = (h >> mant) & emax;
        const std::uint32_t m = h & ((1u << mant) - 1);
        const float sign = (h & 0x8000u) ? -1.0f : 1.0f;
        if (e == emax) {  // inf or NaN
          count += (m == 0) ? !(Kokkos::isinf(f) && f * sign > 0) : !Kokkos::isnan(f);
          count += (m == 0) ? (round(f).bits != h) : !Kokkos::isnan(widen(round(f)));
          return;
        }
        const int k = (e ? e : 1) - bias - mant, k1 = k / 2, k2 = k - k1;  // 2^k in two normal factors
        const float ref = sign * static_cast<float>(e ? (m | (1u << mant)) : m) *
                          Kokkos::bit_cast<float>(static_cast<std::uint32_t>(k1 + 127) << 23) *
                          Kokkos::bit_cast<float>(static_cast<std::uint32_t>(k2 + 127) << 23);
        count += Kokkos::bit_cast<std::uint32_t>(f) != Kokkos::bit_cast<std::uint32_t>(ref);
        count += round(f).bits != h;
        // Above h (away from zero): the next magnitude (infinity after the largest finite value).
        const std::uint16_t next = static_cast<std::uint16_t>(h + 1);
        const float fn = widen(T::from_bits(next));
        const float step = Kokkos::isinf(fn) ? f - widen(T::from_bits(h - 1)) : fn - f;
        const float mid = f + step / 2;  // exact: 16-bit values have few mantissa bits
        const float below = Kokkos::nextafter(mid, 0.0f), above = Kokkos::nextafter(mid, 2 * mid);
        const std::uint16_t even = (h & 1u) ? next : h;
        count += round(below).bits != h;
        count += round(above).bits != next;
        count += round(mid).bits != even;
      },
      bad);
  return bad;
}

TEST(TEST_CATEGORY, half_bf16_conversions_exact_and_round_to_nearest_even) {
  EXPECT_EQ(conversion_mismatches<bf16>(), 0);
}
TEST(TEST_CATEGORY, half_fp16_conversions_exact_and_round_to_nearest_even) {
  EXPECT_EQ(conversion_mismatches<fp16>(), 0);
}

// ---------------------------------------------------------------------------------------------------------------
// Every pass.

template <class C>
class Half : public ::testing::Test {};

using Cases =
    ::testing::Types<Case<bf16, bf16, bf16, Kokkos::LayoutRight>, Case<bf16, std::int8_t, float, Kokkos::LayoutLeft>,
                     Case<bf16, bool, bf16, Kokkos::LayoutStride>, Case<bf16, std::int8_t, bf16, Kokkos::LayoutStride>,
                     Case<fp16, fp16, float, Kokkos::LayoutStride>, Case<fp16, std::int8_t, fp16, Kokkos::LayoutRight>,
                     Case<fp16, bool, fp16, Kokkos::LayoutLeft>, Case<float, std::int8_t, float, Kokkos::LayoutRight>,
                     Case<float, bool, bf16, Kokkos::LayoutStride>,
                     Case<double, std::int8_t, double, Kokkos::LayoutLeft>,
                     Case<double, bool, float, Kokkos::LayoutRight>>;
TYPED_TEST_SUITE(Half, Cases);

/// Every reduction into each result type the caller may pick (float, double, x's type), by every algorithm, on
/// inputs of the given shape.
template <class C>
void check_reduced(std::size_t rows, std::size_t cols, bool specials) {
  using X = typename C::x_type;
  using Y = typename C::y_type;
  using L = typename C::layout;
  const std::uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed) + ", shape " + std::to_string(rows) + "x" + std::to_string(cols));
  std::vector<X> xs;
  std::vector<Y> ys;
  fill_inputs(seed, rows * cols, specials, xs, ys);
  Data2<X, L, Mem> x(rows, cols);
  Data2<Y, L, Mem> y(rows, cols);
  x.upload(xs);
  y.upload(ys);
  const Exec space;
  Kokkos::View<float, Mem> rf("rf");
  Kokkos::View<double, Mem> rd("rd");
  Kokkos::View<X, Mem> rx("rx");
  for (Algorithm a : kAlgorithms) {
    for (Reduction r : {Reduction::Sum, Reduction::Mean}) {
      SCOPED_TRACE(std::string(to_string(a)) + " " + to_string(r));
      const double ref = ref_reduce(xs, ys, r);
      loss(space, x.view, y.view, rf, r, a);
      loss(space, x.view, y.view, rd, r, a);
      loss(space, x.view, y.view, rx, r, a);
      float f;
      double d;
      X h;
      Kokkos::deep_copy(f, rf);
      Kokkos::deep_copy(d, rd);
      Kokkos::deep_copy(h, rx);
      expect_reduced<X>(f, ref, xs.size());
      expect_reduced<X>(d, ref, xs.size());
      expect_reduced<X>(h, ref, xs.size());
      const auto blocking = loss(space, x.view, y.view, r, a);
      expect_reduced<X>(blocking, ref, xs.size());
    }
  }
}

TYPED_TEST(Half, reduced_results_odd_sizes) {
  for (auto [rows, cols] : {std::pair<std::size_t, std::size_t>{1, 1}, {3, 5}, {7, 33}, {5, 1001}, {3, 40013}})
    check_reduced<TypeParam>(rows, cols, false);
}

TYPED_TEST(Half, reduced_results_with_nan_inf_and_largest_margins) { check_reduced<TypeParam>(9, 257, true); }

/// loss none into O, backward (sum, mean, per-element upstream) and the fused pass into G (O where O may hold a
/// gradient, else x's type), by every algorithm, element by element against the reference.
TYPED_TEST(Half, elementwise_loss_and_gradients) {
  using X = typename TypeParam::x_type;
  using Y = typename TypeParam::y_type;
  using O = typename TypeParam::out_type;
  using G = std::conditional_t<Impl::is_grad_type_v<X, O>, O, X>;
  using L = typename TypeParam::layout;
  for (auto [rows, cols] : {std::pair<std::size_t, std::size_t>{1, 3}, {3, 37}, {5, 2003}}) {
    const std::uint64_t seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed) + ", shape " + std::to_string(rows) + "x" + std::to_string(cols));
    const std::size_t n = rows * cols;
    std::vector<X> xs;
    std::vector<Y> ys;
    fill_inputs(seed, n, true, xs, ys);
    std::vector<G> us(n);
    std::mt19937_64 gen(seed + 1);
    for (auto& u : us) u = from_double<G>(std::uniform_real_distribution<double>(-2.0, 2.0)(gen));
    Data2<X, L, Mem> x(rows, cols);
    Data2<Y, L, Mem> y(rows, cols);
    Data2<O, L, Mem> out(rows, cols);
    Data2<G, L, Mem> grad(rows, cols), up(rows, cols);
    x.upload(xs);
    y.upload(ys);
    up.upload(us);
    Kokkos::View<float, Mem> lf("loss");
    const Exec space;
    const auto xd = [&](std::size_t i) { return to_double<X>(xs[i]); };
    const auto yd = [&](std::size_t i) { return to_double<Y>(ys[i]); };
    const auto check = [&](const auto& data, const char* what, const auto& expected) {
      using V = typename std::decay_t<decltype(data)>::view_type::non_const_value_type;
      const auto got = data.download();
      for (std::size_t i = 0; i < n; ++i)
        ASSERT_TRUE((element_ok<X, V>(got[i], expected(i), xd(i), yd(i)))) << what << ", element " << i;
    };
    for (Algorithm a : kAlgorithms) {
      SCOPED_TRACE(to_string(a));
      loss(space, x.view, y.view, out.view, Reduction::None, a);
      check(out, "loss none", [&](std::size_t i) { return ref_loss<X>(xd(i), yd(i)); });
      backward(space, x.view, y.view, 0.75, grad.view, Reduction::Sum, a);
      check(grad, "backward sum", [&](std::size_t i) { return 0.75 * ref_grad<X>(xd(i), yd(i)); });
      backward(space, x.view, y.view, 1.0, grad.view, Reduction::Mean, a);
      check(grad, "backward mean", [&](std::size_t i) { return ref_grad<X>(xd(i), yd(i)) / static_cast<double>(n); });
      backward(space, x.view, y.view, up.view, grad.view, Reduction::None, a);
      check(grad, "backward none", [&](std::size_t i) { return to_double(us[i]) * ref_grad<X>(xd(i), yd(i)); });
      loss_and_grad(space, x.view, y.view, lf, grad.view, Reduction::Sum, 2.0f, a);
      check(grad, "loss_and_grad", [&](std::size_t i) { return 2.0 * ref_grad<X>(xd(i), yd(i)); });
      float l;
      Kokkos::deep_copy(l, lf);
      expect_reduced<X>(l, ref_reduce(xs, ys, Reduction::Sum), xs.size());
    }
  }
}

/// Contiguous inputs at element offsets 0, 16 (aligned to a vector of the host kernels but not to their pack of 64
/// elements), 17 (unaligned: the element loops) and 48, with odd and even lengths: the fused pass and the sum.
TYPED_TEST(Half, inputs_at_element_offsets) {
  using X = typename TypeParam::x_type;
  using Y = typename TypeParam::y_type;
  const std::size_t n = 1091;
  const std::uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::vector<X> xs;
  std::vector<Y> ys;
  fill_inputs(seed, n, false, xs, ys);
  Kokkos::View<X*, Mem> x("x", n), g("g", n);
  Kokkos::View<Y*, Mem> y("y", n);
  Kokkos::View<float, Mem> lf("lf");
  Kokkos::View<double, Mem> ld("ld");
  auto hx = Kokkos::create_mirror_view(x);
  auto hy = Kokkos::create_mirror_view(y);
  for (std::size_t i = 0; i < n; ++i) hx(i) = xs[i], hy(i) = ys[i];
  Kokkos::deep_copy(x, hx);
  Kokkos::deep_copy(y, hy);
  for (const std::size_t off : {0, 16, 17, 48}) {
    const auto range = Kokkos::make_pair(off, n - off % 2);
    const auto xo = Kokkos::subview(x, range), go = Kokkos::subview(g, range);
    const auto yo = Kokkos::subview(y, range);
    const std::vector<X> xv(xs.begin() + off, xs.begin() + range.second);
    const std::vector<Y> yv(ys.begin() + off, ys.begin() + range.second);
    const double ref = ref_reduce(xv, yv, Reduction::Sum);
    for (Algorithm a : kAlgorithms) {
      SCOPED_TRACE("offset " + std::to_string(off) + " " + to_string(a));
      loss_and_grad(Exec(), xo, yo, lf, go, Reduction::Sum, 1.0f, a);
      loss(Exec(), xo, yo, ld, Reduction::Sum, a);
      float l;
      double d;
      Kokkos::deep_copy(l, lf);
      Kokkos::deep_copy(d, ld);
      expect_reduced<X>(l, ref, xv.size());
      expect_reduced<X>(d, ref, xv.size());
      const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g);
      for (std::size_t i = 0; i < xv.size(); ++i) {
        const double xd = to_double(xv[i]), yd = to_double<Y>(yv[i]);
        ASSERT_TRUE((element_ok<X, X>(got(off + i), ref_grad<X>(xd, yd), xd, yd))) << "element " << i;
      }
    }
  }
}

/// An empty input into 16-bit results: the sum 0, the mean NaN (as in PyTorch).
TEST(TEST_CATEGORY, half_empty_input_into_16_bit_results) {
  Kokkos::View<bf16*, Mem> x("x", 0);
  Kokkos::View<std::int8_t*, Mem> y("y", 0);
  Kokkos::View<bf16, Mem> rb("rb");
  Kokkos::View<fp16, Mem> rh("rh");
  for (Algorithm a : kAlgorithms) {
    Kokkos::deep_copy(rb, bf16(7.0f));
    loss(Exec(), x, y, rb, Reduction::Sum, a);
    loss(Exec(), x, y, rh, Reduction::Mean, a);
    bf16 b;
    fp16 h;
    Kokkos::deep_copy(b, rb);
    Kokkos::deep_copy(h, rh);
    EXPECT_EQ(b.bits, 0) << to_string(a);
    EXPECT_TRUE(std::isnan(static_cast<float>(h))) << to_string(a);
  }
}

/// bool targets: true is +1 and false is -1, the same as targets of x's type.
TEST(TEST_CATEGORY, half_bool_targets_are_plus_and_minus_one) {
  const std::size_t n = 1027;
  Kokkos::View<bf16*, Mem> x("x", n), grad_b("gb", n), grad_x("gx", n);
  Kokkos::View<bool*, Mem> yb("yb", n);
  Kokkos::View<bf16*, Mem> yx("yx", n);
  auto hx = Kokkos::create_mirror_view(x);
  auto hb = Kokkos::create_mirror_view(yb);
  auto hy = Kokkos::create_mirror_view(yx);
  for (std::size_t i = 0; i < n; ++i) {
    hx(i) = bf16(0.01f * static_cast<float>(i) - 5.0f);
    hb(i) = (i * 7919) % 3 == 0;
    hy(i) = bf16(hb(i) ? 1.0f : -1.0f);
  }
  Kokkos::deep_copy(x, hx);
  Kokkos::deep_copy(yb, hb);
  Kokkos::deep_copy(yx, hy);
  for (Algorithm a : kAlgorithms) {
    const float lb = loss(x, yb, Reduction::Sum, a), lx = loss(x, yx, Reduction::Sum, a);
    EXPECT_EQ(lb, lx) << to_string(a);
    backward(x, yb, 1.0f, grad_b, Reduction::Sum, a);
    backward(x, yx, 1.0f, grad_x, Reduction::Sum, a);
    auto gb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), grad_b);
    auto gx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), grad_x);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(gb(i).bits, gx(i).bits) << to_string(a) << " element " << i;
  }
}

/// Kokkos' half types are accepted and read as the storage type of their size (2 bytes on CUDA builds, float on
/// host-only builds).
TEST(TEST_CATEGORY, half_kokkos_half_types_accepted) {
  using KH = Kokkos::Experimental::half_t;
  using KB = Kokkos::Experimental::bhalf_t;
  const std::size_t n = 301;
  Kokkos::View<KH*, Mem> xh("xh", n), gh("gh", n);
  Kokkos::View<KB*, Mem> xb("xb", n), gb("gb", n);
  Kokkos::View<std::int8_t*, Mem> y("y", n);
  auto hxh = Kokkos::create_mirror_view(xh);
  auto hxb = Kokkos::create_mirror_view(xb);
  auto hy = Kokkos::create_mirror_view(y);
  double ref = 0;
  for (std::size_t i = 0; i < n; ++i) {
    hxh(i) = static_cast<KH>(0.25f * static_cast<float>(i % 17) - 2.0f);  // exact in every half type
    hxb(i) = static_cast<KB>(0.25f * static_cast<float>(i % 17) - 2.0f);
    hy(i) = (i % 2) ? 1 : -1;
    ref += ref_loss<float>(0.25 * static_cast<double>(i % 17) - 2.0, hy(i));
  }
  Kokkos::deep_copy(xh, hxh);
  Kokkos::deep_copy(xb, hxb);
  Kokkos::deep_copy(y, hy);
  for (Algorithm a : kAlgorithms) {
    EXPECT_NEAR(static_cast<double>(loss(xh, y, Reduction::Sum, a)), ref, 1e-6 * ref) << to_string(a);
    EXPECT_NEAR(static_cast<double>(loss(xb, y, Reduction::Sum, a)), ref, 1e-6 * ref) << to_string(a);
    backward(xh, y, 1.0f, gh, Reduction::Sum, a);
    backward(xb, y, 1.0f, gb, Reduction::Sum, a);
    auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), gh);
    auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), gb);
    for (std::size_t i = 0; i < n; ++i) {
      const double g = ref_grad<float>(0.25 * static_cast<double>(i % 17) - 2.0, hy(i));
      ASSERT_NEAR(static_cast<double>(static_cast<float>(h1(i))), g, 1e-3 * std::abs(g) + 1e-7) << i;
      ASSERT_NEAR(static_cast<double>(static_cast<float>(h2(i))), g, 8e-3 * std::abs(g) + 1e-7) << i;
    }
  }
}

}  // namespace softmargin::test::half

// The rest of the logistic-loss family on the same passes, compiled once per backend: BCEWithLogits (soft labels,
// int8 and bool targets, weights, a broadcast pos_weight), SoftMarginLoss with weights, the pairwise margin loss with
// its two gradients, and a caller's count (mean_over, host and device), against fp64 references on fresh random
// inputs, every algorithm, contiguous and strided layouts, odd sizes and special values.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "TestUtils.hpp"

namespace softmargin::test {

using FExec = TEST_EXECSPACE;
using FMem = typename FExec::memory_space;

template <class T, class Layout = Kokkos::LayoutRight>
using View2 = Kokkos::View<T**, Layout, FMem>;

/// fp64 BCEWithLogits of one element (the stable form, exact in fp64 for float inputs) and its derivative.
inline double ref_bce(double x, double t, double p, double& d) {
  if (std::isnan(x) || std::isnan(t)) return d = std::numeric_limits<double>::quiet_NaN();
  const double e = std::exp(-std::abs(x));
  d = (x >= 0 ? (1 - t) - p * t * e : (1 - t) * e - p * t) / (1 + e);
  return (x > 0 ? (1 - t) * x : -p * t * x) + (1 + (p - 1) * t) * std::log1p(e);
}

/// Host copy of a 2-D View in row-major logical order.
template <class V>
std::vector<double> host_values(const V& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  std::vector<double> out;
  for (std::size_t i = 0; i < v.extent(0); ++i)
    for (std::size_t j = 0; j < v.extent(1); ++j) {
      if constexpr (std::is_arithmetic_v<typename V::non_const_value_type>)
        out.push_back(static_cast<double>(h(i, j)));
      else
        out.push_back(static_cast<double>(static_cast<float>(h(i, j))));
    }
  return out;
}
template <class V>
void set_values(const V& v, const std::vector<double>& vals) {
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < v.extent(0); ++i)
    for (std::size_t j = 0; j < v.extent(1); ++j)
      if constexpr (std::is_same_v<typename V::non_const_value_type, double>)
        h(i, j) = vals[i * v.extent(1) + j];
      else
        h(i, j) = static_cast<typename V::non_const_value_type>(static_cast<float>(vals[i * v.extent(1) + j]));
  Kokkos::deep_copy(v, h);
}
/// A (rows, cols) View over a vector of cols values: stride 0 along the rows (PyTorch's pos_weight of shape (C,)).
template <class T>
Kokkos::View<T**, Kokkos::LayoutStride, FMem> broadcast_rows(const Kokkos::View<T*, FMem>& v, std::size_t rows) {
  Kokkos::LayoutStride layout(rows, 0, v.extent(0), 1);
  return Kokkos::View<T**, Kokkos::LayoutStride, FMem>(v.data(), layout);
}

/// Random BCE inputs: x ~ U(-8, 8) with a few special margins, targets as the kind asks.
enum class TargetKind { Soft, Hard, Int8, Bool };
inline void bce_inputs(std::uint64_t seed, std::size_t n, TargetKind kind, std::vector<double>& x,
                       std::vector<double>& t) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> ux(-8.0, 8.0), ut(0.0, 1.0);
  x.resize(n);
  t.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(ux(gen));
    t[i] = kind == TargetKind::Soft ? static_cast<double>(static_cast<float>(ut(gen))) : (ut(gen) < 0.5 ? 0.0 : 1.0);
  }
  const double special[] = {100.0, -100.0, 30.0, -30.0, 0.0, 1e-30, -1e-30, 88.0, -88.0};
  for (std::size_t k = 0; k < std::size(special) && 3 * k < n; ++k) x[3 * k] = special[k];
}

/// Runs every pass of bce_with_logits(x, t, w, p) for T x and Y targets on one shape and layout and compares each
/// output with the fp64 reference.
template <class T, class Y, class Layout, bool Weighted, bool PosWeight>
void check_bce(std::size_t rows, std::size_t cols, TargetKind kind, std::uint64_t seed) {
  const std::size_t n = rows * cols;
  std::vector<double> xs, ts, ws(n, 1.0), ps(cols, 1.0);
  bce_inputs(seed, n, kind, xs, ts);
  std::mt19937_64 gen(seed + 1);
  std::uniform_real_distribution<double> uw(0.0, 2.0), up(0.5, 4.0);
  if (Weighted)
    for (auto& w : ws) w = static_cast<float>(uw(gen));
  if (PosWeight)
    for (auto& p : ps) p = static_cast<float>(up(gen));
  View2<T, Layout> x("x", rows, cols), grad("grad", rows, cols), out("out", rows, cols), ups("ups", rows, cols);
  View2<Y, Layout> t("t", rows, cols);
  View2<T, Layout> w("w", rows, cols);
  Kokkos::View<T*, FMem> pv("p", cols);
  set_values(x, xs);
  set_values(t, ts);
  set_values(w, ws);
  {
    auto h = Kokkos::create_mirror_view(pv);
    for (std::size_t j = 0; j < cols; ++j) h(j) = static_cast<T>(ps[j]);
    Kokkos::deep_copy(pv, h);
  }
  std::vector<double> gs(n);
  for (std::size_t i = 0; i < n; ++i) gs[i] = static_cast<float>(uw(gen) - 1.0);
  set_values(ups, gs);
  const auto p = broadcast_rows(pv, rows);
  const auto in = [&] {
    if constexpr (Weighted && PosWeight)
      return bce_with_logits(x, t, w, p);
    else if constexpr (PosWeight)
      return bce_with_logits(x, t, no_weight, p);
    else if constexpr (Weighted)
      return bce_with_logits(x, t, w);
    else
      return bce_with_logits(x, t);
  }();

  std::vector<double> ref_l(n), ref_d(n);
  double ref_sum = 0, scale = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double pi = ps[i % cols];
    ref_l[i] = ws[i] * ref_bce(xs[i], ts[i], pi, ref_d[i]);
    ref_d[i] *= ws[i];
    ref_sum += ref_l[i];
    scale += std::abs(ref_l[i]) + ws[i] * (1 + pi) * std::abs(xs[i]) * 1e-2;
  }
  const double eps = std::numeric_limits<T>::epsilon();
  const double elem_eps = 16 * eps;
  const FExec space;
  Kokkos::View<double, FMem> result("result");
  for (Algorithm a : kAlgorithms) {
    SCOPED_TRACE(std::string("seed ") + std::to_string(seed) + ", algorithm " + to_string(a) + ", shape " +
                 std::to_string(rows) + "x" + std::to_string(cols));
    // Reductions.
    loss(space, in, result, Reduction::Sum, a);
    double got;
    Kokkos::deep_copy(got, result);
    EXPECT_NEAR(got, ref_sum, 1e-6 * scale + 1e-30);
    loss(space, in, result, Reduction::Mean, a);
    Kokkos::deep_copy(got, result);
    EXPECT_NEAR(got, ref_sum / n, (1e-6 * scale + 1e-30) / n);
    // None.
    loss(space, in, out, Reduction::None, a);
    const auto lo = host_values(out);
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_NEAR(lo[i], ref_l[i], elem_eps * (std::abs(ref_l[i]) + ws[i] * (1 + ps[i % cols]) * 1e-3) + 1e-37)
          << "loss " << i << " x " << xs[i] << " t " << ts[i];
    // Backward, scalar upstream 0.5 with the mean, and per element.
    backward(space, in, 0.5, grad, Reduction::Mean, a);
    auto gd = host_values(grad);
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_NEAR(gd[i], 0.5 * ref_d[i] / n, elem_eps * ws[i] * (1 + ps[i % cols]) / n) << "grad " << i;
    backward(space, in, ups, grad, Reduction::None, a);
    gd = host_values(grad);
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_NEAR(gd[i], gs[i] * ref_d[i], elem_eps * ws[i] * (1 + ps[i % cols]) * std::abs(gs[i]) + 1e-37)
          << "grad " << i;
    // Fused.
    loss_and_grad(space, in, result, grad, Reduction::Sum, 2.0, a);
    Kokkos::deep_copy(got, result);
    EXPECT_NEAR(got, ref_sum, 1e-6 * scale + 1e-30);
    gd = host_values(grad);
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_NEAR(gd[i], 2 * ref_d[i], 2 * elem_eps * ws[i] * (1 + ps[i % cols])) << "fused grad " << i;
  }
}

TEST(TEST_CATEGORY, bce_with_logits_float_and_double_against_fp64) {
  const auto seed = fresh_seed();
  check_bce<float, float, Kokkos::LayoutRight, false, false>(37, 129, TargetKind::Soft, seed);
  check_bce<float, float, Kokkos::LayoutRight, true, true>(64, 256, TargetKind::Hard, seed + 1);
  check_bce<float, float, Kokkos::LayoutLeft, true, false>(33, 65, TargetKind::Soft, seed + 2);
  check_bce<double, double, Kokkos::LayoutRight, true, true>(21, 47, TargetKind::Soft, seed + 3);
  check_bce<float, std::int8_t, Kokkos::LayoutRight, false, true>(16, 1031, TargetKind::Int8, seed + 4);
  check_bce<float, bool, Kokkos::LayoutLeft, true, true>(9, 301, TargetKind::Bool, seed + 5);
}

TEST(TEST_CATEGORY, bce_with_logits_is_finite_where_the_naive_form_overflows) {
  // loss(x = 100, t = 0) = 100 and loss(-100, 1) = 100 exactly in float; the gradients are 1 and -1; NaN stays NaN.
  View2<float> x("x", 1, 5), t("t", 1, 5), out("out", 1, 5), g("g", 1, 5);
  set_values(x, {100.0, -100.0, 1e30, -1e30, std::numeric_limits<double>::quiet_NaN()});
  set_values(t, {0.0, 1.0, 0.0, 1.0, 1.0});
  loss(FExec(), bce_with_logits(x, t), out, Reduction::None);
  backward(FExec(), bce_with_logits(x, t), 1.0f, g, Reduction::Sum);
  const auto l = host_values(out), d = host_values(g);
  EXPECT_EQ(l[0], 100.0);
  EXPECT_EQ(l[1], 100.0);
  EXPECT_EQ(l[2], static_cast<double>(1e30f));
  EXPECT_EQ(l[3], static_cast<double>(1e30f));
  EXPECT_TRUE(std::isnan(l[4]));
  EXPECT_EQ(d[0], 1.0);
  EXPECT_EQ(d[1], -1.0);
  EXPECT_TRUE(std::isnan(d[4]));
}

TEST(TEST_CATEGORY, soft_margin_with_weights_against_fp64) {
  const auto seed = fresh_seed();
  const std::size_t rows = 19, cols = 203, n = rows * cols;
  std::vector<float> xs(n), ys(n);
  fill_random(seed, xs, ys);
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> uw(0.0, 3.0);
  std::vector<double> ws(n), xd(xs.begin(), xs.end()), yd(ys.begin(), ys.end());
  for (auto& w : ws) w = static_cast<float>(uw(gen));
  View2<float> x("x", rows, cols), y("y", rows, cols), w("w", rows, cols), g("g", rows, cols), out("o", rows, cols);
  set_values(x, xd);
  set_values(y, yd);
  set_values(w, ws);
  double ref = 0;
  for (std::size_t i = 0; i < n; ++i) ref += ws[i] * ref_loss(xs[i], ys[i]);
  for (Algorithm a : kAlgorithms) {
    SCOPED_TRACE(std::string("seed ") + std::to_string(seed) + ", algorithm " + to_string(a));
    const double mean = loss(FExec(), soft_margin(x, y, w), Reduction::Mean, a);
    EXPECT_NEAR(mean, ref / n, 1e-6 * ref / n);
    const float fused = loss_and_grad(FExec(), soft_margin(x, y, w), g, Reduction::Sum, 1.0f, a);
    EXPECT_NEAR(fused, ref, 1e-6 * ref);
    const auto d = host_values(g);
    for (std::size_t i = 0; i < n; ++i) ASSERT_NEAR(d[i], ws[i] * ref_grad(xs[i], ys[i]), 4e-7 * ws[i]) << i;
    loss(FExec(), soft_margin(x, y, w), out, Reduction::None, a);
    const auto l = host_values(out);
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_NEAR(l[i], ws[i] * ref_loss(xs[i], ys[i]), 4e-7 * ws[i] * (1 + ref_loss(xs[i], ys[i]))) << i;
  }
}

/// Pairwise: softplus(-(a - b - m)) with z formed in float as the library forms it; grad_b = -grad_a exactly.
template <bool MarginView>
void check_pairwise(std::size_t rows, std::size_t cols, std::uint64_t seed) {
  const std::size_t n = rows * cols;
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-6.0, 6.0), um(0.0, 1.0);
  std::vector<double> as(n), bs(n), ms(n, 0.25);
  for (auto& v : as) v = static_cast<float>(u(gen));
  for (auto& v : bs) v = static_cast<float>(u(gen));
  if (MarginView)
    for (auto& v : ms) v = static_cast<float>(um(gen));
  View2<float> a("a", rows, cols), b("b", rows, cols), m("m", rows, cols), ga("ga", rows, cols), gb("gb", rows, cols);
  set_values(a, as);
  set_values(b, bs);
  set_values(m, ms);
  const auto in = [&] {
    if constexpr (MarginView)
      return pairwise(a, b, m);
    else
      return pairwise(a, b, 0.25);
  }();
  std::vector<double> zs(n);
  double ref = 0;
  for (std::size_t i = 0; i < n; ++i) {
    zs[i] = static_cast<float>(static_cast<float>(as[i] - bs[i]) - static_cast<float>(ms[i]));
    ref += ref_loss(static_cast<float>(zs[i]), 1.0f);
  }
  for (Algorithm alg : kAlgorithms) {
    SCOPED_TRACE(std::string("seed ") + std::to_string(seed) + ", algorithm " + to_string(alg));
    const float l = loss_and_grad(FExec(), in, grads(ga, gb), Reduction::Mean, 1.0f, alg);
    EXPECT_NEAR(l, ref / n, 1e-6 * ref / n);
    auto da = host_values(ga), db = host_values(gb);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_NEAR(da[i], ref_grad(zs[i], 1.0) / n, 4e-7 / n) << i;
      ASSERT_EQ(db[i], -da[i]) << i;
    }
    Kokkos::deep_copy(ga, 0.0f);
    Kokkos::deep_copy(gb, 0.0f);
    backward(FExec(), in, 3.0f, grads(ga, gb), Reduction::Sum, alg);
    da = host_values(ga);
    db = host_values(gb);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_NEAR(da[i], 3 * ref_grad(zs[i], 1.0), 12e-7) << i;
      ASSERT_EQ(db[i], -da[i]) << i;
    }
    EXPECT_NEAR(loss(FExec(), in, Reduction::Sum, alg), ref, 1e-6 * ref);
  }
}

TEST(TEST_CATEGORY, pairwise_margin_loss_and_both_gradients) {
  const auto seed = fresh_seed();
  check_pairwise<false>(13, 517, seed);
  check_pairwise<true>(8, 64, seed + 1);
}

TEST(TEST_CATEGORY, mean_over_a_callers_count) {
  // Three micro-batches reduced over the count of all of them add up to the mean of the whole batch; the gradient is
  // scaled alike. The count comes from the host or from a View (double and int64_t).
  const auto seed = fresh_seed();
  SCOPED_TRACE(seed);
  const std::size_t rows = 30, cols = 333, n = rows * cols;
  std::vector<double> xs, ts;
  bce_inputs(seed, n, TargetKind::Soft, xs, ts);
  View2<float> x("x", rows, cols), t("t", rows, cols), g("g", rows, cols), g_all("g_all", rows, cols);
  set_values(x, xs);
  set_values(t, ts);
  Kokkos::View<std::int64_t, FMem> count_i("count");
  Kokkos::View<double, FMem> count_d("count");
  Kokkos::deep_copy(count_i, static_cast<std::int64_t>(n));
  Kokkos::deep_copy(count_d, static_cast<double>(n));
  const FExec space;
  const float whole = loss_and_grad(space, bce_with_logits(x, t), g_all, Reduction::Mean);
  for (int form = 0; form < 3; ++form) {
    const auto by = form == 0 ? mean_over(static_cast<double>(n)) : form == 1 ? mean_over(count_i) : mean_over(count_d);
    double parts = 0;
    for (auto [r0, r1] : {std::pair<std::size_t, std::size_t>{0, 7}, {7, 20}, {20, 30}}) {
      const auto xr = Kokkos::subview(x, std::make_pair(r0, r1), Kokkos::ALL);
      const auto tr = Kokkos::subview(t, std::make_pair(r0, r1), Kokkos::ALL);
      const auto gr = Kokkos::subview(g, std::make_pair(r0, r1), Kokkos::ALL);
      parts += loss_and_grad(space, bce_with_logits(xr, tr), gr, by);
      Kokkos::View<float, FMem> l("l");
      loss(space, bce_with_logits(xr, tr), l, by);
      float lv;
      Kokkos::deep_copy(lv, l);
      EXPECT_NEAR(lv, loss(space, bce_with_logits(xr, tr), Reduction::Sum) / n, 1e-6 * lv) << form;
    }
    EXPECT_NEAR(parts, whole, 2e-6 * whole) << form;
    const auto a = host_values(g), b = host_values(g_all);
    for (std::size_t i = 0; i < n; ++i) ASSERT_NEAR(a[i], b[i], 2e-7 * std::abs(b[i]) + 1e-12) << form << " " << i;
  }
  // SoftMarginLoss takes it too, and a bad count is refused before anything is written.
  View2<float> y("y", rows, cols);
  Kokkos::deep_copy(y, 1.0f);
  EXPECT_NEAR(loss(space, x, y, mean_over(2.0)), loss(space, x, y, Reduction::Sum) / 2, 1e-6 * n);
  expect_invalid_argument([&] { (void)loss(space, x, y, mean_over(0.0)); }, "positive");
  expect_invalid_argument([&] { (void)loss(space, bce_with_logits(x, t), mean_over(-3.0)); }, "positive");
}

TEST(TEST_CATEGORY, family_strided_and_broadcast_inputs) {
  // Non-contiguous x and targets, a broadcast weight (one value a column): the strided path against the flat one.
  const auto seed = fresh_seed();
  SCOPED_TRACE(seed);
  const std::size_t rows = 11, cols = 97, n = rows * cols;
  std::vector<double> xs, ts;
  bce_inputs(seed, n, TargetKind::Soft, xs, ts);
  Kokkos::View<float**, FMem> wide("wide", rows, 2 * cols), wide_t("wide_t", rows, 2 * cols);
  Kokkos::View<float**, Kokkos::LayoutStride, FMem> xs_v =
      Kokkos::subview(wide, Kokkos::ALL, std::make_pair(cols, 2 * cols));
  Kokkos::View<float**, Kokkos::LayoutStride, FMem> ts_v =
      Kokkos::subview(wide_t, Kokkos::ALL, std::make_pair(cols, 2 * cols));
  View2<float> x("x", rows, cols), t("t", rows, cols), w_full("w", rows, cols), g1("g1", rows, cols),
      g2("g2", rows, cols);
  set_values(x, xs);
  set_values(t, ts);
  Kokkos::deep_copy(xs_v, x);
  Kokkos::deep_copy(ts_v, t);
  Kokkos::View<float*, FMem> wc("wc", cols);
  std::vector<double> wcol(cols), wfull(n);
  for (std::size_t j = 0; j < cols; ++j) wcol[j] = 0.5 + 0.01 * j;
  for (std::size_t i = 0; i < n; ++i) wfull[i] = static_cast<float>(wcol[i % cols]);
  {
    auto h = Kokkos::create_mirror_view(wc);
    for (std::size_t j = 0; j < cols; ++j) h(j) = static_cast<float>(wcol[j]);
    Kokkos::deep_copy(wc, h);
  }
  set_values(w_full, wfull);
  const float a = loss_and_grad(FExec(), bce_with_logits(xs_v, ts_v, broadcast_rows(wc, rows)), g1, Reduction::Mean);
  const float b = loss_and_grad(FExec(), bce_with_logits(x, t, w_full), g2, Reduction::Mean);
  EXPECT_NEAR(a, b, 1e-6 * b);
  const auto d1 = host_values(g1), d2 = host_values(g2);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(d1[i], d2[i]) << i;
}

TEST(TEST_CATEGORY, family_errors_name_the_argument) {
  View2<float> x("x", 4, 6), t("t", 4, 6), t_bad("t", 4, 5), g("g", 4, 6), g2("g2", 4, 6);
  Kokkos::View<float*, FMem> p_bad("p", 5);
  Kokkos::View<float, FMem> l("l");
  const FExec space;
  expect_invalid_argument([&] { loss(space, bce_with_logits(x, t_bad), l); }, "target.extent(1) = 5");
  expect_invalid_argument([&] { loss(space, bce_with_logits(x, t, no_weight, broadcast_rows(p_bad, 4)), l); },
                          "pos_weight.extent(1) = 5");
  expect_invalid_argument([&] { backward(space, pairwise(x, t), 1.0f, grads(g, g)); }, "grad_b overlaps");
  Kokkos::View<float*, FMem> wide("wide", 40);
  Kokkos::View<float**, FMem, Kokkos::MemoryTraits<Kokkos::Unmanaged>> a(wide.data(), 4, 6),
      shifted(wide.data() + 3, 4, 6);
  expect_invalid_argument([&] { backward(space, pairwise(a, t), 1.0f, grads(g, shifted)); },
                          "overlaps the memory of a");
  expect_invalid_argument([&] { (void)loss(space, bce_with_logits(x, t), Reduction::None); }, "reduction none");
  expect_invalid_argument([&] { loss(space, bce_with_logits(x, t), g, Reduction::Sum); }, "rank-0");
  // Nothing was written by a refused call.
  Kokkos::deep_copy(g, 5.0f);
  expect_invalid_argument([&] { backward(space, bce_with_logits(x, t_bad), 1.0f, g); }, "target");
  for (double v : host_values(g)) ASSERT_EQ(v, 5.0);
}

TEST(TEST_CATEGORY, family_sixteen_bit_inputs) {
  // bf16 and fp16 logits with int8 targets and 16-bit weights, and 16-bit pairwise scores: reduced in float, against
  // fp64 from the rounded inputs; 16-bit gradients within their rounding.
  const auto seed = fresh_seed();
  SCOPED_TRACE(seed);
  const std::size_t rows = 7, cols = 301, n = rows * cols;
  std::vector<double> xs, ts, ws(n);
  bce_inputs(seed, n, TargetKind::Int8, xs, ts);
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> uw(0.0, 2.0);
  const auto check = [&](auto zero) {
    using T = decltype(zero);
    for (auto& v : xs) v = static_cast<float>(T(static_cast<float>(std::clamp(v, -1000.0, 1000.0))));
    for (auto& v : ws) v = static_cast<float>(T(static_cast<float>(uw(gen))));
    View2<T> x("x", rows, cols), g("g", rows, cols), w("w", rows, cols), b("b", rows, cols), gb("gb", rows, cols);
    View2<std::int8_t> t("t", rows, cols);
    set_values(x, xs);
    set_values(t, ts);
    set_values(w, ws);
    double ref = 0;
    std::vector<double> d(n);
    for (std::size_t i = 0; i < n; ++i) {
      ref += ws[i] * ref_bce(xs[i], ts[i], 1.0, d[i]);
      d[i] *= ws[i];
    }
    const float got = loss_and_grad(FExec(), bce_with_logits(x, t, w), g, Reduction::Sum);
    EXPECT_NEAR(got, ref, 2e-6 * ref);
    const double unit = std::is_same_v<T, bf16> ? 0x1p-8 : 0x1p-11;
    auto gd = host_values(g);
    for (std::size_t i = 0; i < n; ++i) ASSERT_NEAR(gd[i], d[i], std::abs(d[i]) * unit + 1e-7) << i;
    // Pairwise on the same values: a = x, b = w, margin 0.
    set_values(b, ws);
    double pref = 0;
    for (std::size_t i = 0; i < n; ++i) pref += ref_loss(static_cast<float>(xs[i] - ws[i]), 1.0f);
    const float pl = loss_and_grad(FExec(), pairwise(x, b), grads(g, gb), Reduction::Sum);
    EXPECT_NEAR(pl, pref, 1e-5 * pref);
    gd = host_values(g);
    const auto gbd = host_values(gb);
    for (std::size_t i = 0; i < n; ++i) {
      const double rd = ref_grad(static_cast<float>(xs[i] - ws[i]), 1.0);
      // the fast form's gradient bound (docs/cpp.md, value types)
      ASSERT_NEAR(gd[i], rd, std::abs(rd) * (unit + 1.4e-4) + 1e-7) << i;
      ASSERT_EQ(gbd[i], -gd[i]) << i;
    }
  };
  check(bf16(0.0f));
  check(fp16(0.0f));
}

}  // namespace softmargin::test

// MPI tests of the family: every global call on a descriptor (soft_margin with a weight, bce_with_logits with weight
// and pos_weight and float or int8 targets, pairwise with a scalar or a View margin) against the one-process call on
// the whole problem, for Sum, Mean and mean_over a host count or a count View; a bad argument on one rank.
#include "TestMPI_Utils.hpp"

namespace softmargin::mpi::test {

/// The Views of a family problem: x, targets (+-1, soft in [0, 1], int8 0 or 1), weight, pos_weight, b and margin.
template <class T>
struct FamilyViews {
  using V = Kokkos::View<T**, Kokkos::LayoutRight, Mem>;
  V x, y, t, w, p, b, m;
  Kokkos::View<std::int8_t**, Kokkos::LayoutRight, Mem> t8;
};

/// The global rows x cols problem, generated alike on every rank, in full Views and in this rank's rows.
template <class T>
struct FamilyData {
  std::size_t rows, cols, begin = 0, end = 0;
  FamilyViews<T> full, local;

  FamilyData(std::uint64_t seed, std::size_t rows_, std::size_t cols_, bool empty) : rows(rows_), cols(cols_) {
    std::mt19937_64 gen(seed);
    std::normal_distribution<double> normal(0.0, 2.0);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::bernoulli_distribution coin(0.5);
    const std::size_t n = rows * cols;
    std::vector<double> x(n), y(n), t(n), t8(n), w(n), p(n), b(n), m(n);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = normal(gen), y[i] = coin(gen) ? 1 : -1, t[i] = unit(gen), t8[i] = coin(gen) ? 1 : 0;
      w[i] = 0.25 + unit(gen), p[i] = 0.5 + 2 * unit(gen), b[i] = normal(gen), m[i] = unit(gen) - 0.5;
    }
    const auto c = cuts(rows, size(), gen, empty);
    begin = c[rank()], end = c[rank() + 1];
    const auto fill = [&](FamilyViews<T>& v, std::size_t lo, std::size_t hi) {
      v.x = view<T>(x, lo, hi), v.y = view<T>(y, lo, hi), v.t = view<T>(t, lo, hi), v.w = view<T>(w, lo, hi);
      v.p = view<T>(p, lo, hi), v.b = view<T>(b, lo, hi), v.m = view<T>(m, lo, hi);
      v.t8 = view<std::int8_t>(t8, lo, hi);
    };
    fill(full, 0, rows);
    fill(local, begin, end);
  }

 private:
  template <class U>
  Kokkos::View<U**, Kokkos::LayoutRight, Mem> view(const std::vector<double>& h, std::size_t lo, std::size_t hi) {
    Kokkos::View<U**, Kokkos::LayoutRight, Mem> v("v", hi - lo, cols);
    auto m = Kokkos::create_mirror_view(v);
    for (std::size_t i = lo; i < hi; ++i)
      for (std::size_t j = 0; j < cols; ++j) m(i - lo, j) = static_cast<U>(h[i * cols + j]);
    Kokkos::deep_copy(v, m);
    return v;
  }
};

/// The gradient outputs of a member with N gradients: grad_x, or grads(grad_a, grad_b).
template <class T, int N>
struct Grads {
  Kokkos::View<T**, Kokkos::LayoutRight, Mem> a, b;
  Grads(std::size_t rows, std::size_t cols) : a("grad_a", rows, cols) {
    if constexpr (N == 2) b = decltype(b)("grad_b", rows, cols);
  }
  auto arg() const {
    if constexpr (N == 2)
      return softmargin::grads(a, b);
    else
      return a;
  }
  void fill(T v) const {
    Kokkos::deep_copy(a, v);
    if constexpr (N == 2) Kokkos::deep_copy(b, v);
  }
};

/// This rank's gradients against rows [begin, end) of the one-process gradients.
template <class T, int N>
void expect_rows(std::size_t begin, const Grads<T, N>& got, const Grads<T, N>& full) {
  const auto rows = [&](const auto& g, const auto& f) {
    const auto mine = elements_of(g);
    const auto all = elements_of(f);
    int bad = 0;
    for (std::size_t i = 0; i < mine.size() && bad < 5; ++i) {
      const auto ok = close(mine[i], all[begin * g.extent(1) + i], tolerance<T>());
      if (!ok) ++bad;
      EXPECT_TRUE(ok) << "element " << i;
    }
  };
  rows(got.a, full.a);
  if constexpr (N == 2) rows(got.b, full.b);
}

/// Every form of the global calls on make(this rank's Views) against the one-process call on make(the full Views).
template <class T, class Make>
void family_case(const FamilyData<T>& d, Make&& make) {
  const Exec space;
  const auto global = make(d.full);
  const auto mine = make(d.local);
  constexpr int N = std::remove_const_t<decltype(mine)>::grads;
  const double count = 3.0 * static_cast<double>(d.rows * d.cols);
  Kokkos::View<double, Mem> count_view("count");
  Kokkos::View<std::int64_t, Mem> count_int("count");
  Kokkos::deep_copy(count_view, count);
  Kokkos::deep_copy(count_int, static_cast<std::int64_t>(count));
  struct Case {
    const char* name;
    ReduceBy reduction, reference;
  };
  const Case cases[] = {{"sum", Reduction::Sum, Reduction::Sum},
                        {"mean", Reduction::Mean, Reduction::Mean},
                        {"mean_over(number)", mean_over(count), mean_over(count)},
                        {"mean_over(View)", mean_over(count_view), mean_over(count)},
                        {"mean_over(int64 View)", mean_over(count_int), mean_over(count)}};
  const double tol = tolerance<T>();
  const T upstream = T(0.75);
  Kokkos::View<T, Mem> upstream_view("upstream"), result("result");
  Kokkos::deep_copy(upstream_view, upstream);
  const std::size_t lrows = d.end - d.begin;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const ReduceBy r = c.reduction;
    const double expect = softmargin::loss(space, global, c.reference);
    Grads<T, N> full(d.rows, d.cols), grad(lrows, d.cols);
    softmargin::backward(space, global, upstream, full.arg(), c.reference);

    for (Transport t : transports()) {
      SCOPED_TRACE(to_string(t));
      Kokkos::deep_copy(result, T(-1));
      loss(with(t), space, mine, result, r);
      EXPECT_TRUE(close(value_of(result), expect, tol));
      grad.fill(T(0));
      loss_and_grad(with(t), space, mine, result, grad.arg(), r, upstream);
      EXPECT_TRUE(close(value_of(result), expect, tol));
      expect_rows(d.begin, grad, full);
      grad.fill(T(0));
      loss_and_grad(with(t), space, mine, result, grad.arg(), r, upstream_view);
      EXPECT_TRUE(close(value_of(result), expect, tol));
      expect_rows(d.begin, grad, full);
    }
    const T blocking = loss(MPI_COMM_WORLD, space, mine, r);
    EXPECT_TRUE(close(blocking, expect, tol));
    EXPECT_TRUE(same_on_every_rank(blocking));
    Kokkos::View<double, Mem> wide("wide");
    Request request = iloss(MPI_COMM_WORLD, space, mine, wide, r);
    EXPECT_TRUE(close(request.wait(), expect, tol));
    EXPECT_TRUE(close(value_of(wide), expect, tol));

    grad.fill(T(0));
    backward(MPI_COMM_WORLD, space, mine, upstream, grad.arg(), r);
    expect_rows(d.begin, grad, full);
    grad.fill(T(0));
    backward(MPI_COMM_WORLD, space, mine, upstream_view, grad.arg(), r);
    expect_rows(d.begin, grad, full);
    grad.fill(T(0));
    const T fused = loss_and_grad(MPI_COMM_WORLD, space, mine, grad.arg(), r, upstream);
    EXPECT_TRUE(close(fused, expect, tol));
    EXPECT_TRUE(same_on_every_rank(fused));
    expect_rows(d.begin, grad, full);
  }
}

template <class T>
void family_cases(bool empty) {
  const std::uint64_t seed = shared_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 gen(seed);
  const std::size_t rows = std::uniform_int_distribution<std::size_t>(1, 23)(gen);
  const std::size_t cols = std::uniform_int_distribution<std::size_t>(1, 60)(gen) | 1;
  const FamilyData<T> d(gen(), rows, cols, empty);
  SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + ", rows " + std::to_string(d.begin) + ".." +
               std::to_string(d.end));
  using V = FamilyViews<T>;
  {
    SCOPED_TRACE("soft_margin with a weight");
    family_case(d, [](const V& v) { return softmargin::soft_margin(v.x, v.y, v.w); });
  }
  {
    SCOPED_TRACE("bce_with_logits, float targets");
    family_case(d, [](const V& v) { return softmargin::bce_with_logits(v.x, v.t, v.w, v.p); });
  }
  {
    SCOPED_TRACE("bce_with_logits, int8 targets");
    family_case(d, [](const V& v) { return softmargin::bce_with_logits(v.x, v.t8, v.w, v.p); });
  }
  {
    SCOPED_TRACE("pairwise, scalar margin");
    family_case(d, [](const V& v) { return softmargin::pairwise(v.x, v.b, 0.25); });
  }
  {
    SCOPED_TRACE("pairwise, View margin");
    family_case(d, [](const V& v) { return softmargin::pairwise(v.x, v.b, v.m); });
  }
}

TEST(TEST_CATEGORY, mpi_family_matches_one_process) { family_cases<double>(false); }

TEST(TEST_CATEGORY, mpi_family_empty_partitions) { family_cases<double>(true); }

TEST(TEST_CATEGORY, mpi_family_bad_argument_on_one_rank_throws_everywhere) {
  const std::uint64_t seed = shared_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const FamilyData<double> d(seed, 9, 5, true);  // the last rank holds rows
  const Exec space;
  const bool bad = rank() == size() - 1;
  const std::string on_last = "failed on rank " + std::to_string(size() - 1) + " of " + std::to_string(size());
  const std::size_t lrows = d.end - d.begin;
  const double sentinel = -7.0;
  Kokkos::View<double, Mem> result("result");
  Grads<double, 1> grad(lrows, d.cols);
  Kokkos::deep_copy(result, sentinel);
  grad.fill(sentinel);

  // A weight of the wrong shape on the last rank: every call.
  Kokkos::View<double**, Kokkos::LayoutRight, Mem> wide("wide", lrows, d.cols + 1);
  const auto in = softmargin::bce_with_logits(d.local.x, d.local.t, bad ? wide : d.local.w, d.local.p);
  const std::string shape = "weight.extent(1)";
  for (Transport t : transports()) {
    SCOPED_TRACE(to_string(t));
    expect_same_error([&] { loss(with(t), space, in, result, Reduction::Sum); }, on_last, shape);
    expect_same_error([&] { loss_and_grad(with(t), space, in, result, grad.a); }, on_last, shape);
  }
  expect_same_error([&] { (void)loss(MPI_COMM_WORLD, space, in); }, on_last, shape);
  expect_same_error([&] { iloss(MPI_COMM_WORLD, space, in, result).wait(); }, on_last, "iloss (bce_with_logits)");
  expect_same_error([&] { backward(MPI_COMM_WORLD, space, in, 1.0, grad.a); }, on_last, shape);
  expect_same_error([&] { (void)loss_and_grad(MPI_COMM_WORLD, space, in, grad.a); }, on_last, shape);

  // A gradient over an input's memory (grad_b one element past the margin's start) on the last rank.
  const std::size_t n = lrows * d.cols;
  using U = Kokkos::View<double**, Kokkos::LayoutRight, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Kokkos::View<double*, Mem> pad("pad", n + 1);
  Grads<double, 2> pair(lrows, d.cols);
  pair.fill(sentinel);
  const U margin(pad.data(), lrows, d.cols), shifted(pad.data() + 1, lrows, d.cols);
  const U grad_b = bad ? shifted : U(pair.b.data(), lrows, d.cols);
  const auto pw = softmargin::pairwise(d.local.x, d.local.b, margin);
  const auto two = softmargin::grads(pair.a, grad_b);
  const std::string alias = "grad_b overlaps the memory of margin";
  expect_same_error([&] { backward(MPI_COMM_WORLD, space, pw, 1.0, two, Reduction::Mean); }, on_last, alias);
  expect_same_error([&] { loss_and_grad(MPI_COMM_WORLD, space, pw, result, two, mean_over(2.0)); }, on_last, alias);
  expect_same_error([&] { (void)loss_and_grad(MPI_COMM_WORLD, space, pw, two); }, on_last, alias);
  // Reduction none on one rank, and a count View with a descriptor the same.
  Kokkos::View<double, Mem> count("count");
  const ReduceBy none_on_last = bad ? ReduceBy(Reduction::None) : mean_over(count);
  expect_same_error([&] { loss(MPI_COMM_WORLD, space, pw, result, none_on_last); }, on_last, "reduction none");

  EXPECT_EQ(value_of(result), sentinel);
  for (double g : elements_of(grad.a)) ASSERT_EQ(g, sentinel);
  for (double g : elements_of(pair.a)) ASSERT_EQ(g, sentinel);
  for (double g : elements_of(pair.b)) ASSERT_EQ(g, sentinel);
  // The ranks are still in step: a good call works.
  const auto good = softmargin::bce_with_logits(d.local.x, d.local.t, d.local.w, d.local.p);
  const auto whole = softmargin::bce_with_logits(d.full.x, d.full.t, d.full.w, d.full.p);
  EXPECT_TRUE(
      close(loss(MPI_COMM_WORLD, space, good, Reduction::Sum), softmargin::loss(space, whole, Reduction::Sum), 1e-12));
}

}  // namespace softmargin::mpi::test

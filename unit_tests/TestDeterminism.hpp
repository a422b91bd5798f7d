// Determinism, compiled once per backend (TEST_EXECSPACE, TEST_CATEGORY from the category header): the same inputs
// give the same bits, call after call, for every pass, reduction, algorithm and type (no atomic whose order changes a
// sum; host backends with the same thread count).
#include <cstring>

#include "TestHalfUtils.hpp"

namespace softmargin::test::determinism {

using namespace softmargin::test::half;
using half::Case;  // not the Case of the files compiled beside this one in a unity build
using Exec = TEST_EXECSPACE;
using Mem = typename Exec::memory_space;

template <class T>
class Determinism : public ::testing::Test {};
using DeterminismCases =
    ::testing::Types<Case<float, float, float, Kokkos::LayoutRight>, Case<double, double, double, Kokkos::LayoutRight>,
                     Case<bf16, std::int8_t, bf16, Kokkos::LayoutRight>, Case<fp16, fp16, float, Kokkos::LayoutRight>,
                     Case<float, bool, float, Kokkos::LayoutStride>>;
TYPED_TEST_SUITE(Determinism, DeterminismCases);

template <class T>
std::vector<std::uint64_t> bits_of(const std::vector<T>& v) {
  std::vector<std::uint64_t> b(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::uint64_t u = 0;
    std::memcpy(&u, &v[i], sizeof(T));
    b[i] = u;
  }
  return b;
}

/// Each pass three times on fresh launches, the outputs' bits compared with the first call's.
TYPED_TEST(Determinism, every_pass_gives_the_same_bits_call_after_call) {
  using X = typename TypeParam::x_type;
  using Y = typename TypeParam::y_type;
  using O = typename TypeParam::out_type;
  using L = typename TypeParam::layout;
  constexpr Algorithm kAlgorithms[] = {Algorithm::Auto, Algorithm::RangeReduce, Algorithm::TeamScratch,
                                       Algorithm::Native};
  const std::size_t rows = 97, cols = 4099;  // enough elements for every team or block to take part
  const std::uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::vector<X> xs;
  std::vector<Y> ys;
  fill_inputs(seed, rows * cols, false, xs, ys);
  Data2<X, L, Mem> x(rows, cols);
  Data2<Y, L, Mem> y(rows, cols);
  Data2<O, L, Mem> out(rows, cols), grad(rows, cols);
  x.upload(xs);
  y.upload(ys);
  Kokkos::View<double, Mem> result("result");
  const Exec space;
  for (Algorithm a : kAlgorithms) {
    SCOPED_TRACE(to_string(a));
    std::vector<std::vector<std::uint64_t>> first;
    for (int call = 0; call < 3; ++call) {
      std::vector<std::vector<std::uint64_t>> got;
      const auto reduced = [&] {
        double v = 0;
        Kokkos::deep_copy(v, result);
        return bits_of(std::vector<double>{v});
      };
      loss(space, x.view, y.view, result, Reduction::Sum, a);
      got.push_back(reduced());
      loss(space, x.view, y.view, result, Reduction::Mean, a);
      got.push_back(reduced());
      loss(space, x.view, y.view, out.view, Reduction::None, a);
      got.push_back(bits_of(out.download()));
      backward(space, x.view, y.view, 0.5f, grad.view, Reduction::Mean, a);
      got.push_back(bits_of(grad.download()));
      loss_and_grad(space, x.view, y.view, result, grad.view, Reduction::Mean, 1.0f, a);
      got.push_back(reduced());
      got.push_back(bits_of(grad.download()));
      if (call == 0)
        first = got;
      else
        for (std::size_t k = 0; k < got.size(); ++k) EXPECT_EQ(got[k], first[k]) << "output " << k << ", call " << call;
    }
  }
}

}  // namespace softmargin::test::determinism

// Float results of 16-bit inputs, compiled once per backend (TEST_EXECSPACE, TEST_CATEGORY from the category header):
// widening a bf16 or fp16 x (and its target) to float is exact, so every element-wise float output (loss none,
// backward, the fused pass's gradient) must be, bit for bit, what the fp32 path gives for the widened inputs. The fast
// form of the loss serves only outputs rounded to 16 bits.
#include "TestHalfUtils.hpp"

namespace softmargin::test::widened {

using namespace softmargin::test::half;
using Exec = TEST_EXECSPACE;
using Mem = typename Exec::memory_space;

template <class T>
class Widened : public ::testing::Test {};
using WidenedCases =
    ::testing::Types<Case<bf16, bf16, float, Kokkos::LayoutRight>, Case<bf16, std::int8_t, float, Kokkos::LayoutRight>,
                     Case<fp16, fp16, float, Kokkos::LayoutRight>, Case<fp16, std::int8_t, float, Kokkos::LayoutStride>,
                     Case<bf16, bool, float, Kokkos::LayoutStride>>;
TYPED_TEST_SUITE(Widened, WidenedCases);

/// Mismatching bits between a and b, a NaN matching any NaN (IEEE 754 leaves a NaN's sign and payload to the
/// operation that makes it: a vector kernel and an element one may differ there); the first mismatch reported.
inline ::testing::AssertionResult same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(std::isnan(a[i]) && std::isnan(b[i])) &&
        Kokkos::bit_cast<std::uint32_t>(a[i]) != Kokkos::bit_cast<std::uint32_t>(b[i]))
      return ::testing::AssertionFailure() << "element " << i << ": " << a[i] << " against the fp32 path's " << b[i];
  return ::testing::AssertionSuccess();
}

TYPED_TEST(Widened, float_outputs_equal_the_fp32_path) {
  using X = typename TypeParam::x_type;
  using Y = typename TypeParam::y_type;
  using L = typename TypeParam::layout;
  constexpr Algorithm kAlgorithms[] = {Algorithm::Auto, Algorithm::RangeReduce, Algorithm::TeamScratch,
                                       Algorithm::Native};
  for (auto [rows, cols] : {std::pair<std::size_t, std::size_t>{3, 37}, {7, 1031}}) {
    const std::uint64_t seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed) + ", shape " + std::to_string(rows) + "x" + std::to_string(cols));
    const std::size_t n = rows * cols;
    std::vector<X> xs;
    std::vector<Y> ys;
    fill_inputs(seed, n, true, xs, ys);
    std::vector<float> xw(n), yw(n), us(n);
    for (std::size_t i = 0; i < n; ++i) {
      xw[i] = static_cast<float>(to_double(xs[i]));
      yw[i] = static_cast<float>(to_double<Y>(ys[i]));
    }
    std::mt19937_64 gen(seed + 1);
    for (auto& u : us) u = static_cast<float>(std::uniform_real_distribution<double>(-2.0, 2.0)(gen));
    Data2<X, L, Mem> x(rows, cols);
    Data2<Y, L, Mem> y(rows, cols);
    Data2<float, L, Mem> x32(rows, cols), y32(rows, cols), up(rows, cols), out(rows, cols), ref(rows, cols);
    x.upload(xs);
    y.upload(ys);
    x32.upload(xw);
    y32.upload(yw);
    up.upload(us);
    Kokkos::View<double, Mem> l16("l16"), l32("l32");
    const Exec space;
    for (Algorithm a : kAlgorithms) {
      SCOPED_TRACE(to_string(a));
      loss(space, x.view, y.view, out.view, Reduction::None, a);
      loss(space, x32.view, y32.view, ref.view, Reduction::None, a);
      EXPECT_TRUE(same_bits(out.download(), ref.download())) << "loss none";
      backward(space, x.view, y.view, 0.75f, out.view, Reduction::Sum, a);
      backward(space, x32.view, y32.view, 0.75f, ref.view, Reduction::Sum, a);
      EXPECT_TRUE(same_bits(out.download(), ref.download())) << "backward sum";
      backward(space, x.view, y.view, 1.0f, out.view, Reduction::Mean, a);
      backward(space, x32.view, y32.view, 1.0f, ref.view, Reduction::Mean, a);
      EXPECT_TRUE(same_bits(out.download(), ref.download())) << "backward mean";
      backward(space, x.view, y.view, up.view, out.view, Reduction::None, a);
      backward(space, x32.view, y32.view, up.view, ref.view, Reduction::None, a);
      EXPECT_TRUE(same_bits(out.download(), ref.download())) << "backward none";
      loss_and_grad(space, x.view, y.view, l16, out.view, Reduction::Mean, 2.0f, a);
      loss_and_grad(space, x32.view, y32.view, l32, ref.view, Reduction::Mean, 2.0f, a);
      EXPECT_TRUE(same_bits(out.download(), ref.download())) << "loss_and_grad";
      double a16 = 0, a32 = 0;
      Kokkos::deep_copy(a16, l16);
      Kokkos::deep_copy(a32, l32);
      if (std::isfinite(a32)) EXPECT_LE(std::abs(a16 - a32), 1e-6 * std::abs(a32)) << "the reduced loss";
    }
  }
}

}  // namespace softmargin::test::widened

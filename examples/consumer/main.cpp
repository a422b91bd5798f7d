#include <SoftMargin.hpp>

#include <cmath>
#include <cstdio>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  Kokkos::View<float*> x("x", 3), y("y", 3);
  auto hx = Kokkos::create_mirror_view(x);
  auto hy = Kokkos::create_mirror_view(y);
  hx(0) = 100.0f, hx(1) = 0.0f, hx(2) = -2.0f;
  hy(0) = -1.0f, hy(1) = 1.0f, hy(2) = -1.0f;
  Kokkos::deep_copy(x, hx);
  Kokkos::deep_copy(y, hy);
  const float sum = softmargin::loss(x, y, softmargin::Reduction::Sum);
  const double expect = 100.0 + std::log(2.0) + std::log1p(std::exp(-2.0));
  std::printf("consumer: sum = %.7g, expected %.7g\n", sum, expect);
  return std::abs(sum - expect) <= 1e-5 * expect ? 0 : 1;
}

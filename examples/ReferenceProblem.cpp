// The reference problem: x, y fp32 of shape 512x4096, y in {-1, +1}, reduction mean.
// Prints the loss, its agreement with an fp64 reference computed on the host, and the time per call.
#include <SoftMargin.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  using Exec = Kokkos::DefaultExecutionSpace;
  constexpr int rows = 512, cols = 4096;

  Kokkos::View<float**, Kokkos::LayoutRight> x("x", rows, cols), y("y", rows, cols);
  auto hx = Kokkos::create_mirror_view(x);
  auto hy = Kokkos::create_mirror_view(y);
  std::mt19937_64 gen(std::random_device{}());
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::bernoulli_distribution coin(0.5);
  long double ref = 0;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      hx(i, j) = normal(gen);
      hy(i, j) = coin(gen) ? 1.0f : -1.0f;
      const double z = -static_cast<double>(hy(i, j)) * hx(i, j);
      ref += std::max(z, 0.0) + std::log1p(std::exp(-std::abs(z)));
    }
  ref /= static_cast<long double>(rows) * cols;
  Kokkos::deep_copy(x, hx);
  Kokkos::deep_copy(y, hy);

  const Exec space;
  Kokkos::View<float> result("loss");
  softmargin::loss(space, x, y, result);  // warm-up, non-blocking
  const float value = softmargin::loss(space, x, y);  // blocking, returns the mean

  // Time per call: batches of back-to-back non-blocking calls on one instance, each batch closed by one fence;
  // up to 100 calls a batch, fewer where a call is slow (host backends), median of 10 batches.
  Kokkos::Timer probe;
  softmargin::loss(space, x, y, result);
  space.fence();
  const int batch = std::clamp(static_cast<int>(0.05 / std::max(probe.seconds(), 1e-9)), 1, 100);
  std::vector<double> per_call;
  for (int rep = 0; rep < 10; ++rep) {
    space.fence();
    Kokkos::Timer timer;
    for (int k = 0; k < batch; ++k) softmargin::loss(space, x, y, result);
    space.fence();
    per_call.push_back(timer.seconds() / batch);
  }
  std::sort(per_call.begin(), per_call.end());

  const double rel = std::abs(static_cast<double>(value) - static_cast<double>(ref)) / static_cast<double>(ref);
  std::printf("SoftMarginLoss(mean) of x, y fp32 %dx%d on %s\n", rows, cols, Exec::name());
  std::printf("  loss            = %.9g\n", value);
  std::printf("  fp64 reference  = %.9Lg\n", ref);
  std::printf("  relative error  = %.2e (%s)\n", rel, rel <= 1e-6 ? "agrees" : "DISAGREES");
  std::printf("  time per call   = %.1f us (median of 10 batches of %d back-to-back calls)\n",
              1e6 * per_call[per_call.size() / 2], batch);

  // The case PyTorch overflows: x = 100, y = -1 gives inf there; the loss is 100.
  Kokkos::View<float*> bx("bx", 1), by("by", 1);
  Kokkos::deep_copy(bx, 100.0f);
  Kokkos::deep_copy(by, -1.0f);
  std::printf("  x = 100, y = -1 -> %.9g (PyTorch: inf)\n", softmargin::loss(bx, by));
  return rel <= 1e-6 ? 0 : 1;
}

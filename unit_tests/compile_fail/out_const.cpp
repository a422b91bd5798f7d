// Compile-fail case: the output View holds const values.
#include <SoftMargin.hpp>

void call() {
  Kokkos::View<float*> x("x", 8), y("y", 8);
  Kokkos::View<const float> out = Kokkos::View<float>("out");
  softmargin::loss(Kokkos::DefaultExecutionSpace(), x, y, out);
}

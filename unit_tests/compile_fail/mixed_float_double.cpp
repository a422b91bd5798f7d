// Compile-fail case: x holds float, y holds double.
#include <SoftMargin.hpp>

void call() {
  Kokkos::View<float*> x("x", 8);
  Kokkos::View<double*> y("y", 8);
  Kokkos::View<float> out("out");
  softmargin::loss(Kokkos::DefaultExecutionSpace(), x, y, out);
}

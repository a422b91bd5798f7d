// Compile-fail case: the output is a host scalar, not a View.
#include <SoftMargin.hpp>

void call() {
  Kokkos::View<float*> x("x", 8), y("y", 8);
  float out = 0;
  softmargin::loss(Kokkos::DefaultExecutionSpace(), x, y, out);
}

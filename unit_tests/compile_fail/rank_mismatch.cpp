// Compile-fail case: x is of rank 2, y of rank 1.
#include <SoftMargin.hpp>

void call() {
  Kokkos::View<float**> x("x", 4, 8);
  Kokkos::View<float*> y("y", 32);
  Kokkos::View<float> out("out");
  softmargin::loss(Kokkos::DefaultExecutionSpace(), x, y, out);
}

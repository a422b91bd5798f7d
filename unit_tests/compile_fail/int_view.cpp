// Compile-fail case: x and y hold int.
#include <SoftMargin.hpp>

void call() {
  Kokkos::View<int*> x("x", 8), y("y", 8);
  Kokkos::View<int> out("out");
  softmargin::loss(Kokkos::DefaultExecutionSpace(), x, y, out);
}

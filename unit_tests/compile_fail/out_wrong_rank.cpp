// Compile-fail case: the output of a rank-2 input is of rank 1 (neither a reduced loss nor x's shape).
#include <SoftMargin.hpp>

void call() {
  Kokkos::View<float**> x("x", 4, 8), y("y", 4, 8);
  Kokkos::View<float*> out("out", 32);
  softmargin::loss(Kokkos::DefaultExecutionSpace(), x, y, out, softmargin::Reduction::None);
}

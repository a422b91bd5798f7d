// Compile-fail case: bf16 x with fp16 y.
#include <SoftMargin.hpp>

void call() {
  Kokkos::View<softmargin::bf16*> x("x", 8);
  Kokkos::View<softmargin::fp16*> y("y", 8);
  Kokkos::View<float> out("out");
  softmargin::loss(Kokkos::DefaultExecutionSpace(), x, y, out);
}

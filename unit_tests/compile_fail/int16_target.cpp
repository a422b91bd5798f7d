// Compile-fail case: y holds int16_t (targets are x's type, int8_t or bool).
#include <SoftMargin.hpp>

void call() {
  Kokkos::View<float*> x("x", 8), out("out", 8);
  Kokkos::View<std::int16_t*> y("y", 8);
  softmargin::loss(Kokkos::DefaultExecutionSpace(), x, y, out, softmargin::Reduction::None);
}

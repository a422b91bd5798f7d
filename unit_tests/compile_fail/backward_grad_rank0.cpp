// Compile-fail case: the gradient of x is written to a rank-0 View, not a View of x's shape.
#include <SoftMargin.hpp>

void call() {
  Kokkos::View<float*> x("x", 8), y("y", 8);
  Kokkos::View<float> grad_x("grad_x");
  softmargin::backward(Kokkos::DefaultExecutionSpace(), x, y, 1.0f, grad_x);
}

// Compile-fail case: grad_x holds int8_t (it holds x's type or float).
#include <SoftMargin.hpp>

void call() {
  Kokkos::View<softmargin::bf16*> x("x", 8);
  Kokkos::View<std::int8_t*> y("y", 8), grad("grad", 8);
  softmargin::backward(Kokkos::DefaultExecutionSpace(), x, y, 1.0f, grad, softmargin::Reduction::Sum);
}

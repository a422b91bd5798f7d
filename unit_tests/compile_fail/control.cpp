// Control for the compile-fail cases: the same calls without the mistakes compile (through the same harness), and so
// do results of another floating type than x's.
#include <SoftMargin.hpp>

void call() {
  const Kokkos::DefaultExecutionSpace space;
  Kokkos::View<float*> x("x", 8), y("y", 8), grad_x("grad_x", 8);
  Kokkos::View<float**> x2("x2", 4, 8), y2("y2", 4, 8), out2("out2", 4, 8);
  Kokkos::View<float> out("out");
  Kokkos::View<double*> xd("xd", 8), yd("yd", 8);
  Kokkos::View<double> outd("outd");
  softmargin::loss(space, x, y, out);
  softmargin::loss(space, xd, yd, outd);
  softmargin::loss(space, x2, y2, out);
  softmargin::loss(space, x2, y2, out2, softmargin::Reduction::None);
  softmargin::backward(space, x, y, 1.0f, grad_x);
  Kokkos::View<double**> out2d("out2d", 4, 8);
  softmargin::loss(space, x, y, outd);
  softmargin::loss(space, x2, y2, out2d, softmargin::Reduction::None);
  // 16-bit x with compact targets, outputs of the caller's type.
  Kokkos::View<softmargin::bf16*> xb("xb", 8), gb("gb", 8);
  Kokkos::View<std::int8_t*> y8("y8", 8);
  Kokkos::View<bool*> yb("yb", 8);
  softmargin::loss(space, xb, y8, out);
  softmargin::loss(space, xb, yb, gb, softmargin::Reduction::None);
  softmargin::backward(space, xb, y8, 1.0f, gb);
  softmargin::backward(space, xb, yb, 1.0f, grad_x);
  softmargin::loss_and_grad(space, xb, y8, out, gb);
}

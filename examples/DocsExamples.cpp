// The C++ examples of the README and docs/, compiled and run as written (the test softmargin_docs_examples, and
// softmargin_docs_examples_mpi under mpiexec for the MPI ones). Each ```cpp block of the docs runs in a scope of its
// own (cmake/SoftMarginDocsExamples.cmake generates them), after the names the examples take as given: x, y of
// 512x4096 floats on the default execution space, BCE targets t, weight, pos_weight, the pairwise inputs chosen and
// rejected with their gradients ga and gb, a result View, grad_x, the instance `space` and a count `tokens`.
#include <SoftMargin.hpp>
#if defined(SOFTMARGIN_DOCS_MPI)
#include <SoftMargin_MPI.hpp>
#include <mpi.h>
#endif

#include <cstdio>
#include <exception>

namespace {

void run_examples() {
  Kokkos::DefaultExecutionSpace space;
  Kokkos::View<float**> x("x", 512, 4096), y("y", 512, 4096), t("t", 512, 4096), weight("weight", 512, 4096),
      pos_weight("pos_weight", 512, 4096), grad_x("grad_x", 512, 4096);
  Kokkos::View<float*> chosen("chosen", 4096), rejected("rejected", 4096), ga("ga", 4096), gb("gb", 4096);
  Kokkos::View<float> result("loss");
  [[maybe_unused]] const double tokens = 512.0 * 4096;
  Kokkos::deep_copy(space, y, 1.0f);
  Kokkos::deep_copy(space, t, 0.5f);
  Kokkos::deep_copy(space, weight, 1.0f);
  Kokkos::deep_copy(space, pos_weight, 2.0f);
  // The blocks (SOFTMARGIN_DOCS_EXAMPLES of them), each in a scope whose declarations shadow those above.
#include SOFTMARGIN_DOCS_BLOCKS
  space.fence();
}

}  // namespace

int main(int argc, char* argv[]) {
#if defined(SOFTMARGIN_DOCS_MPI)
  MPI_Init(&argc, &argv);
#endif
  int rc = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    try {
      run_examples();
      std::printf("%d examples of the docs ran\n", SOFTMARGIN_DOCS_EXAMPLES);
    } catch (const std::exception& e) {
      std::printf("an example of the docs threw: %s\n", e.what());
      rc = 1;
    }
  }
#if defined(SOFTMARGIN_DOCS_MPI)
  MPI_Finalize();
#endif
  return rc;
}

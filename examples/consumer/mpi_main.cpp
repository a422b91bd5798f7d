// The MPI layer from an installed SoftMargin: each rank holds one element; the global sum is every rank's loss.
#include <mpi.h>

#include <SoftMargin_MPI.hpp>
#include <cmath>
#include <cstdio>

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1, ok = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  {
    Kokkos::ScopeGuard guard(argc, argv);
    Kokkos::View<double*> x("x", 1), y("y", 1);
    Kokkos::deep_copy(x, static_cast<double>(rank));
    Kokkos::deep_copy(y, -1.0);
    const double sum =
        softmargin::mpi::loss(MPI_COMM_WORLD, Kokkos::DefaultExecutionSpace(), x, y, softmargin::Reduction::Sum);
    double expect = 0;
    for (int r = 0; r < ranks; ++r) expect += r + std::log1p(std::exp(-static_cast<double>(r)));
    if (rank == 0) std::printf("consumer_mpi: %d ranks, sum = %.12g, expected %.12g\n", ranks, sum, expect);
    ok = std::abs(sum - expect) <= 1e-12 * expect;
  }
  MPI_Finalize();
  return ok ? 0 : 1;
}

// MPI tests of the global loss: every form against the one-process loss of the whole problem, on uneven and empty
// partitions, every transport that runs here, a sub-communicator, and NaN on one rank.
#include "TestMPI_Utils.hpp"

namespace softmargin::mpi::test {

/// Every forward form of the global loss on p, against the one-process loss of p's full Views.
template <class T, class L>
void check_forward(const Problem<T, L>& p, MPI_Comm comm, Reduction reduction) {
  const Exec space;
  const double expect = softmargin::loss(space, p.x, p.y, reduction);
  const double tol = tolerance<T>();
  Kokkos::View<T, Mem> result("result");
  for (Transport t : transports()) {
    SCOPED_TRACE(to_string(t));
    Kokkos::deep_copy(result, T(-1));
    loss(with(t, comm), space, p.lx, p.ly, result, reduction);
    const double got = value_of(result);
    EXPECT_TRUE(close(got, expect, tol));
    EXPECT_TRUE(same_on_every_rank(got, comm));
  }
  Kokkos::deep_copy(result, T(-1));
  loss(comm, space, p.lx, p.ly, result, reduction);
  EXPECT_TRUE(close(value_of(result), expect, tol));
  const T blocking = loss(comm, space, p.lx, p.ly, reduction);
  EXPECT_TRUE(close(blocking, expect, tol));
  EXPECT_TRUE(same_on_every_rank(blocking, comm));
  Kokkos::View<double, Mem> wide("wide");  // a result of another floating type
  Request request = iloss(comm, space, p.lx, p.ly, wide, reduction);
  EXPECT_TRUE(request.active());
  const double waited = request.wait();
  EXPECT_FALSE(request.active());
  EXPECT_TRUE(close(waited, expect, tol));
  EXPECT_TRUE(close(value_of(wide), expect, tol));
  for (Algorithm a : {Algorithm::RangeReduce, Algorithm::TeamScratch, Algorithm::Native})
    EXPECT_TRUE(close(loss(comm, space, p.lx, p.ly, reduction, a), expect, tol)) << to_string(a);
  // Against fp64 too (the one-process result is itself tested against it).
  const double ref = p.reference_sum(0, p.rows) / (reduction == Reduction::Mean ? double(p.rows * p.cols) : 1.0);
  EXPECT_TRUE(close(blocking, ref, tol));
}

template <class T, class L>
void forward_cases(bool empty) {
  const std::uint64_t seed = shared_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 gen(seed);
  for (int round = 0; round < 3; ++round) {
    const std::size_t rows = std::uniform_int_distribution<std::size_t>(1, 40)(gen);
    const std::size_t cols = std::uniform_int_distribution<std::size_t>(1, 300)(gen) | 1;
    const Problem<T, L> p(gen(), rows, cols, empty);
    SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + ", this rank's rows " + std::to_string(p.begin) +
                 ".." + std::to_string(p.end));
    for (Reduction r : {Reduction::Sum, Reduction::Mean}) {
      SCOPED_TRACE(to_string(r));
      check_forward(p, MPI_COMM_WORLD, r);
    }
  }
}

TEST(TEST_CATEGORY, mpi_loss_matches_one_process) {
  forward_cases<double, Kokkos::LayoutRight>(false);
  forward_cases<float, Kokkos::LayoutRight>(false);
  forward_cases<double, Kokkos::LayoutLeft>(false);
  forward_cases<float, Kokkos::LayoutLeft>(false);
}

TEST(TEST_CATEGORY, mpi_loss_empty_partitions) {
  forward_cases<double, Kokkos::LayoutRight>(true);
  forward_cases<float, Kokkos::LayoutLeft>(true);
}

TEST(TEST_CATEGORY, mpi_loss_of_nothing) {  // every rank empty: the sum is 0, the mean NaN
  const Exec space;
  const Problem<float> p(1, 0, 5);
  Kokkos::View<float, Mem> result("result");
  for (Transport t : transports()) {
    loss(with(t), space, p.lx, p.ly, result, Reduction::Sum);
    EXPECT_EQ(value_of(result), 0.0);
    loss(with(t), space, p.lx, p.ly, result, Reduction::Mean);
    EXPECT_TRUE(std::isnan(value_of(result)));
  }
  EXPECT_TRUE(std::isnan(loss(MPI_COMM_WORLD, space, p.lx, p.ly)));
  EXPECT_TRUE(std::isnan(iloss(MPI_COMM_WORLD, space, p.lx, p.ly, result).wait()));
  Kokkos::View<float*, Mem> empty_x, empty_y;  // default-constructed: no memory, size 0
  EXPECT_EQ(loss(MPI_COMM_WORLD, space, empty_x, empty_y, Reduction::Sum), 0.0f);
}

TEST(TEST_CATEGORY, mpi_loss_sub_communicator) {  // even and odd ranks, each its own problem
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank() % 2, rank(), &half);
  const std::uint64_t seed = shared_seed() + rank() % 2;
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Problem<double> p(seed, 17, 33, false, half);
  check_forward(p, half, Reduction::Mean);
  MPI_Comm_free(&half);
}

TEST(TEST_CATEGORY, mpi_nan_on_one_rank_gives_nan_everywhere) {
  const Exec space;
  const Problem<double> p(shared_seed(), 9, 7, true);  // the last rank holds rows
  if (rank() == size() - 1) Kokkos::deep_copy(Kokkos::subview(p.lx, 0, 0), std::numeric_limits<double>::quiet_NaN());
  for (Reduction r : {Reduction::Sum, Reduction::Mean}) {
    EXPECT_TRUE(std::isnan(loss(MPI_COMM_WORLD, space, p.lx, p.ly, r)));
    Kokkos::View<double**, Mem> grad("grad", p.lx.extent(0), p.lx.extent(1));
    EXPECT_TRUE(std::isnan(loss_and_grad(MPI_COMM_WORLD, space, p.lx, p.ly, grad, r)));
  }
}

TEST(TEST_CATEGORY, mpi_mean_over_a_callers_count) {
  // The global sum divided by a count the caller gives (here three times the elements, as over three micro-batches),
  // in every form; the gradient is scaled alike. A count in a View the space reads works too.
  const std::uint64_t seed = shared_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Problem<double> p(seed, 23, 41, true);
  const double count = 3.0 * static_cast<double>(p.rows * p.cols);
  const Exec space;
  const double expect = softmargin::loss(space, p.x, p.y, Reduction::Sum) / count;
  const double tol = tolerance<double>();
  EXPECT_TRUE(close(loss(MPI_COMM_WORLD, space, p.lx, p.ly, mean_over(count)), expect, tol));
  for (Transport t : transports()) {
    Kokkos::View<double, Mem> result("result");
    loss(with(t), space, p.lx, p.ly, result, mean_over(count));
    EXPECT_TRUE(close(value_of(result), expect, tol)) << to_string(t);
  }
  Request request = iloss(MPI_COMM_WORLD, space, p.lx, p.ly, Kokkos::View<double, Mem>("r"), mean_over(count));
  EXPECT_TRUE(close(request.wait(), expect, tol));
  Kokkos::View<double**, Mem> grad("grad", p.lx.extent(0), p.cols), one("one", p.lx.extent(0), p.cols);
  const double fused = loss_and_grad(MPI_COMM_WORLD, space, p.lx, p.ly, grad, mean_over(count));
  EXPECT_TRUE(close(fused, expect, tol));
  softmargin::backward(space, p.lx, p.ly, 1.0 / count, one, Reduction::Sum);  // the local gradient, scaled by hand
  backward(MPI_COMM_WORLD, space, p.lx, p.ly, 1.0, grad, mean_over(count));
  const auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), grad);
  const auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), one);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a.data()[i], b.data()[i], 1e-15) << i;
  Kokkos::View<double, Mem> device_count("count");
  Kokkos::deep_copy(device_count, count);
  EXPECT_TRUE(close(loss(MPI_COMM_WORLD, space, p.lx, p.ly, mean_over(device_count)), expect, tol));
  EXPECT_THROW(loss(MPI_COMM_WORLD, space, p.lx, p.ly, mean_over(0.0)), std::invalid_argument);
}

}  // namespace softmargin::mpi::test

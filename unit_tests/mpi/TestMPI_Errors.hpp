// MPI tests of errors: a bad argument on one rank (or two) gives every rank the same std::invalid_argument, naming
// the failing ranks and the problem; no rank writes an output, no rank is left waiting, and the next call works.
#include "TestMPI_Utils.hpp"

namespace softmargin::mpi::test {

/// Every global call with y_of(rank)'s y (and reduction_of(rank)): all throw alike; results and gradients keep
/// their sentinel values.
template <class YOf, class ROf>
void every_call_fails(const Problem<double>& p, YOf&& y_of, ROf&& reduction_of, const std::string& ranks,
                      const std::string& problem) {
  const Exec space;
  const double sentinel = -7.0;
  Kokkos::View<double, Mem> result("result");
  Kokkos::View<double**, Mem> grad("grad", p.lx.extent(0), p.cols);
  Kokkos::deep_copy(result, sentinel);
  Kokkos::deep_copy(grad, sentinel);
  const Reduction r = reduction_of(rank());
  const auto call = [&](auto&& f) { y_of(rank(), f); };
  {
    SCOPED_TRACE("loss");
    expect_same_error([&] { call([&](const auto& y) { loss(MPI_COMM_WORLD, space, p.lx, y, result, r); }); }, ranks,
                      problem);
  }
  for (Transport t : transports()) {
    SCOPED_TRACE(std::string("loss, ") + to_string(t));
    expect_same_error([&] { call([&](const auto& y) { loss(with(t), space, p.lx, y, result, r); }); }, ranks, problem);
    SCOPED_TRACE("loss_and_grad");
    expect_same_error(
        [&] { call([&](const auto& y) { loss_and_grad(with(t), space, p.lx, y, result, grad, r, 1.0); }); }, ranks,
        problem);
  }
  {
    SCOPED_TRACE("blocking loss");
    expect_same_error([&] { call([&](const auto& y) { (void)loss(MPI_COMM_WORLD, space, p.lx, y, r); }); }, ranks,
                      problem);
    SCOPED_TRACE("iloss");
    expect_same_error([&] { call([&](const auto& y) { iloss(MPI_COMM_WORLD, space, p.lx, y, result, r).wait(); }); },
                      ranks, problem);
    SCOPED_TRACE("backward");
    expect_same_error([&] { call([&](const auto& y) { backward(MPI_COMM_WORLD, space, p.lx, y, 1.0, grad, r); }); },
                      ranks, problem);
    SCOPED_TRACE("blocking loss_and_grad");
    expect_same_error(
        [&] { call([&](const auto& y) { (void)loss_and_grad(MPI_COMM_WORLD, space, p.lx, y, grad, r); }); }, ranks,
        problem);
  }
  EXPECT_EQ(value_of(result), sentinel);
  for (double g : elements_of(grad)) ASSERT_EQ(g, sentinel);
  // The ranks are still in step: a good call works.
  EXPECT_TRUE(close(loss(MPI_COMM_WORLD, space, p.lx, p.ly, Reduction::Sum),
                    softmargin::loss(space, p.x, p.y, Reduction::Sum), 1e-12));
}

TEST(TEST_CATEGORY, mpi_bad_input_on_one_rank_throws_everywhere) {
  const Problem<double> p(shared_seed(), 11, 5);
  const int last = size() - 1;
  const std::string on_last = "failed on rank " + std::to_string(last) + " of " + std::to_string(size());
  const auto mean = [](int) { return Reduction::Mean; };
  Kokkos::View<double**, Mem> wrong("wrong", p.ly.extent(0), p.cols + 1);
  every_call_fails(
      p, [&](int r, auto&& f) { r == last ? f(wrong) : f(p.ly); }, mean, on_last, "does not match");
  every_call_fails(
      p, [&](int, auto&& f) { f(p.ly); }, [&](int r) { return r == last ? Reduction::None : Reduction::Mean; }, on_last,
      "reduction none");
}

TEST(TEST_CATEGORY, mpi_bad_input_on_two_ranks_names_both) {
  if (size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const Problem<double> p(shared_seed(), 13, 3);
  const int last = size() - 1;
  Kokkos::View<double**, Mem> wrong("wrong", p.ly.extent(0) + 2, p.cols);
  every_call_fails(
      p, [&](int r, auto&& f) { r == 0 || r == last ? f(wrong) : f(p.ly); }, [](int) { return Reduction::Sum; },
      "failed on ranks 0, " + std::to_string(last) + " of " + std::to_string(size()) + "; rank 0:", "does not match");
}

TEST(TEST_CATEGORY, mpi_bad_output_on_one_rank_throws_everywhere) {
  const Problem<double> p(shared_seed(), 7, 9, true);  // the last rank holds rows
  const Exec space;
  const bool bad = rank() == size() - 1;
  const std::string on_last = "failed on rank " + std::to_string(size() - 1);
  Kokkos::View<double, Mem> result("result"), none;  // none: no memory
  Kokkos::View<double**, Mem> grad("grad", p.lx.extent(0), p.cols), wide("wide", p.lx.extent(0), p.cols + 1);
  Kokkos::deep_copy(grad, 3.0);
  const auto& out = bad ? none : result;
  expect_same_error([&] { loss(MPI_COMM_WORLD, space, p.lx, p.ly, out); }, on_last, "result is not allocated");
  expect_same_error([&] { iloss(MPI_COMM_WORLD, space, p.lx, p.ly, out).wait(); }, on_last, "not allocated");
  expect_same_error([&] { loss_and_grad(MPI_COMM_WORLD, space, p.lx, p.ly, out, grad); }, on_last,
                    "loss_out is not allocated");
  const auto& g = bad ? wide : grad;
  expect_same_error([&] { backward(MPI_COMM_WORLD, space, p.lx, p.ly, 1.0, g); }, on_last, "grad_x.extent(1)");
  expect_same_error([&] { loss_and_grad(MPI_COMM_WORLD, space, p.lx, p.ly, result, g); }, on_last, "grad_x");
  // The result overlapping x on one rank.
  const Kokkos::View<double, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>> x0(p.lx.data());
  expect_same_error(
      [&] { bad ? loss(MPI_COMM_WORLD, space, p.lx, p.ly, x0) : loss(MPI_COMM_WORLD, space, p.lx, p.ly, result); },
      on_last, "result overlaps");
  for (double v : elements_of(grad)) ASSERT_EQ(v, 3.0);
}

TEST(TEST_CATEGORY, mpi_null_communicator) {
  const Problem<double> p(1, 3, 3);
  EXPECT_THROW((void)loss(MPI_COMM_NULL, Exec(), p.lx, p.ly), std::invalid_argument);
}

}  // namespace softmargin::mpi::test

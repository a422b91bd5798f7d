// MPI tests of the gradients: backward and the fused pass on each rank's rows against the rows of the one-process
// gradient of the whole problem (the mean's scale is 1 / global N), with host and device upstream gradients.
#include "TestMPI_Utils.hpp"

namespace softmargin::mpi::test {

/// Every element of this rank's gradient against rows [begin, end) of the one-process gradient.
template <class T, class L, class G, class Full>
void expect_rows(const Problem<T, L>& p, const G& grad, const Full& full) {
  const auto got = elements_of(grad);
  const auto all = elements_of(full);
  ASSERT_EQ(got.size(), (p.end - p.begin) * p.cols);
  int bad = 0;
  for (std::size_t i = 0; i < got.size() && bad < 5; ++i) {
    const auto ok = close(got[i], all[p.begin * p.cols + i], tolerance<T>());
    if (!ok) ++bad;
    EXPECT_TRUE(ok) << "element " << i;
  }
}

template <class T, class L>
void gradient_cases(bool empty) {
  const std::uint64_t seed = shared_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 gen(seed);
  const Exec space;
  const T upstream = T(0.75);
  Kokkos::View<T, Mem> upstream_view("upstream");
  Kokkos::deep_copy(upstream_view, upstream);
  for (int round = 0; round < 2; ++round) {
    const std::size_t rows = std::uniform_int_distribution<std::size_t>(1, 30)(gen);
    const std::size_t cols = std::uniform_int_distribution<std::size_t>(1, 200)(gen) | 1;
    const Problem<T, L> p(gen(), rows, cols, empty);
    SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + ", rows " + std::to_string(p.begin) + ".." +
                 std::to_string(p.end));
    Kokkos::View<T**, Kokkos::LayoutRight, Mem> full("full", rows, cols);
    Kokkos::View<T**, L, Mem> grad("grad", p.lx.extent(0), cols);
    Kokkos::View<T, Mem> loss_out("loss");
    for (Reduction r : {Reduction::Sum, Reduction::Mean}) {
      SCOPED_TRACE(to_string(r));
      const double expect = softmargin::loss(space, p.x, p.y, r);
      softmargin::backward(space, p.x, p.y, upstream, full, r);

      backward(MPI_COMM_WORLD, space, p.lx, p.ly, upstream, grad, r);
      expect_rows(p, grad, full);
      Kokkos::deep_copy(grad, T(0));
      backward(MPI_COMM_WORLD, space, p.lx, p.ly, upstream_view, grad, r);
      expect_rows(p, grad, full);

      for (Transport t : transports()) {
        SCOPED_TRACE(to_string(t));
        Kokkos::deep_copy(grad, T(0));
        loss_and_grad(with(t), space, p.lx, p.ly, loss_out, grad, r, upstream);
        expect_rows(p, grad, full);
        EXPECT_TRUE(close(value_of(loss_out), expect, tolerance<T>()));
        Kokkos::deep_copy(grad, T(0));
        loss_and_grad(with(t), space, p.lx, p.ly, loss_out, grad, r, upstream_view);
        expect_rows(p, grad, full);
        EXPECT_TRUE(close(value_of(loss_out), expect, tolerance<T>()));
      }
      Kokkos::deep_copy(grad, T(0));
      const T blocking = loss_and_grad(MPI_COMM_WORLD, space, p.lx, p.ly, grad, r, upstream);
      expect_rows(p, grad, full);
      EXPECT_TRUE(close(blocking, expect, tolerance<T>()));
      EXPECT_TRUE(same_on_every_rank(blocking));

      // In place: the gradient over a copy of x.
      Kokkos::View<T**, L, Mem> inplace("inplace", p.lx.extent(0), cols);
      Kokkos::deep_copy(inplace, p.lx);
      loss_and_grad(MPI_COMM_WORLD, space, inplace, p.ly, loss_out, inplace, r, upstream);
      expect_rows(p, inplace, full);
    }
  }
}

TEST(TEST_CATEGORY, mpi_gradients_match_one_process) {
  gradient_cases<double, Kokkos::LayoutRight>(false);
  gradient_cases<float, Kokkos::LayoutLeft>(false);
}

TEST(TEST_CATEGORY, mpi_gradients_empty_partitions) {
  gradient_cases<double, Kokkos::LayoutLeft>(true);
  gradient_cases<float, Kokkos::LayoutRight>(true);
}

}  // namespace softmargin::mpi::test

// MPI tests of the transport option: what each request resolves to, HostStaged forced through a Communicator giving
// the default's result, and bad requests (a transport that cannot run here, transports that differ between the
// ranks, a value that is no Transport) refused on every rank alike, before any output is written.
#include "TestMPI_Utils.hpp"

namespace softmargin::mpi::test {

TEST(TEST_CATEGORY, mpi_transport_choice) {
  // Host memory: the partial is on the host already. Device memory: reduced in place only by a CUDA-aware MPI.
  const bool direct = !Impl::host_memory_v<Exec> && cuda_aware();
  EXPECT_EQ(transport(Exec()), direct ? Transport::DeviceDirect : Transport::HostStaged);
  EXPECT_EQ(transport(Exec(), {.transport = Transport::Auto}), transport(Exec()));
  EXPECT_EQ(transport(Exec(), {.transport = Transport::HostStaged}), Transport::HostStaged);
  if (direct_runs()) {
    EXPECT_EQ(transport(Exec(), {.transport = Transport::DeviceDirect}), Transport::DeviceDirect);
  } else {
    try {
      (void)transport(Exec(), {.transport = Transport::DeviceDirect});
      ADD_FAILURE() << "DeviceDirect accepted without a CUDA-aware MPI";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("not CUDA-aware"), std::string::npos) << e.what();
    }
  }
  EXPECT_STREQ(to_string(Transport::Auto), "auto");
  EXPECT_STREQ(to_string(Transport::HostStaged), "host-staged");
  EXPECT_STREQ(to_string(Transport::DeviceDirect), "device-direct");
}

TEST(TEST_CATEGORY, mpi_host_staged_option_matches_default) {
  const Exec space;
  const Problem<float> p(shared_seed(), 23, 41);
  const Communicator staged(MPI_COMM_WORLD, {.transport = Transport::HostStaged});
  Kokkos::View<float, Mem> by_default("by_default"), forced("forced");
  Kokkos::View<float**, Mem> grad_default("grad_default", p.lx.extent(0), p.cols), grad("grad", p.lx.extent(0), p.cols);
  for (Reduction r : {Reduction::Sum, Reduction::Mean}) {
    SCOPED_TRACE(to_string(r));
    loss(MPI_COMM_WORLD, space, p.lx, p.ly, by_default, r);
    loss(staged, space, p.lx, p.ly, forced, r);
    const double expect = softmargin::loss(space, p.x, p.y, r);
    EXPECT_TRUE(close(value_of(forced), expect, tolerance<float>()));
    EXPECT_TRUE(close(value_of(forced), value_of(by_default), tolerance<float>()));
    if (transport(space) == Transport::HostStaged) EXPECT_EQ(value_of(forced), value_of(by_default));
    EXPECT_TRUE(same_on_every_rank(value_of(forced)));
    loss_and_grad(MPI_COMM_WORLD, space, p.lx, p.ly, by_default, grad_default, r);
    loss_and_grad(staged, space, p.lx, p.ly, forced, grad, r);
    EXPECT_TRUE(close(value_of(forced), value_of(by_default), tolerance<float>()));
    EXPECT_EQ(elements_of(grad), elements_of(grad_default));
    EXPECT_EQ(loss(staged, space, p.lx, p.ly, r), loss(MPI_COMM_WORLD, space, p.lx, p.ly, r));
  }
}

/// Every call on comm_of(rank) throws std::invalid_argument on every rank alike, naming `ranks` and `problem`, where
/// `views_only` the calls into result Views only; results and gradients keep their sentinel values, and the next good
/// call works.
template <class CommOf>
void calls_refused(CommOf&& comm_of, bool views_only, const std::string& ranks, const std::string& problem) {
  const Exec space;
  const Problem<double> p(shared_seed(), 9, 13);
  const Communicator c = comm_of(rank());
  const double sentinel = -7.0;
  Kokkos::View<double, Mem> result("result");
  Kokkos::View<double**, Mem> grad("grad", p.lx.extent(0), p.cols);
  Kokkos::deep_copy(result, sentinel);
  Kokkos::deep_copy(grad, sentinel);
  SCOPED_TRACE("loss");
  expect_same_error([&] { loss(c, space, p.lx, p.ly, result); }, ranks, problem);
  SCOPED_TRACE("loss_and_grad");
  expect_same_error([&] { loss_and_grad(c, space, p.lx, p.ly, result, grad); }, ranks, problem);
  if (!views_only) {
    SCOPED_TRACE("blocking loss");
    expect_same_error([&] { (void)loss(c, space, p.lx, p.ly); }, ranks, problem);
    SCOPED_TRACE("iloss");
    expect_same_error([&] { iloss(c, space, p.lx, p.ly, result).wait(); }, ranks, problem);
    SCOPED_TRACE("backward");
    expect_same_error([&] { backward(c, space, p.lx, p.ly, 1.0, grad); }, ranks, problem);
    SCOPED_TRACE("blocking loss_and_grad");
    expect_same_error([&] { (void)loss_and_grad(c, space, p.lx, p.ly, grad); }, ranks, problem);
  }
  EXPECT_EQ(value_of(result), sentinel);
  for (double g : elements_of(grad)) ASSERT_EQ(g, sentinel);
  EXPECT_TRUE(close(loss(MPI_COMM_WORLD, space, p.lx, p.ly, Reduction::Sum),
                    softmargin::loss(space, p.x, p.y, Reduction::Sum), 1e-12));
}

TEST(TEST_CATEGORY, mpi_device_direct_refused_without_cuda_aware_mpi) {
  if (direct_runs()) GTEST_SKIP() << "MPI reads " << Exec::name() << " memory here";
  std::string all = size() > 1 ? "failed on ranks 0" : "failed on rank 0";
  for (int r = 1; r < size(); ++r) all += ", " + std::to_string(r);
  all += " of " + std::to_string(size());
  calls_refused([](int) { return with(Transport::DeviceDirect); }, false, all,
                "options.transport = device-direct, but MPI cannot read");
}

TEST(TEST_CATEGORY, mpi_no_transport_on_one_rank_refused_everywhere) {
  const int last = size() - 1;
  calls_refused([&](int r) { return with(r == last ? static_cast<Transport>(7) : Transport::Auto); }, false,
                "failed on rank " + std::to_string(last) + " of " + std::to_string(size()),
                "options.transport = 7 is not a softmargin::mpi::Transport");
}

TEST(TEST_CATEGORY, mpi_different_transports_refused_everywhere) {
  if (size() < 2 || !direct_runs()) GTEST_SKIP() << "needs 2 ranks and DeviceDirect";
  calls_refused([](int r) { return with(r == 0 ? Transport::DeviceDirect : Transport::HostStaged); }, true,
                "softmargin::mpi::loss", "different transports (device-direct on 1 of " + std::to_string(size()));
}

}  // namespace softmargin::mpi::test

// MPI tests of the per-call scratch from the instance cache: made once and reused (device backends: the instance's
// own set; host backends: a pooled set), and on host backends a set of its own for each call in flight.
#include "TestMPI_Utils.hpp"

namespace softmargin::mpi::test {

TEST(TEST_CATEGORY, mpi_scratch_reused_and_per_call_on_hosts) {
  using S = Impl::Scratch<Exec, double, long>;  // a set no other test uses: its pool starts empty
  const Exec space;
  const S none;  // acquire() not run: empty Views
  EXPECT_EQ(none.staged().data(), nullptr);
  EXPECT_EQ(none.direct().data(), nullptr);
  const double* first = nullptr;
  {
    S a;
    a.acquire(space);
    first = a.staged().data();
    EXPECT_NE(first, nullptr);
    EXPECT_NE(a.direct().data(), nullptr);
    EXPECT_NE(a.upstream().data(), nullptr);
  }
  S b;
  b.acquire(space);
  EXPECT_EQ(b.staged().data(), first);  // nothing allocated after first use
  if constexpr (Impl::host_memory_v<Exec>) {
    S c;  // while b is held: a set of its own
    c.acquire(space);
    EXPECT_NE(c.staged().data(), first);
    EXPECT_NE(c.direct().data(), b.direct().data());
  }
}

}  // namespace softmargin::mpi::test

// Calibration rows: the cost of launching an empty kernel, the floor under any one-launch call.
#include <algorithm>

#include "bench_common.hpp"

namespace bench {

void add_launch_variants() {
  const int teams = std::max(1, space().concurrency() / 256);
  const Kokkos::TeamPolicy<Exec> team(space(), teams, kHostExec ? 1 : 256);
  add_variant({"launch/empty_team_policy",
               [team](const Buffers&, int) {
                 Kokkos::parallel_for("bench::empty_team", team,
                                      KOKKOS_LAMBDA(const Kokkos::TeamPolicy<Exec>::member_type&){});
               },
               Check::None, 0, PeerKind::None});
  add_variant({"launch/empty_range_policy",
               [](const Buffers&, int) {
                 Kokkos::parallel_for("bench::empty_range", Kokkos::RangePolicy<Exec>(space(), 0, 1),
                                      KOKKOS_LAMBDA(int){});
               },
               Check::None, 0, PeerKind::None});
}

}  // namespace bench

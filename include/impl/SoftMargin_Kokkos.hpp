// SoftMargin: the portable backend, on Kokkos' own policies. Every Kokkos backend runs it; Algorithm::RangeReduce
// and Algorithm::TeamScratch choose its two kernels.
//  - RangeReduce: Kokkos::parallel_reduce (map ops: parallel_for) of the op over a RangePolicy.
//  - TeamScratch: one TeamPolicy launch; each team runs for_share over its share (grid-stride on devices, one
//    contiguous block a team of one thread on hosts), reduces in team scratch and publishes a partial; the last team
//    to finish (an atomic ticket) combines the partials into the result.
#ifndef SOFTMARGIN_IMPL_KOKKOS_HPP
#define SOFTMARGIN_IMPL_KOKKOS_HPP

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <climits>
#include <cstddef>
#include <type_traits>

#include "SoftMargin_Hardware.hpp"
#include "SoftMargin_Ops.hpp"
#include "SoftMargin_Packs.hpp"
#include "SoftMargin_Tuning.hpp"
#include "SoftMargin_Workspace.hpp"

namespace softmargin::Impl::KokkosBackend {

template <class Exec>
using TuningOf = typename Hardware<Exec>::tuning;

template <class Exec, class Index>
using TeamPolicyFor =
    Kokkos::TeamPolicy<Exec, Kokkos::IndexType<Index>,
                       Kokkos::LaunchBounds<TuningOf<Exec>::block_size, TuningOf<Exec>::resident_blocks_per_sm>>;

struct TeamShape {
  int team_size;
  int league_size;
};

/// A grid resident in one wave (the loops stride over the rest), never more teams than team-size tiles of n. Host
/// backends: one team of one thread per hardware thread.
template <class Exec>
TeamShape team_shape(const Exec& space, std::size_t n, int max_league) {
  const std::size_t concurrency = static_cast<std::size_t>(space.concurrency());
  const int ts = is_host_space_v<Exec> ? 1 : TuningOf<Exec>::block_size;
  // Device concurrency is 2048 threads per multiprocessor (Kokkos::Cuda::concurrency()).
  const std::size_t resident = is_host_space_v<Exec>
                                   ? concurrency
                                   : std::max<std::size_t>(1, concurrency / 2048) *
                                         static_cast<std::size_t>(grid_blocks_per_sm<TuningOf<Exec>>(n));
  std::size_t league = std::min<std::size_t>((n + ts - 1) / ts, resident);
  league = std::clamp<std::size_t>(league, 1, static_cast<std::size_t>(max_league));
  return {ts, static_cast<int>(league)};
}

/// The share of `count` items of one team member (see the file comment).
template <class Exec, class Member, class Index>
struct TeamShareOf {
  const Member& team;
  KOKKOS_FORCEINLINE_FUNCTION Share<Index> operator()(const Index count) const {
    if constexpr (is_host_space_v<Exec>) {
      if (team.team_rank() != 0) return {0, 0, 1};  // host teams have one thread; any other does nothing
      return block_share(count, static_cast<Index>(team.league_rank()), static_cast<Index>(team.league_size()));
    } else {
      return strided_share(count, static_cast<Index>(team.league_rank()) * team.team_size() + team.team_rank(),
                           static_cast<Index>(team.league_size()) * team.team_size());
    }
  }
};

/// Tree sum of one value per team member in team scratch `s` (team_size slots), returned to every member. Any team
/// size: the members above the largest power of two fold in first.
template <class Member, class A>
KOKKOS_INLINE_FUNCTION A team_tree_sum(const Member& team, A* s, const A value) {
  const int n = team.team_size();
  const int r = team.team_rank();
  s[r] = value;
  team.team_barrier();
  int p = 1;
  while (2 * p <= n) p *= 2;
  if (r < n - p) s[r] += s[r + p];
  team.team_barrier();
  for (int w = p / 2; w > 0; w /= 2) {
    if (r < w) s[r] += s[r + w];
    team.team_barrier();
  }
  const A total = s[0];
  team.team_barrier();  // s may be reused as soon as this returns
  return total;
}

// ---------------------------------------------------------------------------------------------------------------
// Functors.

/// RangeReduce: sum of op over a RangePolicy, divided by `divisor` (1 for sum, N for mean).
template <class Op, class Index>
struct RangeSumFunctor {
  using value_type = typename Op::accum_type;
  Op op;
  Divisor<value_type> divisor;
  KOKKOS_INLINE_FUNCTION void operator()(const Index i, value_type& sum) const { sum += op(i, op.scale()); }
  KOKKOS_INLINE_FUNCTION void init(value_type& sum) const { sum = value_type(0); }
  KOKKOS_INLINE_FUNCTION void join(value_type& dst, const value_type& src) const { dst += src; }
  KOKKOS_INLINE_FUNCTION void final(value_type& sum) const { sum /= divisor.get(); }
};

/// RangeReduce of a map op.
template <class Op, class Index>
struct RangeMapFunctor {
  Op op;
  KOKKOS_INLINE_FUNCTION void operator()(const Index i) const { op(i, op.scale()); }
};

/// Writes a device accumulator into the result in the result's type (one thread).
template <class AV, class RV>
struct StoreResultFunctor {
  AV accumulator;
  RV result;
  KOKKOS_INLINE_FUNCTION void operator()(const int) const {
    result() =
        Hardware<typename RV::execution_space>::template round_to<typename RV::non_const_value_type>(accumulator());
  }
};

/// TeamScratch of a reduce or fused op, in one launch (see the file comment).
template <class Exec, class Op, class RV, class Index>
struct TeamSumFunctor {
  using A = typename Op::accum_type;
  using policy_type = TeamPolicyFor<Exec, Index>;
  using member_type = typename policy_type::member_type;
  using memory_space = typename Exec::memory_space;
  using unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;

  Op op;
  RV result;
  Kokkos::View<A*, memory_space, unmanaged> partials;
  Kokkos::View<unsigned, memory_space, unmanaged> ticket;
  Index n;
  Divisor<A> divisor;
  bool packed;  ///< use_packs(op)

  KOKKOS_INLINE_FUNCTION static std::size_t scratch_bytes(int team_size) {
    return sizeof(A) * static_cast<std::size_t>(team_size + 1);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const int ts = team.team_size();
    const int r = team.team_rank();
    A* s = static_cast<A*>(team.team_shmem().get_shmem(scratch_bytes(ts)));
    const A sum = team_tree_sum(team, s, for_share<1>(op, n, packed, TeamShareOf<Exec, member_type, Index>{team}));

    if (r == 0) {
      partials(team.league_rank()) = sum;
      Kokkos::memory_fence();  // the partial is visible before the ticket is taken
      const unsigned done = Kokkos::atomic_fetch_add(&ticket(), 1u);
      s[ts] = (done + 1 == static_cast<unsigned>(team.league_size())) ? A(1) : A(0);
    }
    team.team_barrier();
    if (s[ts] == A(0)) return;

    // The last team: every other partial has been published.
    Kokkos::memory_fence();
    A total(0);
    for (int t = r; t < team.league_size(); t += ts) total += Kokkos::atomic_load(&partials(t));
    total = team_tree_sum(team, s, total);
    if (r == 0) {
      result() = Hardware<typename RV::execution_space>::template round_to<typename RV::non_const_value_type>(
          total / divisor.get());
      ticket() = 0u;  // ready for the next launch on this workspace
    }
  }
};

/// TeamScratch of a map op.
template <class Exec, class Op, class Index>
struct TeamMapFunctor {
  using policy_type = TeamPolicyFor<Exec, Index>;
  using member_type = typename policy_type::member_type;
  Op op;
  Index n;
  bool packed;  ///< use_packs(op)
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    for_share<1>(op, n, packed, TeamShareOf<Exec, member_type, Index>{team});
  }
};

// ---------------------------------------------------------------------------------------------------------------
// Launchers.

template <class Index, class Exec, class Op, class RV>
void reduce_range(const Exec& space, const Op& op, std::size_t n, const RV& result,
                  const Divisor<typename Op::accum_type>& divisor) {
  using A = typename Op::accum_type;
  using functor = RangeSumFunctor<Op, Index>;
  const Kokkos::RangePolicy<Exec, Kokkos::IndexType<Index>> policy(space, 0, static_cast<Index>(n));
  if constexpr (std::is_same_v<A, typename RV::non_const_value_type>) {
    Kokkos::parallel_reduce(Op::labels.range, policy, functor{op, divisor}, result);
  } else if constexpr (is_host_space_v<Exec>) {
    A value{};  // host backends reduce synchronously
    Kokkos::parallel_reduce(Op::labels.range, policy, functor{op, divisor}, value);
    result() = Hardware<typename RV::execution_space>::template round_to<typename RV::non_const_value_type>(value);
  } else {
    // Accumulate in A on the device, then convert: both kernels under one workspace lease.
    auto ws = Workspace<Exec, A>::acquire(space, kMaxDeviceTeams);
    const auto acc = ws->accumulator();
    Kokkos::parallel_reduce(Op::labels.range, policy, functor{op, divisor}, acc);
    Kokkos::parallel_for("softmargin::store_result", Kokkos::RangePolicy<Exec>(space, 0, 1),
                         StoreResultFunctor<decltype(acc), RV>{acc, result});
  }
}

template <class Index, class Exec, class Op, class RV>
void reduce_team(const Exec& space, const Op& op, std::size_t n, const RV& result,
                 const Divisor<typename Op::accum_type>& divisor) {
  using A = typename Op::accum_type;
  using functor = TeamSumFunctor<Exec, Op, RV, Index>;
  const auto shape = team_shape(space, n, kMaxDeviceTeams);
  auto ws = Workspace<Exec, A>::acquire(space, shape.league_size);
  typename functor::policy_type policy(space, shape.league_size, shape.team_size);
  policy.set_scratch_size(0, Kokkos::PerTeam(functor::scratch_bytes(shape.team_size)));
  Kokkos::parallel_for(Op::labels.team, policy,
                       functor{op, result, ws->partials, ws->ticket, static_cast<Index>(n), divisor, use_packs(op)});
}

template <class Index, class Exec, class Op>
void map_range(const Exec& space, const Op& op, std::size_t n) {
  Kokkos::parallel_for(Op::labels.range,
                       Kokkos::RangePolicy<Exec, Kokkos::IndexType<Index>>(space, 0, static_cast<Index>(n)),
                       RangeMapFunctor<Op, Index>{op});
}

template <class Index, class Exec, class Op>
void map_team(const Exec& space, const Op& op, std::size_t n) {
  using functor = TeamMapFunctor<Exec, Op, Index>;
  const auto shape = team_shape(space, n, INT_MAX);
  Kokkos::parallel_for(Op::labels.team, typename functor::policy_type(space, shape.league_size, shape.team_size),
                       functor{op, static_cast<Index>(n), use_packs(op)});
}

}  // namespace softmargin::Impl::KokkosBackend

#endif

// SoftMargin: the kernels (one functor per algorithm) and their launchers, generic over the element operation.
#ifndef SOFTMARGIN_IMPL_KERNELS_HPP
#define SOFTMARGIN_IMPL_KERNELS_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstdint>
#include <type_traits>

#include "SoftMargin_Cuda.hpp"
#include "SoftMargin_Ops.hpp"
#include "SoftMargin_Types.hpp"
#include "SoftMargin_Workspace.hpp"

namespace softmargin::Impl {

/// Team kernels on device backends: 256 threads a team, at most 6 teams resident per multiprocessor (a register
/// budget of 42 per thread), and a grid resident in one wave: 6 teams per multiprocessor from 2^23 elements on, 4
/// from 2^22, 3 below, where fewer partials and less tail beat more loads in flight (measured on the H200:
/// docs/PERFORMANCE.md).
inline constexpr int kDeviceTeamSize = 256;
inline constexpr int kDeviceTeamsPerSM = 6;
inline constexpr int kDeviceTeamsPerSMSmall = 4;
inline constexpr int kDeviceTeamsPerSMSmallest = 3;
inline constexpr std::size_t kDeviceSmallN = std::size_t(1) << 23;
inline constexpr std::size_t kDeviceSmallestN = std::size_t(1) << 22;
template <class Exec, class Index>
using TeamPolicyFor = Kokkos::TeamPolicy<Exec, Kokkos::IndexType<Index>,
                                         Kokkos::LaunchBounds<kDeviceTeamSize, kDeviceTeamsPerSM>>;

// ---------------------------------------------------------------------------------------------------------------
// Reduction functors: sum what Op returns for every element, divide by `divisor` (1 for sum, N for mean).

/// Algorithm::RangeReduce: Kokkos::parallel_reduce over a RangePolicy.
template <class Op, class Index>
struct SumFunctor {
  using value_type = typename Op::accum_type;
  Op op;
  value_type divisor;

  KOKKOS_INLINE_FUNCTION void operator()(const Index i, value_type& sum) const { sum += op(i, op.scale()); }
  KOKKOS_INLINE_FUNCTION void init(value_type& sum) const { sum = value_type(0); }
  KOKKOS_INLINE_FUNCTION void join(value_type& dst, const value_type& src) const { dst += src; }
  KOKKOS_INLINE_FUNCTION void final(value_type& sum) const { sum /= divisor; }
};

/// Writes a device accumulator into the result in the result's type (one thread).
template <class AV, class RV>
struct StoreResultFunctor {
  AV accumulator;
  RV result;
  KOKKOS_INLINE_FUNCTION void operator()(const int) const {
    result() = static_cast<typename RV::non_const_value_type>(accumulator());
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

/// The share of `count` work items of one team member: grid-stride on devices (neighbouring threads read neighbouring
/// items: coalesced); one contiguous block per team on hosts (teams of one thread: a sequential stream each).
template <class Exec, class Member, class Index>
struct Share {
  Index begin, end, step;
  KOKKOS_INLINE_FUNCTION Share(const Member& team, const Index count) {
    if constexpr (is_host_space_v<Exec>) {
      const Index teams = static_cast<Index>(team.league_size());
      const Index chunk = count / teams, extra = count % teams, r = static_cast<Index>(team.league_rank());
      begin = r * chunk + (r < extra ? r : extra);
      end = begin + chunk + (r < extra ? 1 : 0);
      if (team.team_rank() != 0) begin = end;  // host teams have one thread; any other does nothing
      step = 1;
    } else {
      begin = static_cast<Index>(team.league_rank()) * team.team_size() + team.team_rank();
      end = count;
      step = static_cast<Index>(team.league_size()) * team.team_size();
    }
  }
};

/// Algorithm::TeamScratch, in one launch: each team sums its Share of the elements (grid-stride on devices, a
/// contiguous block on hosts), reduces in team scratch, publishes its partial; the last team to finish (atomic
/// ticket) combines the partials into the result.
template <class Exec, class Op, class RV, class Index>
struct SumTeamFunctor {
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
  A divisor;
  bool packed;  ///< Op::packed and every pointer 16-byte aligned: read W elements per load

  KOKKOS_INLINE_FUNCTION static std::size_t scratch_bytes(int team_size) {
    return sizeof(A) * static_cast<std::size_t>(team_size + 1);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const int ts = team.team_size();
    const int r = team.team_rank();
    A* s = static_cast<A*>(team.team_shmem().get_shmem(scratch_bytes(ts)));

    const auto scale = op.scale();
    A sum(0);
    bool done = false;
    if constexpr (Op::packed) {
      if (packed) {
        constexpr Index W = Op::pack_type::width;
        const Index packs = n / W;
        const Share<Exec, member_type, Index> share(team, packs);
        LaneSums<A, typename Op::pack_type> lanes;
        for (Index p = share.begin; p < share.end; p += share.step) lanes.add(op.pack(p, scale));
        sum = lanes.total();
        const Share<Exec, member_type, Index> tail(team, n - packs * W);  // the last n % W elements
        for (Index i = tail.begin; i < tail.end; i += tail.step) sum += op(packs * W + i, scale);
        done = true;
      }
    }
    if (!done) {
      const Share<Exec, member_type, Index> share(team, n);
      for (Index i = share.begin; i < share.end; i += share.step) sum += op(i, scale);
    }
    sum = team_tree_sum(team, s, sum);

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
      result() = static_cast<typename RV::non_const_value_type>(total / divisor);
      ticket() = 0u;  // ready for the next launch on this workspace
    }
  }
};

// ---------------------------------------------------------------------------------------------------------------
// Map functors: apply Op to every element (reduction none, gradients).

template <class Op, class Index>
struct MapFunctor {
  Op op;
  KOKKOS_INLINE_FUNCTION void operator()(const Index i) const { op(i, op.scale()); }
};

template <class Exec, class Op, class Index>
struct MapTeamFunctor {
  using policy_type = TeamPolicyFor<Exec, Index>;
  using member_type = typename policy_type::member_type;
  Op op;
  Index n;
  bool packed;  ///< as in SumTeamFunctor
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const auto scale = op.scale();
    if constexpr (Op::packed) {
      if (packed) {
        constexpr Index W = Op::pack_type::width;
        const Index packs = n / W;
        const Share<Exec, member_type, Index> share(team, packs);
        for (Index p = share.begin; p < share.end; p += share.step) op.pack(p, scale);
        const Share<Exec, member_type, Index> tail(team, n - packs * W);
        for (Index i = tail.begin; i < tail.end; i += tail.step) op(packs * W + i, scale);
        return;
      }
    }
    const Share<Exec, member_type, Index> share(team, n);
    for (Index i = share.begin; i < share.end; i += share.step) op(i, scale);
  }
};

// ---------------------------------------------------------------------------------------------------------------
// Launch configuration.

/// 32-bit indices while every index a kernel forms (up to n plus one grid stride) fits, else 64-bit.
inline bool fits_int32(std::size_t n) { return n <= static_cast<std::size_t>(INT_MAX / 2); }

struct TeamShape {
  int team_size;
  int league_size;
};

/// Whether the team kernels may read and write Op's views W elements at a time.
template <class Op>
bool use_packs(const Op& op) {
  if constexpr (Op::packed) return op.aligned();
  else return false;
}

/// Teams per multiprocessor of the device grid for n elements, or SOFTMARGIN_TEAMS_PER_SM (1 to kDeviceTeamsPerSM)
/// for tuning runs of the benchmark (read once).
inline int device_teams_per_sm(std::size_t n) {
  static const int forced = [] {
    const char* e = std::getenv("SOFTMARGIN_TEAMS_PER_SM");
    return e ? std::clamp(std::atoi(e), 1, kDeviceTeamsPerSM) : 0;
  }();
  if (forced) return forced;
  if (n < kDeviceSmallestN) return kDeviceTeamsPerSMSmallest;
  return n < kDeviceSmallN ? kDeviceTeamsPerSMSmall : kDeviceTeamsPerSM;
}

/// A grid resident in one wave (grid-stride loops cover the rest), never more teams than team-size tiles. Host
/// backends: one team of one thread per hardware thread.
template <class Exec>
TeamShape team_shape(const Exec& space, std::size_t n, int max_league) {
  const std::size_t concurrency = static_cast<std::size_t>(space.concurrency());
  const int ts = is_host_space_v<Exec> ? 1 : kDeviceTeamSize;
  // Device concurrency is 2048 threads per multiprocessor (Kokkos::Cuda::concurrency()).
  const std::size_t resident =
      is_host_space_v<Exec> ? concurrency : std::max<std::size_t>(1, concurrency / 2048) * device_teams_per_sm(n);
  std::size_t league = (n + ts - 1) / ts;
  if (league > resident) league = resident;
  if (league > static_cast<std::size_t>(max_league)) league = static_cast<std::size_t>(max_league);
  if (league < 1) league = 1;
  return {ts, static_cast<int>(league)};
}

/// Whether Exec has an Algorithm::Native kernel (CUDA, in translation units that nvcc compiles).
template <class Exec>
inline constexpr bool has_native_v =
#if defined(SOFTMARGIN_HAS_CUDA_NATIVE)
    std::is_same_v<Exec, Kokkos::Cuda>;
#else
    false;
#endif

/// What Algorithm::Auto means (measurements: docs/PERFORMANCE.md). On CUDA the native kernel: one launch at the cost
/// of a CUDA launch, 16-byte loads. Elsewhere the team kernel: on hosts each thread streams one contiguous block in
/// 64-byte packs that the compiler vectorizes, about 10x faster than the RangePolicy loop at 512x4096 on two cores.
/// Algorithm::Native is the team kernel where there is no native one.
template <class Exec>
Algorithm resolve(Algorithm a) {
  if (a == Algorithm::Auto) return has_native_v<Exec> ? Algorithm::Native : Algorithm::TeamScratch;
  if (a == Algorithm::Native && !has_native_v<Exec>) return Algorithm::TeamScratch;
  return a;
}

// ---------------------------------------------------------------------------------------------------------------
// Launchers: the class templates that src/ instantiates explicitly (SoftMargin_ETI.hpp).

/// Sum (or mean) of Op over n elements into the rank-0 View result. Kernels are labelled Op::range_label or
/// Op::team_label.
template <class Exec, class Op, class RV>
struct Reduce {
  static void run(const Exec& space, const Op& op, std::size_t n, const RV& result, Reduction reduction,
                  Algorithm algorithm);
};

/// Op applied to each of n elements.
template <class Exec, class Op>
struct Map {
  static void run(const Exec& space, const Op& op, std::size_t n, Algorithm algorithm);
};

template <class Exec, class Op, class RV, class Index>
void reduce_range(const char* label, const Exec& space, const Op& op, std::size_t n, const RV& result,
                  typename Op::accum_type divisor) {
  using A = typename Op::accum_type;
  using functor = SumFunctor<Op, Index>;
  const Kokkos::RangePolicy<Exec, Kokkos::IndexType<Index>> policy(space, 0, static_cast<Index>(n));
  if constexpr (std::is_same_v<A, typename RV::non_const_value_type>) {
    Kokkos::parallel_reduce(label, policy, functor{op, divisor}, result);
  } else if constexpr (is_host_space_v<Exec>) {
    A value{};  // host backends reduce synchronously
    Kokkos::parallel_reduce(label, policy, functor{op, divisor}, value);
    result() = static_cast<typename RV::non_const_value_type>(value);
  } else {
    // Accumulate in A on the device, then convert: both kernels under one workspace lease.
    auto ws = Workspace<Exec, A>::acquire(space, Workspace<Exec, A>::max_teams);
    const auto acc = ws->accumulator();
    Kokkos::parallel_reduce(label, policy, functor{op, divisor}, acc);
    Kokkos::parallel_for("softmargin::store_result", Kokkos::RangePolicy<Exec>(space, 0, 1),
                         StoreResultFunctor<decltype(acc), RV>{acc, result});
  }
}

template <class Exec, class Op, class RV, class Index>
void reduce_team(const char* label, const Exec& space, const Op& op, std::size_t n, const RV& result,
                 typename Op::accum_type divisor) {
  using A = typename Op::accum_type;
  using functor = SumTeamFunctor<Exec, Op, RV, Index>;
  const auto shape = team_shape(space, n, Workspace<Exec, A>::max_teams);
  auto ws = Workspace<Exec, A>::acquire(space, shape.league_size);
  typename functor::policy_type policy(space, shape.league_size, shape.team_size);
  policy.set_scratch_size(0, Kokkos::PerTeam(functor::scratch_bytes(shape.team_size)));
  Kokkos::parallel_for(label, policy,
                       functor{op, result, ws->partials, ws->ticket, static_cast<Index>(n), divisor, use_packs(op)});
}

#if defined(SOFTMARGIN_HAS_CUDA_NATIVE)
/// Grid of the native `Kernel` over Op's n elements, read `packed` (W elements at a time) or one by one: the team
/// kernels' blocks per multiprocessor, at most `max_per_sm`.
template <auto Kernel, class Op>
unsigned native_grid(const Kokkos::Cuda& space, std::size_t n, bool packed,
                     int max_per_sm = CudaNative::kMaxGridBlocksPerSM) {
  const std::size_t work = packed ? n / Op::pack_type::width : n;
  return CudaNative::grid_for(space, work, std::min(device_teams_per_sm(n), max_per_sm),
                              CudaNative::resident_blocks<Kernel>());
}

/// Algorithm::Native on CUDA: one launch on the instance's stream, partials and ticket in the cached workspace, the
/// reduce kernel in the shape for n (CudaNative::kLatencyMinBlocks).
template <class Op, class RV, class Index>
void reduce_native(const Kokkos::Cuda& space, const Op& op, std::size_t n, const RV& result,
                   typename Op::accum_type divisor) {
  using A = typename Op::accum_type;
  using WS = Workspace<Kokkos::Cuda, A>;
  const bool packed = use_packs(op);
  auto ws = WS::acquire(space, WS::max_teams);
  const auto run = [&]<int MinBlocks>(int grid_per_sm) {
    constexpr auto kernel = CudaNative::reduce_kernel<Op, RV, Index, MinBlocks>;
    const unsigned grid = std::min<unsigned>(native_grid<kernel, Op>(space, n, packed, grid_per_sm), WS::max_teams);
    CudaNative::launch(Op::native_label, space, kernel, grid, op, result, ws->partials.data(), ws->ticket.data(),
                       static_cast<Index>(n), divisor, packed);
  };
  if constexpr (CudaNative::has_latency_shape<Op> && std::is_same_v<Index, int>) {  // n < 2^24 fits in an int
    if (n < CudaNative::kLatencyMaxN) {
      run.template operator()<CudaNative::kLatencyMinBlocks>(CudaNative::kLatencyGridBlocksPerSM);
      return;
    }
  }
  run.template operator()<CudaNative::kBandwidthMinBlocks>(CudaNative::kMaxGridBlocksPerSM);
}

/// Algorithm::Native on CUDA for a map.
template <class Op, class Index>
void map_native(const Kokkos::Cuda& space, const Op& op, std::size_t n) {
  constexpr auto kernel = CudaNative::map_kernel<Op, Index>;
  const bool packed = use_packs(op);
  CudaNative::launch(Op::native_label, space, kernel, native_grid<kernel, Op>(space, n, packed), op,
                     static_cast<Index>(n), packed);
}
#endif

template <class Exec, class Op, class RV>
void Reduce<Exec, Op, RV>::run(const Exec& space, const Op& op, std::size_t n, const RV& result, Reduction reduction,
                               Algorithm algorithm) {
  using A = typename Op::accum_type;
  if (n == 0) {  // sum of nothing is 0; mean of nothing is 0/0 = NaN, as in PyTorch
    const A empty = reduction == Reduction::Mean ? A(0) / A(0) : A(0);
    Kokkos::deep_copy(space, result, static_cast<typename RV::non_const_value_type>(empty));
    return;
  }
  const A divisor = reduction == Reduction::Mean ? static_cast<A>(n) : A(1);
  const bool int32 = fits_int32(n);
  const Algorithm a = resolve<Exec>(algorithm);
#if defined(SOFTMARGIN_HAS_CUDA_NATIVE)
  if constexpr (has_native_v<Exec>) {
    if (a == Algorithm::Native) {
      if (int32) reduce_native<Op, RV, int>(space, op, n, result, divisor);
      else reduce_native<Op, RV, std::int64_t>(space, op, n, result, divisor);
      return;
    }
  }
#endif
  if (a == Algorithm::TeamScratch) {
    if (int32) reduce_team<Exec, Op, RV, int>(Op::team_label, space, op, n, result, divisor);
    else reduce_team<Exec, Op, RV, std::int64_t>(Op::team_label, space, op, n, result, divisor);
  } else {
    if (int32) reduce_range<Exec, Op, RV, int>(Op::range_label, space, op, n, result, divisor);
    else reduce_range<Exec, Op, RV, std::int64_t>(Op::range_label, space, op, n, result, divisor);
  }
}

template <class Exec, class Op, class Index>
void map(const Exec& space, const Op& op, std::size_t n, Algorithm algorithm) {
  const Algorithm a = resolve<Exec>(algorithm);
#if defined(SOFTMARGIN_HAS_CUDA_NATIVE)
  if constexpr (has_native_v<Exec>) {
    if (a == Algorithm::Native) {
      map_native<Op, Index>(space, op, n);
      return;
    }
  }
#endif
  if (a == Algorithm::TeamScratch) {
    const auto shape = team_shape(space, n, INT_MAX);
    Kokkos::parallel_for(Op::team_label,
                         typename MapTeamFunctor<Exec, Op, Index>::policy_type(space, shape.league_size, shape.team_size),
                         MapTeamFunctor<Exec, Op, Index>{op, static_cast<Index>(n), use_packs(op)});
  } else {
    Kokkos::parallel_for(Op::range_label, Kokkos::RangePolicy<Exec, Kokkos::IndexType<Index>>(space, 0, static_cast<Index>(n)),
                         MapFunctor<Op, Index>{op});
  }
}

template <class Exec, class Op>
void Map<Exec, Op>::run(const Exec& space, const Op& op, std::size_t n, Algorithm algorithm) {
  if (n == 0) return;
  if (fits_int32(n)) map<Exec, Op, int>(space, op, n, algorithm);
  else map<Exec, Op, std::int64_t>(space, op, n, algorithm);
}

}  // namespace softmargin::Impl

#endif

// SoftMargin: forward-pass functors and their launchers.
#ifndef SOFTMARGIN_IMPL_FORWARD_IMPL_HPP
#define SOFTMARGIN_IMPL_FORWARD_IMPL_HPP

#include <Kokkos_Core.hpp>

#include <climits>
#include <cstdint>
#include <type_traits>

#include "SoftMargin_Math.hpp"
#include "SoftMargin_Types.hpp"
#include "SoftMargin_Views.hpp"
#include "SoftMargin_Workspace.hpp"

namespace softmargin::Impl {

// ---------------------------------------------------------------------------------------------------------------
// Functors. X, Y (and Out) are canonical views (FlatView or StridedView); element i is at(v, i).

/// Sum of the losses over a RangePolicy; final() divides by `divisor` (1 for sum, N for mean).
template <class XV, class YV, class Index>
struct LossSumFunctor {
  using value_type = accum_t<typename XV::non_const_value_type>;
  XV x;
  YV y;
  value_type divisor;

  KOKKOS_INLINE_FUNCTION void operator()(const Index i, value_type& sum) const { sum += loss(at(x, i), at(y, i)); }
  KOKKOS_INLINE_FUNCTION void init(value_type& sum) const { sum = value_type(0); }
  KOKKOS_INLINE_FUNCTION void join(value_type& dst, const value_type& src) const { dst += src; }
  KOKKOS_INLINE_FUNCTION void final(value_type& sum) const { sum /= divisor; }
};

/// Writes an accumulator into the result View in the result's type (one thread).
template <class AV, class RV>
struct StoreResultFunctor {
  AV accumulator;
  RV result;
  KOKKOS_INLINE_FUNCTION void operator()(const int) const {
    result() = static_cast<typename RV::non_const_value_type>(accumulator());
  }
};

/// Tree sum of one value per team member in team scratch `s` (team_size slots); the total is returned to every
/// member. Works for any team size: the members above the largest power of two fold in first.
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

/// TeamPolicy reduction in one launch: each team reduces its grid-stride share of the elements in team scratch, writes
/// its partial, and the last team to finish (atomic ticket) combines the partials and writes the result.
template <class Exec, class XV, class YV, class RV, class Index>
struct LossSumTeamFunctor {
  using T = typename XV::non_const_value_type;
  using A = accum_t<T>;
  using policy_type = Kokkos::TeamPolicy<Exec, Kokkos::IndexType<Index>>;
  using member_type = typename policy_type::member_type;
  using memory_space = typename Exec::memory_space;

  XV x;
  YV y;
  RV result;
  Kokkos::View<A*, memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>> partials;
  Kokkos::View<unsigned, memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>> ticket;
  Index n;
  A divisor;

  KOKKOS_INLINE_FUNCTION static std::size_t scratch_bytes(int team_size) { return sizeof(A) * static_cast<std::size_t>(team_size + 1); }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const int ts = team.team_size();
    const int r = team.team_rank();
    A* s = static_cast<A*>(team.team_shmem().get_shmem(scratch_bytes(ts)));

    A sum(0);
    const Index stride = static_cast<Index>(team.league_size()) * ts;
    for (Index i = static_cast<Index>(team.league_rank()) * ts + r; i < n; i += stride) sum += loss(at(x, i), at(y, i));
    sum = team_tree_sum(team, s, sum);

    if (r == 0) {
      partials(team.league_rank()) = sum;
      Kokkos::memory_fence();  // the partial is visible before the ticket is taken
      const unsigned done = Kokkos::atomic_fetch_add(&ticket(), 1u);
      s[ts] = (done + 1 == static_cast<unsigned>(team.league_size())) ? A(1) : A(0);
    }
    team.team_barrier();
    if (s[ts] == A(0)) return;

    // Last team: every other partial has been published.
    Kokkos::memory_fence();
    A total(0);
    for (int t = r; t < team.league_size(); t += ts) total += Kokkos::atomic_load(&partials(t));
    total = team_tree_sum(team, s, total);
    if (r == 0) {
      result() = static_cast<T>(total / divisor);
      ticket() = 0u;  // ready for the next launch on this workspace
    }
  }
};

/// Element-wise loss (reduction none) over a RangePolicy.
template <class XV, class YV, class OV, class Index>
struct LossElementwiseFunctor {
  XV x;
  YV y;
  OV out;
  KOKKOS_INLINE_FUNCTION void operator()(const Index i) const { at(out, i) = loss(at(x, i), at(y, i)); }
};

/// Element-wise loss (reduction none) over a TeamPolicy: teams stride over tiles of team_size elements.
template <class Exec, class XV, class YV, class OV, class Index>
struct LossElementwiseTeamFunctor {
  using member_type = typename Kokkos::TeamPolicy<Exec, Kokkos::IndexType<Index>>::member_type;
  XV x;
  YV y;
  OV out;
  Index n;
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const Index stride = static_cast<Index>(team.league_size()) * team.team_size();
    for (Index i = static_cast<Index>(team.league_rank()) * team.team_size() + team.team_rank(); i < n; i += stride)
      at(out, i) = loss(at(x, i), at(y, i));
  }
};

// ---------------------------------------------------------------------------------------------------------------
// Launch configuration.

/// 32-bit indices while every index a kernel forms (up to n plus one grid stride) fits, else 64-bit.
inline bool fits_int32(std::size_t n) { return n <= static_cast<std::size_t>(INT_MAX / 2); }

/// Team size and league size of the TeamPolicy kernels: a grid that fills the machine once, with grid-stride loops.
template <class Exec>
struct TeamShape {
  int team_size;
  int league_size;
};

template <class Exec>
TeamShape<Exec> team_shape(const Exec& space, std::size_t n, int max_league) {
  const int ts = is_host_space_v<Exec> ? 1 : 256;
  const std::size_t fill = static_cast<std::size_t>(space.concurrency()) / static_cast<std::size_t>(ts);
  std::size_t league = (n + ts - 1) / ts;
  if (league > fill) league = fill;
  if (league > static_cast<std::size_t>(max_league)) league = static_cast<std::size_t>(max_league);
  if (league < 1) league = 1;
  return {ts, static_cast<int>(league)};
}

template <class Exec>
Algorithm resolve(Algorithm a, std::size_t /*n*/) {
  if (a != Algorithm::Auto) return a;
  // Device: one launch beats parallel_reduce's reduction plus result-conversion kernels (docs/PERFORMANCE.md).
  // Host: Kokkos' own parallel_reduce has no team barriers.
  return is_host_space_v<Exec> ? Algorithm::RangeReduce : Algorithm::TeamScratch;
}

// ---------------------------------------------------------------------------------------------------------------
// Launchers. These class templates are what src/ instantiates explicitly (see SoftMargin_ETI.hpp).

/// Sum or mean of the losses of x and y (canonical views of equal shape) into the rank-0 View result.
template <class Exec, class XV, class YV, class RV>
struct Reduce {
  static void run(const Exec& space, const XV& x, const YV& y, const RV& result, Reduction reduction,
                  Algorithm algorithm);
};

/// Element-wise losses of x and y into out (canonical views of equal shape).
template <class Exec, class XV, class YV, class OV>
struct Elementwise {
  static void run(const Exec& space, const XV& x, const YV& y, const OV& out, Algorithm algorithm);
};

template <class Exec, class XV, class YV, class RV, class Index>
void reduce_range(const Exec& space, const XV& x, const YV& y, const RV& result, std::size_t n,
                  accum_t<typename XV::non_const_value_type> divisor) {
  using A = accum_t<typename XV::non_const_value_type>;
  using functor = LossSumFunctor<XV, YV, Index>;
  const Kokkos::RangePolicy<Exec, Kokkos::IndexType<Index>> policy(space, 0, static_cast<Index>(n));
  if constexpr (std::is_same_v<A, typename RV::non_const_value_type>) {
    Kokkos::parallel_reduce("softmargin::loss::range_reduce", policy, functor{x, y, divisor}, result);
  } else if constexpr (is_host_space_v<Exec>) {
    A value{};  // host backends reduce synchronously
    Kokkos::parallel_reduce("softmargin::loss::range_reduce", policy, functor{x, y, divisor}, value);
    result() = static_cast<typename RV::non_const_value_type>(value);
  } else {
    // Accumulate in A on the device, then convert: both kernels under the workspace lease.
    auto ws = Workspace<Exec, A>::acquire(space, Workspace<Exec, A>::max_teams);
    const auto acc = ws->accumulator();
    Kokkos::parallel_reduce("softmargin::loss::range_reduce", policy, functor{x, y, divisor}, acc);
    Kokkos::parallel_for("softmargin::loss::store_result", Kokkos::RangePolicy<Exec>(space, 0, 1),
                         StoreResultFunctor<decltype(acc), RV>{acc, result});
  }
}

template <class Exec, class XV, class YV, class RV, class Index>
void reduce_team(const Exec& space, const XV& x, const YV& y, const RV& result, std::size_t n,
                 accum_t<typename XV::non_const_value_type> divisor) {
  using A = accum_t<typename XV::non_const_value_type>;
  using functor = LossSumTeamFunctor<Exec, XV, YV, RV, Index>;
  const auto shape = team_shape(space, n, Workspace<Exec, A>::max_teams);
  auto ws = Workspace<Exec, A>::acquire(space, shape.league_size);
  typename functor::policy_type policy(space, shape.league_size, shape.team_size);
  policy.set_scratch_size(0, Kokkos::PerTeam(functor::scratch_bytes(shape.team_size)));
  Kokkos::parallel_for("softmargin::loss::team_scratch", policy,
                       functor{x, y, result, ws->partials, ws->ticket, static_cast<Index>(n), divisor});
}

template <class Exec, class XV, class YV, class RV>
void Reduce<Exec, XV, YV, RV>::run(const Exec& space, const XV& x, const YV& y, const RV& result,
                                   Reduction reduction, Algorithm algorithm) {
  using A = accum_t<typename XV::non_const_value_type>;
  const std::size_t n = x.size();
  if (n == 0) {  // sum of nothing is 0; mean of nothing is 0/0 = NaN, as in PyTorch
    const A empty = reduction == Reduction::Mean ? A(0) / A(0) : A(0);
    Kokkos::deep_copy(space, result, static_cast<typename RV::non_const_value_type>(empty));
    return;
  }
  const A divisor = reduction == Reduction::Mean ? static_cast<A>(n) : A(1);
  const bool int32 = fits_int32(n);
  if (resolve<Exec>(algorithm, n) == Algorithm::TeamScratch) {
    if (int32) reduce_team<Exec, XV, YV, RV, int>(space, x, y, result, n, divisor);
    else reduce_team<Exec, XV, YV, RV, std::int64_t>(space, x, y, result, n, divisor);
  } else {
    if (int32) reduce_range<Exec, XV, YV, RV, int>(space, x, y, result, n, divisor);
    else reduce_range<Exec, XV, YV, RV, std::int64_t>(space, x, y, result, n, divisor);
  }
}

template <class Exec, class XV, class YV, class OV, class Index>
void elementwise(const Exec& space, const XV& x, const YV& y, const OV& out, std::size_t n, Algorithm algorithm) {
  if (resolve<Exec>(algorithm, n) == Algorithm::TeamScratch) {
    const auto shape = team_shape(space, n, INT_MAX);
    Kokkos::parallel_for("softmargin::loss_none::team",
                         Kokkos::TeamPolicy<Exec, Kokkos::IndexType<Index>>(space, shape.league_size, shape.team_size),
                         LossElementwiseTeamFunctor<Exec, XV, YV, OV, Index>{x, y, out, static_cast<Index>(n)});
  } else {
    Kokkos::parallel_for("softmargin::loss_none::range",
                         Kokkos::RangePolicy<Exec, Kokkos::IndexType<Index>>(space, 0, static_cast<Index>(n)),
                         LossElementwiseFunctor<XV, YV, OV, Index>{x, y, out});
  }
}

template <class Exec, class XV, class YV, class OV>
void Elementwise<Exec, XV, YV, OV>::run(const Exec& space, const XV& x, const YV& y, const OV& out,
                                        Algorithm algorithm) {
  const std::size_t n = x.size();
  if (n == 0) return;
  if (fits_int32(n)) elementwise<Exec, XV, YV, OV, int>(space, x, y, out, n, algorithm);
  else elementwise<Exec, XV, YV, OV, std::int64_t>(space, x, y, out, n, algorithm);
}

}  // namespace softmargin::Impl

#endif

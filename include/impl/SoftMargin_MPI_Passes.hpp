// SoftMargin MPI: the global passes, once for every local problem (SoftMargin_MPI_Problems.hpp: x and y, or a family
// descriptor). Each is the problem's single-process pass on the rank's elements (with Reduction::Sum, or a caller's
// count in memory itself), framed by the allreduces that agree on the arguments, count the elements and sum the
// partials.
#ifndef SOFTMARGIN_IMPL_MPI_PASSES_HPP
#define SOFTMARGIN_IMPL_MPI_PASSES_HPP

#include <SoftMargin.hpp>
#include <array>
#include <limits>
#include <string>
#include <type_traits>

#include "SoftMargin_MPI_Checks.hpp"
#include "SoftMargin_MPI_Impl.hpp"
#include "SoftMargin_MPI_Problems.hpp"
#include "SoftMargin_MPI_Transport.hpp"

namespace softmargin::mpi::Impl {

/// A rank's partial sum: the single-process pass reduces into a double result whatever x's type.
template <class T>
using partial_t = double;

/// A host number as a rank-0 View, for the blocking forms.
template <class T>
Kokkos::View<T, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host_scalar(T& value) {
  return Kokkos::View<T, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(&value);
}

/// What the global sum is divided by: the caller's host count (mean_over), else the global element count for the
/// mean, 1 for the sum (a mean over no element is 0 / 0 = NaN). A count in memory is read elsewhere (sum_divisor).
inline double global_divisor(const ReduceBy& reduction, double count) {
  if (reduction.has_count()) return reduction.count();
  return reduction.reduction() == Reduction::Mean ? count : 1.0;
}

/// The divisor of the global loss: as global_divisor, or a caller's count in memory, read by the dividing kernel
/// (in_kernel) or staged by read_count before the fence (Scratch::count).
template <class Scratch>
Divisor sum_divisor(const ReduceBy& reduction, double count, const Scratch& scratch, bool in_kernel) {
  if (reduction.count_data() == nullptr) return {global_divisor(reduction, count)};
  if (in_kernel) return {1.0, reduction.count_data(), reduction.count_type()};
  return {static_cast<double>(scratch.count()())};
}

/// The reduction of a gradient pass's local pass and what its upstream gradient and partial loss are divided by: a
/// caller's count in memory goes to the local pass itself (the gradient is scaled on the device and each partial is
/// divided already); else the local pass sums and the global divisor scales.
struct LocalReduction {
  ReduceBy reduction;
  double divisor;
};
inline LocalReduction local_reduction(const ReduceBy& reduction, double count) {
  if (reduction.count_data() != nullptr) return {reduction, 1.0};
  return {Reduction::Sum, global_divisor(reduction, count)};
}

/// Whether the execution space can reach a View (else only the host writes it: the blocking forms' results).
template <class ExecSpace, class View>
inline constexpr bool reachable_v = Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible;

/// The global loss into result. result_view: whether result is the caller's View (else a blocking form's host
/// number, which stages). A caller's count in memory divides in the kernel that writes a result View the space
/// reaches; otherwise it is read after the fence.
template <class ExecSpace, class Problem, class ResultView>
void loss(const Communicator& c, const ExecSpace& space, const Problem& problem, const ResultView& result,
          const ReduceBy& reduction, Algorithm algorithm, bool result_view) {
  const std::string name = problem.where("softmargin::mpi::loss");
  const char* where = name.c_str();
  const MPI_Comm comm = c.comm;
  check_comm(where, comm);
  using T = typename Problem::value_type;
  using P = partial_t<T>;
  const std::size_t n = problem.size();
  Status status;
  Scratch<ExecSpace, P, T> scratch;
  Transport transport = Transport::HostStaged;
  status.run([&] {
    check_problem<ExecSpace>(where, problem, reduction, algorithm);
    check_result(where, "result", problem, result);
    transport =
        resolve_transport<ExecSpace>(where, c.options.transport, result_view && reachable_v<ExecSpace, ResultView>);
    scratch.acquire(space);
  });
  const bool direct = transport == Transport::DeviceDirect;
  const bool count_in_kernel = result_view && reachable_v<ExecSpace, ResultView>;
  // DeviceDirect: the partial stays in the space's memory and is reduced there after the agreement; HostStaged: the
  // agreement sums it.
  const auto pass = [&](const auto& partial) {
    status.run([&] {
      if (n > 0)
        problem.run_loss(space, partial, Reduction::Sum, algorithm);
      else if (direct)
        assign(space, partial, 0.0, false);
      if (reduction.count_data() != nullptr && !count_in_kernel) read_count(space, scratch.count(), reduction);
    });
  };
  if constexpr (reachable_v<ExecSpace, ResultView>) {
    if (direct) pass(scratch.direct());
  }
  if (!direct) pass(scratch.staged());
  space.fence("softmargin::mpi::loss: partial sum");
  const bool staged_sum = !direct && status.kind == Status::Ok && n > 0;
  std::array<double, 5> sums{staged_sum ? static_cast<double>(scratch.staged()()) : 0.0, static_cast<double>(n),
                             direct ? 1.0 : 0.0};
  agree(comm, where, sums, status);
  check_same_transport(comm, where, sums[2]);
  const Divisor divisor = sum_divisor(reduction, sums[1], scratch, count_in_kernel);
  if constexpr (reachable_v<ExecSpace, ResultView>) {
    if (direct) {
      const auto partial = scratch.direct();
      check_mpi(MPI_Allreduce(MPI_IN_PLACE, partial.data(), 1, mpi_type<P>(), MPI_SUM, comm), "MPI_Allreduce");
      divide(space, result, partial, divisor);
      return;
    }
  }
  assign(space, result, sums[0], true, divisor);
}

/// The upstream gradient of the local pass: grad_loss / divisor (a host number, or a rank-0 View divided on the
/// device into scratch), or grad_loss itself.
template <class ExecSpace, class Upstream, class Scratch>
auto scaled_upstream(const ExecSpace& space, const Upstream& grad_loss, double divisor, Scratch& scratch) {
  if constexpr (Kokkos::is_view_v<Upstream>) {
    const auto up = scratch.upstream();
    divide(space, up, grad_loss, {divisor});
    return up;
  } else {
    return static_cast<double>(grad_loss) / divisor;
  }
}

/// This rank's gradient of the global loss into grad (a View, or grads(grad_a, grad_b)).
template <class ExecSpace, class Problem, class Upstream, class G>
void backward(const Communicator& c, const ExecSpace& space, const Problem& problem, const Upstream& grad_loss,
              const G& grad, const ReduceBy& reduction, Algorithm algorithm) {
  const std::string name = problem.where("softmargin::mpi::backward");
  const char* where = name.c_str();
  const MPI_Comm comm = c.comm;
  check_comm(where, comm);
  using T = typename Problem::value_type;
  Status status;
  Scratch<ExecSpace, partial_t<T>, T> scratch;
  status.run([&] {
    check_problem<ExecSpace>(where, problem, reduction, algorithm);
    check_grad(where, problem, grad, grad_loss);
    resolve_transport<ExecSpace>(where, c.options.transport, false);
    scratch.acquire(space);
  });
  std::array<double, 3> counts{static_cast<double>(problem.size())};
  agree(comm, where, counts, status);
  if (problem.size() == 0) return;
  const LocalReduction local = local_reduction(reduction, counts[0]);
  if constexpr (Kokkos::is_view_v<Upstream>) {
    if (local.divisor == 1.0) return problem.run_backward(space, grad_loss, grad, local.reduction, algorithm);
  }
  problem.run_backward(space, scaled_upstream(space, grad_loss, local.divisor, scratch), grad, local.reduction,
                       algorithm);
  if constexpr (host_memory_v<ExecSpace>) space.fence("softmargin::mpi::backward: scratch back to the pool");
}

/// The global loss into loss_out and this rank's gradient into grad; result_view as in loss.
template <class ExecSpace, class Problem, class LossView, class G, class Upstream>
void loss_and_grad(const Communicator& c, const ExecSpace& space, const Problem& problem, const LossView& loss_out,
                   const G& grad, const ReduceBy& reduction, const Upstream& grad_loss, Algorithm algorithm,
                   bool result_view) {
  const std::string name = problem.where("softmargin::mpi::loss_and_grad");
  const char* where = name.c_str();
  const MPI_Comm comm = c.comm;
  check_comm(where, comm);
  using T = typename Problem::value_type;
  using P = partial_t<T>;
  const std::size_t n = problem.size();
  Status status;
  Scratch<ExecSpace, P, T> scratch;
  Transport transport = Transport::HostStaged;
  status.run([&] {
    check_problem<ExecSpace>(where, problem, reduction, algorithm);
    check_grad(where, problem, grad, grad_loss);
    check_loss_out(where, problem, loss_out, grad, grad_loss);
    transport =
        resolve_transport<ExecSpace>(where, c.options.transport, result_view && reachable_v<ExecSpace, LossView>);
    scratch.acquire(space);
  });
  std::array<double, 4> counts{static_cast<double>(n), transport == Transport::DeviceDirect ? 1.0 : 0.0};
  agree(comm, where, counts, status);
  check_same_transport(comm, where, counts[1]);
  const LocalReduction local = local_reduction(reduction, counts[0]);
  const auto local_pass = [&](const auto& partial) {
    status.run([&] {
      if (n == 0) return;
      if constexpr (Kokkos::is_view_v<Upstream>) {
        if (local.divisor == 1.0) return problem.run_fused(space, partial, grad, local.reduction, grad_loss, algorithm);
      }
      problem.run_fused(space, partial, grad, local.reduction,
                        scaled_upstream(space, grad_loss, local.divisor, scratch), algorithm);
    });
  };
  if constexpr (reachable_v<ExecSpace, LossView>) {
    if (transport == Transport::DeviceDirect) {
      // A failure of the local pass after the agreement (none of the checked kinds) throws on its rank and gives
      // NaN to the others: a third allreduce would be needed to agree on it.
      const auto partial = scratch.direct();
      local_pass(partial);
      if (status.kind != Status::Ok || n == 0)
        assign(space, partial, status.kind == Status::Ok ? 0.0 : std::numeric_limits<double>::quiet_NaN(), false);
      space.fence("softmargin::mpi::loss_and_grad: partial sum");
      check_mpi(MPI_Allreduce(MPI_IN_PLACE, partial.data(), 1, mpi_type<P>(), MPI_SUM, comm), "MPI_Allreduce");
      divide(space, loss_out, partial, {local.divisor});
      if (status.kind == Status::InvalidArgument) throw std::invalid_argument(status.message);
      if (status.kind != Status::Ok) throw std::runtime_error(status.message);
      return;
    }
  }
  const auto partial = scratch.staged();
  local_pass(partial);
  space.fence("softmargin::mpi::loss_and_grad: partial sum");
  std::array<double, 3> sums{status.kind == Status::Ok && n > 0 ? static_cast<double>(partial()) : 0.0};
  agree(comm, where, sums, status);
  assign(space, loss_out, sums[0] / local.divisor, true);
}

}  // namespace softmargin::mpi::Impl

#endif

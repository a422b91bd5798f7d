// SoftMargin MPI: the global passes. Each is the single-process pass with Reduction::Sum on the rank's elements,
// framed by the allreduces that agree on the arguments, count the elements and sum the partials.
#ifndef SOFTMARGIN_IMPL_MPI_PASSES_HPP
#define SOFTMARGIN_IMPL_MPI_PASSES_HPP

#include <SoftMargin.hpp>
#include <array>
#include <limits>
#include <type_traits>

#include "SoftMargin_MPI_Checks.hpp"
#include "SoftMargin_MPI_Impl.hpp"
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

/// What the global sum is divided by: the caller's count (mean_over), else the global element count for the mean, 1
/// for the sum (a mean over no element is 0 / 0 = NaN).
inline double global_divisor(const ReduceBy& reduction, double count) {
  if (reduction.has_count()) return reduction.count();
  return reduction.reduction() == Reduction::Mean ? count : 1.0;
}

/// Whether the execution space can reach a View (else only the host writes it: the blocking forms' results).
template <class ExecSpace, class View>
inline constexpr bool reachable_v = Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible;

/// The global loss into result. result_view: whether result is the caller's View (else a blocking form's host
/// number, which stages).
template <class ExecSpace, class XView, class YView, class ResultView>
void loss(const Communicator& c, const ExecSpace& space, const XView& x, const YView& y, const ResultView& result,
          const ReduceBy& reduction, Algorithm algorithm, bool result_view) {
  constexpr const char* where = "softmargin::mpi::loss";
  const MPI_Comm comm = c.comm;
  check_comm(where, comm);
  using T = typename XView::non_const_value_type;
  using P = partial_t<T>;
  const double count = static_cast<double>(x.size());
  Status status;
  Scratch<ExecSpace, P, T> scratch;
  Transport transport = Transport::HostStaged;
  status.run([&] {
    check_inputs(where, reduction, algorithm, x, y);
    check_result(where, "result", result, x, y);
    transport =
        resolve_transport<ExecSpace>(where, c.options.transport, result_view && reachable_v<ExecSpace, ResultView>);
    scratch.acquire(space);
  });
  const bool direct = transport == Transport::DeviceDirect;
  // DeviceDirect: the partial stays in the space's memory and is reduced there after the agreement; HostStaged: the
  // agreement sums it.
  const auto pass = [&](const auto& partial) {
    status.run([&] {
      if (x.size() > 0)
        softmargin::loss(space, x, y, partial, Reduction::Sum, algorithm);
      else if (direct)
        assign(space, partial, 0.0, false);
    });
  };
  if constexpr (reachable_v<ExecSpace, ResultView>) {
    if (direct) pass(scratch.direct());
  }
  if (!direct) pass(scratch.staged());
  space.fence("softmargin::mpi::loss: partial sum");
  const bool staged_sum = !direct && status.kind == Status::Ok && x.size() > 0;
  std::array<double, 5> sums{staged_sum ? static_cast<double>(scratch.staged()()) : 0.0, count, direct ? 1.0 : 0.0};
  agree(comm, where, sums, status);
  check_same_transport(comm, where, sums[2]);
  if constexpr (reachable_v<ExecSpace, ResultView>) {
    if (direct) {
      const auto partial = scratch.direct();
      check_mpi(MPI_Allreduce(MPI_IN_PLACE, partial.data(), 1, mpi_type<P>(), MPI_SUM, comm), "MPI_Allreduce");
      divide(space, result, partial, global_divisor(reduction, sums[1]));
      return;
    }
  }
  assign(space, result, sums[0] / global_divisor(reduction, sums[1]), true);
}

/// The upstream gradient of the local pass: grad_loss / divisor (a host number, or a rank-0 View divided on the
/// device into scratch), or grad_loss itself.
template <class ExecSpace, class Upstream, class Scratch>
auto scaled_upstream(const ExecSpace& space, const Upstream& grad_loss, double divisor, Scratch& scratch) {
  if constexpr (Kokkos::is_view_v<Upstream>) {
    const auto up = scratch.upstream();
    divide(space, up, grad_loss, divisor);
    return up;
  } else {
    return static_cast<double>(grad_loss) / divisor;
  }
}

template <class ExecSpace, class XView, class YView, class Upstream, class GradView>
void backward(const Communicator& c, const ExecSpace& space, const XView& x, const YView& y, const Upstream& grad_loss,
              const GradView& grad_x, const ReduceBy& reduction, Algorithm algorithm) {
  constexpr const char* where = "softmargin::mpi::backward";
  const MPI_Comm comm = c.comm;
  check_comm(where, comm);
  using T = typename XView::non_const_value_type;
  Status status;
  Scratch<ExecSpace, partial_t<T>, T> scratch;
  status.run([&] {
    check_inputs(where, reduction, algorithm, x, y);
    check_grad(where, grad_x, x, y, grad_loss);
    resolve_transport<ExecSpace>(where, c.options.transport, false);
    scratch.acquire(space);
  });
  std::array<double, 3> counts{static_cast<double>(x.size())};
  agree(comm, where, counts, status);
  if (x.size() == 0) return;
  const double divisor = global_divisor(reduction, counts[0]);
  if constexpr (Kokkos::is_view_v<Upstream>) {
    if (divisor == 1.0) return softmargin::backward(space, x, y, grad_loss, grad_x, Reduction::Sum, algorithm);
  }
  softmargin::backward(space, x, y, scaled_upstream(space, grad_loss, divisor, scratch), grad_x, Reduction::Sum,
                       algorithm);
  if constexpr (host_memory_v<ExecSpace>) space.fence("softmargin::mpi::backward: scratch back to the pool");
}

/// The global loss into loss_out and this rank's gradient into grad_x; result_view as in loss.
template <class ExecSpace, class XView, class YView, class LossView, class GradView, class Upstream>
void loss_and_grad(const Communicator& c, const ExecSpace& space, const XView& x, const YView& y,
                   const LossView& loss_out, const GradView& grad_x, const ReduceBy& reduction,
                   const Upstream& grad_loss, Algorithm algorithm, bool result_view) {
  constexpr const char* where = "softmargin::mpi::loss_and_grad";
  const MPI_Comm comm = c.comm;
  check_comm(where, comm);
  using T = typename XView::non_const_value_type;
  using P = partial_t<T>;
  Status status;
  Scratch<ExecSpace, P, T> scratch;
  Transport transport = Transport::HostStaged;
  status.run([&] {
    check_inputs(where, reduction, algorithm, x, y);
    check_grad(where, grad_x, x, y, grad_loss);
    if constexpr (Kokkos::is_view_v<Upstream>)
      check_result(where, "loss_out", loss_out, x, y, grad_x, grad_loss);
    else
      check_result(where, "loss_out", loss_out, x, y, grad_x);
    transport =
        resolve_transport<ExecSpace>(where, c.options.transport, result_view && reachable_v<ExecSpace, LossView>);
    scratch.acquire(space);
  });
  std::array<double, 4> counts{static_cast<double>(x.size()), transport == Transport::DeviceDirect ? 1.0 : 0.0};
  agree(comm, where, counts, status);
  check_same_transport(comm, where, counts[1]);
  const double divisor = global_divisor(reduction, counts[0]);
  const auto local_pass = [&](const auto& partial) {
    status.run([&] {
      if (x.size() == 0) return;
      if constexpr (Kokkos::is_view_v<Upstream>) {
        if (divisor == 1.0)
          return softmargin::loss_and_grad(space, x, y, partial, grad_x, Reduction::Sum, grad_loss, algorithm);
      }
      softmargin::loss_and_grad(space, x, y, partial, grad_x, Reduction::Sum,
                                scaled_upstream(space, grad_loss, divisor, scratch), algorithm);
    });
  };
  if constexpr (reachable_v<ExecSpace, LossView>) {
    if (transport == Transport::DeviceDirect) {
      // A failure of the local pass after the agreement (none of the checked kinds) throws on its rank and gives
      // NaN to the others: a third allreduce would be needed to agree on it.
      const auto partial = scratch.direct();
      local_pass(partial);
      if (status.kind != Status::Ok || x.size() == 0)
        assign(space, partial, status.kind == Status::Ok ? 0.0 : std::numeric_limits<double>::quiet_NaN(), false);
      space.fence("softmargin::mpi::loss_and_grad: partial sum");
      check_mpi(MPI_Allreduce(MPI_IN_PLACE, partial.data(), 1, mpi_type<P>(), MPI_SUM, comm), "MPI_Allreduce");
      divide(space, loss_out, partial, divisor);
      if (status.kind == Status::InvalidArgument) throw std::invalid_argument(status.message);
      if (status.kind != Status::Ok) throw std::runtime_error(status.message);
      return;
    }
  }
  const auto partial = scratch.staged();
  local_pass(partial);
  space.fence("softmargin::mpi::loss_and_grad: partial sum");
  std::array<double, 3> sums{status.kind == Status::Ok && x.size() > 0 ? static_cast<double>(partial()) : 0.0};
  agree(comm, where, sums, status);
  assign(space, loss_out, sums[0] / divisor, true);
}

}  // namespace softmargin::mpi::Impl

#endif

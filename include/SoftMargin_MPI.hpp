// SoftMargin over MPI: one SoftMarginLoss (or one loss of the family) over the elements of every rank of a
// communicator.
//
// Each rank holds a part of x and y (any sizes, empty parts too). The sum is the sum over all ranks' elements, the
// mean divides it by the global N, and the gradient of the mean is scaled by 1 / global N. Locally each call runs the
// single-process pass of SoftMargin.hpp (with Reduction::Sum, but for a count View below); the ranks then sum their
// partials and counts with MPI_Allreduce, in double. Every call is collective over the communicator: every rank calls
// it, in the same order.
//
// The communicator argument is a Communicator: an MPI_Comm, which converts to one with the default options, or one
// with Options, e.g. Communicator(MPI_COMM_WORLD, {.transport = Transport::HostStaged}). Options::transport chooses
// how the partial sums travel (Transport::Auto by default); every rank passes the same options.
//
// Errors: every rank checks its arguments, and the ranks agree on the outcome in an allreduce before any rank writes
// an output; then every rank throws the same exception type (std::invalid_argument for a bad argument), with a
// message that names the failing ranks and the lowest one's problem. Nobody is left waiting. A transport that cannot
// run (DeviceDirect where MPI cannot read the space's memory) is a bad argument, and so are transports that differ
// between the ranks of a call. NaN on one rank gives NaN on every rank; the mean over a global N of 0 is NaN.
//
// The family: every call takes a descriptor of SoftMargin_Family.hpp (soft_margin, bce_with_logits, pairwise) in
// place of x and y, with its checks; a pairwise loss's gradient is grads(grad_a, grad_b):
//
//   softmargin::mpi::loss(comm, space, softmargin::bce_with_logits(x, t, weight, pos_weight), result);
//   softmargin::mpi::backward(comm, space, softmargin::pairwise(a, b, 0.5), 1.0, softmargin::grads(grad_a, grad_b));
//
// mean_over(count): the global count, the same on every rank; the global sum is divided by it. A count in a rank-0
// View is read where it lives: loss divides the summed partials by it in the one-element kernel that writes a result
// View the space reaches, and the blocking forms and iloss read it after the local pass's fence; backward and
// loss_and_grad hand mean_over(View) to the local pass itself, so the gradient is scaled on the device and the
// global loss is the sum of the ranks' partials, each divided already.
#ifndef SOFTMARGIN_MPI_HPP
#define SOFTMARGIN_MPI_HPP

#include <SoftMargin.hpp>

#include "impl/SoftMargin_MPI_Checks.hpp"
#include "impl/SoftMargin_MPI_Impl.hpp"
#include "impl/SoftMargin_MPI_Passes.hpp"
#include "impl/SoftMargin_MPI_Problems.hpp"
#include "impl/SoftMargin_MPI_Request.hpp"
#include "impl/SoftMargin_MPI_Transport.hpp"

namespace softmargin::mpi {

/// The transport that calls with these options on this execution space use for a result View: options.transport,
/// where Transport::Auto gives Transport::DeviceDirect on CUDA when MPI is CUDA-aware (cuda_aware()), else
/// Transport::HostStaged. The blocking forms and iloss always stage through the host.
/// \throws std::invalid_argument (on this rank only) for DeviceDirect where MPI cannot read the space's memory
template <class ExecSpace>
requires(Kokkos::is_execution_space_v<ExecSpace>) Transport transport(const ExecSpace&, const Options& options = {}) {
  return Impl::resolve_transport<ExecSpace>("softmargin::mpi::transport", options.transport);
}

// =================================================================================================================
// Forward

/// \brief Global SoftMarginLoss (Sum or Mean over all ranks' elements) into a rank-0 View on every rank.
///
/// The local pass is enqueued on `space` and fenced; the call returns once the ranks have summed their partials, and
/// writes `result` in `space`'s order (a device result with a one-thread kernel, not fenced). Cost over the local
/// call: one fence and one MPI_Allreduce of 5 doubles (HostStaged), and for DeviceDirect a second one, of the partial
/// in device memory.
/// \param result rank-0 View of any floating type, accessible from space
/// \throws std::invalid_argument on every rank when any rank's arguments are bad (see the file comment)
template <class ExecSpace, class XView, class YView, class ResultView>
requires(Kokkos::is_execution_space_v<ExecSpace>&& Kokkos::is_view_v<ResultView>) void loss(
    const Communicator& comm, const ExecSpace& space, const XView& x, const YView& y, const ResultView& result,
    ReduceBy reduction = Reduction::Mean, Algorithm algorithm = Algorithm::Auto) {
  if constexpr (Impl::check_mpi_input_types<ExecSpace, XView, YView>() &&
                Impl::check_result_type<ExecSpace, ResultView>())
    Impl::loss(comm, space, Impl::XYProblem<XView, YView>{x, y}, result, reduction, algorithm, true);
}

/// \brief Global SoftMarginLoss returned on every rank (blocking); stages through host memory.
template <class ExecSpace, class XView, class YView>
requires(Kokkos::is_execution_space_v<ExecSpace>&& Kokkos::is_view_v<XView>) typename XView::non_const_value_type
    loss(const Communicator& comm, const ExecSpace& space, const XView& x, const YView& y,
         ReduceBy reduction = Reduction::Mean, Algorithm algorithm = Algorithm::Auto) {
  typename XView::non_const_value_type value{};
  if constexpr (Impl::check_mpi_input_types<ExecSpace, XView, YView>())
    Impl::loss(comm, space, Impl::XYProblem<XView, YView>{x, y}, Impl::host_scalar(value), reduction, algorithm, false);
  return value;
}

/// \brief Starts the global loss: the local pass is run and fenced, then MPI_Iallreduce starts; Request::wait()
/// (on every rank) completes it, writes `result` and returns the value. Work enqueued or done between iloss and
/// wait overlaps the allreduce. Always stages through host memory.
template <class ExecSpace, class XView, class YView, class ResultView>
requires(Kokkos::is_execution_space_v<ExecSpace>&& Kokkos::is_view_v<ResultView>) [[nodiscard]] Request
    iloss(const Communicator& comm, const ExecSpace& space, const XView& x, const YView& y, const ResultView& result,
          ReduceBy reduction = Reduction::Mean, Algorithm algorithm = Algorithm::Auto) {
  if constexpr (Impl::check_mpi_input_types<ExecSpace, XView, YView>() &&
                Impl::check_result_type<ExecSpace, ResultView>())
    return Impl::iloss(comm, space, Impl::XYProblem<XView, YView>{x, y}, result, reduction, algorithm);
  else
    return Request();
}

// =================================================================================================================
// Backward

/// \brief Gradient of the global loss with respect to this rank's x: grad_x = grad_loss * d loss / d x, with
/// grad_loss / (global N) for Mean.
///
/// One MPI_Allreduce of 3 doubles (the count and the agreement) comes before the local pass, which is enqueued on
/// `space` and not fenced. grad_loss: a host scalar or a rank-0 View (read on the device; for Mean it is divided by
/// N with a one-thread kernel first).
template <class ExecSpace, class XView, class YView, class Upstream, class GradView>
requires(Kokkos::is_execution_space_v<ExecSpace>&& Kokkos::is_view_v<GradView>) void backward(
    const Communicator& comm, const ExecSpace& space, const XView& x, const YView& y, const Upstream& grad_loss,
    const GradView& grad_x, ReduceBy reduction = Reduction::Mean, Algorithm algorithm = Algorithm::Auto) {
  if constexpr (Impl::check_mpi_input_types<ExecSpace, XView, YView>() &&
                softmargin::Impl::check_grad_type<ExecSpace, XView, GradView>() &&
                softmargin::Impl::check_upstream_type<ExecSpace, XView, Upstream, false>())
    Impl::backward(comm, space, Impl::XYProblem<XView, YView>{x, y}, grad_loss, grad_x, reduction, algorithm);
}

// =================================================================================================================
// Fused forward + backward

/// \brief Global loss into loss_out and this rank's gradient into grad_x, with one local pass.
///
/// Cost over the local fused call: an MPI_Allreduce of 4 doubles before the pass (the global N scales the mean's
/// gradient, and the ranks agree on their arguments and transport before any writes grad_x), a fence, and the
/// allreduce of the partial sums after it (HostStaged: 3 doubles on the host; DeviceDirect: the partial in device
/// memory).
template <class ExecSpace, class XView, class YView, class LossView, class GradView,
          class Upstream = typename XView::non_const_value_type>
requires(Kokkos::is_execution_space_v<ExecSpace>&& Kokkos::is_view_v<LossView>&&
             Kokkos::is_view_v<GradView>) void loss_and_grad(const Communicator& comm, const ExecSpace& space,
                                                             const XView& x, const YView& y, const LossView& loss_out,
                                                             const GradView& grad_x,
                                                             ReduceBy reduction = Reduction::Mean,
                                                             const Upstream& grad_loss = Upstream(1),
                                                             Algorithm algorithm = Algorithm::Auto) {
  if constexpr (Impl::check_mpi_input_types<ExecSpace, XView, YView>() &&
                Impl::check_result_type<ExecSpace, LossView>() &&
                softmargin::Impl::check_grad_type<ExecSpace, XView, GradView>() &&
                softmargin::Impl::check_upstream_type<ExecSpace, XView, Upstream, false>())
    Impl::loss_and_grad(comm, space, Impl::XYProblem<XView, YView>{x, y}, loss_out, grad_x, reduction, grad_loss,
                        algorithm, true);
}

/// \brief Blocking fused pass: writes grad_x and returns the global loss on every rank.
template <class ExecSpace, class XView, class YView, class GradView,
          class Upstream = typename XView::non_const_value_type>
requires(Kokkos::is_execution_space_v<ExecSpace>&& Kokkos::is_view_v<XView>&& Kokkos::is_view_v<GradView>)
    typename XView::non_const_value_type
    loss_and_grad(const Communicator& comm, const ExecSpace& space, const XView& x, const YView& y,
                  const GradView& grad_x, ReduceBy reduction = Reduction::Mean, const Upstream& grad_loss = Upstream(1),
                  Algorithm algorithm = Algorithm::Auto) {
  typename XView::non_const_value_type value{};
  if constexpr (Impl::check_mpi_input_types<ExecSpace, XView, YView>() &&
                softmargin::Impl::check_grad_type<ExecSpace, XView, GradView>() &&
                softmargin::Impl::check_upstream_type<ExecSpace, XView, Upstream, false>())
    Impl::loss_and_grad(comm, space, Impl::XYProblem<XView, YView>{x, y}, Impl::host_scalar(value), grad_x, reduction,
                        grad_loss, algorithm, false);
  return value;
}

// =================================================================================================================
// The family: a descriptor (soft_margin, bce_with_logits, pairwise) in place of x and y, on the same global passes.

/// \brief Global loss of a family member into a rank-0 View on every rank, as loss(comm, space, x, y, result, ...).
template <class ExecSpace, class In, class ResultView>
requires(Kokkos::is_execution_space_v<ExecSpace>&& softmargin::Impl::is_inputs_v<In>&&
             Kokkos::is_view_v<ResultView>) void loss(const Communicator& comm, const ExecSpace& space, const In& in,
                                                      const ResultView& result, ReduceBy reduction = Reduction::Mean,
                                                      Algorithm algorithm = Algorithm::Auto) {
  if constexpr (In::template check_types<ExecSpace>() && Impl::check_result_type<ExecSpace, ResultView>())
    Impl::loss(comm, space, Impl::FamilyProblem<In>{in}, result, reduction, algorithm, true);
}

/// \brief Global loss of a family member returned on every rank (blocking), of the first input's type (float for
/// 16-bit inputs).
template <class ExecSpace, class In>
requires(Kokkos::is_execution_space_v<ExecSpace>&& softmargin::Impl::is_inputs_v<In>)
    softmargin::Impl::family_result_t<In> loss(const Communicator& comm, const ExecSpace& space, const In& in,
                                               ReduceBy reduction = Reduction::Mean,
                                               Algorithm algorithm = Algorithm::Auto) {
  softmargin::Impl::family_result_t<In> value{};
  if constexpr (In::template check_types<ExecSpace>())
    Impl::loss(comm, space, Impl::FamilyProblem<In>{in}, Impl::host_scalar(value), reduction, algorithm, false);
  return value;
}

/// \brief Starts the global loss of a family member, as iloss(comm, space, x, y, result, ...).
template <class ExecSpace, class In, class ResultView>
requires(Kokkos::is_execution_space_v<ExecSpace>&& softmargin::Impl::is_inputs_v<In>&& Kokkos::is_view_v<ResultView>)
    [[nodiscard]] Request
    iloss(const Communicator& comm, const ExecSpace& space, const In& in, const ResultView& result,
          ReduceBy reduction = Reduction::Mean, Algorithm algorithm = Algorithm::Auto) {
  if constexpr (In::template check_types<ExecSpace>() && Impl::check_result_type<ExecSpace, ResultView>())
    return Impl::iloss(comm, space, Impl::FamilyProblem<In>{in}, result, reduction, algorithm);
  else
    return Request();
}

/// \brief This rank's gradient of a family member's global loss: a View for the first input, or grads(grad_a,
/// grad_b) for a pairwise loss; as backward(comm, space, x, y, grad_loss, grad_x, ...).
template <class ExecSpace, class In, class Upstream, class G>
requires(Kokkos::is_execution_space_v<ExecSpace>&& softmargin::Impl::is_inputs_v<In> &&
         !softmargin::Impl::is_reduction_arg_v<G>) void backward(const Communicator& comm, const ExecSpace& space,
                                                                 const In& in, const Upstream& grad_loss, const G& grad,
                                                                 ReduceBy reduction = Reduction::Mean,
                                                                 Algorithm algorithm = Algorithm::Auto) {
  using X = typename In::first_view;
  if constexpr (In::template check_types<ExecSpace>() && softmargin::Impl::check_grads_type<ExecSpace, In, G>() &&
                softmargin::Impl::check_upstream_type<ExecSpace, X, Upstream, false>())
    Impl::backward(comm, space, Impl::FamilyProblem<In>{in}, grad_loss, grad, reduction, algorithm);
}

/// \brief A family member's global loss into loss_out and this rank's gradient in one local pass, as
/// loss_and_grad(comm, space, x, y, loss_out, grad_x, ...).
template <class ExecSpace, class In, class LossView, class G, class Upstream = softmargin::Impl::family_result_t<In>>
requires(Kokkos::is_execution_space_v<ExecSpace>&& softmargin::Impl::is_inputs_v<In>&& Kokkos::is_view_v<LossView> &&
         !softmargin::Impl::is_reduction_arg_v<G>) void loss_and_grad(const Communicator& comm, const ExecSpace& space,
                                                                      const In& in, const LossView& loss_out,
                                                                      const G& grad,
                                                                      ReduceBy reduction = Reduction::Mean,
                                                                      const Upstream& grad_loss = Upstream(1),
                                                                      Algorithm algorithm = Algorithm::Auto) {
  using X = typename In::first_view;
  if constexpr (In::template check_types<ExecSpace>() && Impl::check_result_type<ExecSpace, LossView>() &&
                softmargin::Impl::check_grads_type<ExecSpace, In, G>() &&
                softmargin::Impl::check_upstream_type<ExecSpace, X, Upstream, false>())
    Impl::loss_and_grad(comm, space, Impl::FamilyProblem<In>{in}, loss_out, grad, reduction, grad_loss, algorithm,
                        true);
}

/// \brief Blocking fused pass of a family member: writes the gradient and returns the global loss on every rank.
template <class ExecSpace, class In, class G, class Upstream = softmargin::Impl::family_result_t<In>>
requires(Kokkos::is_execution_space_v<ExecSpace>&& softmargin::Impl::is_inputs_v<In> &&
         !softmargin::Impl::is_reduction_arg_v<G>)
    softmargin::Impl::family_result_t<In> loss_and_grad(const Communicator& comm, const ExecSpace& space, const In& in,
                                                        const G& grad, ReduceBy reduction = Reduction::Mean,
                                                        const Upstream& grad_loss = Upstream(1),
                                                        Algorithm algorithm = Algorithm::Auto) {
  using X = typename In::first_view;
  softmargin::Impl::family_result_t<In> value{};
  if constexpr (In::template check_types<ExecSpace>() && softmargin::Impl::check_grads_type<ExecSpace, In, G>() &&
                softmargin::Impl::check_upstream_type<ExecSpace, X, Upstream, false>())
    Impl::loss_and_grad(comm, space, Impl::FamilyProblem<In>{in}, Impl::host_scalar(value), grad, reduction, grad_loss,
                        algorithm, false);
  return value;
}

}  // namespace softmargin::mpi

#endif

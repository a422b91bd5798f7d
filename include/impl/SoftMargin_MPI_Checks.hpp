// SoftMargin MPI: the argument checks every rank runs before the ranks agree on a status.
//
// They are the single-process calls' own checks (impl/SoftMargin_Checks.hpp, impl/SoftMargin_Passes.hpp) applied to
// the global call's arguments through its local problem (SoftMargin_MPI_Problems.hpp), plus the global call's own (a
// reduction with one value over the ranks), so that a bad argument on one rank is known to every rank before any rank
// launches a kernel or writes an output: a rank whose local View is empty never runs the single-process pass, and
// backward writes its gradient in its only pass.
#ifndef SOFTMARGIN_IMPL_MPI_CHECKS_HPP
#define SOFTMARGIN_IMPL_MPI_CHECKS_HPP

#include <SoftMargin.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace softmargin::mpi::Impl {

/// Reductions with one value over all ranks: Sum and Mean.
inline void check_global_reduction(const char* where, Reduction r) {
  softmargin::Impl::check_reduction(where, r);
  if (r == Reduction::None)
    throw std::invalid_argument(std::string(where) +
                                ": reduction none has no value over the ranks (call the single-process "
                                "softmargin:: function on each rank)");
}

/// The reduction (one value over the ranks), and the local problem's checks (SoftMargin_MPI_Problems.hpp): its
/// inputs, the algorithm and a caller's count (a positive host number, or a View the execution space reads).
template <class Exec, class Problem>
void check_problem(const char* where, const Problem& problem, const ReduceBy& reduction, Algorithm algorithm) {
  check_global_reduction(where, reduction.reduction());
  problem.template check<Exec>(where, reduction, algorithm);
}

/// A reduced result: allocated, and apart from the inputs.
template <class Problem, class ResultView>
void check_result(const char* where, const char* name, const Problem& problem, const ResultView& result) {
  softmargin::Impl::check_allocated(where, name, result);
  problem.check_alias_of(where, name, result);
}

/// The gradients (a View, or grads(grad_a, grad_b)) and a scalar upstream gradient (a host number, or a rank-0 View
/// apart from the gradients).
template <class Problem, class G, class Upstream>
void check_grad(const char* where, const Problem& problem, const G& grad, const Upstream& grad_loss) {
  problem.check_grad(where, grad);
  if constexpr (Kokkos::is_view_v<Upstream>) {
    softmargin::Impl::check_allocated(where, "grad_loss", grad_loss);
    softmargin::Impl::check_alias_grads(where, "grad_loss", grad_loss, grad);
  }
}

/// The fused pass's loss_out: a reduced result apart from the gradients and a grad_loss View too.
template <class Problem, class LossView, class G, class Upstream>
void check_loss_out(const char* where, const Problem& problem, const LossView& loss_out, const G& grad,
                    const Upstream& grad_loss) {
  check_result(where, "loss_out", problem, loss_out);
  softmargin::Impl::check_alias_grads(where, "loss_out", loss_out, grad);
  if constexpr (Kokkos::is_view_v<Upstream>)
    softmargin::Impl::check_alias(where, "loss_out", loss_out, "grad_loss", grad_loss);
}

/// Compile-time: the library's input checks, and x and y of one type, float or double (the MPI layer does not take
/// 16-bit inputs or compact targets).
template <class ExecSpace, class XView, class YView>
constexpr bool check_mpi_input_types() {
  if constexpr (softmargin::Impl::check_input_types<ExecSpace, XView, YView>()) {
    using X = typename XView::non_const_value_type;
    constexpr bool types = std::is_floating_point_v<X> && std::is_same_v<X, typename YView::non_const_value_type>;
    static_assert(types, "softmargin::mpi: x and y must hold the same type, float or double");
    return types;
  } else {
    return false;
  }
}

/// Compile-time: a reduced result is a writable rank-0 View of a floating-point type that the execution space (or,
/// for the blocking forms' own results, the host) can reach.
template <class ExecSpace, class ResultView>
constexpr bool check_result_type() {
  static_assert(Kokkos::is_view_v<ResultView>, "softmargin::mpi: a reduced result must be a Kokkos::View");
  if constexpr (Kokkos::is_view_v<ResultView>) {
    constexpr bool rank = ResultView::rank() == 0;
    constexpr bool floating = std::is_floating_point_v<typename ResultView::value_type>;
    constexpr bool access = Kokkos::SpaceAccessibility<ExecSpace, typename ResultView::memory_space>::accessible;
    static_assert(rank, "softmargin::mpi: a reduced result must be a rank-0 View");
    static_assert(floating, "softmargin::mpi: a reduced result must hold a writable floating-point type");
    static_assert(access, "softmargin::mpi: a result's memory space is not accessible from the execution space");
    return rank && floating && access;
  } else {
    return false;
  }
}

}  // namespace softmargin::mpi::Impl

#endif

// SoftMargin MPI: the argument checks every rank runs before the ranks agree on a status.
//
// They are the single-process calls' own checks (impl/SoftMargin_Checks.hpp) applied to the global call's
// arguments, plus the global call's own (a reduction with one value over the ranks), so that a bad argument on one
// rank is known to every rank before any rank launches a kernel or writes an output: a rank whose local View is
// empty never runs the single-process pass, and backward writes grad_x in its only pass.
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

/// x, y, the reduction and the algorithm. A caller's count (mean_over) is a host number here: the ranks divide the
/// global sum on the host or in the agreement.
template <class XView, class YView>
void check_inputs(const char* where, const ReduceBy& reduction, Algorithm algorithm, const XView& x, const YView& y) {
  check_global_reduction(where, reduction.reduction());
  softmargin::Impl::check_inputs(where, reduction.reduction(), algorithm, x, y);
  if (reduction.has_count() && reduction.count_data() != nullptr)
    throw std::invalid_argument(std::string(where) +
                                ": mean_over takes a host count in the MPI layer (the global "
                                "element count is the default divisor of Reduction::Mean)");
  softmargin::Impl::check_count(where, reduction, true);
}

/// A reduced result: allocated, and apart from every other View of the call.
template <class ResultView, class... Views>
void check_result(const char* where, const char* name, const ResultView& result, const Views&... views) {
  softmargin::Impl::check_allocated(where, name, result);
  (softmargin::Impl::check_alias(where, name, result, "an input or output", views), ...);
}

/// grad_x and a scalar upstream gradient (a host number, or a rank-0 View apart from grad_x).
template <class GradView, class XView, class YView, class Upstream>
void check_grad(const char* where, const GradView& grad_x, const XView& x, const YView& y, const Upstream& grad_loss) {
  softmargin::Impl::check_elementwise_output(where, "grad_x", grad_x, x, y);
  if constexpr (Kokkos::is_view_v<Upstream>) {
    softmargin::Impl::check_allocated(where, "grad_loss", grad_loss);
    softmargin::Impl::check_alias(where, "grad_x", grad_x, "grad_loss", grad_loss);
  }
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

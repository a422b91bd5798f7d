// SoftMargin MPI: a rank's local problem, as the global passes (SoftMargin_MPI_Passes.hpp, SoftMargin_MPI_Request.hpp)
// see it: its size, the run-time checks of its arguments, and its three local passes, run with the reduction the
// global pass chooses. XYProblem is SoftMarginLoss of x and y on the library's compiled passes; FamilyProblem a family
// descriptor (SoftMargin_Family.hpp) on the family's passes and checks.
#ifndef SOFTMARGIN_IMPL_MPI_PROBLEMS_HPP
#define SOFTMARGIN_IMPL_MPI_PROBLEMS_HPP

#include <SoftMargin.hpp>
#include <cstddef>
#include <cstring>
#include <string>

namespace softmargin::mpi::Impl {

/// SoftMarginLoss of this rank's x against y.
template <class XView, class YView>
struct XYProblem {
  using value_type = typename XView::non_const_value_type;  ///< of the blocking result and the scaled upstream
  const XView& x;
  const YView& y;

  std::size_t size() const { return x.size(); }
  static std::string where(const char* call) { return call; }
  template <class Exec>
  void check(const char* where, const ReduceBy& reduction, Algorithm algorithm) const {
    softmargin::Impl::check_inputs(where, reduction.reduction(), algorithm, x, y);
    softmargin::Impl::check_count(where, reduction, softmargin::Impl::is_host_space_v<Exec>);
  }
  template <class G>
  void check_grad(const char* where, const G& grad_x) const {
    softmargin::Impl::check_elementwise_output(where, "grad_x", grad_x, x, y);
  }
  template <class Out>
  void check_alias_of(const char* where, const char* name, const Out& out) const {
    softmargin::Impl::check_alias(where, name, out, "x", x);
    softmargin::Impl::check_alias(where, name, out, "y", y);
  }

  template <class Exec, class Out>
  void run_loss(const Exec& space, const Out& out, const ReduceBy& reduction, Algorithm algorithm) const {
    softmargin::loss(space, x, y, out, reduction, algorithm);
  }
  template <class Exec, class Upstream, class G>
  void run_backward(const Exec& space, const Upstream& grad_loss, const G& grad_x, const ReduceBy& reduction,
                    Algorithm algorithm) const {
    softmargin::backward(space, x, y, grad_loss, grad_x, reduction, algorithm);
  }
  template <class Exec, class Out, class G, class Upstream>
  void run_fused(const Exec& space, const Out& out, const G& grad_x, const ReduceBy& reduction,
                 const Upstream& grad_loss, Algorithm algorithm) const {
    softmargin::loss_and_grad(space, x, y, out, grad_x, reduction, grad_loss, algorithm);
  }
};

/// A family member's inputs on this rank (a descriptor: soft_margin, bce_with_logits, pairwise).
template <class In>
struct FamilyProblem {
  using value_type = softmargin::Impl::family_result_t<In>;
  const In& in;

  std::size_t size() const { return in.first().size(); }
  /// The call's name with the member's ("softmargin::mpi::loss (pairwise)").
  static std::string where(const char* call) {
    return std::string(call) + (In::names.loss + std::strlen("softmargin::loss"));
  }
  template <class Exec>
  void check(const char* where, const ReduceBy& reduction, Algorithm algorithm) const {
    softmargin::Impl::check_common(where, in, reduction, algorithm, softmargin::Impl::is_host_space_v<Exec>);
  }
  template <class G>
  void check_grad(const char* where, const G& grad) const {
    softmargin::Impl::check_grads(where, grad, in);
  }
  template <class Out>
  void check_alias_of(const char* where, const char* name, const Out& out) const {
    in.check_alias_of(where, name, out);
  }

  template <class Exec, class Out>
  void run_loss(const Exec& space, const Out& out, const ReduceBy& reduction, Algorithm algorithm) const {
    softmargin::loss(space, in, out, reduction, algorithm);
  }
  template <class Exec, class Upstream, class G>
  void run_backward(const Exec& space, const Upstream& grad_loss, const G& grad, const ReduceBy& reduction,
                    Algorithm algorithm) const {
    softmargin::backward(space, in, grad_loss, grad, reduction, algorithm);
  }
  template <class Exec, class Out, class G, class Upstream>
  void run_fused(const Exec& space, const Out& out, const G& grad, const ReduceBy& reduction, const Upstream& grad_loss,
                 Algorithm algorithm) const {
    softmargin::loss_and_grad(space, in, out, grad, reduction, grad_loss, algorithm);
  }
};

}  // namespace softmargin::mpi::Impl

#endif

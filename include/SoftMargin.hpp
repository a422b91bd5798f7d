// SoftMargin: torch.nn.SoftMarginLoss on Kokkos, fused and numerically stable.
//
//   loss_i = log(1 + exp(-y_i x_i)),  reduction none | sum | mean (mean = sum / N)
//
// This is the library's one public header.
#ifndef SOFTMARGIN_HPP
#define SOFTMARGIN_HPP

#include <Kokkos_Core.hpp>
#include <Kokkos_Profiling_ScopedRegion.hpp>

#include <type_traits>

#include "SoftMargin_Config.hpp"
#include "impl/SoftMargin_ETI.hpp"
#include "impl/SoftMargin_Forward_Impl.hpp"
#include "impl/SoftMargin_Types.hpp"
#include "impl/SoftMargin_Views.hpp"
#include "impl/SoftMargin_Workspace.hpp"

namespace softmargin {

namespace Impl {

template <class ExecSpace, class XView, class YView>
constexpr void static_check_inputs() {
  static_assert(Kokkos::is_execution_space_v<ExecSpace>, "softmargin: the first argument must be a Kokkos execution space");
  static_assert(Kokkos::is_view_v<XView>, "softmargin: x must be a Kokkos::View");
  static_assert(Kokkos::is_view_v<YView>, "softmargin: y must be a Kokkos::View");
  static_assert(XView::rank() >= 1, "softmargin: x must be a View of rank 1 or more");
  static_assert(XView::rank() == YView::rank(), "softmargin: x and y must have the same rank");
  static_assert(std::is_floating_point_v<typename XView::non_const_value_type>,
                "softmargin: x must hold a floating-point type");
  static_assert(std::is_same_v<typename XView::non_const_value_type, typename YView::non_const_value_type>,
                "softmargin: x and y must hold the same value type");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename XView::memory_space>::accessible,
                "softmargin: x's memory space is not accessible from the execution space");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename YView::memory_space>::accessible,
                "softmargin: y's memory space is not accessible from the execution space");
}

/// Runs the reduction (rank-0 out) or element-wise (out of x's rank) kernels on canonical views: flat rank-1 views
/// when x, y (and out) share a contiguous memory order, else strided views of x's rank.
template <class ExecSpace, class XView, class YView, class OutView>
void forward(const ExecSpace& space, const XView& x, const YView& y, const OutView& out, Reduction reduction,
             Algorithm algorithm) {
  using T = typename XView::non_const_value_type;
  using U = typename OutView::non_const_value_type;
  using XMem = typename XView::memory_space;
  using YMem = typename YView::memory_space;
  using OMem = typename OutView::memory_space;
  constexpr int rank = static_cast<int>(XView::rank());

  unsigned orders = memory_orders(x) & memory_orders(y);
  if constexpr (OutView::rank() != 0) orders &= memory_orders(out);
  const bool flat = orders != 0 && std::is_same_v<XMem, YMem>;

  if constexpr (OutView::rank() == 0) {
    using RV = ScalarView<U, ExecSpace, OMem>;
    if (flat) {
      Reduce<ExecSpace, FlatView<const T, ExecSpace, XMem>, FlatView<const T, ExecSpace, XMem>, RV>::run(
          space, FlatView<const T, ExecSpace, XMem>(x.data(), x.size()),
          FlatView<const T, ExecSpace, XMem>(y.data(), y.size()), RV(out.data()), reduction, algorithm);
    } else {
      Reduce<ExecSpace, StridedView<const T, rank, ExecSpace, XMem>, StridedView<const T, rank, ExecSpace, YMem>,
             RV>::run(space, x, y, RV(out.data()), reduction, algorithm);
    }
  } else {
    if (flat && std::is_same_v<XMem, OMem>) {
      Elementwise<ExecSpace, FlatView<const T, ExecSpace, XMem>, FlatView<const T, ExecSpace, XMem>,
                  FlatView<U, ExecSpace, XMem>>::run(space, FlatView<const T, ExecSpace, XMem>(x.data(), x.size()),
                                                     FlatView<const T, ExecSpace, XMem>(y.data(), y.size()),
                                                     FlatView<U, ExecSpace, XMem>(out.data(), out.size()), algorithm);
    } else {
      Elementwise<ExecSpace, StridedView<const T, rank, ExecSpace, XMem>, StridedView<const T, rank, ExecSpace, YMem>,
                  StridedView<U, rank, ExecSpace, OMem>>::run(space, x, y, out, algorithm);
    }
  }
}

}  // namespace Impl

/// \brief SoftMarginLoss of x against targets y, written to out, without blocking.
///
/// Computes loss_i = log(1 + exp(-y_i x_i)) stably as softplus(-y_i x_i) in one fused pass, and
///  - reduction None: writes loss_i into out, a View of x's shape (any layout);
///  - reduction Sum or Mean: reduces in one pass (accumulating in double) and writes the sum or the mean into out,
///    a rank-0 View. The mean of an empty input is NaN and the sum 0, as in PyTorch.
/// The kernels are enqueued on `space` and the call returns without fencing; out is ready once `space` is fenced
/// (or for later work on the same instance).
///
/// \param space execution space instance that runs the kernels
/// \param x input View of rank >= 1, float or double, any layout, accessible from space
/// \param y targets View of x's shape and value type (typically +-1; real values are used as given)
/// \param out rank-0 View (Sum, Mean) or View of x's shape (None), accessible from space
/// \param reduction None, Sum or Mean (default Mean, as PyTorch)
/// \param algorithm kernel for the reduction (default Auto)
/// \throws std::invalid_argument, before anything is launched or written, if a View is not allocated, the shapes of
///   x, y and out differ, out's rank does not suit the reduction, out overlaps x or y other than element for element,
///   or reduction or algorithm is not one of the enumerators.
template <class ExecSpace, class XView, class YView, class OutView>
  requires(Kokkos::is_execution_space_v<ExecSpace> && Kokkos::is_view_v<OutView>)
void loss(const ExecSpace& space, const XView& x, const YView& y, const OutView& out,
          Reduction reduction = Reduction::Mean, Algorithm algorithm = Algorithm::Auto) {
  Impl::static_check_inputs<ExecSpace, XView, YView>();
  static_assert(!std::is_const_v<typename OutView::value_type>, "softmargin::loss: out must be a View of non-const");
  static_assert(std::is_floating_point_v<typename OutView::non_const_value_type>,
                "softmargin::loss: out must hold a floating-point type");
  static_assert(OutView::rank() == 0 || OutView::rank() == XView::rank(),
                "softmargin::loss: out must be a rank-0 View (sum, mean) or have x's rank (none)");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename OutView::memory_space>::accessible,
                "softmargin::loss: out's memory space is not accessible from the execution space");
  constexpr const char* where = "softmargin::loss";

  Impl::check_reduction(where, reduction);
  Impl::check_algorithm(where, algorithm);
  Impl::check_allocated(where, "x", x);
  Impl::check_allocated(where, "y", y);
  Impl::check_allocated(where, "out", out);
  Impl::check_same_shape(where, "x", x, "y", y);
  if constexpr (OutView::rank() == 0) {
    if (reduction == Reduction::None)
      throw std::invalid_argument(
          "softmargin::loss: reduction none needs out of x's shape, but out is a rank-0 View");
    if (Impl::overlaps(out, x) || Impl::overlaps(out, y))
      throw std::invalid_argument("softmargin::loss: out overlaps the memory of x or y");
  } else {
    if (reduction != Reduction::None)
      throw std::invalid_argument(std::string("softmargin::loss: reduction ") + to_string(reduction) +
                                  " needs a rank-0 out, but out has x's rank (use Reduction::None)");
    Impl::check_same_shape(where, "x", x, "out", out);
    // In place (out sharing x's or y's memory) is correct only element for element in one memory order.
    const auto same = [&](const auto& in) {
      return static_cast<const void*>(in.data()) == static_cast<const void*>(out.data()) &&
             (Impl::memory_orders(in) & Impl::memory_orders(out) & Impl::memory_orders(x) & Impl::memory_orders(y)) != 0 &&
             std::is_same_v<typename std::decay_t<decltype(in)>::non_const_value_type, typename OutView::non_const_value_type>;
    };
    if ((Impl::overlaps(out, x) && !same(x)) || (Impl::overlaps(out, y) && !same(y)))
      throw std::invalid_argument(
          "softmargin::loss: out overlaps x or y; in-place is supported only when out is the same memory, element for "
          "element, as that input");
  }

  Kokkos::Profiling::ScopedRegion region("softmargin::loss");
  Impl::forward(space, x, y, out, reduction, algorithm);
}

/// \brief As loss(space, x, y, out, ...) on a default instance of x's execution space.
template <class XView, class YView, class OutView>
  requires(Kokkos::is_view_v<XView> && Kokkos::is_view_v<OutView>)
void loss(const XView& x, const YView& y, const OutView& out, Reduction reduction = Reduction::Mean,
          Algorithm algorithm = Algorithm::Auto) {
  loss(typename XView::execution_space(), x, y, out, reduction, algorithm);
}

/// \brief SoftMarginLoss of x against y reduced to a host scalar (Sum or Mean); blocks until it is ready.
///
/// Same computation and checks as the non-blocking form; the value is written to host-pinned memory and `space` is
/// fenced before it is returned.
template <class ExecSpace, class XView, class YView>
  requires(Kokkos::is_execution_space_v<ExecSpace> && Kokkos::is_view_v<XView>)
typename XView::non_const_value_type loss(const ExecSpace& space, const XView& x, const YView& y,
                                          Reduction reduction = Reduction::Mean,
                                          Algorithm algorithm = Algorithm::Auto) {
  using T = typename XView::non_const_value_type;
  Impl::static_check_inputs<ExecSpace, XView, YView>();
  if (reduction == Reduction::None)
    throw std::invalid_argument("softmargin::loss: reduction none returns one loss per element; pass an out View");
  auto slot = Impl::HostResult<ExecSpace, T>::acquire(space);
  loss(space, x, y, slot->value, reduction, algorithm);
  space.fence("softmargin::loss: blocking result");
  return slot->value();
}

/// \brief As loss(space, x, y, ...) on a default instance of x's execution space; blocks.
template <class XView, class YView>
  requires(Kokkos::is_view_v<XView> && Kokkos::is_view_v<YView>)
typename XView::non_const_value_type loss(const XView& x, const YView& y, Reduction reduction = Reduction::Mean,
                                          Algorithm algorithm = Algorithm::Auto) {
  return loss(typename XView::execution_space(), x, y, reduction, algorithm);
}

}  // namespace softmargin

#endif

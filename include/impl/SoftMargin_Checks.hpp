// SoftMargin: argument checks. The static ones run first in every public call and stop the call's body from being
// compiled when they fail, so that a type mistake shows the library's message first; the runtime ones throw
// std::invalid_argument, naming the argument, before anything is launched or written.
#ifndef SOFTMARGIN_IMPL_CHECKS_HPP
#define SOFTMARGIN_IMPL_CHECKS_HPP

#include <Kokkos_Core.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "../SoftMargin_Types.hpp"
#include "SoftMargin_Values.hpp"

namespace softmargin::Impl {

// ---------------------------------------------------------------------------------------------------------------
// Static checks: each returns whether the types are valid, after a static_assert per rule.

template <class V>
using value_t = typename V::non_const_value_type;

/// Whether an argument is a reduction (Reduction or ReduceBy): the overloads tell an output View from it.
template <class T>
inline constexpr bool is_reduction_arg_v = std::is_enum_v<T> || std::is_same_v<T, ReduceBy>;

template <class Exec, class XView, class YView>
constexpr bool check_input_types() {
  static_assert(Kokkos::is_execution_space_v<Exec>, "softmargin: the first argument must be a Kokkos execution space");
  static_assert(Kokkos::is_view_v<XView>, "softmargin: x must be a Kokkos::View");
  static_assert(Kokkos::is_view_v<YView>, "softmargin: y must be a Kokkos::View");
  if constexpr (Kokkos::is_execution_space_v<Exec> && Kokkos::is_view_v<XView> && Kokkos::is_view_v<YView>) {
    constexpr bool rank = XView::rank() >= 1, same_rank = XView::rank() == YView::rank();
    constexpr bool floating = is_value_type_v<value_t<XView>>;
    constexpr bool same_type = is_target_type_v<value_t<XView>, value_t<YView>>;
    constexpr bool x_access = Kokkos::SpaceAccessibility<Exec, typename XView::memory_space>::accessible;
    constexpr bool y_access = Kokkos::SpaceAccessibility<Exec, typename YView::memory_space>::accessible;
    static_assert(rank, "softmargin: x must be a View of rank 1 or more");
    static_assert(same_rank, "softmargin: x and y must have the same rank");
    static_assert(floating, "softmargin: x must hold float, double, bf16 or fp16");
    static_assert(same_type, "softmargin: y must hold x's value type, int8_t or bool");
    static_assert(x_access, "softmargin: x's memory space is not accessible from the execution space");
    static_assert(y_access, "softmargin: y's memory space is not accessible from the execution space");
    return rank && same_rank && floating && same_type && x_access && y_access;
  } else {
    return false;
  }
}

/// A loss output: a writable View of float, double, bf16 or fp16 (the result is rounded once to it), of rank 0 (a
/// reduced loss) or x's rank (reduction none), accessible from the execution space.
template <class Exec, class XView, class OutView>
constexpr bool check_loss_output_type() {
  static_assert(Kokkos::is_view_v<OutView>, "softmargin: the loss output must be a Kokkos::View");
  if constexpr (Kokkos::is_view_v<OutView> && Kokkos::is_view_v<XView>) {
    constexpr bool writable = !std::is_const_v<typename OutView::value_type>;
    constexpr bool floating = is_value_type_v<value_t<OutView>>;
    constexpr bool rank = OutView::rank() == 0 || OutView::rank() == XView::rank();
    constexpr bool access = Kokkos::SpaceAccessibility<Exec, typename OutView::memory_space>::accessible;
    static_assert(writable, "softmargin: the loss output View must not be const");
    static_assert(floating, "softmargin: the loss output View must hold float, double, bf16 or fp16");
    static_assert(rank, "softmargin: the loss output must be a View of rank 0 (a reduced loss) or of x's rank");
    static_assert(access, "softmargin: the loss output's memory space is not accessible from the execution space");
    return writable && floating && rank && access;
  } else {
    return false;
  }
}

/// grad_x: a writable View of x's value type (or float) and x's rank, accessible from the execution space.
template <class Exec, class XView, class GradView>
constexpr bool check_grad_type() {
  static_assert(Kokkos::is_view_v<GradView>, "softmargin: grad_x must be a Kokkos::View");
  if constexpr (Kokkos::is_view_v<GradView> && Kokkos::is_view_v<XView>) {
    constexpr bool writable = !std::is_const_v<typename GradView::value_type>;
    constexpr bool type = is_grad_type_v<value_t<XView>, value_t<GradView>>;
    constexpr bool rank = GradView::rank() == XView::rank();
    constexpr bool access = Kokkos::SpaceAccessibility<Exec, typename GradView::memory_space>::accessible;
    static_assert(writable, "softmargin: grad_x must not be const");
    static_assert(type, "softmargin: grad_x must hold x's value type or float");
    static_assert(rank, "softmargin: grad_x must have x's rank");
    static_assert(access, "softmargin: grad_x's memory space is not accessible from the execution space");
    return writable && type && rank && access;
  } else {
    return false;
  }
}

/// The upstream gradient: a host scalar, a rank-0 View or (PerElement) a View of x's rank, of float, double, bf16 or
/// fp16.
template <class Exec, class XView, class Upstream, bool AllowPerElement>
constexpr bool check_upstream_type() {
  if constexpr (Kokkos::is_view_v<Upstream> && Kokkos::is_view_v<XView>) {
    constexpr bool rank = Upstream::rank() == 0 || (AllowPerElement && Upstream::rank() == XView::rank());
    constexpr bool type = is_value_type_v<value_t<Upstream>>;
    constexpr bool access = Kokkos::SpaceAccessibility<Exec, typename Upstream::memory_space>::accessible;
    static_assert(rank || !AllowPerElement,
                  "softmargin: grad_loss must be a host scalar, a rank-0 View, or a View of x's rank");
    static_assert(rank || AllowPerElement, "softmargin: grad_loss must be a host scalar or a rank-0 View");
    static_assert(type, "softmargin: the grad_loss View must hold float, double, bf16 or fp16");
    static_assert(access, "softmargin: grad_loss's memory space is not accessible from the execution space");
    return rank && type && access;
  } else {
    static_assert(std::is_arithmetic_v<Upstream>,
                  "softmargin: grad_loss must be a host scalar or a Kokkos::View (rank 0, or x's rank for none)");
    return std::is_arithmetic_v<Upstream>;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Runtime checks.

inline void check_reduction(const char* where, Reduction r) {
  if (r != Reduction::None && r != Reduction::Sum && r != Reduction::Mean)
    throw std::invalid_argument(std::string(where) + ": reduction has the invalid value " +
                                std::to_string(static_cast<int>(r)) + " (expected None, Sum or Mean)");
}

/// Whether T is an algorithm argument: a run-time Algorithm, or AutoOnly.
template <class T>
inline constexpr bool is_algorithm_v = std::is_same_v<T, Algorithm> || std::is_same_v<T, AutoOnly>;

inline void check_algorithm(const char*, AutoOnly) {}
inline void check_algorithm(const char* where, Algorithm a) {
  if (a != Algorithm::Auto && a != Algorithm::RangeReduce && a != Algorithm::TeamScratch && a != Algorithm::Native)
    throw std::invalid_argument(std::string(where) + ": algorithm has the invalid value " +
                                std::to_string(static_cast<int>(a)) +
                                " (expected Auto, RangeReduce, TeamScratch or Native)");
}

template <class View>
std::string shape_of(const View& v) {
  std::ostringstream s;
  s << '(';
  for (int d = 0; d < static_cast<int>(View::rank()); ++d) s << (d ? ", " : "") << v.extent(d);
  s << ')';
  return s.str();
}

/// Whether a View's extents hold no element (Kokkos reports size() 0 for any View over a null pointer).
template <class View>
bool has_no_elements(const View& v) {
  for (int d = 0; d < static_cast<int>(View::rank()); ++d)
    if (v.extent(d) == 0) return true;
  return false;
}

/// A View must be allocated unless its extents hold no element (then it is valid whatever its data pointer).
template <class View>
void check_allocated(const char* where, const char* name, const View& v) {
  if (v.data() == nullptr && !has_no_elements(v))
    throw std::invalid_argument(std::string(where) + ": View " + name + " is not allocated");
}

/// a and b must have the same extents, dimension by dimension.
template <class A, class B>
void check_same_shape(const char* where, const char* name_a, const A& a, const char* name_b, const B& b) {
  for (int d = 0; d < static_cast<int>(A::rank()); ++d) {
    if (a.extent(d) != b.extent(d)) {
      std::ostringstream s;
      s << where << ": " << name_b << ".extent(" << d << ") = " << b.extent(d) << " does not match " << name_a
        << ".extent(" << d << ") = " << a.extent(d) << " (" << name_b << " is " << shape_of(b) << ", " << name_a
        << " is " << shape_of(a) << ')';
      throw std::invalid_argument(s.str());
    }
  }
}

/// An output must not hold one element at two indices (a zero stride of an extent above 1, as a broadcast has).
template <class View>
void check_distinct_elements(const char* where, const char* name, const View& v) {
  if (v.size() == 0) return;
  for (int d = 0; d < static_cast<int>(View::rank()); ++d)
    if (v.extent(d) > 1 && v.stride(d) == 0)
      throw std::invalid_argument(std::string(where) + ": output " + name + " has stride 0 in dimension " +
                                  std::to_string(d) + " (a broadcast View cannot be written)");
}

/// Whether the memory [data, data + span) of two views overlaps.
template <class A, class B>
bool overlaps(const A& a, const B& b) {
  if (a.size() == 0 || b.size() == 0 || a.span() == 0 || b.span() == 0) return false;
  const auto* a0 = reinterpret_cast<const char*>(a.data());
  const auto* b0 = reinterpret_cast<const char*>(b.data());
  const auto* a1 = a0 + a.span() * sizeof(typename A::value_type);
  const auto* b1 = b0 + b.span() * sizeof(typename B::value_type);
  return a0 < b1 && b0 < a1;
}

/// Whether out and in are the same elements: same data, value type, extents and strides (in place).
template <class Out, class In>
bool same_elements(const Out& out, const In& in) {
  if constexpr (Out::rank() != In::rank() || !std::is_same_v<value_t<Out>, value_t<In>>) {
    return false;
  } else {
    if (static_cast<const void*>(out.data()) != static_cast<const void*>(in.data())) return false;
    for (int d = 0; d < static_cast<int>(Out::rank()); ++d)
      if (out.extent(d) != in.extent(d) || (out.extent(d) > 1 && out.stride(d) != in.stride(d))) return false;
    return true;
  }
}

/// An output may share memory with an input only element for element (in place: the same data, extents and
/// strides, any layout); every thread then reads an element before it writes it.
template <class Out, class In>
void check_alias(const char* where, const char* out_name, const Out& out, const char* in_name, const In& in) {
  if (!overlaps(out, in) || (Out::rank() != 0 && same_elements(out, in))) return;
  throw std::invalid_argument(std::string(where) + ": " + out_name + " overlaps the memory of " + in_name +
                              (Out::rank() == 0 ? std::string()
                                                : std::string("; in place is supported only element for element "
                                                              "(the same data, extents and strides)")));
}

/// A loss output of rank 0 goes with reduction Sum or Mean, one of x's shape with None.
template <class OutView, class XView>
void check_reduced_or_elementwise(const char* where, const char* name, Reduction reduction, const OutView& out,
                                  const XView& x) {
  if constexpr (OutView::rank() == 0) {
    if (reduction == Reduction::None)
      throw std::invalid_argument(std::string(where) + ": reduction none needs " + name +
                                  " of x's shape, but it is a rank-0 View");
  } else {
    if (reduction != Reduction::None)
      throw std::invalid_argument(std::string(where) + ": reduction " + to_string(reduction) + " needs a rank-0 " +
                                  name + ", but it has x's rank (use Reduction::None)");
    check_same_shape(where, "x", x, name, out);
  }
}

/// x and y: valid enumerators, allocated, the same shape.
template <class XView, class YView>
void check_inputs(const char* where, Reduction reduction, Algorithm algorithm, const XView& x, const YView& y) {
  check_reduction(where, reduction);
  check_algorithm(where, algorithm);
  check_allocated(where, "x", x);
  check_allocated(where, "y", y);
  check_same_shape(where, "x", x, "y", y);
}

/// An element-wise output of x's shape: allocated, distinct elements, and apart from x and y unless in place.
template <class OutView, class XView, class YView>
void check_elementwise_output(const char* where, const char* name, const OutView& out, const XView& x, const YView& y) {
  check_allocated(where, name, out);
  check_same_shape(where, "x", x, name, out);
  check_distinct_elements(where, name, out);
  check_alias(where, name, out, "x", x);
  check_alias(where, name, out, "y", y);
}

}  // namespace softmargin::Impl

#endif

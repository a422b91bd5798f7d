// SoftMargin MPI: the argument checks every rank runs before the ranks agree on a status.
//
// They mirror the single-process calls' checks (same messages' substance), so that a bad argument on one rank is
// known to every rank before any rank launches a kernel or writes an output: a rank whose local View is empty never
// calls the single-process pass, and backward writes grad_x in its only pass.
#ifndef SOFTMARGIN_IMPL_MPI_CHECKS_HPP
#define SOFTMARGIN_IMPL_MPI_CHECKS_HPP

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <sstream>
#include <stdexcept>
#include <string>

#include "SoftMargin_Types.hpp"

namespace softmargin::mpi::Impl {

/// Reductions with one value over all ranks: Sum and Mean.
inline void check_global_reduction(const char* where, Reduction r) {
  if (r == Reduction::Sum || r == Reduction::Mean) return;
  if (r == Reduction::None)
    throw std::invalid_argument(std::string(where) +
                                ": reduction none has no value over the ranks (call the single-process "
                                "softmargin:: function on each rank)");
  throw std::invalid_argument(std::string(where) + ": reduction has the invalid value " +
                              std::to_string(static_cast<int>(r)) + " (expected Sum or Mean)");
}

inline void check_algorithm(const char* where, Algorithm a) {
  if (a == Algorithm::Auto || a == Algorithm::RangeReduce || a == Algorithm::TeamScratch || a == Algorithm::Native)
    return;
  throw std::invalid_argument(std::string(where) + ": algorithm has the invalid value " +
                              std::to_string(static_cast<int>(a)) +
                              " (expected Auto, RangeReduce, TeamScratch or Native)");
}

/// A View holding elements must have memory; an empty one is valid whatever its pointer.
template <class View>
void check_allocated(const char* where, const char* name, const View& v) {
  if (v.size() > 0 && v.data() == nullptr)
    throw std::invalid_argument(std::string(where) + ": View " + name + " is not allocated");
}

template <class View>
std::string shape_of(const View& v) {
  std::ostringstream s;
  s << '(';
  for (int d = 0; d < static_cast<int>(View::rank()); ++d) s << (d ? ", " : "") << v.extent(d);
  s << ')';
  return s.str();
}

template <class A, class B>
void check_same_shape(const char* where, const char* name_a, const A& a, const char* name_b, const B& b) {
  static_assert(A::rank() == B::rank(), "softmargin::mpi: the two Views must have the same rank");
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

/// Which flat orders map logical element i to data()[i]: bit 1 row-major, bit 2 column-major (extents of 1 impose
/// nothing; a View of at most one element is both).
template <class View>
unsigned memory_orders(const View& v) {
  constexpr int rank = static_cast<int>(View::rank());
  if (v.size() <= 1) return 3u;
  unsigned orders = 0;
  for (int pass = 0; pass < 2; ++pass) {
    std::size_t expect = 1;
    bool ok = true;
    for (int k = 0; k < rank; ++k) {
      const int d = pass == 0 ? rank - 1 - k : k;
      if (v.extent(d) == 1) continue;
      ok = ok && static_cast<std::size_t>(v.stride(d)) == expect;
      expect *= v.extent(d);
    }
    if (ok) orders |= 1u << pass;
  }
  return orders;
}

template <class A, class B>
bool overlaps(const A& a, const B& b) {
  if (a.span() == 0 || b.span() == 0) return false;
  const auto* a0 = reinterpret_cast<const char*>(a.data());
  const auto* b0 = reinterpret_cast<const char*>(b.data());
  const auto* a1 = a0 + a.span() * sizeof(typename A::value_type);
  const auto* b1 = b0 + b.span() * sizeof(typename B::value_type);
  return a0 < b1 && b0 < a1;
}

/// out may share memory with in only as the same elements in one contiguous order common to every View of the
/// pass (in place); a rank-0 out may not share it at all.
template <class Out, class In, class... All>
void check_alias(const char* where, const char* out_name, const Out& out, const char* in_name, const In& in,
                 const All&... all) {
  if (!overlaps(out, in)) return;
  const bool in_place = Out::rank() != 0 &&
                        static_cast<const void*>(in.data()) == static_cast<const void*>(out.data()) &&
                        std::is_same_v<typename Out::non_const_value_type, typename In::non_const_value_type> &&
                        (memory_orders(out) & memory_orders(in) & (memory_orders(all) & ... & ~0u)) != 0;
  if (!in_place)
    throw std::invalid_argument(std::string(where) + ": " + out_name + " overlaps the memory of " + in_name +
                                (Out::rank() == 0 ? std::string()
                                                  : std::string("; in place is supported only as the same elements "
                                                                "of a contiguous View")));
}

/// The inputs of every call: reduction, algorithm, x and y.
template <class XView, class YView>
void check_inputs(const char* where, Reduction reduction, Algorithm algorithm, const XView& x, const YView& y) {
  check_global_reduction(where, reduction);
  check_algorithm(where, algorithm);
  check_allocated(where, "x", x);
  check_allocated(where, "y", y);
  check_same_shape(where, "x", x, "y", y);
}

/// A rank-0 result: allocated, and apart from the inputs.
template <class ResultView, class... Inputs>
void check_result(const char* where, const char* name, const ResultView& result, const Inputs&... inputs) {
  static_assert(ResultView::rank() == 0, "softmargin::mpi: a reduced result must be a rank-0 View");
  if (result.data() == nullptr)
    throw std::invalid_argument(std::string(where) + ": View " + name + " is not allocated");
  if ((overlaps(result, inputs) || ...))
    throw std::invalid_argument(std::string(where) + ": " + name + " overlaps the memory of an input or output View");
}

/// grad_x: x's shape, allocated, in place on x or y at most.
template <class GradView, class XView, class YView>
void check_grad(const char* where, const GradView& grad_x, const XView& x, const YView& y) {
  check_allocated(where, "grad_x", grad_x);
  check_same_shape(where, "x", x, "grad_x", grad_x);
  check_alias(where, "grad_x", grad_x, "x", x, y);
  check_alias(where, "grad_x", grad_x, "y", y, x);
}

/// A scalar upstream gradient: a host number, or an allocated rank-0 View apart from grad_x.
template <class Upstream, class GradView>
void check_upstream(const char* where, const Upstream& grad_loss, const GradView& grad_x) {
  if constexpr (Kokkos::is_view_v<Upstream>) {
    static_assert(Upstream::rank() == 0, "softmargin::mpi: grad_loss must be a host scalar or a rank-0 View");
    if (grad_loss.data() == nullptr)
      throw std::invalid_argument(std::string(where) + ": View grad_loss is not allocated");
    check_alias(where, "grad_x", grad_x, "grad_loss", grad_loss);
  }
}

}  // namespace softmargin::mpi::Impl

#endif

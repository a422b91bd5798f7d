// SoftMargin: View plumbing shared by every pass: canonical view types, flat indexing, argument checks.
#ifndef SOFTMARGIN_IMPL_VIEWS_HPP
#define SOFTMARGIN_IMPL_VIEWS_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace softmargin::Impl {

// ---------------------------------------------------------------------------------------------------------------
// Canonical view types. Every public call is reduced to one of these before it reaches a kernel, so that a handful
// of explicit instantiations in src/ cover all ranks and layouts of float and double inputs.

template <class DataType, int Rank>
struct add_rank {
  using type = typename add_rank<DataType*, Rank - 1>::type;
};
template <class DataType>
struct add_rank<DataType, 0> {
  using type = DataType;
};

/// Unmanaged view of rank Rank over value type T (const or not) in MemSpace, executed by Exec.
template <class T, int Rank, class Layout, class Exec, class MemSpace = typename Exec::memory_space>
using UnmanagedView = Kokkos::View<typename add_rank<T, Rank>::type, Layout, Kokkos::Device<Exec, MemSpace>,
                                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/// Contiguous input, seen as rank 1 in memory order: the fast path for every rank.
template <class T, class Exec, class MemSpace = typename Exec::memory_space>
using FlatView = UnmanagedView<T, 1, Kokkos::LayoutRight, Exec, MemSpace>;

/// Any layout of rank Rank: the general path.
template <class T, int Rank, class Exec, class MemSpace = typename Exec::memory_space>
using StridedView = UnmanagedView<T, Rank, Kokkos::LayoutStride, Exec, MemSpace>;

/// Rank-0 result.
template <class T, class Exec, class MemSpace = typename Exec::memory_space>
using ScalarView = UnmanagedView<T, 0, Kokkos::LayoutRight, Exec, MemSpace>;

// ---------------------------------------------------------------------------------------------------------------
// Flat (row-major logical) indexing of a view of any rank.

template <class View, class Index, std::size_t... Is>
KOKKOS_FORCEINLINE_FUNCTION decltype(auto) at_multi(const View& v, const Index (&idx)[sizeof...(Is)],
                                                    std::index_sequence<Is...>) {
  return v(idx[Is]...);
}

/// Element i of v in row-major logical order (for rank 1, plain v(i)).
template <class View, class Index>
KOKKOS_FORCEINLINE_FUNCTION decltype(auto) at(const View& v, Index i) {
  constexpr int rank = static_cast<int>(View::rank());
  if constexpr (rank == 1) {
    return v(i);
  } else {
    Index idx[rank];
    for (int d = rank - 1; d > 0; --d) {
      const Index e = static_cast<Index>(v.extent(d));
      idx[d] = i % e;
      i /= e;
    }
    idx[0] = i;
    return at_multi(v, idx, std::make_index_sequence<rank>{});
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Memory order.

enum MemoryOrder : unsigned { kNotContiguous = 0u, kRowMajor = 1u, kColumnMajor = 2u };

/// Which flat orders map logical element i to data()[i] (a bit set of MemoryOrder). Extents of 1 impose nothing.
template <class View>
unsigned memory_orders(const View& v) {
  constexpr int rank = static_cast<int>(View::rank());
  if (v.size() <= 1) return kRowMajor | kColumnMajor;
  unsigned orders = 0;
  std::size_t expect = 1;
  bool ok = true;
  for (int d = rank - 1; d >= 0; --d) {
    if (v.extent(d) == 1) continue;
    ok = ok && static_cast<std::size_t>(v.stride(d)) == expect;
    expect *= v.extent(d);
  }
  if (ok) orders |= kRowMajor;
  expect = 1;
  ok = true;
  for (int d = 0; d < rank; ++d) {
    if (v.extent(d) == 1) continue;
    ok = ok && static_cast<std::size_t>(v.stride(d)) == expect;
    expect *= v.extent(d);
  }
  if (ok) orders |= kColumnMajor;
  return orders;
}

// ---------------------------------------------------------------------------------------------------------------
// Kokkos Tools.

/// A Kokkos Tools region over the scope of a public call, pushed only while a tool is loaded: Kokkos' ScopedRegion
/// takes a std::string, and builds one (on the heap, for names of 16 characters or more) on every call even when no
/// tool listens.
class ToolsRegion {
 public:
  explicit ToolsRegion(const char* name) : active_(Kokkos::Tools::profileLibraryLoaded()) {
    if (active_) Kokkos::Profiling::pushRegion(name);
  }
  ~ToolsRegion() {
    if (active_) Kokkos::Profiling::popRegion();
  }
  ToolsRegion(const ToolsRegion&) = delete;
  ToolsRegion& operator=(const ToolsRegion&) = delete;

 private:
  bool active_;
};

// ---------------------------------------------------------------------------------------------------------------
// Argument checks. Each throws before anything is launched or written, with a message that names the argument.

template <class View>
std::string shape_of(const View& v) {
  std::ostringstream s;
  s << '(';
  for (int d = 0; d < static_cast<int>(View::rank()); ++d) s << (d ? ", " : "") << v.extent(d);
  s << ')';
  return s.str();
}

template <class View>
void check_allocated(const char* where, const char* name, const View& v) {
  if (!v.is_allocated()) {
    throw std::invalid_argument(std::string(where) + ": View " + name + " is not allocated");
  }
}

/// a and b must have the same extents, dimension by dimension.
template <class A, class B>
void check_same_shape(const char* where, const char* name_a, const A& a, const char* name_b, const B& b) {
  static_assert(A::rank() == B::rank(), "softmargin: the two Views must have the same rank");
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

/// Whether the memory [data, data + span) of two views overlaps.
template <class A, class B>
bool overlaps(const A& a, const B& b) {
  if (a.span() == 0 || b.span() == 0) return false;
  const auto* a0 = reinterpret_cast<const char*>(a.data());
  const auto* b0 = reinterpret_cast<const char*>(b.data());
  const auto* a1 = a0 + a.span() * sizeof(typename A::value_type);
  const auto* b1 = b0 + b.span() * sizeof(typename B::value_type);
  return a0 < b1 && b0 < a1;
}

/// An output may share memory with an input only as the same elements in the same contiguous order (in place).
template <class Out, class In, class... All>
void check_alias(const char* where, const char* out_name, const Out& out, const char* in_name, const In& in,
                 const All&... all) {
  if (!overlaps(out, in)) return;
  const bool in_place = Out::rank() != 0 && static_cast<const void*>(in.data()) == static_cast<const void*>(out.data()) &&
                        std::is_same_v<typename Out::non_const_value_type, typename In::non_const_value_type> &&
                        (memory_orders(out) & memory_orders(in) & (memory_orders(all) & ... & ~0u)) != 0;
  if (!in_place) {
    throw std::invalid_argument(std::string(where) + ": " + out_name + " overlaps the memory of " + in_name +
                                (Out::rank() == 0 ? std::string()
                                                  : std::string("; in place is supported only as the same elements "
                                                                "of a contiguous View")));
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Canonical views of a call: flat (rank 1, memory order) when every view of the call maps logical element i to
// data()[i] in one common order, else strided views of the original rank.

template <class Exec, bool Flat, class T, class V>
auto canonical(const V& v) {
  using Mem = typename V::memory_space;
  if constexpr (V::rank() == 0) return ScalarView<T, Exec, Mem>(v.data());
  else if constexpr (Flat) return FlatView<T, Exec, Mem>(v.data(), v.size());
  else return StridedView<T, static_cast<int>(V::rank()), Exec, Mem>(v);
}

template <class... Views>
bool flat_compatible(const Views&... views) {
  return (memory_orders(views) & ... & ~0u) != 0;
}

}  // namespace softmargin::Impl

#endif

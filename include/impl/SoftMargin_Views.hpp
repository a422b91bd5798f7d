// SoftMargin: canonical views. Every call is reduced to flat, strided or scalar unmanaged views before it reaches a
// kernel, so that a handful of explicit instantiations in src/ cover every rank and layout.
#ifndef SOFTMARGIN_IMPL_VIEWS_HPP
#define SOFTMARGIN_IMPL_VIEWS_HPP

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "SoftMargin_Values.hpp"

namespace softmargin::Impl {

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
// Canonical views of a call: flat (rank 1, memory order) when every view of the call maps logical element i to
// data()[i] in one common order, else strided views of the original rank.

/// The canonical view of v on Exec, of v's value type as the kernels store it (storage_t): const for an input
/// (Input true), as v has it for an output.
template <class Exec, bool Flat, bool Input, class V>
auto canonical(const V& v) {
  using Mem = typename V::memory_space;
  using S = storage_t<typename V::value_type>;
  using T = std::conditional_t<Input, const S, S>;
  T* data = reinterpret_cast<T*>(v.data());
  if constexpr (V::rank() == 0) {
    return ScalarView<T, Exec, Mem>(data);
  } else if constexpr (Flat) {
    return FlatView<T, Exec, Mem>(data, v.size());
  } else {
    Kokkos::LayoutStride layout;
    for (int d = 0; d < static_cast<int>(V::rank()); ++d) {
      layout.dimension[d] = v.extent(d);
      layout.stride[d] = v.stride(d);
    }
    return StridedView<T, static_cast<int>(V::rank()), Exec, Mem>(data, layout);
  }
}

template <class... Views>
bool flat_compatible(const Views&... views) {
  return (memory_orders(views) & ... & ~0u) != 0;
}

}  // namespace softmargin::Impl

#endif

// SoftMargin: packs of values (plain arrays), their sums, and the one loop every kernel runs over its share of
// elements. What a hardware room changes (the pack sizes, how packs load and how they are summed) comes through
// Op::hardware (SoftMargin_Hardware.hpp).
#ifndef SOFTMARGIN_IMPL_PACKS_HPP
#define SOFTMARGIN_IMPL_PACKS_HPP

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <type_traits>

#include "SoftMargin_Math.hpp"

// Unrolls the loop it precedes where the compiler honors #pragma unroll (Kokkos says where: on CUDA devices).
#if defined(KOKKOS_ENABLE_PRAGMA_UNROLL)
#define SOFTMARGIN_IMPL_UNROLL _Pragma("unroll")
#else
#define SOFTMARGIN_IMPL_UNROLL
#endif

namespace softmargin::Impl {

/// What a kernel does with an element op: Map applies it to every element; Reduce sums what it returns; Fused does
/// both (it writes an output and returns a value to sum).
enum class OpKind { Map, Reduce, Fused };

/// Bytes contiguous bytes of T aligned to Align (Bytes on devices, one load; a vector's share on hosts).
template <class T, int Bytes, int Align = Bytes>
struct alignas(Align) Pack {
  using value_type = T;
  static constexpr int bytes = Bytes;
  static constexpr int width = static_cast<int>(Bytes / sizeof(T));
  T v[width];
};

/// W elements of T as one pack of Vectors equal parts, each aligned to its size.
template <class T, int W, int Vectors = 1>
using PackOf = Pack<T, static_cast<int>(sizeof(T)) * W, static_cast<int>(sizeof(T)) * W / Vectors>;

/// d[0] + ... + d[W-1] by halving (d[k] += d[k + W/2], W a power of two), one level per instantiation so that every
/// loop has a constant trip count: compilers unroll it into whole-vector adds.
template <int W, class A>
KOKKOS_FORCEINLINE_FUNCTION A halving_sum(A* d) {
  static_assert((W & (W - 1)) == 0, "pack widths are powers of two");
  if constexpr (W == 1) {
    return d[0];
  } else {
    for (int k = 0; k < W / 2; ++k) d[k] += d[k + W / 2];
    return halving_sum<W / 2>(d);
  }
}

/// Running sum of packs in A (the accumulation type, wider than the packs' T).
///  - Wide packs (hosts, Narrow false): one sum per lane (whole-vector converts and adds), added up pairwise at the
///    end.
///  - Narrow packs (devices, Narrow true): each pack's values are added pairwise in T and the pack sum converted once
///    (on GPUs a conversion to double costs the issue slots of 8 float operations). Where a pack sum is not finite in T
///    (losses near T's max, inf, NaN) the values are added in A instead, so nothing overflows that the A sum would not.
template <class A, class P, bool Narrow>
struct LaneSums {
  using T = typename P::value_type;
  static constexpr bool narrow = Narrow && !std::is_same_v<A, T>;
  static constexpr int lanes = narrow ? 1 : P::width;
  A v[lanes] = {};

  /// Adds K packs. The narrow kind tests the K pack sums for finiteness once: a branch per pack keeps the GPU
  /// compiler from overlapping the packs' arithmetic.
  template <int K>
  KOKKOS_FORCEINLINE_FUNCTION void add(const P (&p)[K]) {
    if constexpr (narrow) {
      T s[K];
      bool finite = true;
      for (int j = 0; j < K; ++j) {
        T d[P::width];
        for (int k = 0; k < P::width; ++k) d[k] = p[j].v[k];
        s[j] = halving_sum<P::width>(d);
        finite &= Kokkos::abs(s[j]) <= Kokkos::Experimental::finite_max_v<T>;
      }
      if (finite) {
        for (int j = 0; j < K; ++j) v[0] += static_cast<A>(s[j]);
      } else {
        for (int j = 0; j < K; ++j)
          for (int k = 0; k < P::width; ++k) v[0] += static_cast<A>(p[j].v[k]);
      }
    } else {
      for (int j = 0; j < K; ++j)
        for (int k = 0; k < P::width; ++k) v[k] += static_cast<A>(p[j].v[k]);
    }
  }
  KOKKOS_FORCEINLINE_FUNCTION void add(const P& p) {
    const P one[1] = {p};
    add(one);
  }
  KOKKOS_FORCEINLINE_FUNCTION A total() { return halving_sum<lanes>(v); }
};

template <class P, class T, class Index>
KOKKOS_FORCEINLINE_FUNCTION P load_pack(T* p, const Index i) {
  return reinterpret_cast<const P*>(p)[i];
}
template <class P, class T, class Index>
KOKKOS_FORCEINLINE_FUNCTION void store_pack(T* p, const Index i, const P& v) {
  reinterpret_cast<P*>(p)[i] = v;
}

/// Whether a view is a FlatView (contiguous rank 1): the only kind the pack loops read and write.
template <class V>
inline constexpr bool is_flat_v = V::rank() == 1 && std::is_same_v<typename V::array_layout, Kokkos::LayoutRight>;

template <int Bytes, class... V>
bool aligned_to(const V&... v) {
  return ((reinterpret_cast<std::uintptr_t>(v.data()) % Bytes == 0) && ...);
}

// ---------------------------------------------------------------------------------------------------------------
// The loop.

/// Items [begin, end) of a share, every step-th.
template <class Index>
struct Share {
  Index begin, end, step;
};

/// Grid-stride share of thread `thread` of `threads` (devices: neighbouring threads read neighbouring items).
template <class Index>
KOKKOS_FORCEINLINE_FUNCTION Share<Index> strided_share(const Index count, const Index thread, const Index threads) {
  return {thread, count, threads};
}

/// Contiguous block `part` of `parts` (hosts: one sequential stream a thread).
template <class Index>
KOKKOS_FORCEINLINE_FUNCTION Share<Index> block_share(const Index count, const Index part, const Index parts) {
  const Index chunk = count / parts, extra = count % parts;
  const Index begin = part * chunk + (part < extra ? part : extra);
  return {begin, begin + chunk + (part < extra ? 1 : 0), Index(1)};
}

/// What the loop over an op returns (`result`: the sum of its values for reduce and fused ops, nothing for map ops),
/// and the type of its running sum (`sum`).
template <class Op, bool Reduces = Op::kind != OpKind::Map>
struct ShareSum {
  using result = typename Op::accum_type;
  using sum = typename Op::accum_type;
};
template <class Op>
struct ShareSum<Op, false> {
  using result = void;
  using sum = int;
};
template <class Op>
using share_result_t = typename ShareSum<Op>::result;

/// Whether an op's packs come from vector kernels (Op::vector_lane_sums), whose sums LaneSums writes out as vectors.
template <class Op, class = void>
inline constexpr bool vector_lane_sums_v = false;
template <class Op>
inline constexpr bool vector_lane_sums_v<Op, std::void_t<decltype(Op::vector_lane_sums)>> = Op::vector_lane_sums;

/// Op over this thread's share of n elements, `share_of(count)` giving the share of `count` items. With `packed`,
/// whole packs of W elements (Unroll of them at a time: their loads issued before any of their arithmetic, which
/// the GPU compiler keeps in source order), then the n % W tail one by one; else one element at a time. The packs
/// are summed by the op's hardware's lane sums.
template <int Unroll, class Op, class Index, class ShareOf>
KOKKOS_FORCEINLINE_FUNCTION share_result_t<Op> for_share(const Op& op, const Index n, const bool packed,
                                                         const ShareOf& share_of) {
  constexpr bool reduces = Op::kind != OpKind::Map;
  using A = typename ShareSum<Op>::sum;
  const auto scale = op.scale();
  A sum(0);
  if constexpr (Op::packable) {
    if (packed) {
      using P = typename Op::pack_type;
      constexpr Index W = P::width;
      const Index packs = n / W;
      const Share<Index> s = share_of(packs);
      using Sums = typename Op::hardware::template lane_sums<A, P, vector_lane_sums_v<Op>>;
      [[maybe_unused]] std::conditional_t<reduces, Sums, int> lanes{};
      Index p = s.begin;
      if constexpr (Unroll > 1) {
        for (; p + (Unroll - 1) * s.step < s.end; p += Unroll * s.step) {
          typename Op::inputs_type in[Unroll];
          SOFTMARGIN_IMPL_UNROLL
          for (int u = 0; u < Unroll; ++u) in[u] = op.load(p + u * s.step);
          if constexpr (reduces) {
            P l[Unroll];
            SOFTMARGIN_IMPL_UNROLL
            for (int u = 0; u < Unroll; ++u) l[u] = op.apply(in[u], p + u * s.step, scale);
            lanes.add(l);
          } else {
            SOFTMARGIN_IMPL_UNROLL
            for (int u = 0; u < Unroll; ++u) op.apply(in[u], p + u * s.step, scale);
          }
        }
      }
      for (; p < s.end; p += s.step) {
        if constexpr (reduces)
          lanes.add(op.apply(op.load(p), p, scale));
        else
          op.apply(op.load(p), p, scale);
      }
      if constexpr (reduces) sum = lanes.total();
      const Share<Index> t = share_of(n - packs * W);
      for (Index i = t.begin; i < t.end; i += t.step) {
        if constexpr (reduces)
          sum += op(packs * W + i, scale);
        else
          op(packs * W + i, scale);
      }
      if constexpr (reduces)
        return sum;
      else
        return;
    }
  }
  const Share<Index> s = share_of(n);
  for (Index i = s.begin; i < s.end; i += s.step) {
    if constexpr (reduces)
      sum += op(i, scale);
    else
      op(i, scale);
  }
  if constexpr (reduces) return sum;
}

}  // namespace softmargin::Impl

#endif

// SoftMargin host room: W values as one vector (GCC and Clang vector extensions), and the lanes of Half.hpp's bit
// algorithms over such vectors. Defined where SoftMargin_HostTarget.hpp finds the extensions.
#ifndef SOFTMARGIN_IMPL_HOST_VECTORS_HPP
#define SOFTMARGIN_IMPL_HOST_VECTORS_HPP

#include <cstdint>
#include <cstring>

#include "SoftMargin_HostTarget.hpp"

#if defined(SOFTMARGIN_IMPL_HOST_VECTORS)

namespace softmargin::Impl {

// Vectors wider than the target's registers change the calling convention of functions that pass or return them
// (GCC's -Wpsabi note, reported where such a function is called); the helpers below are inlined into their callers.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

/// W values of T as one vector (of W * sizeof(T) bytes).
template <class T, int W>
struct HostVector {
  typedef T type __attribute__((vector_size(sizeof(T) * W)));
};
template <class T, int W>
using host_vector_t = typename HostVector<T, W>::type;

template <class V, class T>
inline V load_vector(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T, class V>
inline void store_vector(T* p, const V& v) {
  std::memcpy(p, &v, sizeof v);
}

/// The lanes of Half.hpp's bit algorithms for W values as host vectors: comparisons give all-ones lanes where true.
template <int W>
struct VectorLanes {
  using U = host_vector_t<std::uint32_t, W>;
  using F = host_vector_t<float, W>;
  static F as_float(const U u) { return (F)u; }
  static U as_bits(const F f) { return (U)f; }
  template <class C, class A, class B>
  static U select(const C c, const A a, const B b) {
    return ((U)c & a) | (~(U)c & b);
  }
};

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

}  // namespace softmargin::Impl

#endif
#endif

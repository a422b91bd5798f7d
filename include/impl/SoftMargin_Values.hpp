// SoftMargin: the value types a call may hold and how the kernels read and write them.
//  - x: float, double, or a 16-bit float (softmargin::bf16, softmargin::fp16, or Kokkos' half_t and bhalf_t, which
//    the kernels read as the 2-byte type of the same bits where Kokkos makes them 2 bytes, and as float where Kokkos
//    makes them float);
//  - y: x's type, or a compact target: int8_t (used by its value) or bool (true = +1, false = -1);
//  - outputs: any of x's types, each value computed in the compute type and rounded once to it.
// Arithmetic is in the compute type: double for double x, float for every other x.
#ifndef SOFTMARGIN_IMPL_VALUES_HPP
#define SOFTMARGIN_IMPL_VALUES_HPP

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <type_traits>

#include "../SoftMargin_Half.hpp"

namespace softmargin::Impl {

/// The 2-byte type with the same bits as T where T is one of Kokkos' half types of 2 bytes, else T (cv kept).
template <class T>
struct storage {
  using K16 = Kokkos::Experimental::half_t;
  using KB16 = Kokkos::Experimental::bhalf_t;
  using U = std::remove_cv_t<T>;
  static constexpr bool k16 = std::is_same_v<U, K16> && !std::is_same_v<K16, float> && sizeof(K16) == 2;
  static constexpr bool kb16 = std::is_same_v<U, KB16> && !std::is_same_v<KB16, float> && sizeof(KB16) == 2;
  using S = std::conditional_t<k16, fp16, std::conditional_t<kb16, bf16, U>>;
  using type = std::conditional_t<std::is_const_v<T>, const S, S>;
};
template <class T>
using storage_t = typename storage<T>::type;

/// Whether T (after storage_t) is a floating type the library reads and writes: float, double, bf16, fp16.
template <class T>
inline constexpr bool is_value_type_v = std::is_same_v<storage_t<T>, float> || std::is_same_v<storage_t<T>, double> ||
                                        std::is_same_v<storage_t<T>, bf16> || std::is_same_v<storage_t<T>, fp16>;

/// Whether Y is a target type for x of type X: X's own type, int8_t or bool.
template <class X, class Y>
inline constexpr bool is_target_type_v =
    std::is_same_v<storage_t<X>, storage_t<Y>> || std::is_same_v<Y, std::int8_t> || std::is_same_v<Y, bool>;

/// Whether G may hold the gradient of x of type X: X's own type or float.
template <class X, class G>
inline constexpr bool is_grad_type_v = std::is_same_v<storage_t<X>, storage_t<G>> || std::is_same_v<G, float>;

/// The arithmetic type of x of type X: double for double, float for the rest.
template <class X>
using compute_t = std::conditional_t<std::is_same_v<std::remove_cv_t<X>, double>, double, float>;

/// The type of a blocking call's host result for x of type X: X for float and double, float for 16-bit x.
template <class X>
using host_result_t = std::conditional_t<std::is_arithmetic_v<X>, X, float>;

/// v in the arithmetic type C (exact for every storage type).
template <class C, class T>
KOKKOS_FORCEINLINE_FUNCTION C to_compute(const T v) {
  if constexpr (std::is_arithmetic_v<T>)
    return static_cast<C>(v);
  else
    return static_cast<C>(static_cast<float>(v));
}

/// The number a target stands for: its value, or +1 and -1 for true and false.
template <class C, class Y>
KOKKOS_FORCEINLINE_FUNCTION C target_value(const Y y) {
  if constexpr (std::is_same_v<Y, bool>)
    return static_cast<C>(2 * static_cast<int>(y) - 1);
  else
    return to_compute<C>(y);
}

/// v rounded once to the output type O (16-bit types round from float; a double v rounds to float first, which
/// gives the same 16-bit value except for ties within 2^-29 relative).
template <class O, class C>
KOKKOS_FORCEINLINE_FUNCTION O round_to(const C v) {
  if constexpr (std::is_arithmetic_v<O>)
    return static_cast<O>(v);
  else
    return O(static_cast<float>(v));
}

}  // namespace softmargin::Impl

#endif

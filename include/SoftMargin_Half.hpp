// SoftMargin: 2-byte floating-point storage types, the same bits on every backend.
//
// softmargin::bf16 (bfloat16: 8 exponent bits, 7 mantissa bits) and softmargin::fp16 (IEEE binary16) hold the 16
// bits of a value that another framework (PyTorch, a CUDA kernel) wrote, so that a host buffer and a device buffer of
// them mean the same thing whether or not Kokkos has a native half type on the backend (a Kokkos build without CUDA
// makes Kokkos::Experimental::half_t and bhalf_t 4-byte floats). They do no arithmetic: they convert to float exactly
// and from float rounding to nearest, ties to even, keeping infinities and NaN (a NaN becomes a quiet NaN of its
// sign). The conversions are branch-free bit operations that compilers vectorize, the same on every backend; the
// library's kernels convert with a device's own instructions where it has them (impl/cuda), which give the same bits
// for every value but NaN, whose payload they may replace.
#ifndef SOFTMARGIN_HALF_HPP
#define SOFTMARGIN_HALF_HPP

#include <Kokkos_BitManipulation.hpp>
#include <Kokkos_Macros.hpp>
#include <cstdint>

namespace softmargin {

namespace Impl {

KOKKOS_FORCEINLINE_FUNCTION float bf16_bits_to_float(const std::uint16_t h) {
  return Kokkos::bit_cast<float>(static_cast<std::uint32_t>(h) << 16);
}

/// The bit algorithms below are written once over "lanes" L: ScalarLanes here (one value), host vectors of values in
/// impl/host/SoftMargin_HostVectors.hpp. L gives the bits type U (uint32), the float type F, as_float / as_bits (bit
/// casts) and select(condition, a, b) (a and b bits, or constants).
struct ScalarLanes {
  using U = std::uint32_t;
  using F = float;
  KOKKOS_FORCEINLINE_FUNCTION static F as_float(const U u) { return Kokkos::bit_cast<F>(u); }
  KOKKOS_FORCEINLINE_FUNCTION static U as_bits(const F f) { return Kokkos::bit_cast<U>(f); }
  KOKKOS_FORCEINLINE_FUNCTION static U select(const bool c, const U a, const U b) { return c ? a : b; }
};

/// float bits to bf16 bits (in the low half), round to nearest even: add 0x7fff plus the lowest kept bit, truncate (a
/// carry into the exponent gives the next binade or infinity, as rounding should); NaN keeps its sign and top payload
/// bits and becomes quiet.
template <class L>
KOKKOS_FORCEINLINE_FUNCTION typename L::U bf16_round_bits(const typename L::U u) {
  using U = typename L::U;
  const U rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const U quiet_nan = (u >> 16) | 0x40u;
  return L::select((u & 0x7fffffffu) > 0x7f800000u, quiet_nan, rounded);
}

/// binary16 to float, exactly, from w = the binary16 bits << 16: normal values by shifting the exponent and mantissa
/// into place and scaling by 2^-112 (which also maps the binary16 infinity and NaN exponent onto float's), subnormal
/// ones through a float subtraction.
template <class L>
KOKKOS_FORCEINLINE_FUNCTION typename L::F fp16_widen_bits(const typename L::U w) {
  using U = typename L::U;
  const U sign = w & 0x80000000u;
  const U two_w = w + w;
  const typename L::F normal = L::as_float((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
  const typename L::F subnormal = L::as_float((two_w >> 17) | (126u << 23)) - 0.5f;
  return L::as_float(sign | L::select(two_w < (1u << 27), L::as_bits(subnormal), L::as_bits(normal)));
}

/// float to binary16 bits (in the low half), round to nearest even: float arithmetic does the rounding (the value is
/// scaled so that the float addition of a power of two drops exactly the bits binary16 cannot keep; beyond its range
/// the scaling overflows to infinity), NaN becomes the quiet NaN 0x7e00 of its sign.
template <class L>
KOKKOS_FORCEINLINE_FUNCTION typename L::U fp16_round_bits(const typename L::F f) {
  using U = typename L::U;
  const U w = L::as_bits(f);
  typename L::F base = (L::as_float(w & 0x7fffffffu) * 0x1.0p+112f) * 0x1.0p-110f;
  const U shl1_w = w + w;
  const U sign = w & 0x80000000u;
  U bias = shl1_w & 0xFF000000u;
  bias = L::select(bias < 0x71000000u, 0x71000000u, bias);
  base = L::as_float((bias >> 1) + 0x07800000u) + base;
  const U bits = L::as_bits(base);
  const U nonsign = ((bits >> 13) & 0x00007C00u) + (bits & 0x00000FFFu);
  return (sign >> 16) | L::select(shl1_w > 0xFF000000u, 0x7E00u, nonsign);
}

KOKKOS_FORCEINLINE_FUNCTION std::uint16_t float_to_bf16_bits(const float f) {
  return static_cast<std::uint16_t>(bf16_round_bits<ScalarLanes>(Kokkos::bit_cast<std::uint32_t>(f)));
}

KOKKOS_FORCEINLINE_FUNCTION float fp16_bits_to_float(const std::uint16_t h) {
  return fp16_widen_bits<ScalarLanes>(static_cast<std::uint32_t>(h) << 16);
}

KOKKOS_FORCEINLINE_FUNCTION std::uint16_t float_to_fp16_bits(const float f) {
  return static_cast<std::uint16_t>(fp16_round_bits<ScalarLanes>(f));
}

}  // namespace Impl

/// bfloat16 storage: the top 16 bits of a float.
struct bf16 {
  std::uint16_t bits;

  bf16() = default;
  KOKKOS_FORCEINLINE_FUNCTION explicit bf16(const float f) : bits(Impl::float_to_bf16_bits(f)) {}
  KOKKOS_FORCEINLINE_FUNCTION explicit operator float() const { return Impl::bf16_bits_to_float(bits); }
  KOKKOS_FORCEINLINE_FUNCTION static constexpr bf16 from_bits(const std::uint16_t b) {
    bf16 h{};
    h.bits = b;
    return h;
  }
};

/// IEEE binary16 storage.
struct fp16 {
  std::uint16_t bits;

  fp16() = default;
  KOKKOS_FORCEINLINE_FUNCTION explicit fp16(const float f) : bits(Impl::float_to_fp16_bits(f)) {}
  KOKKOS_FORCEINLINE_FUNCTION explicit operator float() const { return Impl::fp16_bits_to_float(bits); }
  KOKKOS_FORCEINLINE_FUNCTION static constexpr fp16 from_bits(const std::uint16_t b) {
    fp16 h{};
    h.bits = b;
    return h;
  }
};

static_assert(sizeof(bf16) == 2 && alignof(bf16) == 2, "bf16 is two bytes");
static_assert(sizeof(fp16) == 2 && alignof(fp16) == 2, "fp16 is two bytes");

}  // namespace softmargin

#endif

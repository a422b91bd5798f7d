// SoftMargin: 2-byte floating-point storage types, the same bits on every backend.
//
// softmargin::bf16 (bfloat16: 8 exponent bits, 7 mantissa bits) and softmargin::fp16 (IEEE binary16) hold the 16
// bits of a value that another framework (PyTorch, a CUDA kernel) wrote, so that a host buffer and a device buffer of
// them mean the same thing whether or not Kokkos has a native half type on the backend (a Kokkos build without CUDA
// makes Kokkos::Experimental::half_t and bhalf_t 4-byte floats). They do no arithmetic: they convert to float exactly
// and from float rounding to nearest, ties to even, keeping infinities and NaN (a NaN becomes a quiet NaN of its
// sign). On CUDA devices the conversions are the hardware's; on hosts they are branch-free bit operations that
// compilers vectorize.
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

/// Round to nearest even: add 0x7fff plus the lowest kept bit, truncate (a carry into the exponent gives the next
/// binade or infinity, as rounding should); NaN keeps its sign and top payload bits and becomes quiet.
KOKKOS_FORCEINLINE_FUNCTION std::uint16_t float_to_bf16_bits(const float f) {
  const std::uint32_t u = Kokkos::bit_cast<std::uint32_t>(f);
  const std::uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const std::uint32_t quiet_nan = (u >> 16) | 0x40u;
  return static_cast<std::uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
}

/// binary16 to float, exactly: normal values by shifting the exponent and mantissa into place and scaling by 2^-112
/// (which also maps the binary16 infinity and NaN exponent onto float's), subnormal ones through a float subtraction.
KOKKOS_FORCEINLINE_FUNCTION float fp16_bits_to_float_soft(const std::uint16_t h) {
  const std::uint32_t w = static_cast<std::uint32_t>(h) << 16;
  const std::uint32_t sign = w & 0x80000000u;
  const std::uint32_t two_w = w + w;
  const float normal = Kokkos::bit_cast<float>((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
  const float subnormal = Kokkos::bit_cast<float>((two_w >> 17) | (126u << 23)) - 0.5f;
  const std::uint32_t magnitude =
      two_w < (1u << 27) ? Kokkos::bit_cast<std::uint32_t>(subnormal) : Kokkos::bit_cast<std::uint32_t>(normal);
  return Kokkos::bit_cast<float>(sign | magnitude);
}

/// float to binary16, round to nearest even: float arithmetic does the rounding (the value is scaled so that the
/// float addition of a power of two drops exactly the bits binary16 cannot keep; beyond its range the scaling
/// overflows to infinity), NaN becomes the quiet NaN 0x7e00 of its sign.
KOKKOS_FORCEINLINE_FUNCTION std::uint16_t float_to_fp16_bits_soft(const float f) {
  float base = ((f < 0 ? -f : f) * 0x1.0p+112f) * 0x1.0p-110f;
  const std::uint32_t w = Kokkos::bit_cast<std::uint32_t>(f);
  const std::uint32_t shl1_w = w + w;
  const std::uint32_t sign = w & 0x80000000u;
  std::uint32_t bias = shl1_w & 0xFF000000u;
  bias = bias < 0x71000000u ? 0x71000000u : bias;
  base = Kokkos::bit_cast<float>((bias >> 1) + 0x07800000u) + base;
  const std::uint32_t bits = Kokkos::bit_cast<std::uint32_t>(base);
  const std::uint32_t nonsign = ((bits >> 13) & 0x00007C00u) + (bits & 0x00000FFFu);
  return static_cast<std::uint16_t>((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}

KOKKOS_FORCEINLINE_FUNCTION float fp16_bits_to_float(const std::uint16_t h) {
#if defined(__CUDA_ARCH__)
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
#else
  return fp16_bits_to_float_soft(h);
#endif
}

KOKKOS_FORCEINLINE_FUNCTION std::uint16_t float_to_fp16_bits(const float f) {
#if defined(__CUDA_ARCH__)
  std::uint16_t h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  return float_to_fp16_bits_soft(f);
#endif
}

}  // namespace Impl

/// bfloat16 storage: the top 16 bits of a float.
struct bf16 {
  std::uint16_t bits;

  bf16() = default;
  KOKKOS_FORCEINLINE_FUNCTION explicit bf16(const float f) : bits(float_to_bits(f)) {}
  KOKKOS_FORCEINLINE_FUNCTION explicit operator float() const { return Impl::bf16_bits_to_float(bits); }
  KOKKOS_FORCEINLINE_FUNCTION static constexpr bf16 from_bits(const std::uint16_t b) {
    bf16 h{};
    h.bits = b;
    return h;
  }

 private:
  KOKKOS_FORCEINLINE_FUNCTION static std::uint16_t float_to_bits(const float f) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 800)
    std::uint16_t h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    return Impl::float_to_bf16_bits(f);
#endif
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

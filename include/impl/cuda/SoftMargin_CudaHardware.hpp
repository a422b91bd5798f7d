// SoftMargin CUDA room: Hardware<Kokkos::Cuda>, what CUDA devices do their own way inside a kernel (every CUDA kernel
// of the library, the portable ones too):
//  - loads of inputs through the read-only data cache (non-coherent loads, as `const __restrict__` pointers give);
//  - fp16 and bf16 conversions by the device's instructions, bf16 values and int8 targets widened from the 32-bit
//    words that hold them (widen_words);
//  - the fast form of the loss through the multi-function unit (FastLoss).
// Host code of this specialization (the host pass of a CUDA compilation) is the portable one.
#ifndef SOFTMARGIN_IMPL_CUDA_HARDWARE_HPP
#define SOFTMARGIN_IMPL_CUDA_HARDWARE_HPP

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <type_traits>

#include "../SoftMargin_Hardware.hpp"
#include "SoftMargin_CudaTuning.hpp"

namespace softmargin::Impl {

/// The fast form of the loss on CUDA devices. The accurate form's exp and log1p take about 30 instructions an
/// element; here exp(-|z|) is the multi-function unit's 2^t (ex2.approx, within 2 ulp, subnormal results kept),
/// t = -|z| log2(e) rounded to float, times 1 + (the rounding error of t) ln 2: without that correction the error of
/// t alone would reach 1e-6 relative at |z| = 17. Its log1p is log1p_unit_fast; the sigmoid goes through the unit's
/// reciprocal (rcp.approx).
struct FastLoss {
  static constexpr float log2e = 1.44269504088896341f, log2e_lo = 1.925963033500011e-08f, ln2 = 0.693147180559945309f;
#if defined(__CUDA_ARCH__)
  /// e = exp(-|z|), |z| clamped to 128 (e = 0 there in float); a NaN z gives NaN.
  __device__ static float exp_neg_abs(const float z) {
    const float a = min_nan(fabsf(z), 128.0f);
    const float t = -a * log2e;
    const float q_err = fmaf(a, log2e_lo, fmaf(a, log2e, t));  // t - (-|z| log2(e)), log2(e) = log2e + log2e_lo
    float e0;
    asm("ex2.approx.f32 %0, %1;" : "=f"(e0) : "f"(t));
    return fmaf(e0, q_err * -ln2, e0);
  }
  /// min(a, b) that keeps a NaN (min.NaN).
  __device__ static float min_nan(const float a, const float b) {
    float r;
    asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
  }
  /// max(z, 0) that keeps a NaN z (max.NaN).
  __device__ static float pos(const float z) {
    float r;
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(z), "f"(0.0f));
    return r;
  }
  __device__ static float rcp(const float v) {
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
    return r;
  }
  __device__ static float loss(const float x, const float y) {
    const float z = -y * x;
    return pos(z) + log1p_unit_fast(exp_neg_abs(z));
  }
  __device__ static float loss_and_dloss_dx(const float x, const float y, float& grad) {
    const float z = -y * x;
    const float e = exp_neg_abs(z);
    grad = -y * ((z >= 0.0f ? 1.0f : e) * rcp(1.0f + e));
    return pos(z) + log1p_unit_fast(e);
  }
#endif
};

template <>
struct Hardware<Kokkos::Cuda> : PortableHardware<Kokkos::Cuda> {
  using tuning = CudaTuning;
  static constexpr DeviceMemory device_memory = DeviceMemory::Cuda;

  template <class P, class T, class Index>
  KOKKOS_FORCEINLINE_FUNCTION static P load_readonly(const T* p, const Index i) {
#if defined(__CUDA_ARCH__)
    if constexpr (P::bytes == 16 && std::is_same_v<T, float>) {
      const float4 v = __ldg(reinterpret_cast<const float4*>(p) + i);
      return P{{v.x, v.y, v.z, v.w}};
    } else if constexpr (P::bytes == 16 && std::is_same_v<T, double>) {
      const double2 v = __ldg(reinterpret_cast<const double2*>(p) + i);
      return P{{v.x, v.y}};
    } else if constexpr (P::bytes == 16) {  // 16-bit and 8-bit values: the bits as one vector load
      return Kokkos::bit_cast<P>(__ldg(reinterpret_cast<const uint4*>(p) + i));
    } else if constexpr (P::bytes == 8) {
      return Kokkos::bit_cast<P>(__ldg(reinterpret_cast<const uint2*>(p) + i));
    } else if constexpr (P::bytes == 4) {
      return Kokkos::bit_cast<P>(__ldg(reinterpret_cast<const unsigned*>(p) + i));
    }
#endif
    return load_pack<P>(p, i);
  }

  /// v in C; fp16 by cvt.f32.f16.
  template <class C, class T>
  KOKKOS_FORCEINLINE_FUNCTION static C to_compute(const T v) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<std::remove_cv_t<T>, fp16>) {
      float f;
      asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.bits));
      return static_cast<C>(f);
    } else
#endif
      return Impl::to_compute<C>(v);
  }

  /// v rounded once to O; fp16 and bf16 by cvt.rn (bf16 from sm_80 on).
  template <class O, class C>
  KOKKOS_FORCEINLINE_FUNCTION static O round_to(const C v) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<O, fp16>) {
      std::uint16_t h;
      asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(static_cast<float>(v)));
      return fp16::from_bits(h);
    } else if constexpr (std::is_same_v<O, bf16> && __CUDA_ARCH__ >= 800) {
      std::uint16_t h;
      asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(static_cast<float>(v)));
      return bf16::from_bits(h);
    } else
#endif
      return Impl::round_to<O>(v);
  }

  /// out[k] = to_compute<C>(in[k]); bf16 values and int8 targets from their 32-bit words.
  template <class C, class T, int W>
  KOKKOS_FORCEINLINE_FUNCTION static void widen_values(const T (&in)[W], C (&out)[W]) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<C, float> &&
                  ((std::is_same_v<T, bf16> && W % 2 == 0) || (std::is_same_v<T, std::int8_t> && W % 4 == 0)))
      widen_words(in, out);
    else
#endif
      for (int k = 0; k < W; ++k) out[k] = to_compute<C>(in[k]);
  }
  template <class C, class Y, int W>
  KOKKOS_FORCEINLINE_FUNCTION static void widen_targets(const Y (&in)[W], C (&out)[W]) {
    if constexpr (std::is_same_v<Y, bool>)
      Impl::widen_targets(in, out);
    else
      widen_values(in, out);
  }
  template <class O, class C, int W>
  KOKKOS_FORCEINLINE_FUNCTION static void round_scaled(const C scale, const C (&in)[W], O (&out)[W]) {
    for (int k = 0; k < W; ++k) out[k] = round_to<O>(scale * in[k]);
  }

  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static T loss_fast(const T x, const T y) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<T, float>)
      return FastLoss::loss(x, y);
    else
#endif
      return Impl::loss_fast(x, y);
  }
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static T loss_and_dloss_dx_fast(const T x, const T y, T& grad) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<T, float>)
      return FastLoss::loss_and_dloss_dx(x, y, grad);
    else
#endif
      return Impl::loss_and_dloss_dx_fast(x, y, grad);
  }
};

}  // namespace softmargin::Impl

#endif

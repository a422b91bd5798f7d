// SoftMargin host room: packs converted as whole vectors. Left to the compilers' vectorizers, these conversions,
// inlined into the kernels' unrolled loops, stay (partly) scalar (one int-to-float conversion or one 16-bit rounding
// an element), which makes 16-bit passes slower than float ones on hosts. Here int8_t and bool targets, fp16 values
// and roundings to bf16 and fp16 convert a vector at a time (x86's own conversions where the target has them,
// SoftMargin_HostConvertX86.hpp), with the same bits as Values.hpp's to_compute, target_value and round_to; other
// conversions are the core's (SoftMargin_PackConvert.hpp).
#ifndef SOFTMARGIN_IMPL_HOST_CONVERT_HPP
#define SOFTMARGIN_IMPL_HOST_CONVERT_HPP

#include <Kokkos_Macros.hpp>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../SoftMargin_PackConvert.hpp"
#include "../SoftMargin_Values.hpp"
#include "SoftMargin_HostConvertX86.hpp"
#include "SoftMargin_HostTarget.hpp"
#include "SoftMargin_HostVectors.hpp"

namespace softmargin::Impl::HostConvert {

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

/// out[k] = to_compute<C>(in[k]) for a pack of W values.
template <class C, class T, int W>
KOKKOS_FORCEINLINE_FUNCTION void widen_values(const T (&in)[W], C (&out)[W]) {
#if defined(SOFTMARGIN_IMPL_HOST_VECTORS)
  if constexpr (std::is_same_v<C, float> && std::is_same_v<T, fp16>) {
    if (widen_fp16_x86(in, out)) return;
    const auto w =
        __builtin_convertvector(load_vector<host_vector_t<std::uint16_t, W>>(in), host_vector_t<std::uint32_t, W>);
    store_vector(out, fp16_widen_bits<VectorLanes<W>>(w << 16));
    return;
  } else if constexpr (std::is_same_v<C, float> && std::is_same_v<T, std::int8_t>) {
    widen_int8(in, out);
    return;
  }
#endif
  Impl::widen_values(in, out);
}

/// out[k] = target_value<C>(in[k]) for a pack of W targets.
template <class C, class Y, int W>
KOKKOS_FORCEINLINE_FUNCTION void widen_targets(const Y (&in)[W], C (&out)[W]) {
  if constexpr (std::is_same_v<Y, bool>) {
#if defined(SOFTMARGIN_IMPL_HOST_VECTORS)
    if constexpr (std::is_same_v<C, float>) {
      // bool's bytes are 0 and 1: widened as int8 values, then 2 b - 1 (exact)
      std::int8_t bytes[W];
      std::memcpy(bytes, in, W);
      widen_int8(bytes, out);
      for (int k = 0; k < W; ++k) out[k] = 2.0f * out[k] - 1.0f;
      return;
    }
#endif
    Impl::widen_targets(in, out);
  } else {
    widen_values(in, out);
  }
}

/// out[k] = round_to<O>(scale * in[k]) for a pack of W values.
template <class O, class C, int W>
KOKKOS_FORCEINLINE_FUNCTION void round_scaled(const C scale, const C (&in)[W], O (&out)[W]) {
#if defined(SOFTMARGIN_IMPL_HOST_VECTORS)
  if constexpr (std::is_same_v<C, float> && (std::is_same_v<O, bf16> || std::is_same_v<O, fp16>)) {
    using F32 = host_vector_t<float, W>;
    using U16 = host_vector_t<std::uint16_t, W>;
    const F32 v = load_vector<F32>(in) * scale;
    if constexpr (std::is_same_v<O, bf16>) {
      if (narrow_bf16_x86(v, out)) return;
      store_vector(out,
                   __builtin_convertvector(bf16_round_bits<VectorLanes<W>>((host_vector_t<std::uint32_t, W>)v), U16));
    } else {
      if (narrow_fp16_x86(v, out)) return;
      store_vector(out, __builtin_convertvector(fp16_round_bits<VectorLanes<W>>(v), U16));
    }
    return;
  }
#endif
  Impl::round_scaled(scale, in, out);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

}  // namespace softmargin::Impl::HostConvert

#endif

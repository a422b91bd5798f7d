// SoftMargin: packs of values converted between their storage types and the compute type, a pack at a time, value
// by value (the portable form; the host room converts whole vectors, impl/host/SoftMargin_HostConvert.hpp, and the
// CUDA room uses the device's conversions and widen_words). Every form gives the same bits as Values.hpp's
// to_compute, target_value and round_to.
#ifndef SOFTMARGIN_IMPL_PACK_CONVERT_HPP
#define SOFTMARGIN_IMPL_PACK_CONVERT_HPP

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "SoftMargin_Values.hpp"

namespace softmargin::Impl {

/// bf16 and int8 values widened from the 32-bit words that hold them (devices): the high bf16 of a word as
/// `w & 0xffff0000`, byte k as the signed byte of `w >> 8k`. Given the values one at a time, nvcc widens the high
/// bf16 by a byte permute and a shift.
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void widen_words(const bf16 (&in)[W], float (&out)[W]) {
  static_assert(W % 2 == 0, "whole words");
  std::uint32_t w[W / 2];
  std::memcpy(w, in, sizeof w);
  for (int j = 0; j < W / 2; ++j) {
    out[2 * j] = Kokkos::bit_cast<float>(w[j] << 16);
    out[2 * j + 1] = Kokkos::bit_cast<float>(w[j] & 0xffff0000u);
  }
}
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void widen_words(const std::int8_t (&in)[W], float (&out)[W]) {
  static_assert(W % 4 == 0, "whole words");
  std::uint32_t w[W / 4];
  std::memcpy(w, in, sizeof w);
  for (int j = 0; j < W / 4; ++j)
    for (int k = 0; k < 4; ++k)
      out[4 * j + k] = static_cast<float>(static_cast<std::int8_t>((w[j] >> (8 * k)) & 0xffu));
}

/// out[k] = to_compute<C>(in[k]) for a pack of W values.
template <class C, class T, int W>
KOKKOS_FORCEINLINE_FUNCTION void widen_values(const T (&in)[W], C (&out)[W]) {
  for (int k = 0; k < W; ++k) out[k] = to_compute<C>(in[k]);
}

/// out[k] = target_value<C>(in[k]) for a pack of W targets.
template <class C, class Y, int W>
KOKKOS_FORCEINLINE_FUNCTION void widen_targets(const Y (&in)[W], C (&out)[W]) {
  for (int k = 0; k < W; ++k) out[k] = target_value<C>(in[k]);
}

/// out[k] = round_to<O>(scale * in[k]) for a pack of W values.
template <class O, class C, int W>
KOKKOS_FORCEINLINE_FUNCTION void round_scaled(const C scale, const C (&in)[W], O (&out)[W]) {
  for (int k = 0; k < W; ++k) out[k] = round_to<O>(scale * in[k]);
}

}  // namespace softmargin::Impl

#endif

// SoftMargin for PyTorch: tensors of one shape seen as unmanaged Kokkos Views, without copies.
//
// The tensors of one call (outputs, x, y, an upstream gradient) share a shape but not their strides: x may be
// transposed or sliced, y expanded (stride 0 where it broadcasts). Their common layout is coalesced first: extents
// of 1 are dropped, the dimensions are ordered by the first tensor's strides (outermost first), and neighbours are
// merged where every tensor allows it. Contiguous tensors become rank 1 (the library's flat path), a row-broadcast
// y of a matrix x stays rank 2, and so on; each tensor becomes a LayoutStride View of that rank over its own memory.
#ifndef SOFTMARGIN_TORCH_LAYOUT_HPP
#define SOFTMARGIN_TORCH_LAYOUT_HPP

#include <ATen/ATen.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "SoftMargin_Half.hpp"
#include "impl/SoftMargin_Views.hpp"

namespace softmargin::torch_ops {

/// The library's value type for a tensor element type: its 2-byte storage types for bfloat16 and float16 (the same
/// bits as torch's c10::BFloat16 and c10::Half), the type itself otherwise.
template <class T>
struct lib_value {
  using type = T;
};
template <>
struct lib_value<c10::BFloat16> {
  using type = softmargin::bf16;
};
template <>
struct lib_value<c10::Half> {
  using type = softmargin::fp16;
};
template <class T>
using lib_value_t = typename lib_value<T>::type;
static_assert(sizeof(softmargin::bf16) == sizeof(c10::BFloat16) && sizeof(softmargin::fp16) == sizeof(c10::Half));

/// t's elements (of torch type T) as the library's value type.
template <class T>
lib_value_t<T>* lib_data(const at::Tensor& t) {
  return reinterpret_cast<lib_value_t<T>*>(t.template data_ptr<T>());
}

/// Highest coalesced rank passed as strided Views: ranks 1 and 2, which the library holds compiled
/// (SOFTMARGIN_ETI_BACKENDS), so that the operators compile few kernels of their own. Tensors of one shape whose
/// layouts leave more dimensions after coalescing (a permuted 3-d tensor beside a contiguous one, say) are computed
/// on contiguous copies instead.
inline constexpr int kMaxRank = 2;

/// The coalesced layout of N tensors of one shape.
template <std::size_t N>
struct Layout {
  int rank = 0;
  std::array<std::int64_t, kMaxRank> extent{};
  std::array<std::array<std::int64_t, kMaxRank>, N> stride{};
};

/// Coalesces the strides of N tensors of shape `sizes` (see above). Returns false if more than kMaxRank dimensions
/// remain. A single element (or a 0-dimensional shape) is rank 1 of extent 1.
template <std::size_t N>
bool coalesce(c10::IntArrayRef sizes, const std::array<c10::IntArrayRef, N>& strides, Layout<N>& out) {
  c10::SmallVector<std::int64_t, 8> dims;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(sizes.size()); ++d)
    if (sizes[d] != 1) dims.push_back(d);
  std::stable_sort(dims.begin(), dims.end(),
                   [&](std::int64_t a, std::int64_t b) { return strides[0][a] > strides[0][b]; });
  // Groups from the innermost dimension outwards: extent and, per tensor, the stride of the group's innermost dim.
  c10::SmallVector<std::pair<std::int64_t, std::array<std::int64_t, N>>, 8> groups;
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
    const std::int64_t d = *it;
    bool merge = !groups.empty();
    for (std::size_t t = 0; merge && t < N; ++t) merge = strides[t][d] == groups.back().second[t] * groups.back().first;
    if (merge) {
      groups.back().first *= sizes[d];
    } else {
      std::array<std::int64_t, N> s{};
      for (std::size_t t = 0; t < N; ++t) s[t] = strides[t][d];
      groups.emplace_back(sizes[d], s);
    }
  }
  if (groups.empty()) groups.emplace_back(1, std::array<std::int64_t, N>{});
  if (groups.size() > static_cast<std::size_t>(kMaxRank)) return false;
  out.rank = static_cast<int>(groups.size());
  for (int r = 0; r < out.rank; ++r) {  // outermost first
    const auto& g = groups[groups.size() - 1 - r];
    out.extent[r] = g.first;
    for (std::size_t t = 0; t < N; ++t) out.stride[t][r] = g.second[t];
  }
  return true;
}

/// Unmanaged View of the library's value type T (const for inputs) and rank Rank on Device.
template <class T, int Rank, class Device>
using TensorView = Kokkos::View<typename softmargin::Impl::add_rank<T, Rank>::type, Kokkos::LayoutStride, Device,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

template <class T, int Rank, class Device, std::size_t N>
TensorView<T, Rank, Device> make_view(T* data, const Layout<N>& layout, std::size_t t) {
  Kokkos::LayoutStride ls;
  for (int r = 0; r < Rank; ++r) {
    ls.dimension[r] = static_cast<std::size_t>(layout.extent[r]);
    ls.stride[r] = static_cast<std::size_t>(layout.stride[t][r]);
  }
  return TensorView<T, Rank, Device>(data, ls);
}

/// The torch element type of input I: Y for the second input (the target), T for the others.
template <std::size_t I, class T, class Y>
using input_type_t = std::conditional_t<I == 1, Y, T>;

template <class T, class Y, int Rank, class Device, std::size_t NOut, std::size_t NIn, class F, std::size_t... O,
          std::size_t... I>
void call_with_views(const std::array<at::Tensor, NOut>& outs, const std::array<at::Tensor, NIn>& ins,
                     const Layout<NOut + NIn>& layout, F& f, std::index_sequence<O...>, std::index_sequence<I...>) {
  f(make_view<lib_value_t<T>, Rank, Device>(lib_data<T>(outs[O]), layout, O)...,
    make_view<const lib_value_t<input_type_t<I, T, Y>>, Rank, Device>(lib_data<input_type_t<I, T, Y>>(ins[I]), layout,
                                                                      NOut + I)...);
}

/// Calls f(output views..., input views...) with one strided View per tensor (torch element type T, Y for the second
/// input, seen as the library's lib_value_t, on Device), all of the
/// call's coalesced rank. The tensors share one shape; outputs are ordered by the first output's strides (or the
/// first input's if there is no output). When the layout does not coalesce to kMaxRank dimensions, f runs on
/// contiguous copies of the inputs into contiguous outputs, which are copied back (on the tensors' stream).
template <class T, class Device, class Y = T, std::size_t NOut, std::size_t NIn, class F>
void with_views(const std::array<at::Tensor, NOut>& outs, const std::array<at::Tensor, NIn>& ins, F&& f) {
  constexpr std::size_t N = NOut + NIn;
  std::array<c10::IntArrayRef, N> strides;
  if constexpr (NOut > 0)
    for (std::size_t t = 0; t < NOut; ++t) strides[t] = outs[t].strides();
  for (std::size_t t = 0; t < NIn; ++t) strides[NOut + t] = ins[t].strides();
  const c10::IntArrayRef sizes = NOut > 0 ? outs[0].sizes() : ins[0].sizes();
  Layout<N> layout;
  if (!coalesce(sizes, strides, layout)) {
    std::array<at::Tensor, NOut> tmp_outs;
    std::array<at::Tensor, NIn> tmp_ins;
    if constexpr (NOut > 0)
      for (std::size_t t = 0; t < NOut; ++t) tmp_outs[t] = at::empty(outs[t].sizes(), outs[t].options());
    for (std::size_t t = 0; t < NIn; ++t) tmp_ins[t] = ins[t].contiguous();
    with_views<T, Device, Y>(tmp_outs, tmp_ins, f);
    if constexpr (NOut > 0)
      for (std::size_t t = 0; t < NOut; ++t) outs[t].copy_(tmp_outs[t]);
    return;
  }
  const auto run = [&](auto rank) {
    call_with_views<T, Y, decltype(rank)::value, Device>(outs, ins, layout, f, std::make_index_sequence<NOut>{},
                                                         std::make_index_sequence<NIn>{});
  };
  if (layout.rank == 1)
    run(std::integral_constant<int, 1>{});
  else
    run(std::integral_constant<int, 2>{});
  static_assert(kMaxRank == 2, "with_views dispatches ranks 1 and 2");
}

/// ins followed by t.
template <std::size_t N>
std::array<at::Tensor, N + 1> append(const std::array<at::Tensor, N>& ins, const at::Tensor& t) {
  std::array<at::Tensor, N + 1> out;
  std::copy(ins.begin(), ins.end(), out.begin());
  out[N] = t;
  return out;
}

/// f(last, others...) of the arguments (v..., last): the view of a tensor appended to a call's inputs first.
template <class F, class... V>
void last_first(const F& f, const V&... v) {
  constexpr std::size_t n = sizeof...(V) - 1;
  const auto args = std::tie(v...);
  [&]<std::size_t... I>(std::index_sequence<I...>) { f(std::get<n>(args), std::get<I>(args)...); }
  (std::make_index_sequence<n>{});
}

}  // namespace softmargin::torch_ops

#endif

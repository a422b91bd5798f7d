// SoftMargin: what the element operations (SoftMargin_Ops.hpp) share: their kernel labels, the scalar upstream
// gradient, the types each derives from its x and y views, and the packs of x and y it loads.
#ifndef SOFTMARGIN_IMPL_OP_TYPES_HPP
#define SOFTMARGIN_IMPL_OP_TYPES_HPP

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <type_traits>

#include "../SoftMargin_Types.hpp"
#include "SoftMargin_Hardware.hpp"
#include "SoftMargin_Packs.hpp"
#include "SoftMargin_Values.hpp"
#include "SoftMargin_Views.hpp"

namespace softmargin::Impl {

/// Kokkos Tools labels of an op's kernels, one per algorithm.
struct KernelLabels {
  const char* range;
  const char* team;
  const char* native;
};

/// What a reduced loss is divided by, in the accumulation type A: a value the host knows (N for mean, 1 for sum, a
/// caller's count), or a caller's count in memory the kernels read (count non-null, read where the division
/// happens, so it may be the result of earlier device work).
template <class A>
struct Divisor {
  A value;
  const void* count = nullptr;
  CountType type = CountType::Double;
  A count_scale = A(1);  ///< a count read from memory is multiplied by it (the sum's SumScale)
  KOKKOS_INLINE_FUNCTION A get() const {
    if (count == nullptr) return value;
    return read_count() * count_scale;
  }
  KOKKOS_INLINE_FUNCTION A read_count() const {
    switch (type) {
      case CountType::Float:
        return static_cast<A>(*static_cast<const float*>(count));
      case CountType::Int64:
        return static_cast<A>(*static_cast<const std::int64_t*>(count));
      case CountType::Int32:
        return static_cast<A>(*static_cast<const std::int32_t*>(count));
      default:
        return static_cast<A>(*static_cast<const double*>(count));
    }
  }
};

/// The factor a reduce op multiplies each loss by before it is summed. A double loss may be as large as double's max:
/// the sum of n of them may overflow although their mean fits. A mean's double sum is therefore taken of the losses
/// times 2^-k, 2^k >= n (exact, but for losses below 2^(k - 1022), which lose bits as subnormals), and its divisor is
/// scaled alike (Reduce::run): the sum cannot overflow, and the mean is finite wherever it fits. Float, bfloat16 and
/// float16 losses are summed in double, which n of them cannot overflow: for them the factor is 1 and no multiply.
template <class C>
struct SumScale {
  static constexpr bool enabled = std::is_same_v<C, double>;
  double factor = 1;
  template <class A>
  KOKKOS_FORCEINLINE_FUNCTION A operator()(const A l) const {
    if constexpr (enabled)
      return l * factor;
    else
      return l;
  }
  template <class P>
  KOKKOS_FORCEINLINE_FUNCTION void apply(P& pack) const {
    if constexpr (enabled)
      for (int k = 0; k < P::width; ++k) pack.v[k] *= factor;
  }
};

/// The upstream gradient of a reduced loss: a device scalar (rank-0 view, may be null) or else a host value, divided
/// by the reduction's divisor, in the compute type C.
template <class UV, class C>
struct ScalarUpstream {
  using A = accum_t<C>;
  UV view;  ///< read on the device when not null
  A value;  ///< used when view is null
  Divisor<A> divisor;
  KOKKOS_INLINE_FUNCTION C get() const {
    return static_cast<C>((view.data() != nullptr ? to_compute<A>(view()) : value) / divisor.get());
  }
};

/// What every op of kind Kind derives from its x and y views: the storage types, the compute type C, the pack width W
/// and the packs (of C for results, of each view's own type for loads and stores).
template <class XV, class YV, OpKind Kind>
struct OpTypes {
  static constexpr OpKind kind = Kind;
  using execution_space = typename XV::execution_space;
  using hardware = Hardware<execution_space>;
  using x_type = typename XV::non_const_value_type;
  using y_type = typename YV::non_const_value_type;
  using value_type = compute_t<x_type>;
  using accum_type = accum_t<value_type>;
  static constexpr int width = hardware::template pack_width<x_type, value_type, Kind>;
  /// Whether the loss may take its fast form (Impl::loss_fast): 16-bit x, whose passes read 3 or 4 bytes an element
  /// and are bound by the loss's arithmetic; used where the float losses are reduced or rounded to 16 bits.
  static constexpr bool fast_x = sizeof(x_type) == 2;
  /// Whether a pass whose float results are rounded to O takes the fast form: 16-bit x into a 16-bit O.
  template <class O>
  static constexpr bool fast_into = fast_x && sizeof(O) == 2;
  /// Whether the packs are computed by the hardware's own vector kernels (float arithmetic where it has them).
  static constexpr bool vector_packs = std::is_same_v<value_type, float> && hardware::template vector_packs<width>;
  using pack_type = PackOf<value_type, width>;
  template <class V>
  using pack_of =
      PackOf<typename V::non_const_value_type, width, hardware::template pack_vectors<x_type, value_type, Kind>>;
  template <class... V>
  static bool aligned(const V&... v) {
    return (aligned_to<alignof(pack_of<V>)>(v) && ...);
  }
  /// Element i of x and y in C.
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION static value_type x_at(const XV& x, const Index i) {
    return hardware::template to_compute<value_type>(at(x, i));
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION static value_type y_at(const YV& y, const Index i) {
    if constexpr (std::is_same_v<y_type, bool>)
      return target_value<value_type>(at(y, i));
    else
      return hardware::template to_compute<value_type>(at(y, i));
  }
  /// v rounded once to O.
  template <class O>
  KOKKOS_FORCEINLINE_FUNCTION static O round(const value_type v) {
    return hardware::template round_to<O>(v);
  }
};

/// The x and y packs of elements [p W, p W + W); `load_readonly` for kernels that write neither.
template <class XV, class YV, OpKind Kind>
struct InputPacks {
  using types = OpTypes<XV, YV, Kind>;
  typename types::template pack_of<XV> x;
  typename types::template pack_of<YV> y;
  using C = typename types::value_type;
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION static InputPacks load_readonly(const XV& xv, const YV& yv, const Index p) {
    using hw = typename types::hardware;
    return {hw::template load_readonly<decltype(x)>(xv.data(), p),
            hw::template load_readonly<decltype(y)>(yv.data(), p)};
  }
  template <class Index>
  KOKKOS_FORCEINLINE_FUNCTION static InputPacks load(const XV& xv, const YV& yv, const Index p) {
    return {load_pack<decltype(x)>(xv.data(), p), load_pack<decltype(y)>(yv.data(), p)};
  }
  /// x and y in C, each widened on its own: the arithmetic then vectorizes at C's full width (hosts), where one loop
  /// mixing 1- or 2-byte loads with it gets the narrow types' vector size.
  template <class P>
  KOKKOS_FORCEINLINE_FUNCTION void widen(P& xc, P& yc) const {
    types::hardware::widen_values(x.v, xc.v);
    types::hardware::widen_targets(y.v, yc.v);
  }
};

}  // namespace softmargin::Impl

#endif

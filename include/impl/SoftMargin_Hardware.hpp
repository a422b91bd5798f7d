// SoftMargin: the one seam between the portable core and the hardware. Two class templates keyed by the execution
// space:
//  - Hardware<Exec>: what a hardware family does its own way inside a kernel: pack sizes, pack loads and sums, value
//    conversions, the fast form of the loss, vector pack kernels. The primary is the portable C++ of the core.
//  - Backend<Exec>: kernels of a backend's own (Algorithm::Native). The primary has none: Native means TeamScratch.
// A room under impl/<family>/ specializes them for its execution spaces, and impl/SoftMargin_Rooms.hpp lists the
// rooms. The core names them only in templates, so the public header, which includes the rooms before any call, makes
// a room's specialization the one every kernel sees.
#ifndef SOFTMARGIN_IMPL_HARDWARE_HPP
#define SOFTMARGIN_IMPL_HARDWARE_HPP

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <type_traits>

#include "SoftMargin_Math.hpp"
#include "SoftMargin_PackConvert.hpp"
#include "SoftMargin_Packs.hpp"
#include "SoftMargin_Tuning.hpp"
#include "SoftMargin_Values.hpp"

namespace softmargin::Impl {

/// The memory a backend's kernels keep their data in, as other libraries name it (the MPI layer asks whether MPI
/// reads CUDA device memory).
enum class DeviceMemory { Host, Cuda, Other };

/// The portable pieces, which a room's Hardware<Exec> derives from and overrides where its hardware does better.
template <class Exec>
struct PortableHardware {
  /// Launch shapes of the portable team kernels.
  using tuning = DeviceTuning;
  static constexpr DeviceMemory device_memory = is_host_space_v<Exec> ? DeviceMemory::Host : DeviceMemory::Other;
  /// Vectors of the compute type C in a pack of an op of kind K on x of type X (hosts), and elements in such a pack:
  /// on hosts whole vectors of C, on devices one load of x (8 16-bit values, 4 floats, 2 doubles).
  template <class X, class C, OpKind K>
  static constexpr int pack_vectors = 1;
  template <class X, class C, OpKind K>
  static constexpr int pack_width = is_host_space_v<Exec> ? kHostVectorBytes / static_cast<int>(sizeof(C))
                                                          : kDevicePackBytes / static_cast<int>(sizeof(X));
  /// The running sum of packs P in A: one per lane on hosts, one a pack on devices. Vector: the packs come from
  /// vector_packs kernels.
  template <class A, class P, bool Vector>
  using lane_sums = LaneSums<A, P, !is_host_space_v<Exec>>;
  /// Whether this hardware computes a pack of W floats with kernels of its own (loss_pack, grad_pack,
  /// loss_and_grad_pack).
  template <int W>
  static constexpr bool vector_packs = false;

  /// Pack i of P from p, which nothing writes while the kernel runs.
  template <class P, class T, class Index>
  KOKKOS_FORCEINLINE_FUNCTION static P load_readonly(const T* p, const Index i) {
    return load_pack<P>(p, i);
  }
  template <class C, class T>
  KOKKOS_FORCEINLINE_FUNCTION static C to_compute(const T v) {
    return Impl::to_compute<C>(v);
  }
  template <class O, class C>
  KOKKOS_FORCEINLINE_FUNCTION static O round_to(const C v) {
    return Impl::round_to<O>(v);
  }
  template <class C, class T, int W>
  KOKKOS_FORCEINLINE_FUNCTION static void widen_values(const T (&in)[W], C (&out)[W]) {
    Impl::widen_values(in, out);
  }
  template <class C, class Y, int W>
  KOKKOS_FORCEINLINE_FUNCTION static void widen_targets(const Y (&in)[W], C (&out)[W]) {
    Impl::widen_targets(in, out);
  }
  template <class O, class C, int W>
  KOKKOS_FORCEINLINE_FUNCTION static void round_scaled(const C scale, const C (&in)[W], O (&out)[W]) {
    Impl::round_scaled(scale, in, out);
  }
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static T loss_fast(const T x, const T y) {
    return Impl::loss_fast(x, y);
  }
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static T loss_and_dloss_dx_fast(const T x, const T y, T& grad) {
    return Impl::loss_and_dloss_dx_fast(x, y, grad);
  }
};

/// The hardware of Exec's kernels; rooms specialize it.
template <class Exec, class = void>
struct Hardware : PortableHardware<Exec> {};

/// The one point where a backend is chosen: Backend<Exec> runs Algorithm::Native on Exec. The primary template is
/// for backends without kernels of their own (Native means TeamScratch there); a room whose backend has them
/// specializes it (impl/cuda/SoftMargin_Cuda.hpp) with
///   static constexpr bool has_native = true;
///   template <class Index, class Op, class RV> static void reduce(space, op, n, result, divisor);
///   template <class Index, class Op> static void map(space, op, n);
template <class Exec>
struct Backend {
  static constexpr bool has_native = false;
};

}  // namespace softmargin::Impl

#endif

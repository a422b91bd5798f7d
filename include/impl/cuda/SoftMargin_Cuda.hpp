// SoftMargin CUDA room: the CUDA backend, Algorithm::Native (Auto on CUDA). The portable backend's work as CUDA kernels
// launched directly on the execution-space instance's stream:
//  - one launch a call, with programmatic dependent launch on Hopper and later: the launch (and the next call's)
//    overlaps the tail of the kernel before it in the stream, which it still waits for before reading anything;
//  - 16-byte loads (for_share, SoftMargin_Packs.hpp; loads and conversions: SoftMargin_CudaHardware.hpp), the reduce's
//  packs loaded four at a time before their
//    arithmetic;
//  - the reduce's blocks sum with warp shuffles and publish partials; the last block (an acquire-release ticket)
//    gathers them with one warp, and resets the ticket for the next call;
//  - two shapes of the reduce, chosen by size (SoftMargin_CudaTuning.hpp): latency (6 resident blocks, a grid of 3 per
//    multiprocessor) below 2^24 elements, bandwidth (4 and 4) from there on; the fused pass has two of its own.
// This file is the room's entry: Backend<Kokkos::Cuda>, what the dispatcher calls; then the launch
// (SoftMargin_CudaLaunch.hpp) and the kernels (SoftMargin_CudaKernels.hpp).
#ifndef SOFTMARGIN_IMPL_CUDA_HPP
#define SOFTMARGIN_IMPL_CUDA_HPP

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "../SoftMargin_Hardware.hpp"
#include "../SoftMargin_Ops.hpp"
#include "../SoftMargin_Tuning.hpp"
#include "../SoftMargin_Workspace.hpp"
#include "SoftMargin_CudaHardware.hpp"
#include "SoftMargin_CudaKernels.hpp"
#include "SoftMargin_CudaLaunch.hpp"
#include "SoftMargin_CudaTuning.hpp"

namespace softmargin::Impl {

template <>
struct Backend<Kokkos::Cuda> {
  static constexpr bool has_native = true;

  /// Sum (or mean) of op over n elements into result: one launch, partials and ticket in the instance's cached
  /// workspace, the latency shape where n allows it.
  template <class Index, class Op, class RV>
  static void reduce(const Kokkos::Cuda& space, const Op& op, std::size_t n, const RV& result,
                     const Divisor<typename Op::accum_type>& divisor) {
    using namespace CudaNative;
    using A = typename Op::accum_type;
    const bool packed = use_packs(op);
    const std::size_t work = packed ? n / Op::pack_type::width : n;
    auto ws = Workspace<Kokkos::Cuda, A>::acquire(space, kMaxDeviceTeams);
    const auto run = [&]<int MinBlocks, int Unroll = Tuning::reduce_unroll>(int per_sm) {
      constexpr auto kernel = reduce_kernel<Op, RV, Index, MinBlocks, Unroll>;
      const unsigned grid = std::min<unsigned>(grid_for<kernel>(space, work, per_sm), kMaxDeviceTeams);
      launch(Op::labels.native, space, kernel, grid, op, result, ws->partials.data(), ws->ticket.data(),
             static_cast<Index>(n), divisor, packed);
    };
    const int forced = launch_options().blocks_per_sm;
    const auto per_sm = [&](int tuned) { return forced > 0 ? forced : tuned; };
    if constexpr (Op::kind == OpKind::Fused) {  // its own shapes: its work does not fit in 40 registers
      using F = Tuning::FusedShape;
      if (n < Tuning::latency_max_n)
        run.template operator()<F::latency_min_blocks, F::latency_unroll>(per_sm(F::latency_grid_blocks_per_sm));
      else
        run.template operator()<F::bandwidth_min_blocks, F::bandwidth_unroll>(per_sm(F::bandwidth_grid_blocks_per_sm));
      return;
    }
    // n < 2^24 fits an int index.
    if constexpr (std::is_same_v<Index, int>) {
      if (n < Tuning::latency_max_n) {
        run.template operator()<Tuning::resident_blocks_per_sm>(
            std::min(grid_blocks_per_sm<Tuning>(n), Tuning::latency_grid_blocks_per_sm));
        return;
      }
    }
    run.template operator()<Tuning::bandwidth_blocks_per_sm>(
        std::min(grid_blocks_per_sm<Tuning>(n), Tuning::bandwidth_blocks_per_sm));
  }

  /// op applied to each of n elements: one launch.
  template <class Index, class Op>
  static void map(const Kokkos::Cuda& space, const Op& op, std::size_t n) {
    using namespace CudaNative;
    const bool packed = use_packs(op);
    const std::size_t work = packed ? n / Op::pack_type::width : n;
    const auto run = [&]<int Unroll>(int per_sm) {
      constexpr auto kernel = map_kernel<Op, Index, Unroll>;
      launch(Op::labels.native, space, kernel, grid_for<kernel>(space, work, per_sm), op, static_cast<Index>(n),
             packed);
    };
    // Latency (below latency_max_n): every resident block, two packs in flight a thread. Bandwidth: the reduce's
    // grid, one pack at a time.
    if (n < Tuning::latency_max_n) {
      const int forced = launch_options().blocks_per_sm;
      run.template operator()<Tuning::map_unroll>(forced > 0 ? grid_blocks_per_sm<Tuning>(n)
                                                             : Tuning::map_latency_grid_blocks_per_sm);
    } else {
      run.template operator()<1>(std::min(grid_blocks_per_sm<Tuning>(n), Tuning::bandwidth_blocks_per_sm));
    }
  }
};

}  // namespace softmargin::Impl

#endif

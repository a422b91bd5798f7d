// SoftMargin: the CUDA backend, Algorithm::Native (Auto on CUDA). The portable backend's work as CUDA kernels
// launched directly on the execution-space instance's stream:
//  - one launch a call, with programmatic dependent launch on Hopper and later: the launch (and the next call's)
//    overlaps the tail of the kernel before it in the stream, which it still waits for before reading anything;
//  - 16-byte loads (for_share, SoftMargin_Packs.hpp), the reduce's packs loaded four at a time before their
//    arithmetic;
//  - the reduce's blocks sum with warp shuffles and publish partials; the last block (an acquire-release ticket)
//    gathers them with one warp, and resets the ticket for the next call;
//  - two shapes of the reduce, chosen by size (SoftMargin_Tuning.hpp): latency (6 resident blocks, a grid of 3 per
//    multiprocessor) below 2^24 elements, bandwidth (4 and 4) from there on; the fused pass has two of its own.
// Read top-down: Backend<Kokkos::Cuda> (what the dispatcher calls), the launch, the kernels.
#ifndef SOFTMARGIN_IMPL_CUDA_HPP
#define SOFTMARGIN_IMPL_CUDA_HPP

#include <Kokkos_Core.hpp>

#if defined(KOKKOS_ENABLE_CUDA)

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cuda/atomic>
#include <stdexcept>
#include <string>
#include <utility>

#include "SoftMargin_Kokkos.hpp"
#include "SoftMargin_Ops.hpp"
#include "SoftMargin_Packs.hpp"
#include "SoftMargin_Tuning.hpp"
#include "SoftMargin_Workspace.hpp"

namespace softmargin::Impl {

namespace CudaNative {
using Tuning = DeviceTuning;
constexpr int kBlock = Tuning::block_size;
template <class Op, class RV, class Index, int MinBlocks, int Unroll>
__global__ void __launch_bounds__(kBlock, MinBlocks)
    reduce_kernel(Op op, RV result, typename Op::accum_type* partials, unsigned* ticket, Index n,
                  typename Op::accum_type divisor, bool packed);
template <class Op, class Index, int Unroll>
__global__ void __launch_bounds__(kBlock, Tuning::resident_blocks_per_sm) map_kernel(Op op, Index n, bool packed);
template <class... Params, class... Args>
void launch(const char* label, const Kokkos::Cuda& space, void (*kernel)(Params...), unsigned grid, Args&&... args);
template <auto Kernel>
unsigned grid_for(const Kokkos::Cuda& space, std::size_t work, int per_sm);
}  // namespace CudaNative

template <>
struct Backend<Kokkos::Cuda> {
  static constexpr bool has_native = true;

  /// Sum (or mean) of op over n elements into result: one launch, partials and ticket in the instance's cached
  /// workspace, the latency shape where n allows it.
  template <class Index, class Op, class RV>
  static void reduce(const Kokkos::Cuda& space, const Op& op, std::size_t n, const RV& result,
                     typename Op::accum_type divisor) {
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
            std::min(grid_blocks_per_sm(n), Tuning::latency_grid_blocks_per_sm));
        return;
      }
    }
    run.template operator()<Tuning::bandwidth_blocks_per_sm>(
        std::min(grid_blocks_per_sm(n), Tuning::bandwidth_blocks_per_sm));
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
      run.template operator()<Tuning::map_unroll>(forced > 0 ? grid_blocks_per_sm(n)
                                                             : Tuning::map_latency_grid_blocks_per_sm);
    } else {
      run.template operator()<1>(std::min(grid_blocks_per_sm(n), Tuning::bandwidth_blocks_per_sm));
    }
  }
};

namespace CudaNative {

// ---------------------------------------------------------------------------------------------------------------
// The launch.

/// One wave of `per_sm` blocks per multiprocessor (fewer if fewer are resident), never more blocks than there are
/// block-sized tiles of `work` items (packs or elements).
template <auto Kernel>
unsigned grid_for(const Kokkos::Cuda& space, std::size_t work, int per_sm) {
  static const int resident = [] {  // queried once per kernel
    int b = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, Kernel, kBlock, 0) != cudaSuccess || b < 1) b = 1;
    return b;
  }();
  const std::size_t sms = static_cast<std::size_t>(space.cuda_device_prop().multiProcessorCount);
  std::size_t grid = sms * static_cast<std::size_t>(std::min(per_sm, resident));
  grid = std::min(grid, (work + kBlock - 1) / kBlock);
  return static_cast<unsigned>(std::max<std::size_t>(grid, 1));
}

/// kernel<<<grid, kBlock, 0, space's stream>>>(args...) on space's device, with programmatic dependent launch where
/// LaunchOptions and the device allow it, reported to Kokkos Tools as a kernel named `label`; throws if the launch
/// fails.
template <class... Params, class... Args>
void launch(const char* label, const Kokkos::Cuda& space, void (*kernel)(Params...), unsigned grid, Args&&... args) {
  std::uint64_t kernel_id = 0;
  const bool tools = Kokkos::Tools::profileLibraryLoaded();
  if (tools) Kokkos::Tools::beginParallelFor(label, Kokkos::Tools::Experimental::device_id(space), &kernel_id);
  int device = -1;
  cudaGetDevice(&device);
  if (device != space.cuda_device()) cudaSetDevice(space.cuda_device());
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(kBlock);
  config.dynamicSmemBytes = 0;
  config.stream = space.cuda_stream();
  config.attrs = attribute;
  const bool pdl = launch_options().programmatic_dependent_launch && space.cuda_device_prop().major >= 9;
  config.numAttrs = pdl ? 1 : 0;
  cudaError_t err = cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
  if (err == cudaSuccess) err = cudaGetLastError();
  if (tools) Kokkos::Tools::endParallelFor(kernel_id);
  if (err != cudaSuccess)
    throw std::runtime_error(std::string(label) + ": CUDA kernel launch failed: " + cudaGetErrorString(err));
}

// ---------------------------------------------------------------------------------------------------------------
// The kernels.

/// Programmatic dependent launch (Hopper and later): lets the next kernel in the stream be scheduled now, then waits
/// until every kernel this one depends on has finished and its writes are visible. Called before any global memory
/// access, so that the kernel sees what precedes it exactly as in plain stream order.
__device__ __forceinline__ void stream_order_prologue() {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// This thread's grid-stride share of `count` items.
template <class Index>
struct GridShareOf {
  Index thread, threads;
  __device__ __forceinline__ GridShareOf()
      : thread(static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x),
        threads(static_cast<Index>(gridDim.x) * blockDim.x) {}
  __host__ __device__ __forceinline__ Share<Index> operator()(const Index count) const {
    return strided_share(count, thread, threads);
  }
};

/// Sum of v over the block, valid in thread 0 (warp shuffles, one shared slot per warp).
template <class A>
__device__ __forceinline__ A block_sum(A v, A* warp_sums) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < static_cast<int>(blockDim.x >> 5) ? warp_sums[lane] : A(0);
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  }
  return v;
}

/// Reduce: each block sums its share and publishes a partial; the last block to finish combines the partials,
/// writes sum / divisor into the result and resets the ticket. A grid of one block writes the result directly.
template <class Op, class RV, class Index, int MinBlocks, int Unroll>
__global__ void __launch_bounds__(kBlock, MinBlocks)
    reduce_kernel(const Op op, const RV result, typename Op::accum_type* partials, unsigned* ticket, const Index n,
                  const typename Op::accum_type divisor, const bool packed) {
  using A = typename Op::accum_type;
  __shared__ A warp_sums[kBlock / 32];
  stream_order_prologue();
  const A sum = block_sum(for_share<Unroll>(op, n, packed, GridShareOf<Index>()), warp_sums);
  if (gridDim.x == 1) {  // one block: nothing to combine
    if (threadIdx.x == 0) result() = round_to<typename RV::non_const_value_type>(sum / divisor);
    return;
  }
  if (threadIdx.x >= 32) return;  // warp 0 holds the block's sum (lane 0); the rest of the block is done
  bool last = false;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = sum;
    // Release: this block's partial is visible before its ticket; acquire: the last block sees every partial (an
    // acquire-release RMW, cheaper than __threadfence(), a sequentially consistent fence).
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> t(*ticket);
    last = t.fetch_add(1u, cuda::memory_order_acq_rel) + 1 == gridDim.x;
  }
  if (!__shfl_sync(0xffffffffu, last, 0)) return;
  // The last block's warp 0 adds the partials, Tuning::gather loads a lane in flight, then shuffles (no block
  // barrier). The warp barrier carries lane 0's acquire to the other lanes. The order of additions does not depend on
  // which block is last.
  __syncwarp();
  A total(0);
  for (unsigned base = threadIdx.x; base < gridDim.x; base += 32u * Tuning::gather) {
    A v[Tuning::gather];
#pragma unroll
    for (int k = 0; k < Tuning::gather; ++k) {
      const unsigned b = base + 32u * k;
      v[k] = b < gridDim.x ? __ldcg(partials + b) : A(0);
    }
#pragma unroll
    for (int k = 0; k < Tuning::gather; ++k) total += v[k];
  }
  for (int o = 16; o > 0; o >>= 1) total += __shfl_down_sync(0xffffffffu, total, o);
  if (threadIdx.x == 0) {
    result() = round_to<typename RV::non_const_value_type>(total / divisor);
    *ticket = 0u;
  }
}

/// Map: op applied to each element of this thread's grid-stride share.
template <class Op, class Index, int Unroll>
__global__ void __launch_bounds__(kBlock, Tuning::resident_blocks_per_sm)
    map_kernel(const Op op, const Index n, const bool packed) {
  stream_order_prologue();
  for_share<Unroll>(op, n, packed, GridShareOf<Index>());
}

}  // namespace CudaNative
}  // namespace softmargin::Impl

#endif
#endif

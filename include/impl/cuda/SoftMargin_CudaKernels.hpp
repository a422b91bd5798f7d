// SoftMargin CUDA room: the native kernels. The reduce's blocks sum with warp shuffles and publish partials; the last
// block (an acquire-release ticket) gathers them with one warp, and resets the ticket for the next call. Every kernel
// runs the core's for_share over its grid-stride share.
#ifndef SOFTMARGIN_IMPL_CUDA_KERNELS_HPP
#define SOFTMARGIN_IMPL_CUDA_KERNELS_HPP

#include <cuda_runtime.h>

#include <Kokkos_Core.hpp>
#include <cuda/atomic>

#include "../SoftMargin_Hardware.hpp"
#include "../SoftMargin_Packs.hpp"
#include "SoftMargin_CudaLaunch.hpp"
#include "SoftMargin_CudaTuning.hpp"

namespace softmargin::Impl::CudaNative {

using Tuning = CudaTuning;

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
                  const Divisor<typename Op::accum_type> divisor, const bool packed) {
  using A = typename Op::accum_type;
  __shared__ A warp_sums[kBlock / 32];
  stream_order_prologue();
  const A sum = block_sum(for_share<Unroll>(op, n, packed, GridShareOf<Index>()), warp_sums);
  if (gridDim.x == 1) {  // one block: nothing to combine
    if (threadIdx.x == 0)
      result() = Hardware<Kokkos::Cuda>::template round_to<typename RV::non_const_value_type>(sum / divisor.get());
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
    result() = Hardware<Kokkos::Cuda>::template round_to<typename RV::non_const_value_type>(total / divisor.get());
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

}  // namespace softmargin::Impl::CudaNative

#endif

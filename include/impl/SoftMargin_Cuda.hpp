// SoftMargin: Algorithm::Native on CUDA. The team kernels' work, written as CUDA kernels and launched directly on the
// execution-space instance's stream: the same element operations (SoftMargin_Ops.hpp), warp shuffles instead of
// team scratch, a plain CUDA launch (an empty Kokkos::parallel_for costs 0.3-0.9 us more per call on the H200), and
// programmatic dependent launch, which overlaps a call's launch with the tail of the kernel before it. At the
// reference problem's size, where a call is mostly latency, this is 6.0-6.3 us per call in a stream against the team
// kernel's 9.2 (docs/PERFORMANCE.md, 2026-12-03, fifth session).
#ifndef SOFTMARGIN_IMPL_CUDA_HPP
#define SOFTMARGIN_IMPL_CUDA_HPP

#include <Kokkos_Core.hpp>

#include "SoftMargin_Ops.hpp"

#if defined(KOKKOS_ENABLE_CUDA) && defined(__CUDACC__)
#define SOFTMARGIN_HAS_CUDA_NATIVE 1

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cuda/atomic>
#include <stdexcept>
#include <string>
#include <utility>

namespace softmargin::Impl::CudaNative {

inline constexpr int kBlock = 256;         ///< threads a block
inline constexpr int kGather = 16;         ///< partials a lane of the last block loads at once (32 x 16 = 512 blocks)
inline constexpr int kMinBlocksPerSM = 6;  ///< launch bound of the map kernels: at most 40 registers a thread
/// Most blocks per multiprocessor in a grid (one wave of them; the rest of the resident slots are for the next call's
/// blocks under programmatic dependent launch). 4: what the native kernels ran with when measured at 0.97x
/// cublasSdot at 2^24-2^28 (at 64 registers a thread no more were resident).
inline constexpr int kMaxGridBlocksPerSM = 4;

/// The reduce kernel's two shapes (launch bound, and grid blocks per multiprocessor), each where it measured faster
/// on the H200 (docs/PERFORMANCE.md, 2026-12-03, "two shapes"):
///  - Latency (below kLatencyMaxN elements): 6 blocks resident (at most 40 registers a thread), a grid of 3 per
///    multiprocessor, so that the next call's grid, launched early under programmatic dependent launch, fits beside
///    this one whole on every multiprocessor. At 512x4096: 6.3-7.1 us a call in a stream, against 7.4-7.5 us with 64
///    registers (4 resident). A grid of 4 of the 6 lands the next grid unevenly: 19-34% slower a call in a stream
///    from 2^22 to 2^28.
///  - Bandwidth (from kLatencyMaxN on; and always for the fused loss and gradient, which would spill at 40
///    registers): 4 resident (64 registers), a grid of 4: 0.92-0.97x cublasSdot in a stream at 2^24, 2^26, 2^28,
///    where the latency shape measured 0.94-1.01x.
inline constexpr int kLatencyMinBlocks = 6;
inline constexpr int kLatencyGridBlocksPerSM = 3;
inline constexpr int kBandwidthMinBlocks = kMaxGridBlocksPerSM;
inline constexpr std::size_t kLatencyMaxN = std::size_t(1) << 24;
/// Whether Op's reduce kernel has the latency shape (its work fits in 40 registers).
template <class Op>
inline constexpr bool has_latency_shape = !requires(const Op& op) { op.grad; };

/// Programmatic dependent launch (Hopper and later): lets the next kernel in the stream be scheduled now, then waits
/// until every kernel this one depends on has finished and its writes are visible. Called before any global memory
/// access, so that the kernel sees what precedes it exactly as in plain stream order, while its launch (and that of
/// the next call) overlaps the previous kernel's tail.
__device__ __forceinline__ void stream_order_prologue() {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// Sum of v over the block, valid in thread 0. `warp_sums` holds one value per warp; callers separate two uses
/// with __syncthreads().
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

/// Sum of Op over this thread's grid-stride share of n elements: W-element packs (four in flight per thread; where
/// Op loads apart from its arithmetic, the four packs' loads first and one finiteness test for their sums) when
/// `packed`, else one element at a time.
template <class Op, class Index>
__device__ __forceinline__ typename Op::accum_type thread_sum(const Op& op, const Index n, const bool packed) {
  using A = typename Op::accum_type;
  const auto scale = op.scale();
  const Index tid = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
  const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
  A sum(0);
  if constexpr (Op::packed) {
    if (packed) {
      constexpr Index W = Op::pack_type::width;
      const Index packs = n / W;
      LaneSums<A, typename Op::pack_type> lanes;
      Index p = tid;
      if constexpr (requires { op.load(p); }) {  // the four packs' loads first, then their arithmetic
        for (; p + 3 * stride < packs; p += 4 * stride) {
          typename Op::inputs_type in[4];
#pragma unroll
          for (int u = 0; u < 4; ++u) in[u] = op.load(p + u * stride);
          typename Op::pack_type l[4];
#pragma unroll
          for (int u = 0; u < 4; ++u) l[u] = op.losses(in[u], scale);
          lanes.add(l);
        }
      } else {
        for (; p + 3 * stride < packs; p += 4 * stride) {
          const auto a = op.pack(p, scale), b = op.pack(p + stride, scale);
          const auto c = op.pack(p + 2 * stride, scale), d = op.pack(p + 3 * stride, scale);
          lanes.add(a);
          lanes.add(b);
          lanes.add(c);
          lanes.add(d);
        }
      }
      for (; p < packs; p += stride) lanes.add(op.pack(p, scale));
      sum = lanes.total();
      for (Index i = packs * W + tid; i < n; i += stride) sum += op(i, scale);
      return sum;
    }
  }
  for (Index i = tid; i < n; i += stride) sum += op(i, scale);
  return sum;
}

/// Reduce: each block sums its share and publishes a partial; the last block to finish (atomic ticket) combines
/// the partials, writes sum / divisor into the result and resets the ticket for the next launch. A grid of one block
/// writes the result directly.
template <class Op, class RV, class Index, int MinBlocks>
__global__ void __launch_bounds__(kBlock, MinBlocks)
    reduce_kernel(const Op op, const RV result, typename Op::accum_type* partials, unsigned* ticket, const Index n,
                  const typename Op::accum_type divisor, const bool packed) {
  using A = typename Op::accum_type;
  __shared__ A warp_sums[kBlock / 32];
  stream_order_prologue();
  const A sum = block_sum(thread_sum(op, n, packed), warp_sums);
  if (gridDim.x == 1) {  // small n: one block, nothing to combine
    if (threadIdx.x == 0) result() = static_cast<typename RV::non_const_value_type>(sum / divisor);
    return;
  }
  if (threadIdx.x >= 32) return;  // warp 0 holds the block's sum (lane 0); the rest of the block is done
  bool last = false;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = sum;
    // Release: this block's partial is visible before its ticket; acquire: the last block sees every partial. (An
    // acquire-release RMW instead of __threadfence(), a sequentially consistent fence: 0.3 us less per call at
    // 512x4096.)
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> t(*ticket);
    last = t.fetch_add(1u, cuda::memory_order_acq_rel) + 1 == gridDim.x;
  }
  if (!__shfl_sync(0xffffffffu, last, 0)) return;
  // The last block's warp 0 adds the partials: kGather loads a lane in flight at once, then the warp's shuffles (no
  // block-wide barrier or shared memory: 0.13-0.16 us less than the whole block and a block sum, on the H200). The
  // warp barrier carries lane 0's acquire to the other lanes. Same order of additions whichever block is last.
  __syncwarp();
  A total(0);
  for (unsigned base = threadIdx.x; base < gridDim.x; base += 32u * kGather) {
    A v[kGather];
#pragma unroll
    for (int k = 0; k < kGather; ++k) {
      const unsigned b = base + 32u * k;
      v[k] = b < gridDim.x ? __ldcg(partials + b) : A(0);
    }
#pragma unroll
    for (int k = 0; k < kGather; ++k) total += v[k];
  }
  for (int o = 16; o > 0; o >>= 1) total += __shfl_down_sync(0xffffffffu, total, o);
  if (threadIdx.x == 0) {
    result() = static_cast<typename RV::non_const_value_type>(total / divisor);
    *ticket = 0u;
  }
}

/// Map: Op applied to each element of this thread's grid-stride share.
template <class Op, class Index>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSM) map_kernel(const Op op, const Index n, const bool packed) {
  stream_order_prologue();
  const auto scale = op.scale();
  const Index tid = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
  const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
  if constexpr (Op::packed) {
    if (packed) {
      constexpr Index W = Op::pack_type::width;
      const Index packs = n / W;
      for (Index p = tid; p < packs; p += stride) op.pack(p, scale);
      for (Index i = packs * W + tid; i < n; i += stride) op(i, scale);
      return;
    }
  }
  for (Index i = tid; i < n; i += stride) op(i, scale);
}

/// Blocks of `Kernel` resident per multiprocessor (queried once per kernel).
template <auto Kernel>
int resident_blocks() {
  static const int blocks = [] {
    int b = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, Kernel, kBlock, 0) != cudaSuccess || b < 1) b = 1;
    return b;
  }();
  return blocks;
}

/// One wave of at most `per_sm` blocks per multiprocessor (fewer if fewer are resident), never more blocks than
/// there are block-sized tiles of `work` items.
inline unsigned grid_for(const Kokkos::Cuda& space, std::size_t work, int per_sm, int resident) {
  const std::size_t sms = static_cast<std::size_t>(space.cuda_device_prop().multiProcessorCount);
  std::size_t grid = sms * static_cast<std::size_t>(std::min(per_sm, resident));
  grid = std::min(grid, (work + kBlock - 1) / kBlock);
  return static_cast<unsigned>(std::max<std::size_t>(grid, 1));
}

/// Whether launches use programmatic dependent launch: on devices of compute capability 9 and later, unless
/// SOFTMARGIN_CUDA_PDL=0 (read once; for measuring its effect).
inline bool use_pdl(const Kokkos::Cuda& space) {
  static const bool enabled = [] {
    const char* e = std::getenv("SOFTMARGIN_CUDA_PDL");
    return !(e && e[0] == '0');
  }();
  return enabled && space.cuda_device_prop().major >= 9;
}

/// Launches kernel<<<grid, kBlock, 0, space's stream>>>(args...) on space's device, as a Kokkos kernel named `label`
/// for Kokkos Tools; throws if the launch fails.
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
  config.numAttrs = use_pdl(space) ? 1 : 0;
  cudaError_t err = cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
  if (err == cudaSuccess) err = cudaGetLastError();
  if (tools) Kokkos::Tools::endParallelFor(kernel_id);
  if (err != cudaSuccess)
    throw std::runtime_error(std::string(label) + ": CUDA kernel launch failed: " + cudaGetErrorString(err));
}

}  // namespace softmargin::Impl::CudaNative

#endif
#endif

// Where the time of one isolated native reduce call goes, at small sizes: the library's latency shape (256 threads,
// four packs in flight, grid of 3 blocks per SM, acquire-release ticket and last-block combine, as in
// include/impl/SoftMargin_Cuda.hpp) written standalone, with each block's thread 0 stamping the global timer and its
// SM's cycle counter at the phases of the kernel, to split a call into block dispatch, the blocks' reading and
// summing, and the combine. Variants, stamped alike:
//   ticket         the library's kernel
//   warp gather    the same, but after the ticket only warp 0 of the last block goes on: each lane loads its share
//                  of the partials with all loads in flight at once, no block-wide barrier or shared memory
//   batched tail   warp gather, and each thread's last (fewer than four) packs loaded at once instead of one after
//                  another (the blocks whose threads have one pack more than others then take no extra round trip)
//   no combine     each block writes its partial and leaves (the floor of any combine)
//
//   nvcc -O3 -std=c++17 -arch=sm_90 reduce_timeline.cu -o reduce_timeline
//   ./reduce_timeline [n=2097152] [blocks per SM=3] [calls=200]
//
// Each call is isolated (synchronize, event, one launch, event, synchronize); the figures are medians over the calls.
// Global-timer figures are ns from the first block's start; cycle figures are per block, converted with the SM clock
// measured over the call. `event` is the isolated call's time between the CUDA events around it.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cuda/atomic>
#include <random>
#include <vector>

#include "tune_common.cuh"

constexpr int kBlock = 256, kUnroll = 4;

/// Per block: global timer at start and at the end of its summing; cycles at start, summed, ticket returned, combined.
struct Stamp {
  unsigned long long g_start, g_summed, g_done, c_start, c_summed, c_ticket, c_combined;
  unsigned sm, last;
};

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ unsigned sm_id() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

enum Variant { kTicket = 0, kWarpGather = 1, kBatchedTail = 2, kNoCombine = 3 };
constexpr int kMaxGather = 16;  ///< warp gather: partials a lane loads at once (grids up to 512 blocks)

template <int V>
__global__ void __launch_bounds__(kBlock, 6)
    reduce(const float4* __restrict__ x, const float4* __restrict__ y, double* result, double* partials,
           unsigned* ticket, int packs, double divisor, Stamp* stamps) {
  __shared__ double warp_sums[kBlock / 32];
  __shared__ bool last;
  Stamp s{};
  if (threadIdx.x == 0) {
    s.g_start = global_ns();
    s.c_start = clock64();
    s.sm = sm_id();
  }
  const int tid = blockIdx.x * kBlock + threadIdx.x, stride = gridDim.x * kBlock;
  int p = tid;
  double sum = unrolled_sum<kUnroll>(x, y, p, stride, packs);
  if constexpr (V == kBatchedTail) {  // fewer than kUnroll packs left: load them all, then add
    float4 a[kUnroll - 1], b[kUnroll - 1];
#pragma unroll
    for (int u = 0; u < kUnroll - 1; ++u)
      if (p + u * stride < packs) {
        a[u] = x[p + u * stride];
        b[u] = y[p + u * stride];
      }
#pragma unroll
    for (int u = 0; u < kUnroll - 1; ++u)
      if (p + u * stride < packs) sum += pack_loss(a[u], b[u]);
  } else {
    for (; p < packs; p += stride) sum += pack_loss(x[p], y[p]);
  }
  sum = block_sum<kBlock>(sum, warp_sums);
  if (threadIdx.x == 0) {
    s.c_summed = clock64();
    s.g_summed = global_ns();
    partials[blockIdx.x] = sum;
    if constexpr (V != kNoCombine) {
      cuda::atomic_ref<unsigned, cuda::thread_scope_device> t(*ticket);
      last = t.fetch_add(1u, cuda::memory_order_acq_rel) + 1 == gridDim.x;
      s.c_ticket = clock64();
      s.last = last;
    }
  }
  if constexpr (V == kTicket) {
    __syncthreads();
    if (last) {
      double total = 0;
      for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock) total += __ldcg(partials + b);
      total = block_sum<kBlock>(total, warp_sums);
      if (threadIdx.x == 0) {
        *result = total / divisor;
        *ticket = 0u;
      }
    }
  } else if constexpr (V == kWarpGather || V == kBatchedTail) {
    if (threadIdx.x >= 32) return;  // warp 0 holds the block's sum (lane 0) and the ticket
    const bool is_last = __shfl_sync(0xffffffffu, threadIdx.x == 0 && last, 0);
    if (is_last) {
      __syncwarp();  // orders lane 0's acquire before every lane's loads
      double v[kMaxGather];
#pragma unroll
      for (int k = 0; k < kMaxGather; ++k) {
        const unsigned b = threadIdx.x + 32u * k;
        v[k] = b < gridDim.x ? __ldcg(partials + b) : 0.0;
      }
      double total = 0;
#pragma unroll
      for (int k = 0; k < kMaxGather; ++k) total += v[k];
      for (int o = 16; o > 0; o >>= 1) total += __shfl_down_sync(0xffffffffu, total, o);
      if (threadIdx.x == 0) {
        *result = total / divisor;
        *ticket = 0u;
      }
    }
  }
  if (threadIdx.x == 0) {
    s.c_combined = clock64();
    s.g_done = global_ns();
    stamps[blockIdx.x] = s;
  }
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 512 * 4096;
  const int per_sm = argc > 2 ? std::atoi(argv[2]) : 3;
  const int calls = argc > 3 ? std::atoi(argv[3]) : 200;
  if (n % 4 != 0 || n <= 0 || per_sm < 1 || calls < 1) {
    std::fprintf(stderr, "usage: reduce_timeline [n, a positive multiple of 4] [blocks per SM] [calls]\n");
    return 1;
  }
  const int packs = n / 4;
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int grid = prop.multiProcessorCount * per_sm;
  std::vector<float> hx, hy;
  const double ref = make_inputs(n, hx, hy);
  float *x, *y;
  double *result, *partials;
  unsigned* ticket;
  Stamp* stamps;
  CHECK(cudaMalloc(&x, sizeof(float) * n));
  CHECK(cudaMalloc(&y, sizeof(float) * n));
  CHECK(cudaMalloc(&result, sizeof(double)));
  CHECK(cudaMalloc(&partials, sizeof(double) * grid));
  CHECK(cudaMalloc(&ticket, sizeof(unsigned)));
  CHECK(cudaMalloc(&stamps, sizeof(Stamp) * grid));
  CHECK(cudaMemset(ticket, 0, sizeof(unsigned)));
  CHECK(cudaMemcpy(x, hx.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(y, hy.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
  const auto* x4 = reinterpret_cast<const float4*>(x);
  const auto* y4 = reinterpret_cast<const float4*>(y);
  std::printf("# %s, %d SMs, n = %d, grid %d (%d per SM), %d isolated calls; medians\n", prop.name,
              prop.multiProcessorCount, n, grid, per_sm, calls);

  if (grid > 32 * kMaxGather) {
    std::fprintf(stderr, "the warp gather variants take at most %d blocks\n", 32 * kMaxGather);
    return 1;
  }
  cudaEvent_t ev_a, ev_b;
  CHECK(cudaEventCreate(&ev_a));
  CHECK(cudaEventCreate(&ev_b));
  // Packs of the first thread of block b (every thread of a block has this many or one fewer).
  const int stride = grid * kBlock;
  auto packs_of_block = [&](int b) { return (packs - b * kBlock + stride - 1) / stride; };
  std::vector<Stamp> h(grid);
  const char* names[] = {"ticket (the library's kernel)", "warp gather", "batched tail + warp gather", "no combine"};
  for (int variant = 0; variant < 4; ++variant) {
    auto launch = [&] {
      switch (variant) {
        case kTicket:
          reduce<kTicket><<<grid, kBlock>>>(x4, y4, result, partials, ticket, packs, n, stamps);
          break;
        case kWarpGather:
          reduce<kWarpGather><<<grid, kBlock>>>(x4, y4, result, partials, ticket, packs, n, stamps);
          break;
        case kBatchedTail:
          reduce<kBatchedTail><<<grid, kBlock>>>(x4, y4, result, partials, ticket, packs, n, stamps);
          break;
        default:
          reduce<kNoCombine><<<grid, kBlock>>>(x4, y4, result, partials, ticket, packs, n, stamps);
      }
    };
    CHECK(cudaMemset(result, 0xff, sizeof(double)));
    for (int i = 0; i < 200; ++i) launch();  // clocks up
    CHECK(cudaDeviceSynchronize());
    if (variant != kNoCombine) {
      double got = 0;
      CHECK(cudaMemcpy(&got, result, sizeof(double), cudaMemcpyDeviceToHost));
      if (!(std::fabs(got - ref) / ref < 1e-6)) {
        std::printf("CHECK FAILED: %s: %.9g vs fp64 %.9g\n", names[variant], got, ref);
        return 1;
      }
    }
    std::vector<double> event_us, spread, last_summed, end, ghz, sum_min, sum_med, sum_max, ticket_med, last_ticket,
        last_combine, end_after_summed;
    std::vector<std::vector<double>> by_packs(packs_of_block(0) + 1);
    for (int c = 0; c < calls; ++c) {
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaEventRecord(ev_a));
      launch();
      CHECK(cudaEventRecord(ev_b));
      CHECK(cudaEventSynchronize(ev_b));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, ev_a, ev_b));
      event_us.push_back(1e3 * ms);
      CHECK(cudaMemcpy(h.data(), stamps, sizeof(Stamp) * grid, cudaMemcpyDeviceToHost));
      unsigned long long g0 = ~0ull, g_last_start = 0, g_last_summed = 0, g_end = 0;
      double best = 0;  // SM clock: cycles over ns of the longest-lived block
      for (const auto& s : h) {
        g0 = std::min(g0, s.g_start);
        g_last_start = std::max(g_last_start, s.g_start);
        g_last_summed = std::max(g_last_summed, s.g_summed);
        g_end = std::max(g_end, s.g_done);
        if (s.g_done > s.g_start + 1000)
          best = std::max(best, double(s.c_combined - s.c_start) / double(s.g_done - s.g_start));
      }
      const double ns_per_cycle = best > 0 ? 1.0 / best : NAN;
      std::vector<double> block_ns, ticket_ns;
      const Stamp* collector = nullptr;
      for (int b = 0; b < grid; ++b) {
        const Stamp& s = h[b];
        block_ns.push_back(double(s.c_summed - s.c_start) * ns_per_cycle);
        by_packs[packs_of_block(b)].push_back(block_ns.back());
        if (variant != kNoCombine) ticket_ns.push_back(double(s.c_ticket - s.c_summed) * ns_per_cycle);
        if (variant != kNoCombine && s.last) collector = &s;
      }
      ghz.push_back(best);
      spread.push_back(double(g_last_start - g0));
      last_summed.push_back(double(g_last_summed - g0));
      end.push_back(double(g_end - g0));
      end_after_summed.push_back(double(g_end - g_last_summed));
      std::sort(block_ns.begin(), block_ns.end());
      sum_min.push_back(block_ns.front());
      sum_med.push_back(block_ns[block_ns.size() / 2]);
      sum_max.push_back(block_ns.back());
      if (variant != kNoCombine) {
        ticket_med.push_back(median(ticket_ns));
        if (collector) {
          last_ticket.push_back(double(collector->c_ticket - collector->c_summed) * ns_per_cycle);
          last_combine.push_back(double(collector->c_combined - collector->c_ticket) * ns_per_cycle);
        }
      }
    }
    std::printf("== %s\n", names[variant]);
    std::printf("  isolated call (events)            %8.2f us\n", median(event_us));
    std::printf("  SM clock                          %8.3f GHz\n", median(ghz));
    std::printf("  last block start                  %8.0f ns after the first\n", median(spread));
    std::printf("  a block's summing (min/med/max)   %8.0f / %.0f / %.0f ns\n", median(sum_min), median(sum_med),
                median(sum_max));
    for (std::size_t k = 0; k < by_packs.size(); ++k)
      if (!by_packs[k].empty())
        std::printf("    blocks with %zu packs a thread    %8.0f ns (median of %zu)\n", k, median(by_packs[k]),
                    by_packs[k].size());
    std::printf("  last block summed at              %8.0f ns\n", median(last_summed));
    if (variant != kNoCombine) {
      std::printf("  ticket round trip (all blocks)    %8.0f ns\n", median(ticket_med));
      std::printf("  last block: ticket %.0f ns, then gather + sum + store %.0f ns\n", median(last_ticket),
                  median(last_combine));
    }
    std::printf("  last stamp                        %8.0f ns (%.0f after the last block summed)\n", median(end),
                median(end_after_summed));
  }
  return 0;
}

// Study: where the library's latency-shape reduce kernel (include/impl/SoftMargin_Cuda.hpp, grid of 3 blocks per
// multiprocessor, 256 threads) loses time against native_reduce_shapes.cu's kernel of the same grid, which measured
// 5.74 us a call in a stream at 512x4096 against the library's 6.35-6.53 us in the benchmark (same process kinds,
// same buffers and stream settings; docs/PERFORMANCE.md). The kernels here go from the study's to the library's one
// difference at a time:
//   combine  study: the whole last block adds the partials after __threadfence() + atomicAdd;
//            library: acquire-release ticket, warp 0 of the last block gathers (16 loads a lane), no block barrier
//   bounds   __launch_bounds__(256) or (256, 6) (at most 40 registers a thread)
//   finite   the pack sum in float converted once (study), or the library's LaneSums (a finiteness test per pack,
//            the elements added in double where the float sum is not finite)
//   loads    the study's 4 x and 4 y packs loaded into arrays before any loss, or the library's op.pack (each pack's
//            loads then its losses, left to the compiler to schedule), runtime `packed` test and element remainder
// and a host variant with the library's per-call host work (cudaGetDevice, cudaGetLastError).
//
//   nvcc -O3 -std=c++17 -arch=sm_90 latency_gap.cu -lcublas -o latency_gap
//   ./latency_gap [n=2097152] [rounds=6] [warm-up calls per variant=200]
//
// Same timing as native_reduce_shapes.cu: isolated (synchronize, event, call, event) and pipelined (100 calls
// between events), medians over the rounds, variants and cublasSdot interleaved in each round.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cuda/atomic>
#include <functional>
#include <string>
#include <vector>

#include "tune_common.cuh"

enum Combine { kBlockFence = 0, kWarpAcqRel = 2 };

__device__ __forceinline__ void prologue() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
}

/// The library's LaneSums::add for a float pack: halving sum in float, widened once where finite.
__device__ __forceinline__ double lane_add(double acc, const float l0, const float l1, const float l2, const float l3) {
  const float s = (l0 + l2) + (l1 + l3);
  if (fabsf(s) <= FLT_MAX) return acc + static_cast<double>(s);
  return acc + static_cast<double>(l0) + static_cast<double>(l1) + static_cast<double>(l2) + static_cast<double>(l3);
}

struct Losses {
  float v[4];
};
/// The library's LossOp::pack: the pack's loads (read-only path), then its four losses.
__device__ __forceinline__ Losses op_pack(const float* x, const float* y, const int p) {
  const float4 a = __ldg(reinterpret_cast<const float4*>(x) + p), b = __ldg(reinterpret_cast<const float4*>(y) + p);
  return {{loss(a.x, b.x), loss(a.y, b.y), loss(a.z, b.z), loss(a.w, b.w)}};
}

template <bool Finite, bool LibLoads>
__device__ __forceinline__ double thread_sum(const float* x, const float* y, const int n, const bool packed) {
  const int tid = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
  const int packs = n / 4;
  double sum = 0;
  if constexpr (LibLoads) {
    if (packed) {
      int p = tid;
      for (; p + 3 * stride < packs; p += 4 * stride) {
        const Losses a = op_pack(x, y, p), b = op_pack(x, y, p + stride);
        const Losses c = op_pack(x, y, p + 2 * stride), d = op_pack(x, y, p + 3 * stride);
        if constexpr (Finite) {
          sum = lane_add(sum, a.v[0], a.v[1], a.v[2], a.v[3]);
          sum = lane_add(sum, b.v[0], b.v[1], b.v[2], b.v[3]);
          sum = lane_add(sum, c.v[0], c.v[1], c.v[2], c.v[3]);
          sum = lane_add(sum, d.v[0], d.v[1], d.v[2], d.v[3]);
        } else {
          sum += static_cast<double>((a.v[0] + a.v[2]) + (a.v[1] + a.v[3]));
          sum += static_cast<double>((b.v[0] + b.v[2]) + (b.v[1] + b.v[3]));
          sum += static_cast<double>((c.v[0] + c.v[2]) + (c.v[1] + c.v[3]));
          sum += static_cast<double>((d.v[0] + d.v[2]) + (d.v[1] + d.v[3]));
        }
      }
      for (; p < packs; p += stride) {
        const Losses a = op_pack(x, y, p);
        sum = Finite ? lane_add(sum, a.v[0], a.v[1], a.v[2], a.v[3])
                     : sum + static_cast<double>((a.v[0] + a.v[2]) + (a.v[1] + a.v[3]));
      }
      for (int i = packs * 4 + tid; i < n; i += stride) sum += loss(x[i], y[i]);
      return sum;
    }
    for (int i = tid; i < n; i += stride) sum += loss(x[i], y[i]);
    return sum;
  } else {
    const auto* x4 = reinterpret_cast<const float4*>(x);
    const auto* y4 = reinterpret_cast<const float4*>(y);
    int p = tid;
    for (; p + 3 * stride < packs; p += 4 * stride) {
      float4 a[4], b[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        a[u] = __ldg(x4 + p + u * stride);
        b[u] = __ldg(y4 + p + u * stride);
      }
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        if constexpr (Finite)
          sum = lane_add(sum, loss(a[u].x, b[u].x), loss(a[u].y, b[u].y), loss(a[u].z, b[u].z), loss(a[u].w, b[u].w));
        else
          sum += pack_loss(a[u], b[u]);
      }
    }
    for (; p < packs; p += stride) sum += pack_loss(__ldg(x4 + p), __ldg(y4 + p));
    return sum;
  }
}

template <int C, bool Finite, bool LibLoads>
__device__ __forceinline__ void body(const float* x, const float* y, double* result, double* partials, unsigned* ticket,
                                     const int n, const double divisor, const bool packed) {
  __shared__ double warp_sums[8];
  __shared__ bool last_shared;
  prologue();
  const double sum = block_sum<256>(thread_sum<Finite, LibLoads>(x, y, n, packed), warp_sums);
  if constexpr (C == kBlockFence) {
    if (threadIdx.x == 0) {
      partials[blockIdx.x] = sum;
      __threadfence();
      last_shared = atomicAdd(ticket, 1u) + 1 == gridDim.x;
    }
    __syncthreads();
    if (!last_shared) return;
    __threadfence();
    double total = 0;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += 256) total += __ldcg(partials + b);
    total = block_sum<256>(total, warp_sums);
    if (threadIdx.x == 0) {
      *result = total / divisor;
      *ticket = 0u;
    }
  } else {
    if (threadIdx.x >= 32) return;
    bool last = false;
    if (threadIdx.x == 0) {
      partials[blockIdx.x] = sum;
      cuda::atomic_ref<unsigned, cuda::thread_scope_device> t(*ticket);
      last = t.fetch_add(1u, cuda::memory_order_acq_rel) + 1 == gridDim.x;
    }
    if (!__shfl_sync(0xffffffffu, last, 0)) return;
    __syncwarp();
    double total = 0;
    for (unsigned base = threadIdx.x; base < gridDim.x; base += 32u * 16) {
      double v[16];
#pragma unroll
      for (int k = 0; k < 16; ++k) {
        const unsigned b = base + 32u * k;
        v[k] = b < gridDim.x ? __ldcg(partials + b) : 0.0;
      }
#pragma unroll
      for (int k = 0; k < 16; ++k) total += v[k];
    }
    for (int o = 16; o > 0; o >>= 1) total += __shfl_down_sync(0xffffffffu, total, o);
    if (threadIdx.x == 0) {
      *result = total / divisor;
      *ticket = 0u;
    }
  }
}

template <int C, bool Finite, bool LibLoads>
__global__ void __launch_bounds__(256) reduce_free(const float* x, const float* y, double* result, double* partials,
                                                   unsigned* ticket, int n, double divisor, bool packed) {
  body<C, Finite, LibLoads>(x, y, result, partials, ticket, n, divisor, packed);
}
template <int C, bool Finite, bool LibLoads>
__global__ void __launch_bounds__(256, 6) reduce_40(const float* x, const float* y, double* result, double* partials,
                                                    unsigned* ticket, int n, double divisor, bool packed) {
  body<C, Finite, LibLoads>(x, y, result, partials, ticket, n, divisor, packed);
}

__global__ void empty() {}

int sms = 0;
cudaStream_t stream;

using Kernel = void (*)(const float*, const float*, double*, double*, unsigned*, int, double, bool);

StudyVariant make(const char* what, Kernel kernel, bool library_host, const float* x, const float* y, double* result,
                  double* partials, unsigned* ticket, int n) {
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, kernel));
  const unsigned grid = static_cast<unsigned>(sms * 3);
  char name[160];
  std::snprintf(name, sizeof name, "%s (%d regs)%s", what, attr.numRegs, library_host ? " + library host work" : "");
  const double divisor = n;
  auto launch = [=] {
    int device = -1;
    if (library_host) {
      CHECK(cudaGetDevice(&device));
      if (device != 0) CHECK(cudaSetDevice(0));
    }
    cudaLaunchAttribute a[1];
    a[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    a[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(grid);
    config.blockDim = dim3(256);
    config.stream = stream;
    config.attrs = a;
    config.numAttrs = 1;
    CHECK(cudaLaunchKernelEx(&config, kernel, x, y, result, partials, ticket, n, divisor, true));
    if (library_host) CHECK(cudaGetLastError());
  };
  return {name, launch, true, {}, {}, {}};
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 512 * 4096;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 6;
  const int warmups = argc > 3 ? std::atoi(argv[3]) : 200;
  if (n % 4 != 0 || n <= 0) {
    std::fprintf(stderr, "n must be a positive multiple of 4\n");
    return 1;
  }
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  sms = prop.multiProcessorCount;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::printf("# %s, %d SMs, n = %d, %d rounds, grid %d x 256\n", prop.name, sms, n, rounds, 3 * sms);

  const StudyBuffers buf(n);
  float *x = buf.x, *y = buf.y, *dot = buf.dot;
  double *result = buf.result, *partials = buf.partials;
  unsigned* ticket = buf.ticket;
  const double ref = buf.ref;

  cublasHandle_t blas;
  cublasCreate(&blas);
  cublasSetStream(blas, stream);
  cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_DEVICE);

  std::vector<StudyVariant> v;
  v.push_back({"cublasSdot", [&] { cublasSdot(blas, n, x, 1, y, 1, dot); }, false, {}, {}, {}});
  v.push_back(
      {"empty kernel (grid = SMs x 3, 256 threads)", [&] { empty<<<sms * 3, 256, 0, stream>>>(); }, false, {}, {}, {}});
#define ARGS x, y, result, partials, ticket, n
  v.push_back(
      make("study: block fence, free, float sum, array loads", reduce_free<kBlockFence, false, false>, false, ARGS));
  v.push_back(make("warp acq_rel, free, float sum, array loads", reduce_free<kWarpAcqRel, false, false>, false, ARGS));
  v.push_back(make("warp acq_rel, (256,6), float sum, array loads", reduce_40<kWarpAcqRel, false, false>, false, ARGS));
  v.push_back(make("warp acq_rel, (256,6), finite, array loads", reduce_40<kWarpAcqRel, true, false>, false, ARGS));
  v.push_back(make("library: warp acq_rel, (256,6), finite, op.pack", reduce_40<kWarpAcqRel, true, true>, false, ARGS));
  v.push_back(make("library: warp acq_rel, (256,6), finite, op.pack", reduce_40<kWarpAcqRel, true, true>, true, ARGS));
  v.push_back(make("warp acq_rel, (256,6), float sum, op.pack", reduce_40<kWarpAcqRel, false, true>, false, ARGS));
  v.push_back(make("warp acq_rel, free, finite, op.pack", reduce_free<kWarpAcqRel, true, true>, false, ARGS));
  v.push_back(make("block fence, (256,6), finite, op.pack", reduce_40<kBlockFence, true, true>, false, ARGS));
  v.push_back(make("block fence, free, float sum, op.pack", reduce_free<kBlockFence, false, true>, false, ARGS));
#undef ARGS

  return time_variants(v, stream, result, ref, rounds, warmups);
}

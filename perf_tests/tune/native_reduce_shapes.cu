// Tuning study for Algorithm::Native's reduce kernel at small sizes (where a call is mostly latency): the same
// loss and the same last-block combine as include/impl/SoftMargin_Cuda.hpp, written standalone (no Kokkos) so that
// the block size, the packs in flight per thread, the blocks per multiprocessor and the way partials are combined
// can be varied at compile time, timed next to cublasSdot on the same x and y, in the same process, interleaved.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 native_reduce_shapes.cu -lcublas -o native_reduce_shapes
//   ./native_reduce_shapes [n=2097152] [rounds=10] [warm-up calls per variant=200]
//   ncu --metrics gpu__time_duration.sum ./native_reduce_shapes 2097152 0 2     (kernel times alone)
//
// Isolated: synchronize, event, one call, event, synchronize (the benchmark's definition). Pipelined: 100 calls
// between two events, per call. Host: the CPU time of one launch call (100 calls without a wait, per call). Medians
// over all rounds; variants and cublasSdot alternate within each round so that drift of the machine reaches all of them
// alike. Every variant's result is checked against fp64 first.
#include <cooperative_groups.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cuda/atomic>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tune_common.cuh"

namespace cg = cooperative_groups;

enum Tail { kTicket = 0, kCluster = 1, kNoCombine = 2, kAcqRel = 3 };

__device__ __forceinline__ void prologue() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
}

template <int Block, int Unroll, int T>
__global__ void __launch_bounds__(Block)
    reduce(const float4* __restrict__ x, const float4* __restrict__ y, double* result, double* partials,
           unsigned* ticket, int packs, double divisor) {
  __shared__ double warp_sums[Block / 32];
  __shared__ double block_total;
  __shared__ bool last;
  prologue();
  const int tid = blockIdx.x * Block + threadIdx.x, stride = gridDim.x * Block;
  int p = tid;
  double sum = unrolled_sum<Unroll>(x, y, p, stride, packs);
  for (; p < packs; p += stride) sum += pack_loss(x[p], y[p]);
  sum = block_sum<Block>(sum, warp_sums);
  unsigned parts = gridDim.x, part = blockIdx.x;
  if constexpr (T == kCluster) {
    cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x == 0) block_total = sum;
    cluster.sync();
    const unsigned rank = cluster.block_rank(), size = cluster.num_blocks();
    if (rank == 0 && threadIdx.x < 32) {
      double s = threadIdx.x < size ? *cluster.map_shared_rank(&block_total, threadIdx.x) : 0.0;
      for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
      sum = s;
    }
    cluster.sync();  // the other blocks' shared memory stays until block 0 has read it
    if (rank != 0) return;
    parts = gridDim.x / size;
    part = blockIdx.x / size;
  }
  if constexpr (T == kNoCombine) {
    if (threadIdx.x == 0) partials[part] = sum;
    return;
  } else {
    if (threadIdx.x == 0) {
      partials[part] = sum;
      if constexpr (T == kAcqRel) {
        cuda::atomic_ref<unsigned, cuda::thread_scope_device> t(*ticket);
        last = t.fetch_add(1u, cuda::memory_order_acq_rel) + 1 == parts;
      } else {
        __threadfence();
        last = atomicAdd(ticket, 1u) + 1 == parts;
      }
    }
    __syncthreads();
    if (!last) return;
    if constexpr (T != kAcqRel) __threadfence();
    double total = 0;
    for (unsigned b = threadIdx.x; b < parts; b += Block) total += __ldcg(partials + b);
    total = block_sum<Block>(total, warp_sums);
    if (threadIdx.x == 0) {
      *result = total / divisor;
      *ticket = 0u;
    }
  }
}

__global__ void empty() {}

int sms = 0;
cudaStream_t stream;

template <int Block, int Unroll, int T>
StudyVariant make(int per_sm, int cluster, const float4* x, const float4* y, double* result, double* partials,
                  unsigned* ticket, int packs, double n) {
  const auto kernel = reduce<Block, Unroll, T>;
  int resident = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, Block, 0));
  unsigned grid = static_cast<unsigned>(sms * std::min(per_sm, resident));
  grid = std::min<unsigned>(grid, (packs + Block - 1) / Block);
  if (cluster > 1) grid = (grid + cluster - 1) / cluster * cluster;
  char name[160];
  std::snprintf(name, sizeof name, "block %4d  unroll %d  %d/SM (grid %4u)  %s%s", Block, Unroll, per_sm, grid,
                T == kTicket    ? "ticket"
                : T == kAcqRel  ? "ticket acq_rel"
                : T == kCluster ? "cluster+ticket"
                                : "no combine",
                cluster > 1 ? (" x" + std::to_string(cluster)).c_str() : "");
  auto launch = [=] {
    cudaLaunchAttribute attr[2];
    int na = 0;
    attr[na].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[na++].val.programmaticStreamSerializationAllowed = 1;
    if (cluster > 1) {
      attr[na].id = cudaLaunchAttributeClusterDimension;
      attr[na].val.clusterDim.x = cluster;
      attr[na].val.clusterDim.y = 1;
      attr[na++].val.clusterDim.z = 1;
    }
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(grid);
    config.blockDim = dim3(Block);
    config.stream = stream;
    config.attrs = attr;
    config.numAttrs = na;
    CHECK(cudaLaunchKernelEx(&config, kernel, x, y, result, partials, ticket, packs, n));
  };
  return {name, launch, T != kNoCombine, {}, {}, {}};
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 512 * 4096;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 10;
  const int warmups = argc > 3 ? std::atoi(argv[3]) : 200;
  const int packs = n / 4;
  if (n % 4 != 0 || n <= 0) {
    std::fprintf(stderr, "n must be a positive multiple of 4\n");
    return 1;
  }
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  sms = prop.multiProcessorCount;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::printf("# %s, %d SMs, n = %d, %d rounds\n", prop.name, sms, n, rounds);

  const StudyBuffers buf(n);
  float *x = buf.x, *y = buf.y, *dot = buf.dot;
  double *result = buf.result, *partials = buf.partials;
  unsigned* ticket = buf.ticket;
  const double ref = buf.ref;
  const auto* x4 = reinterpret_cast<const float4*>(x);
  const auto* y4 = reinterpret_cast<const float4*>(y);

  cublasHandle_t blas;
  cublasCreate(&blas);
  cublasSetStream(blas, stream);
  cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_DEVICE);

  std::vector<StudyVariant> v;
  v.push_back({"cublasSdot", [&] { cublasSdot(blas, n, x, 1, y, 1, dot); }, false, {}, {}, {}});
  v.push_back(
      {"empty kernel (grid = SMs x 4, 256 threads)", [&] { empty<<<sms * 4, 256, 0, stream>>>(); }, false, {}, {}, {}});
  const double N = n;
#define ARGS x4, y4, result, partials, ticket, packs, N
  v.push_back(make<256, 4, kTicket>(4, 1, ARGS));  // the library today
  v.push_back(make<256, 4, kTicket>(2, 1, ARGS));
  v.push_back(make<256, 8, kTicket>(2, 1, ARGS));
  v.push_back(make<256, 4, kTicket>(3, 1, ARGS));
  v.push_back(make<512, 4, kTicket>(1, 1, ARGS));
  v.push_back(make<512, 4, kTicket>(2, 1, ARGS));
  v.push_back(make<1024, 4, kTicket>(1, 1, ARGS));
  v.push_back(make<1024, 2, kTicket>(1, 1, ARGS));
  v.push_back(make<256, 4, kAcqRel>(4, 1, ARGS));
  v.push_back(make<256, 4, kAcqRel>(2, 1, ARGS));
  v.push_back(make<256, 4, kCluster>(4, 4, ARGS));
  v.push_back(make<256, 4, kCluster>(2, 2, ARGS));
  v.push_back(make<256, 8, kCluster>(2, 4, ARGS));
  v.push_back(make<256, 4, kCluster>(4, 8, ARGS));
  v.push_back(make<256, 4, kNoCombine>(4, 1, ARGS));
  v.push_back(make<256, 4, kNoCombine>(2, 1, ARGS));
  v.push_back(make<1024, 4, kNoCombine>(1, 1, ARGS));
#undef ARGS

  return time_variants(v, stream, result, ref, rounds, warmups);
}

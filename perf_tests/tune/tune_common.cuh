// Shared by the standalone tuning studies in this folder (no Kokkos): error checking, the library's float loss, the
// block sum, the inputs with their fp64 mean, the median, and the timing of variants against a peer.
#ifndef SOFTMARGIN_TUNE_COMMON_CUH
#define SOFTMARGIN_TUNE_COMMON_CUH

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#define CHECK(call)                                                                               \
  do {                                                                                            \
    cudaError_t e_ = (call);                                                                      \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

// The library's float loss: softplus(-y x) = max(z, 0) + log1p(exp(-|z|)), log1p by its degree-9 polynomial.
__device__ __forceinline__ float loss(float x, float y) {
  const float z = -y * x;
  const float e = expf(-fabsf(z));
  float p = -3.176056929e-03f;
  p = fmaf(p, e, 1.954252686e-02f);
  p = fmaf(p, e, -5.637361209e-02f);
  p = fmaf(p, e, 1.054362372e-01f);
  p = fmaf(p, e, -1.526966703e-01f);
  p = fmaf(p, e, 1.966327424e-01f);
  p = fmaf(p, e, -2.495161626e-01f);
  p = fmaf(p, e, 3.332971050e-01f);
  p = fmaf(p, e, -4.999989265e-01f);
  p = fmaf(p, e, 9.999999947e-01f);
  return fmaxf(z, 0.0f) + p * e;
}

/// The losses of four elements, added in float and widened once (as the library's LaneSums).
__device__ __forceinline__ double pack_loss(const float4 a, const float4 b) {
  const float s = (loss(a.x, b.x) + loss(a.y, b.y)) + (loss(a.z, b.z) + loss(a.w, b.w));
  return static_cast<double>(s);
}

/// This thread's sum over its grid-stride share of the packs, Unroll packs of x and y loaded before their losses are
/// added, while a whole round of Unroll is left; p is left at the first pack not added (fewer than Unroll remain).
template <int Unroll>
__device__ __forceinline__ double unrolled_sum(const float4* __restrict__ x, const float4* __restrict__ y, int& p,
                                               const int stride, const int packs) {
  double sum = 0;
  for (; p + (Unroll - 1) * stride < packs; p += Unroll * stride) {
    float4 a[Unroll], b[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      a[u] = x[p + u * stride];
      b[u] = y[p + u * stride];
    }
#pragma unroll
    for (int u = 0; u < Unroll; ++u) sum += pack_loss(a[u], b[u]);
  }
  return sum;
}

/// Sum of v over a block of Block threads, valid in thread 0.
template <int Block>
__device__ __forceinline__ double block_sum(double v, double* warp_sums) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < Block / 32 ? warp_sums[lane] : 0.0;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  }
  return v;
}

/// x ~ N(0, 2), y = +-1 (fixed seed), and the fp64 mean loss of them.
inline double make_inputs(int n, std::vector<float>& hx, std::vector<float>& hy) {
  hx.resize(n);
  hy.resize(n);
  std::mt19937 gen(12345);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  double ref = 0;
  for (int i = 0; i < n; ++i) {
    hx[i] = normal(gen);
    hy[i] = (gen() & 1) ? 1.0f : -1.0f;
    const double z = -static_cast<double>(hy[i]) * hx[i];
    ref += std::max(z, 0.0) + std::log1p(std::exp(-std::fabs(z)));
  }
  return ref / n;
}

inline double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

/// The studies' device buffers: x and y from make_inputs (with their fp64 mean `ref`), a float for cublasSdot's
/// result, the double mean, 2^14 partials and the ticket (zero).
struct StudyBuffers {
  float *x, *y, *dot;
  double *result, *partials;
  unsigned* ticket;
  double ref;
  explicit StudyBuffers(int n) {
    std::vector<float> hx, hy;
    ref = make_inputs(n, hx, hy);
    CHECK(cudaMalloc(&x, sizeof(float) * n));
    CHECK(cudaMalloc(&y, sizeof(float) * n));
    CHECK(cudaMalloc(&dot, sizeof(float)));
    CHECK(cudaMalloc(&result, sizeof(double)));
    CHECK(cudaMalloc(&partials, sizeof(double) * (1 << 14)));
    CHECK(cudaMalloc(&ticket, sizeof(unsigned)));
    CHECK(cudaMemset(ticket, 0, sizeof(unsigned)));
    CHECK(cudaMemcpy(x, hx.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(y, hy.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
  }
};

/// A variant of a study: its launch (on the study's stream), and whether it leaves the mean in the study's result.
struct StudyVariant {
  std::string name;
  std::function<void()> launch;
  bool checked;
  std::vector<double> iso, pipe, host;
};

/// The studies' timing: each checked variant's *result against the fp64 mean `ref` first, `warmups` calls each, then
/// `rounds` rounds in which every variant in turn is timed isolated (synchronize, event, call, event; 50 a round),
/// pipelined (100 calls between two events, per call; 5 a round) and on the host (100 calls without a wait, per call;
/// 5 a round). Prints the medians and the ratios to v[0] (the peer). Returns the process's exit status.
inline int time_variants(std::vector<StudyVariant>& v, cudaStream_t stream, double* result, double ref, int rounds,
                         int warmups) {
  std::size_t width = 8;
  for (const auto& var : v) width = std::max(width, var.name.size());
  for (auto& var : v) {
    CHECK(cudaMemset(result, 0xff, sizeof(double)));
    var.launch();
    CHECK(cudaStreamSynchronize(stream));
    if (var.checked) {
      double got = 0;
      CHECK(cudaMemcpy(&got, result, sizeof(double), cudaMemcpyDeviceToHost));
      const double err = std::fabs(got - ref) / ref;
      if (!(err < 1e-6)) {
        std::printf("CHECK FAILED: %s: %.9g vs fp64 %.9g\n", var.name.c_str(), got, ref);
        return 1;
      }
    }
    for (int i = 0; i < warmups; ++i) var.launch();
  }
  CHECK(cudaStreamSynchronize(stream));

  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  auto elapsed = [&](const std::function<void()>& body) {
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaEventRecord(a, stream));
    body();
    CHECK(cudaEventRecord(b, stream));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return 1e3 * ms;
  };
  for (int r = 0; r < rounds; ++r) {
    for (auto& var : v) {
      for (int i = 0; i < 50; ++i) var.iso.push_back(elapsed(var.launch));
      for (int i = 0; i < 5; ++i)
        var.pipe.push_back(elapsed([&] {
                             for (int k = 0; k < 100; ++k) var.launch();
                           }) /
                           100);
      for (int i = 0; i < 5; ++i) {
        CHECK(cudaStreamSynchronize(stream));
        const auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < 100; ++k) var.launch();
        const auto t1 = std::chrono::steady_clock::now();
        var.host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 100);
      }
    }
  }
  if (rounds < 1) return 0;
  const double dot_iso = median(v[0].iso), dot_pipe = median(v[0].pipe);
  std::printf("%-*s %9s %9s %7s %7s %9s\n", static_cast<int>(width), "variant", "iso_us", "pipe_us", "x_iso", "x_pipe",
              "host_us");
  for (auto& var : v) {
    const double iso = median(var.iso), pipe = median(var.pipe);
    std::printf("%-*s %9.2f %9.2f %7.3f %7.3f %9.2f\n", static_cast<int>(width), var.name.c_str(), iso, pipe,
                iso / dot_iso, pipe / dot_pipe, median(var.host));
  }
  return 0;
}

#endif

// Benchmark: every SoftMargin algorithm and pass next to the peers on the same x and y.
//
//   softmargin_perf_forward [--sizes 2^21,512x4096,...] [--reps N] [--csv FILE]
//
// Per row: the median time of one call, isolated (fence, call, fence) and pipelined (100 back-to-back calls between
// two timestamps, divided by 100), the GB/s of compulsory traffic (x and y read once: 8 bytes per fp32 element), the
// ratio to cublasSdot on the same buffers (CUDA builds), and the relative error of the result vs an fp64 reduction.
// Every variant is checked before it is timed. Timestamps are CUDA events on CUDA, fenced host clocks elsewhere.
#include <SoftMargin.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <thrust/iterator/counting_iterator.h>

#include <cub/device/device_reduce.cuh>
#endif

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;

struct Timing {
  double isolated_us;
  double pipelined_us;
};

/// Median time of fn: isolated and pipelined.
Timing time_call(const Exec& space, const std::function<void()>& fn, int reps) {
  constexpr int kBatch = 100;
  for (int i = 0; i < 5; ++i) fn();  // warm-up
  space.fence();
  std::vector<double> iso, pipe;
#if defined(KOKKOS_ENABLE_CUDA)
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaStream_t stream = space.cuda_stream();
  auto elapsed_us = [&](const std::function<void()>& body) {
    space.fence();
    cudaEventRecord(a, stream);
    body();
    cudaEventRecord(b, stream);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    return 1e3 * ms;
  };
#else
  auto elapsed_us = [&](const std::function<void()>& body) {
    space.fence();
    Kokkos::Timer t;
    body();
    space.fence();
    return 1e6 * t.seconds();
  };
#endif
  for (int r = 0; r < reps; ++r) iso.push_back(elapsed_us(fn));
  const int pipe_reps = std::max(5, reps / 10);
  for (int r = 0; r < pipe_reps; ++r)
    pipe.push_back(elapsed_us([&] {
                     for (int i = 0; i < kBatch; ++i) fn();
                   }) /
                   kBatch);
#if defined(KOKKOS_ENABLE_CUDA)
  cudaEventDestroy(a);
  cudaEventDestroy(b);
#endif
  auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  return {median(iso), median(pipe)};
}

struct Shape {
  std::string name;
  std::size_t rows, cols;
  std::size_t size() const { return rows * cols; }
};

std::vector<Shape> parse_sizes(const std::string& s) {
  std::vector<Shape> out;
  std::stringstream ss(s);
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    const auto x = tok.find('x');
    if (tok.rfind("2^", 0) == 0) {
      out.push_back({tok, 1, std::size_t(1) << std::stoi(tok.substr(2))});
    } else if (x != std::string::npos) {
      out.push_back({tok, std::stoul(tok.substr(0, x)), std::stoul(tok.substr(x + 1))});
    } else {
      out.push_back({tok, 1, std::stoul(tok)});
    }
  }
  return out;
}

struct Row {
  std::string size, variant;
  std::size_t n;
  Timing t;
  double rel_err;
  int bytes_per_element = 8;  ///< compulsory traffic: 8 for x and y read, 12 when a gradient is written too
  std::string peer = "cublasSdot";  ///< the peer moving the same bytes, for the ratio column
};

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  std::string sizes = "512x4096,2^24,2^26,2^28";
  std::string csv;
  int reps = 100;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc) sizes = argv[++i];
    else if (a == "--reps" && i + 1 < argc) reps = std::stoi(argv[++i]);
    else if (a == "--csv" && i + 1 < argc) csv = argv[++i];
  }

  std::printf("# SoftMargin %s, Kokkos %d.%d.%d, execution space %s, concurrency %d\n", SOFTMARGIN_VERSION,
              KOKKOS_VERSION_MAJOR, KOKKOS_VERSION_MINOR, KOKKOS_VERSION_PATCH, Exec::name(), Exec().concurrency());
#if defined(KOKKOS_ENABLE_CUDA)
  {
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    std::printf("# device %s, %d SMs, L2 %d MB\n", p.name, p.multiProcessorCount, p.l2CacheSize >> 20);
  }
  cublasHandle_t blas;
  cublasCreate(&blas);
  cublasSetStream(blas, Exec().cuda_stream());
  cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_DEVICE);
#endif

  const Exec space;
  std::vector<Row> rows;
  {
    // Calibration: the cost of launching an empty Kokkos kernel, the floor under any one-launch call.
    const int teams = std::max(1, Exec().concurrency() / 256);
    const auto empty_team = Kokkos::TeamPolicy<Exec>(space, teams, softmargin::Impl::is_host_space_v<Exec> ? 1 : 256);
    rows.push_back({"-", "empty TeamPolicy kernel", 0, time_call(space, [&] {
                      Kokkos::parallel_for("empty_team", empty_team, KOKKOS_LAMBDA(const Kokkos::TeamPolicy<Exec>::member_type&) {});
                    }, reps), std::nan("")});
    rows.push_back({"-", "empty RangePolicy kernel", 0, time_call(space, [&] {
                      Kokkos::parallel_for("empty_range", Kokkos::RangePolicy<Exec>(space, 0, 1), KOKKOS_LAMBDA(int) {});
                    }, reps), std::nan("")});
  }
  for (const Shape& shape : parse_sizes(sizes)) {
    const std::size_t n = shape.size();
    Kokkos::View<float**, Kokkos::LayoutRight, Mem> x(Kokkos::view_alloc(Kokkos::WithoutInitializing, "x"), shape.rows,
                                                      shape.cols);
    Kokkos::View<float**, Kokkos::LayoutRight, Mem> y(Kokkos::view_alloc(Kokkos::WithoutInitializing, "y"), shape.rows,
                                                      shape.cols);
    const std::size_t cols = shape.cols;
    Kokkos::parallel_for(
        "fill", Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, n), KOKKOS_LAMBDA(std::int64_t i) {
          std::uint64_t z = 0x5EEDull + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(i + 1);
          z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
          z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
          z ^= z >> 31;
          x(i / cols, i % cols) = static_cast<float>(-3.0 + 6.0 * static_cast<double>(z >> 11) * 0x1.0p-53);
          y(i / cols, i % cols) = (z & 1) ? 1.0f : -1.0f;
        });
    double ref = 0;
    Kokkos::parallel_reduce(
        "fp64_reference", Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, n),
        KOKKOS_LAMBDA(std::int64_t i, double& s) {
          const double z = -static_cast<double>(y(i / cols, i % cols)) * static_cast<double>(x(i / cols, i % cols));
          s += (z > 0 ? z : 0.0) + Kokkos::log1p(Kokkos::exp(-Kokkos::abs(z)));
        },
        ref);
    ref /= static_cast<double>(n);

    Kokkos::View<float, Mem> result("result");
    auto read = [&] {
      float v;
      Kokkos::deep_copy(v, result);
      return static_cast<double>(v);
    };
    auto add = [&](const std::string& variant, const std::function<void()>& fn, double value_for_check) {
      Kokkos::deep_copy(result, std::nanf(""));
      fn();
      const double got = std::isnan(value_for_check) ? read() : value_for_check;
      const double err = std::abs(got - ref) / ref;
      if (!(err < 1e-5)) {
        std::fprintf(stderr, "CHECK FAILED: %s at %s: got %.9g, fp64 reference %.9g\n", variant.c_str(),
                     shape.name.c_str(), got, ref);
        std::exit(1);
      }
      rows.push_back({shape.name, variant, n, time_call(space, fn, reps), err});
    };
    Kokkos::View<float**, Kokkos::LayoutRight, Mem> grad(Kokkos::view_alloc(Kokkos::WithoutInitializing, "grad"),
                                                         shape.rows, shape.cols);
    const double nan = std::nan("");
    add("softmargin auto", [&] { softmargin::loss(space, x, y, result); }, nan);
    add("softmargin range_reduce",
        [&] { softmargin::loss(space, x, y, result, softmargin::Reduction::Mean, softmargin::Algorithm::RangeReduce); },
        nan);
    add("softmargin team_scratch",
        [&] { softmargin::loss(space, x, y, result, softmargin::Reduction::Mean, softmargin::Algorithm::TeamScratch); },
        nan);
    {
      // Gradient passes: 12 bytes per element (x, y read; grad_x written). The fused pass is checked through its
      // loss; the backward pass through the sum of its gradient against the fp64 one.
      add("softmargin loss_and_grad", [&] { softmargin::loss_and_grad(space, x, y, result, grad); }, nan);
      rows.back().bytes_per_element = 12;
      rows.back().peer = "cublasSaxpy";
      softmargin::backward(space, x, y, 1.0f, grad);
      double gsum = 0, gref = 0;
      Kokkos::parallel_reduce(
          "grad_check", Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, n),
          KOKKOS_LAMBDA(std::int64_t i, double& s) { s += grad(i / cols, i % cols); }, gsum);
      Kokkos::parallel_reduce(
          "grad_reference", Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, n),
          KOKKOS_LAMBDA(std::int64_t i, double& s) {
            const double xi = x(i / cols, i % cols), yi = y(i / cols, i % cols), z = -yi * xi;
            s += -yi / (1.0 + Kokkos::exp(-z)) / static_cast<double>(n);
          },
          gref);
      const double gerr = std::abs(gsum - gref) / std::abs(gref);
      if (!(gerr < 1e-4)) {
        std::fprintf(stderr, "CHECK FAILED: backward at %s: gradient sum %.9g, fp64 %.9g\n", shape.name.c_str(), gsum,
                     gref);
        std::exit(1);
      }
      rows.push_back({shape.name, "softmargin backward", n,
                      time_call(space, [&] { softmargin::backward(space, x, y, 1.0f, grad); }, reps), gerr, 12,
                      "cublasSaxpy"});
    }
#if defined(KOKKOS_ENABLE_CUDA)
    {
      // cublasSaxpy moves the gradient passes' bytes: reads x and y, writes y (here a scratch copy).
      const int n32s = static_cast<int>(n);
      const float alpha = 1.0f;
      cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_HOST);
      rows.push_back({shape.name, "cublasSaxpy (12 B/elem)", n, time_call(space, [&] {
                        cublasSaxpy(blas, n32s, &alpha, x.data(), 1, grad.data(), 1);
                      }, reps), nan, 12, "cublasSaxpy"});
      cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_DEVICE);
    }
    {
      // cublasSdot reads the same bytes (not the same function: its "error" column is meaningless).
      const int n32 = static_cast<int>(n);
      Kokkos::View<float, Mem> dot("dot");
      cublasSdot(blas, n32, x.data(), 1, y.data(), 1, dot.data());
      space.fence();
      rows.push_back({shape.name, "cublasSdot (same bytes)", n, time_call(space, [&] {
                        cublasSdot(blas, n32, x.data(), 1, y.data(), 1, dot.data());
                      }, reps), nan});
      // CUB TransformReduce with the same loss, into a float, over a zip of indices.
      const float* xp = x.data();
      const float* yp = y.data();
      auto op = [xp, yp] __host__ __device__(std::int64_t i) -> float { return softmargin::Impl::loss(xp[i], yp[i]); };
      thrust::counting_iterator<std::int64_t> idx(0);
      std::size_t temp_bytes = 0;
      cub::DeviceReduce::TransformReduce(nullptr, temp_bytes, idx, result.data(), static_cast<std::int64_t>(n),
                                         cuda::std::plus<float>{}, op, 0.0f, space.cuda_stream());
      Kokkos::View<char*, Mem> temp("cub_temp", temp_bytes);
      auto cub_sum = [&] {
        cub::DeviceReduce::TransformReduce(temp.data(), temp_bytes, idx, result.data(), static_cast<std::int64_t>(n),
                                           cuda::std::plus<float>{}, op, 0.0f, space.cuda_stream());
      };
      cub_sum();
      rows.push_back({shape.name, "CUB TransformReduce (sum)", n, time_call(space, cub_sum, reps),
                      std::abs(read() / static_cast<double>(n) - ref) / ref});
    }
#endif
  }

  // Table: ratio to cublasSdot (CUDA) per size.
  std::printf("%-10s %-28s %12s %12s %10s %8s %8s %-12s %10s\n", "size", "variant", "isolated_us", "pipelined_us",
              "GB/s(pipe)", "x_iso", "x_pipe", "peer", "rel_err");
  std::ofstream out;
  if (!csv.empty()) {
    out.open(csv);
    out << "size,n,variant,isolated_us,pipelined_us,gbps_pipelined,ratio_isolated,ratio_pipelined,peer,rel_err\n";
  }
  for (const Row& r : rows) {
    // Ratio of time to the peer that moves the same bytes, in the same run (NaN without CUDA).
    Timing peer{std::nan(""), std::nan("")};
    for (const Row& s : rows)
      if (s.size == r.size && s.variant.rfind(r.peer, 0) == 0) peer = s.t;
    const double gbps = r.bytes_per_element * static_cast<double>(r.n) / (r.t.pipelined_us * 1e3);
    std::printf("%-10s %-28s %12.2f %12.2f %10.0f %8.3f %8.3f %-12s %10.2e\n", r.size.c_str(), r.variant.c_str(),
                r.t.isolated_us, r.t.pipelined_us, gbps, r.t.isolated_us / peer.isolated_us,
                r.t.pipelined_us / peer.pipelined_us, r.peer.c_str(), r.rel_err);
    if (out) {
      out << r.size << ',' << r.n << ',' << r.variant << ',' << r.t.isolated_us << ',' << r.t.pipelined_us << ','
          << gbps << ',' << r.t.isolated_us / peer.isolated_us << ',' << r.t.pipelined_us / peer.pipelined_us << ','
          << r.peer << ',' << r.rel_err << '\n';
    }
  }
#if defined(KOKKOS_ENABLE_CUDA)
  cublasDestroy(blas);
#endif
  return 0;
}

// Benchmark: every SoftMargin algorithm and pass next to the peers on the same x and y.
//
//   softmargin_perf_forward [--sizes 2^10:2^28,512x4096,...] [--reps N] [--csv FILE] [--only NAME,...]
//                           [--modes hot,cold] [--separate] [--stream own]
//
// --only times just the variants whose names contain one of the NAMEs (e.g. "native,cublasSdot"); --modes picks the
// modes (both by default); --separate allocates every copy of every buffer on its own (default: one allocation per
// buffer holding all its copies); --stream own runs everything (library, peers) on a non-blocking CUDA stream of the
// benchmark's, wrapped in a Kokkos::Cuda instance (default: Kokkos' default instance).
//
// Per row: the median time of one call, isolated (fence, call, fence; median of --reps, default 100) and pipelined
// (a batch of back-to-back calls between two timestamps, divided by the batch's length: 100 calls up to 2^24
// elements, 10 above, where one call takes 40 us or more; median of max(5, reps/2) batches, 50 by default), the GB/s of
// compulsory traffic (x and y read once: 8 bytes per fp32 element; 12 when a full-size output is written too), the
// ratio to the peer moving the same bytes (cublasSdot, cublasSaxpy; CUDA builds: against the peer's isolated calls and
// pipelined batches interleaved one for one with the variant's, so that both see the same GPU clocks and host; the
// CSV has those peer times too), and the relative error of the
// result against an fp64 reduction, and host_us: the caller's time per call in the pipelined batches (the host cost of
// a launch; on host backends the whole call). Every variant is checked before it is timed.
// Modes: "hot" reuses one set of buffers; "cold" (sizes whose inputs fit in the last-level cache) rotates through
// enough copies to occupy four times that cache, so that every call reads from memory.
// Timestamps are CUDA events on CUDA, fenced host clocks elsewhere.
#include <SoftMargin.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>

#include <cub/device/device_reduce.cuh>
#else
#include <unistd.h>
#endif

namespace perf {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
using Index = std::int64_t;
/// One copy of an input or output: a row-major matrix over a slice of one allocation holding every copy.
using Matrix = Kokkos::View<float**, Kokkos::LayoutRight, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using Flat = Kokkos::View<float*, Mem>;
using FlatSlice = Kokkos::View<float*, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

struct Timing {
  double isolated_us;
  double pipelined_us;
  double host_us;  ///< the caller's time in one call (pipelined batches: until the last call returns, per call)
  /// The peer's isolated and pipelined times, from its calls and batches interleaved one for one with this
  /// variant's (NaN if unpaired)
  double peer_isolated_us = std::nan("");
  double peer_pipelined_us = std::nan("");
};

/// Median time of fn(k), k the buffer set of the call (cycling through `copies`): isolated and pipelined. With a
/// `peer`, its isolated calls and pipelined batches alternate with fn's, so that both medians come from the same
/// stretch of time, at the same clocks; the peer cycles through the copies half a cycle away from fn, so that
/// neither reads what the other just brought into the cache (cold mode).
Timing time_call(const Exec& space, const std::function<void(int)>& fn, int reps, int copies, std::size_t n = 0,
                 const std::function<void(int)>* peer = nullptr) {
  const int batch = n > (std::size_t(1) << 24) ? 10 : 100;
  int next = 0, peer_next = copies / 2;
  auto call = [&] {
    fn(next);
    next = next + 1 == copies ? 0 : next + 1;
  };
  auto peer_call = [&] {
    (*peer)(peer_next);
    peer_next = peer_next + 1 == copies ? 0 : peer_next + 1;
  };
  // Warm-up: through the copies once, and for at least 20 ms, so that the GPU's clocks are up again after the
  // host-side setup between variants (an idle H200 drops to a few hundred MHz).
  {
    Kokkos::Timer warm;
    for (int i = 0; i < 5 + std::min(copies, 1000) || warm.seconds() < 0.02; ++i) {
      if (peer && i < 5) peer_call();
      call();
      if (i % 16 == 15) space.fence();
    }
  }
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
  std::vector<double> peer_iso, peer_pipe;
  for (int r = 0; r < reps; ++r) {
    if (peer) peer_iso.push_back(elapsed_us(peer_call));
    iso.push_back(elapsed_us(call));
  }
  const int pipe_reps = std::max(5, reps / 2);
  std::vector<double> host;
  for (int r = 0; r < pipe_reps; ++r) {
    if (peer)
      peer_pipe.push_back(elapsed_us([&] {
                            for (int i = 0; i < batch; ++i) peer_call();
                          }) /
                          batch);
    pipe.push_back(elapsed_us([&] {
                     Kokkos::Timer t;
                     for (int i = 0; i < batch; ++i) call();
                     host.push_back(1e6 * t.seconds() / batch);
                   }) /
                   batch);
  }
#if defined(KOKKOS_ENABLE_CUDA)
  cudaEventDestroy(a);
  cudaEventDestroy(b);
#endif
  auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  const double unpaired = std::nan("");
  return {median(iso), median(pipe), median(host), peer ? median(peer_iso) : unpaired,
          peer ? median(peer_pipe) : unpaired};
}

struct Shape {
  std::string name;
  std::size_t rows, cols;
  std::size_t size() const { return rows * cols; }
};

/// "2^k", "RxC", "N", and ranges "2^a:2^b" (every power of two from a to b).
std::vector<Shape> parse_sizes(const std::string& s) {
  std::vector<Shape> out;
  std::stringstream ss(s);
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    const auto colon = tok.find(':');
    const auto x = tok.find('x');
    if (colon != std::string::npos && tok.rfind("2^", 0) == 0) {
      const int a = std::stoi(tok.substr(2, colon - 2)), b = std::stoi(tok.substr(colon + 3));
      for (int k = a; k <= b; ++k) out.push_back({"2^" + std::to_string(k), 1, std::size_t(1) << k});
    } else if (tok.rfind("2^", 0) == 0) {
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
  std::string size, mode, variant;
  std::size_t n;
  Timing t;
  double rel_err;
  int bytes_per_element = 8;  ///< compulsory traffic: 8 for x and y read, 12 when a full-size output is written too
  std::string peer = "cublasSdot";  ///< the peer moving the same bytes, for the ratio column
};

/// Bytes of the last-level cache: L2 on CUDA, the largest CPU cache elsewhere (0 if unknown).
std::size_t cache_bytes() {
#if defined(KOKKOS_ENABLE_CUDA)
  return static_cast<std::size_t>(Exec().cuda_device_prop().l2CacheSize);
#else
  long c = 0;
#if defined(_SC_LEVEL3_CACHE_SIZE)
  c = std::max(c, sysconf(_SC_LEVEL3_CACHE_SIZE));
#endif
#if defined(_SC_LEVEL2_CACHE_SIZE)
  c = std::max(c, sysconf(_SC_LEVEL2_CACHE_SIZE));
#endif
  return c > 0 ? static_cast<std::size_t>(c) : 0;
#endif
}

/// x ~ U(-3, 3), y = +-1 from a counter-based hash of the index modulo n (every copy of n elements the same).
void fill(const Flat& x, const Flat& y, const std::size_t n) {
  Kokkos::parallel_for(
      "fill", Kokkos::RangePolicy<Exec, Kokkos::IndexType<Index>>(0, x.size()), KOKKOS_LAMBDA(Index i) {
        std::uint64_t z = 0x5EEDull + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(i % n + 1);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        x(i) = static_cast<float>(-3.0 + 6.0 * static_cast<double>(z >> 11) * 0x1.0p-53);
        y(i) = (z & 1) ? 1.0f : -1.0f;
      });
}

/// fp64 mean loss and fp64 sum of the mean-reduction gradient.
void fp64_reference(const Matrix& x, const Matrix& y, double& mean, double& grad_sum) {
  const std::size_t cols = x.extent(1);
  const double n = static_cast<double>(x.size());
  Kokkos::parallel_reduce(
      "fp64_reference", Kokkos::RangePolicy<Exec, Kokkos::IndexType<Index>>(0, x.size()),
      KOKKOS_LAMBDA(Index i, double& s, double& g) {
        const double xi = x(i / cols, i % cols), yi = y(i / cols, i % cols), z = -yi * xi;
        s += (z > 0 ? z : 0.0) + Kokkos::log1p(Kokkos::exp(-Kokkos::abs(z)));
        g += -yi / (1.0 + Kokkos::exp(-z)) / n;
      },
      mean, grad_sum);
  mean /= n;
}

double sum_of(const Matrix& v) {
  const std::size_t cols = v.extent(1);
  double s = 0;
  Kokkos::parallel_reduce(
      "sum_check", Kokkos::RangePolicy<Exec, Kokkos::IndexType<Index>>(0, v.size()),
      KOKKOS_LAMBDA(Index i, double& a) { a += v(i / cols, i % cols); }, s);
  return s;
}

/// PyTorch's op-by-op SoftMarginLoss (the "before" picture), one Kokkos kernel per ATen op with a full-size
/// temporary: neg_out, mul_, exp_, log1p_, mean (here accumulated in double, dividing by N in its final), and the
/// copy of that scalar into the output.
struct UnfusedMean {
  using value_type = double;
  Flat t;
  double n;
  KOKKOS_INLINE_FUNCTION void operator()(const Index i, double& s) const { s += t(i); }
  KOKKOS_INLINE_FUNCTION void final(double& s) const { s /= n; }
};
void unfused_chain(const Exec& space, const FlatSlice& x, const FlatSlice& y, const Flat& t,
                   const Kokkos::View<double, Mem>& mean, const Kokkos::View<float, Mem>& result) {
  const Kokkos::RangePolicy<Exec, Kokkos::IndexType<Index>> all(space, 0, x.size());
  Kokkos::parallel_for(
      "unfused::neg", all, KOKKOS_LAMBDA(Index i) { t(i) = -x(i); });
  Kokkos::parallel_for(
      "unfused::mul", all, KOKKOS_LAMBDA(Index i) { t(i) *= y(i); });
  Kokkos::parallel_for(
      "unfused::exp", all, KOKKOS_LAMBDA(Index i) { t(i) = Kokkos::exp(t(i)); });
  Kokkos::parallel_for(
      "unfused::log1p", all, KOKKOS_LAMBDA(Index i) { t(i) = Kokkos::log1p(t(i)); });
  Kokkos::parallel_reduce("unfused::mean", all, UnfusedMean{t, static_cast<double>(x.size())}, mean);
  Kokkos::parallel_for(
      "unfused::copy", Kokkos::RangePolicy<Exec>(space, 0, 1),
      KOKKOS_LAMBDA(int) { result() = static_cast<float>(mean()); });
}

#if defined(KOKKOS_ENABLE_CUDA)
__global__ void empty_cuda_kernel() {}

/// The library's loss of element i, for CUB's TransformReduce.
struct LossAt {
  const float* x;
  const float* y;
  __host__ __device__ float operator()(std::int64_t i) const { return softmargin::Impl::loss(x[i], y[i]); }
};
#endif

}  // namespace perf

using namespace perf;

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  std::string sizes = "512x4096,2^24,2^26,2^28";
  std::string csv;
  int reps = 100;
  std::vector<std::string> only, mode_names = {"hot", "cold"};
  bool separate = false, own_stream = false;
  const auto split = [](const std::string& list) {
    std::vector<std::string> items;
    std::stringstream ss(list);
    for (std::string item; std::getline(ss, item, ',');)
      if (!item.empty()) items.push_back(item);
    return items;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc)
      sizes = argv[++i];
    else if (a == "--reps" && i + 1 < argc)
      reps = std::stoi(argv[++i]);
    else if (a == "--csv" && i + 1 < argc)
      csv = argv[++i];
    else if (a == "--only" && i + 1 < argc)
      only = split(argv[++i]);
    else if (a == "--modes" && i + 1 < argc)
      mode_names = split(argv[++i]);
    else if (a == "--separate")
      separate = true;
    else if (a == "--stream" && i + 1 < argc && std::string(argv[i + 1]) == "own" && ++i)
      own_stream = true;
    else if (a.rfind("--kokkos", 0) != 0) {
      std::fprintf(stderr, "unknown or incomplete argument: %s\n", a.c_str());
      return 2;
    }
  }
  const auto wanted = [&](const std::string& variant) {
    if (only.empty()) return true;
    for (const auto& o : only)
      if (variant.find(o) != std::string::npos) return true;
    return false;
  };
  const std::size_t llc = cache_bytes();
  std::printf("# SoftMargin %s, Kokkos %d.%d.%d, execution space %s, concurrency %d, last-level cache %zu MB\n",
              SOFTMARGIN_VERSION, KOKKOS_VERSION_MAJOR, KOKKOS_VERSION_MINOR, KOKKOS_VERSION_PATCH, Exec::name(),
              Exec().concurrency(), llc >> 20);
  std::printf("# Kokkos configuration:\n");
  Kokkos::print_configuration(std::cout);
#if defined(KOKKOS_ENABLE_CUDA)
  {
    const cudaDeviceProp& p = Exec().cuda_device_prop();
    std::printf("# device %s, %d SMs, L2 %d MB\n", p.name, p.multiProcessorCount, p.l2CacheSize >> 20);
  }
  cudaStream_t stream = nullptr;  // --stream own: left to the end of the process (Kokkos' instance refers to it)
  if (own_stream) cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  const Exec space = own_stream ? Exec(stream) : Exec();
  std::printf("# stream: %s\n", own_stream ? "own (non-blocking)" : "Kokkos' default instance");
  cublasHandle_t blas;
  cublasCreate(&blas);
  cublasSetStream(blas, space.cuda_stream());
  cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_DEVICE);
#else
  if (own_stream) {
    std::fprintf(stderr, "--stream own: CUDA builds only\n");
    return 2;
  }
  const Exec space;
#endif
  std::printf("# buffers: %s\n", separate ? "every copy allocated on its own" : "one allocation per buffer");
  const double nan = std::nan("");
  std::vector<Row> rows;
  int failed = 0;  // variants whose check failed (reported, not timed; the exit status is 1)
  {
    // Calibration: the cost of launching an empty kernel, the floor under any one-launch call.
    const int teams = std::max(1, Exec().concurrency() / 256);
    const auto empty_team = Kokkos::TeamPolicy<Exec>(space, teams, softmargin::Impl::is_host_space_v<Exec> ? 1 : 256);
    rows.push_back({"-", "hot", "empty TeamPolicy kernel", 0,
                    time_call(
                        space,
                        [&](int) {
                          Kokkos::parallel_for("empty_team", empty_team,
                                               KOKKOS_LAMBDA(const Kokkos::TeamPolicy<Exec>::member_type&){});
                        },
                        reps, 1),
                    nan});
    rows.push_back({"-", "hot", "empty RangePolicy kernel", 0,
                    time_call(
                        space,
                        [&](int) {
                          Kokkos::parallel_for("empty_range", Kokkos::RangePolicy<Exec>(space, 0, 1),
                                               KOKKOS_LAMBDA(int){});
                        },
                        reps, 1),
                    nan});
#if defined(KOKKOS_ENABLE_CUDA)
    const unsigned grid = static_cast<unsigned>(teams);
    rows.push_back({"-", "hot", "empty CUDA kernel (<<<>>>)", 0,
                    time_call(
                        space, [&](int) { empty_cuda_kernel<<<grid, 256, 0, space.cuda_stream()>>>(); }, reps, 1),
                    nan});
#endif
  }

  for (const Shape& shape : parse_sizes(sizes)) {
    const std::size_t n = shape.size();
    const std::size_t bytes = 8 * n;
    // Hot always; cold too where x and y fit in the cache: copies covering four times its size.
    std::vector<std::pair<std::string, int>> modes{{"hot", 1}};
    if (llc > 0 && bytes <= llc) modes.push_back({"cold", static_cast<int>((4 * llc + bytes - 1) / bytes)});
    const int copies = modes.back().second;
    // x, y, grad, out: one allocation each holding every copy, or (--separate) one allocation per copy.
    const int allocations = separate ? copies : 1;
    const std::size_t per_allocation = separate ? n : copies * n;
    const auto alloc = [&](const char* name) {
      return Flat(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(name)), per_allocation);
    };
    std::vector<Flat> buffers;  // owns the allocations
    std::vector<Matrix> x, y, grad, out;
    for (int a = 0; a < allocations; ++a) {
      const Flat X = alloc("x"), Y = alloc("y"), G = alloc("grad"), O = alloc("out");
      fill(X, Y, n);
      fill(G, O, n);  // outputs too are written once before timing (non-zero: no shared zero pages on hosts)
      buffers.insert(buffers.end(), {X, Y, G, O});
      for (std::size_t at = 0; at < per_allocation; at += n) {
        x.emplace_back(X.data() + at, shape.rows, shape.cols);
        y.emplace_back(Y.data() + at, shape.rows, shape.cols);
        grad.emplace_back(G.data() + at, shape.rows, shape.cols);
        out.emplace_back(O.data() + at, shape.rows, shape.cols);
      }
    }
    Kokkos::fence();  // filled on the default instance; timed on `space`
    Flat temp(Kokkos::view_alloc(Kokkos::WithoutInitializing, "unfused_temp"), n);
    Kokkos::View<double, Mem> unfused_mean("unfused_mean");
    double ref = 0, grad_ref = 0;
    fp64_reference(x[0], y[0], ref, grad_ref);
    const auto flat = [&](const Matrix& m) { return FlatSlice(m.data(), m.size()); };

    Kokkos::View<float, Mem> result("result");
    auto read = [&] {
      float v;
      Kokkos::deep_copy(v, result);
      return static_cast<double>(v);
    };
    using softmargin::Algorithm;
    using softmargin::Reduction;
    // The peers, by name: timed in their own rows, and between a variant's isolated calls and batches (paired timing).
    std::map<std::string, std::function<void(int)>> peers;
#if defined(KOKKOS_ENABLE_CUDA)
    const int n32 = static_cast<int>(n);
    Kokkos::View<float, Mem> dot("dot"), one("one");  // cublasSdot's result; cublasSaxpy's alpha
    Kokkos::deep_copy(one, 1.0f);
    // cublasSdot reads the forward's bytes; cublasSaxpy the gradient passes' (reads x and y, writes y: here a scratch).
    peers["cublasSdot"] = [&, n32](int k) { cublasSdot(blas, n32, x[k].data(), 1, y[k].data(), 1, dot.data()); };
    peers["cublasSaxpy"] = [&, n32](int k) {
      cublasSaxpy(blas, n32, one.data(), x[k].data(), 1, grad[k].data(), 1);
    };
#endif
    for (const auto& [mode, ncopies] : modes) {
      if (std::find(mode_names.begin(), mode_names.end(), mode) == mode_names.end()) continue;
      // Runs fn once on buffer set 0, checks what `check` returns (the relative error) and times it.
      auto add = [&, mode = mode, ncopies = ncopies](const std::string& variant, const std::function<void(int)>& fn,
                                                     const std::function<double()>& check, double tol,
                                                     int bytes_per_element = 8, const char* peer = "cublasSdot") {
        if (!wanted(variant)) return;
        Kokkos::deep_copy(result, std::nanf(""));
        fn(0);
        space.fence();
        const double err = check ? check() : nan;
        if (check && !(err < tol)) {
          std::fprintf(stderr, "CHECK FAILED: %s at %s: relative error %.3g (fp64 mean %.9g); not timed\n",
                       variant.c_str(), shape.name.c_str(), err, ref);
          ++failed;
          return;
        }
        const auto paired = peers.find(peer);
        const auto* peer_fn = paired != peers.end() && variant.rfind(peer, 0) != 0 ? &paired->second : nullptr;
        rows.push_back({shape.name, mode, variant, n, time_call(space, fn, reps, ncopies, n, peer_fn), err,
                        bytes_per_element, peer});
      };
      const auto mean_err = [&] { return std::abs(read() - ref) / ref; };
      const auto sum_err = [&] { return std::abs(read() - ref * n) / (ref * n); };
      const auto grad_err = [&] { return std::abs(sum_of(grad[0]) - grad_ref) / std::abs(grad_ref); };

      add(
          "softmargin auto", [&](int k) { softmargin::loss(space, x[k], y[k], result); }, mean_err, 1e-5);
      add(
          "softmargin auto (sum)", [&](int k) { softmargin::loss(space, x[k], y[k], result, Reduction::Sum); }, sum_err,
          1e-5);
      add(
          "softmargin auto (none)", [&](int k) { softmargin::loss(space, x[k], y[k], out[k], Reduction::None); },
          [&] { return std::abs(sum_of(out[0]) - ref * n) / (ref * n); }, 1e-5, 12, "cublasSaxpy");
      if (softmargin::Impl::Backend<Exec>::has_native)
        add(
            "softmargin native",
            [&](int k) { softmargin::loss(space, x[k], y[k], result, Reduction::Mean, Algorithm::Native); }, mean_err,
            1e-5);
      add(
          "softmargin team_scratch",
          [&](int k) { softmargin::loss(space, x[k], y[k], result, Reduction::Mean, Algorithm::TeamScratch); },
          mean_err, 1e-5);
      add(
          "softmargin range_reduce",
          [&](int k) { softmargin::loss(space, x[k], y[k], result, Reduction::Mean, Algorithm::RangeReduce); },
          mean_err, 1e-5);
      // Gradient passes: 12 bytes per element (x, y read; grad_x written), against cublasSaxpy.
      add(
          "softmargin loss_and_grad", [&](int k) { softmargin::loss_and_grad(space, x[k], y[k], result, grad[k]); },
          [&] { return std::max(mean_err(), grad_err()); }, 1e-4, 12, "cublasSaxpy");
      add(
          "softmargin backward", [&](int k) { softmargin::backward(space, x[k], y[k], 1.0f, grad[k]); }, grad_err, 1e-4,
          12, "cublasSaxpy");
      // The op-by-op chain (float accumulation, no stable softplus: right on these inputs, not in general).
      add(
          "unfused Kokkos chain (PyTorch's ops)",
          [&](int k) { unfused_chain(space, flat(x[k]), flat(y[k]), temp, unfused_mean, result); }, mean_err, 1e-5);
#if !defined(KOKKOS_ENABLE_CUDA) && !defined(KOKKOS_ENABLE_HIP) && !defined(KOKKOS_ENABLE_SYCL)
      // Host builds: the library on one thread, and the plain loop a host code would write.
#if defined(KOKKOS_ENABLE_SERIAL)
      if (!std::is_same_v<Exec, Kokkos::Serial>)
        add(
            "softmargin auto (Kokkos::Serial)", [&](int k) { softmargin::loss(Kokkos::Serial(), x[k], y[k], result); },
            mean_err, 1e-5);
#endif
      {
        // One thread, libm's exp and log1p, stable form, double sum.
        add(
            "serial loop (libm)",
            [&](int k) {
              const float* xp = x[k].data();
              const float* yp = y[k].data();
              double s = 0;
              for (std::size_t i = 0; i < n; ++i) {
                const float z = -yp[i] * xp[i];
                s += std::max(z, 0.0f) + std::log1p(std::exp(-std::abs(z)));
              }
              result() = static_cast<float>(s / static_cast<double>(n));
            },
            mean_err, 1e-5);
      }
#endif
#if defined(KOKKOS_ENABLE_CUDA)
      {
        add("cublasSaxpy (12 B/elem)", peers["cublasSaxpy"], nullptr, 0, 12, "cublasSaxpy");
        add("cublasSdot (same bytes)", peers["cublasSdot"], nullptr, 0);  // not the same function: no error column
        // CUB TransformReduce with the same loss, into a float sum, over a counting iterator.
        std::size_t temp_bytes = 0;
        thrust::counting_iterator<std::int64_t> idx(0);
        cub::DeviceReduce::TransformReduce(nullptr, temp_bytes, idx, result.data(), static_cast<std::int64_t>(n),
                                           cuda::std::plus<float>{}, LossAt{x[0].data(), y[0].data()}, 0.0f,
                                           space.cuda_stream());
        Kokkos::View<char*, Mem> cub_temp("cub_temp", temp_bytes);
        add(
            "CUB TransformReduce (sum)",
            [&](int k) {
              cub::DeviceReduce::TransformReduce(cub_temp.data(), temp_bytes, idx, result.data(),
                                                 static_cast<std::int64_t>(n), cuda::std::plus<float>{},
                                                 LossAt{x[k].data(), y[k].data()}, 0.0f, space.cuda_stream());
            },
            sum_err, 1e-4);
      }
#endif
    }
  }

  // Table: ratio to the peer per size and mode.
  std::printf("%-10s %-4s %-37s %12s %12s %10s %8s %8s %-12s %10s %8s\n", "size", "mode", "variant", "isolated_us",
              "pipelined_us", "GB/s(pipe)", "x_iso", "x_pipe", "peer", "rel_err", "host_us");
  std::ofstream csv_out;
  if (!csv.empty()) {
    csv_out.open(csv);
    csv_out << "size,n,mode,variant,isolated_us,pipelined_us,gbps_pipelined,ratio_isolated,ratio_pipelined,peer,"
               "rel_err,host_us,peer_isolated_us_paired,peer_pipelined_us_paired\n";
  }
  for (const Row& r : rows) {
    // Ratio of time to the peer that moves the same bytes, in the same run and mode (NaN without CUDA).
    Timing peer{nan, nan, nan};
    for (const Row& s : rows)
      if (s.size == r.size && s.mode == r.mode && s.variant.rfind(r.peer, 0) == 0) peer = s.t;
    const double gbps = r.bytes_per_element * static_cast<double>(r.n) / (r.t.pipelined_us * 1e3);
    // Against the peer's calls and batches interleaved with this variant's where there are some (same clocks).
    const double peer_iso = std::isnan(r.t.peer_isolated_us) ? peer.isolated_us : r.t.peer_isolated_us;
    const double peer_pipe = std::isnan(r.t.peer_pipelined_us) ? peer.pipelined_us : r.t.peer_pipelined_us;
    std::printf("%-10s %-4s %-37s %12.2f %12.2f %10.0f %8.3f %8.3f %-12s %10.2e %8.2f\n", r.size.c_str(),
                r.mode.c_str(), r.variant.c_str(), r.t.isolated_us, r.t.pipelined_us, gbps,
                r.t.isolated_us / peer_iso, r.t.pipelined_us / peer_pipe, r.peer.c_str(), r.rel_err,
                r.t.host_us);
    if (csv_out) {
      csv_out << r.size << ',' << r.n << ',' << r.mode << ',' << r.variant << ',' << r.t.isolated_us << ','
              << r.t.pipelined_us << ',' << gbps << ',' << r.t.isolated_us / peer_iso << ','
              << r.t.pipelined_us / peer_pipe << ',' << r.peer << ',' << r.rel_err << ',' << r.t.host_us << ','
              << r.t.peer_isolated_us << ',' << r.t.peer_pipelined_us << '\n';
    }
  }
#if defined(KOKKOS_ENABLE_CUDA)
  cublasDestroy(blas);
#endif
  if (failed) std::fprintf(stderr, "%d variant(s) failed their check\n", failed);
  return failed ? 1 : 0;
}

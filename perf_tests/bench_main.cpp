// softmargin_bench: every SoftMargin variant and its peers on Google Benchmark.
//
//   softmargin_bench [--sizes=2^10:2^28,512x4096] [--peers=cublas|kokkosblas] [--batch=N] [--iterations=N]
//                    [--stream=own] [--separate] [--seed=S] [--pdl=0|1] [--blocks-per-sm=N]
//                    [Google Benchmark flags] [Kokkos flags]
//
// --pdl and --blocks-per-sm set the library's LaunchOptions (programmatic dependent launch of the native CUDA
// kernels; grid blocks per multiprocessor, 0 for the tuned value) for the whole run.
//
// Rows are named VARIANT/L2/TIMING/rows:R/cols:C, e.g. softmargin/forward_mean/native/hot/pipelined/rows:512/cols:4096:
//   L2      hot: one buffer set, reused; cold (sizes whose x and y fit in the last-level cache): a rotation through
//           buffer sets covering four times that cache, so that every call reads from memory;
//   TIMING  isolated: each iteration is one call between fences; pipelined: a batch of back-to-back calls between two
//           timestamps (--batch; default 100 on a device up to 2^24 elements, else 10).
// Counters, per call whatever the batch, medians over the iterations: us, GB/s (compulsory traffic: x and y read, 8
// bytes per element; 12 when a full-size output is written too), rel_err (the first call against fp64; a variant
// that fails is not timed and the exit status is 1), and against the peer moving the same bytes (a dot, or an axpy:
// --peers picks cuBLAS or KokkosBlas), timed alternately with the variant in the same iterations: peer_us and x_peer
// (us over peer_us). Google Benchmark's own Time column is the mean time of an iteration (a call, or a batch).
// Select rows with --benchmark_filter (a regex), write JSON with --benchmark_out=FILE --benchmark_out_format=json
// (plot_perf.sh reads it), repeat with --benchmark_repetitions=K. --iterations=N runs every row for exactly N
// iterations instead of Google Benchmark's --benchmark_min_time, whose estimate reruns each row from one iteration up.
//
// Hand-written here: the size list (Google Benchmark's ranges step by a factor and have no RxC shapes), a fixed
// iteration count (Google Benchmark 1.7, Debian's, sets one only from code) and the switches of the measurement
// itself (the peers, the batch, the stream, the allocation, the seed, the launch options).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>

#include "bench_common.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace bench {
namespace {

std::optional<Exec>& instance() {
  static std::optional<Exec> e;
  return e;
}
std::vector<Variant>& registry() {
  static std::vector<Variant> v;
  return v;
}

/// "2^k", "RxC", "N", and "2^a:2^b" (every power of two from a to b), comma-separated.
std::vector<Shape> parse_sizes(const std::string& list) {
  std::vector<Shape> out;
  std::stringstream ss(list);
  for (std::string tok; std::getline(ss, tok, ',');) {
    const auto colon = tok.find(':'), x = tok.find('x');
    if (tok.rfind("2^", 0) == 0 && colon != std::string::npos && tok.compare(colon + 1, 2, "2^") == 0) {
      for (int k = std::stoi(tok.substr(2, colon - 2)), b = std::stoi(tok.substr(colon + 3)); k <= b; ++k)
        out.push_back({1, Index(1) << k});
    } else if (tok.rfind("2^", 0) == 0) {
      out.push_back({1, Index(1) << std::stoi(tok.substr(2))});
    } else if (x != std::string::npos) {
      out.push_back({std::stoll(tok.substr(0, x)), std::stoll(tok.substr(x + 1))});
    } else {
      out.push_back({1, std::stoll(tok)});
    }
    if (out.empty() || out.back().size() <= 0) throw std::invalid_argument("--sizes: bad size '" + tok + "'");
  }
  return out;
}

/// Takes this program's flags out of argv (Google Benchmark rejects flags it does not know).
bool parse_flags(int& argc, char** argv) {
  Options& o = options();
  std::string sizes = kHostExec ? "2^10:2^24,512x4096" : "2^10:2^28,512x4096";
  o.peers = kHostExec ? "kokkosblas" : "cublas";
  o.seed = std::random_device()();
  softmargin::LaunchOptions launch = softmargin::launch_options();
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&](const char* flag) {
      const std::string f = std::string(flag) + "=";
      return a.rfind(f, 0) == 0 ? std::optional<std::string>(a.substr(f.size())) : std::nullopt;
    };
    if (auto v = value("--sizes"))
      sizes = *v;
    else if (auto v = value("--peers"))
      o.peers = *v;
    else if (auto v = value("--batch"))
      o.batch = std::stoi(*v);
    else if (auto v = value("--iterations"))
      o.iterations = std::stoi(*v);
    else if (auto v = value("--seed"))
      o.seed = std::stoull(*v);
    else if (auto v = value("--pdl"))
      launch.programmatic_dependent_launch = std::stoi(*v) != 0;
    else if (auto v = value("--blocks-per-sm"))
      launch.blocks_per_sm = std::stoi(*v);
    else if (a == "--stream=own")
      o.own_stream = true;
    else if (a == "--separate")
      o.separate = true;
    else
      argv[kept++] = argv[i];
  }
  argc = kept;
  if (o.batch < 0 || o.iterations < 0) {
    std::fprintf(stderr, "--batch and --iterations: positive counts (0: the default)\n");
    return false;
  }
  if (o.peers != "cublas" && o.peers != "kokkosblas") {
    std::fprintf(stderr, "--peers: cublas or kokkosblas, not %s\n", o.peers.c_str());
    return false;
  }
  o.sizes = parse_sizes(sizes);
  softmargin::set_launch_options(launch);
  return true;
}

void add_context() {
  const Options& o = options();
  benchmark::AddCustomContext("softmargin", SOFTMARGIN_VERSION);
  benchmark::AddCustomContext("kokkos", std::to_string(KOKKOS_VERSION_MAJOR) + "." +
                                            std::to_string(KOKKOS_VERSION_MINOR) + "." +
                                            std::to_string(KOKKOS_VERSION_PATCH));
  benchmark::AddCustomContext("execution_space", Exec::name());
  benchmark::AddCustomContext("concurrency", std::to_string(space().concurrency()));
  benchmark::AddCustomContext("last_level_cache_bytes", std::to_string(cache_bytes()));
  benchmark::AddCustomContext("peers", o.peers + (find_variant(peer_name(PeerKind::Dot)) ? "" : " (not built)"));
  benchmark::AddCustomContext("buffers", o.separate ? "one allocation per copy" : "one allocation per buffer");
  benchmark::AddCustomContext("seed", std::to_string(o.seed));
  const softmargin::LaunchOptions launch = softmargin::launch_options();
  benchmark::AddCustomContext("launch_options", std::string("programmatic dependent launch ") +
                                                    (launch.programmatic_dependent_launch ? "on" : "off") +
                                                    ", blocks per SM " + std::to_string(launch.blocks_per_sm));
#if defined(KOKKOS_ENABLE_CUDA)
  const cudaDeviceProp& p = space().cuda_device_prop();
  benchmark::AddCustomContext("device", std::string(p.name) + ", " + std::to_string(p.multiProcessorCount) + " SMs");
  benchmark::AddCustomContext("stream", o.own_stream ? "own (non-blocking)" : "Kokkos' default instance");
#endif
}

/// Every variant at every size, in each L2 mode and timing. Sizes outermost and cold before hot, so that each size's
/// buffers are allocated once (hot rows use the first of the cold rows' sets) and only when a row runs.
void register_all() {
  const auto add = [](const Variant& v, const std::string& mode, int copies, const Shape& s) {
    for (const bool pipelined : {false, true}) {
      auto* b = benchmark::RegisterBenchmark(
          (v.name + "/" + mode + (pipelined ? "/pipelined" : "/isolated")).c_str(),
          [&v, s, copies, pipelined](benchmark::State& st) { run_timed(st, v, s, copies, pipelined); });
      b->UseManualTime()->Unit(benchmark::kMicrosecond);
      if (options().iterations > 0) b->Iterations(options().iterations);
      if (v.bytes_per_element > 0) b->Args({s.rows, s.cols})->ArgNames({"rows", "cols"});
    }
  };
  for (const Variant& v : variants())
    if (v.bytes_per_element == 0) add(v, "hot", 1, {0, 0});
  const std::size_t llc = cache_bytes();
  for (const Shape& s : options().sizes) {
    const std::size_t bytes = 8 * static_cast<std::size_t>(s.size());
    if (llc > 0 && bytes <= llc)
      for (const Variant& v : variants())
        if (v.bytes_per_element > 0) add(v, "cold", static_cast<int>((4 * llc + bytes - 1) / bytes), s);
    for (const Variant& v : variants())
      if (v.bytes_per_element > 0) add(v, "hot", 1, s);
  }
}

}  // namespace

Options& options() {
  static Options o;
  return o;
}
const Exec& space() { return *instance(); }
void add_variant(Variant v) { registry().push_back(std::move(v)); }
const std::vector<Variant>& variants() { return registry(); }
void release_variants() { registry().clear(); }
const Variant* find_variant(const std::string& name) {
  for (const Variant& v : registry())
    if (v.name == name) return &v;
  return nullptr;
}
std::string peer_name(PeerKind kind) {
  const bool cublas = options().peers == "cublas";
  switch (kind) {
    case PeerKind::Dot:
      return cublas ? "peer/cublasSdot" : "peer/KokkosBlas_dot";
    case PeerKind::Axpy:
      return cublas ? "peer/cublasSaxpy" : "peer/KokkosBlas_axpy";
    case PeerKind::None:
      break;
  }
  return "";
}

}  // namespace bench

int main(int argc, char* argv[]) {
  using namespace bench;
  Kokkos::ScopeGuard guard(argc, argv);
  try {
    if (!parse_flags(argc, argv)) return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
#if defined(KOKKOS_ENABLE_CUDA)
  cudaStream_t stream = nullptr;  // --stream=own: destroyed after the instance that refers to it
  if (options().own_stream) cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  instance() = options().own_stream ? Exec(stream) : Exec();
#else
  if (options().own_stream) {
    std::fprintf(stderr, "--stream=own: CUDA builds only\n");
    return 2;
  }
  instance() = Exec();
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

  add_launch_variants();
  add_softmargin_variants();
  add_half_variants();
  add_bce_variants();
  add_family_variants();
  add_unfused_variants();
  add_host_variants();
#if defined(KOKKOS_ENABLE_CUDA)
  add_cuda_variants();
#endif
#if defined(SOFTMARGIN_BENCH_KOKKOSBLAS)
  add_kokkosblas_variants();
#else
  std::fprintf(stderr, "# built without Kokkos Kernels: no KokkosBlas rows\n");
#endif
  add_context();
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  release_variants();
  release_buffers();
  instance().reset();
#if defined(KOKKOS_ENABLE_CUDA)
  if (stream) cudaStreamDestroy(stream);
#endif
  if (failed_checks()) std::fprintf(stderr, "%d variant(s) failed their check\n", failed_checks());
  return failed_checks() ? 1 : 0;
}

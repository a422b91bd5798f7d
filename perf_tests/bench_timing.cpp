// Manual timing of a variant, its calls alternating with its peer's so that both see the same clocks and host, and
// the counters of a row. Timestamps are CUDA events on the GPU and fenced host clocks elsewhere.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <limits>
#include <map>
#include <vector>

#include "bench_common.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace bench {
namespace {

/// Seconds from an idle instance to the end of the work that body() enqueues on space().
class Stopwatch {
 public:
#if defined(KOKKOS_ENABLE_CUDA)
  Stopwatch() {
    cudaEventCreate(&a_);
    cudaEventCreate(&b_);
  }
  Stopwatch(const Stopwatch&) = delete;
  Stopwatch& operator=(const Stopwatch&) = delete;
  template <class Body>
  double seconds(Body&& body) {
    space().fence();
    cudaEventRecord(a_, space().cuda_stream());
    body();
    cudaEventRecord(b_, space().cuda_stream());
    cudaEventSynchronize(b_);
    float ms = 0;
    cudaEventElapsedTime(&ms, a_, b_);
    return 1e-3 * ms;
  }

 private:
  cudaEvent_t a_, b_;
#else
  template <class Body>
  double seconds(Body&& body) {
    space().fence();
    Kokkos::Timer t;
    body();
    space().fence();
    return t.seconds();
  }
#endif
};

/// The buffer sets in turn; the peer starts half a cycle away, so that neither reads what the other just cached.
struct Rotation {
  int copies, next;
  int operator()() {
    const int k = next;
    next = next + 1 == copies ? 0 : next + 1;
    return k;
  }
};

std::map<std::string, double>& checked() {  // relative error of each variant and shape, checked once
  static std::map<std::string, double> errors;
  return errors;
}
int failures = 0;

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

/// The variant's error on this shape, checked on first use (a failure is reported once and counted).
double checked_error(const Variant& v, const Buffers& b) {
  const std::string key = v.name + "/" + std::to_string(b.shape.rows) + "x" + std::to_string(b.shape.cols);
  auto it = checked().find(key);
  if (it != checked().end()) return it->second;
  double err;
  try {
    err = check_error(v, b);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "CHECK FAILED: %s threw: %s\n", key.c_str(), e.what());
    err = std::numeric_limits<double>::infinity();
  }
  if (!(err < v.tol)) {
    std::fprintf(stderr, "CHECK FAILED: %s: relative error %.3g against fp64 (tolerance %.1g); not timed\n",
                 key.c_str(), err, v.tol);
    ++failures;
  }
  return checked()[key] = err;
}

}  // namespace

int failed_checks() { return failures; }

void run_timed(benchmark::State& state, const Variant& v, const Shape& shape, int copies, bool pipelined) {
  static Stopwatch watch;
  static Kokkos::Timer idle;  // since the last timed call: clocks drop on an idle GPU
  static const Buffers no_buffers;
  const bool sized = v.bytes_per_element > 0;
  const Buffers& b = sized ? buffers(shape, copies) : no_buffers;
  const Index n = shape.size();
  double err = 0;
  if (sized && !((err = checked_error(v, b)) < v.tol)) {
    state.SkipWithError("failed its check against fp64 (see stderr)");
    return;
  }
  const Variant* peer = nullptr;
  if (sized && v.peer != PeerKind::None && peer_name(v.peer) != v.name) {
    peer = find_variant(peer_name(v.peer));
    if (peer && !(checked_error(*peer, b) < peer->tol)) peer = nullptr;
  }
  // Default batch: 100 calls on a device up to 2^24 elements, else 10 (a host call is synchronous and long anyway).
  const int batch = !pipelined                          ? 1
                    : options().batch > 0               ? options().batch
                    : kHostExec || n > (Index(1) << 24) ? 10
                                                        : 100;
  Rotation mine{copies, 0}, theirs{copies, copies / 2};

  // Warm-up: a few calls (through the copies, up to 1000), and 20 ms of them after an idle spell, so that the
  // GPU's clocks are up again after host-side setup (an idle H200 drops to a few hundred MHz).
  const bool after_idle = idle.seconds() > 0.01;
  Kokkos::Timer warm;
  for (int i = 0; i < std::max(5, std::min(copies, 1000)) || (after_idle && warm.seconds() < 0.02); ++i) {
    if (peer && i < 5) peer->call(b, theirs());
    v.call(b, mine());
    if (i % 16 == 15) space().fence();
  }

  // Per iteration, the time of one call (a batch's time over its length), the peer's, and the caller's.
  std::vector<double> t, t_peer, host;
  for (auto _ : state) {
    if (peer)
      t_peer.push_back(watch.seconds([&] {
        for (int i = 0; i < batch; ++i) peer->call(b, theirs());
      }) / batch);
    double caller = 0;
    const double s = watch.seconds([&] {
      Kokkos::Timer timer;
      for (int i = 0; i < batch; ++i) v.call(b, mine());
      caller = timer.seconds();
    });
    state.SetIterationTime(s);
    t.push_back(s / batch);
    host.push_back(caller / batch);
  }
  idle.reset();

  // Medians over the iterations (one slow call of many moves no counter), per call whatever the batch: us, GB/s of
  // compulsory traffic, and the peer's time from the same iterations.
  auto& c = state.counters;
  const double us = 1e6 * median(t);
  c["us"] = us;
  if (pipelined) c["host_us"] = 1e6 * median(host);  // the caller's time: a launch's host cost, or the whole call
  if (sized) {
    c["GB/s"] = 1e-3 * v.bytes_per_element * static_cast<double>(n) / us;
    if (v.check != Check::None) c["rel_err"] = err;
  }
  if (peer) {
    const double peer_us = 1e6 * median(t_peer);
    c["peer_us"] = peer_us;
    c["x_peer"] = us / peer_us;
  }
  std::string label = peer ? "vs " + peer->name : "";
  if (pipelined) label += (label.empty() ? "" : ", ") + std::string("batch ") + std::to_string(batch);
  state.SetLabel(label);
}

}  // namespace bench

// The benchmark's shared pieces: options, buffers with their fp64 references, and the variants (library calls and
// peers) that bench_main.cpp registers with Google Benchmark for every size, L2 mode and timing.
#ifndef SOFTMARGIN_BENCH_COMMON_HPP
#define SOFTMARGIN_BENCH_COMMON_HPP

#include <SoftMargin.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

namespace benchmark {
class State;
}

namespace bench {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
using Index = std::int64_t;
/// One copy of an input or output: a row-major matrix over a slice of an allocation holding several copies.
using Matrix = Kokkos::View<float**, Kokkos::LayoutRight, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using Vector = Kokkos::View<float*, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using Flat = Kokkos::View<float*, Mem>;
inline constexpr bool kHostExec = Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible;

struct Shape {
  Index rows, cols;
  Index size() const { return rows * cols; }
};

/// The program's own flags (bench_main.cpp); everything else is Google Benchmark's or Kokkos'.
struct Options {
  std::vector<Shape> sizes;
  std::string peers;        ///< "cublas" or "kokkosblas": which library's dot and axpy the ratios are taken to
  int batch = 0;            ///< calls per pipelined batch (0: 100 on a device up to 2^24 elements, else 10)
  int iterations = 0;       ///< iterations of every row (0: Google Benchmark's --benchmark_min_time decides)
  bool separate = false;    ///< one allocation per copy of a buffer (default: one per buffer, holding every copy)
  bool own_stream = false;  ///< CUDA: run everything on a non-blocking stream of the program's own
  std::uint64_t seed = 0;   ///< of the inputs (default: a fresh one per run)
};
Options& options();
/// The instance every variant runs on (Kokkos' default one, or --stream=own's).
const Exec& space();
/// Bytes of the last-level cache: L2 on CUDA, the largest CPU cache elsewhere (0 if unknown).
std::size_t cache_bytes();

/// x ~ U(-3, 3), y = +-1 (copy 0 and every other copy alike), outputs, and fp64 references over copy 0 (SoftMarginLoss
/// of x and y; BCEWithLogitsLoss of x and the targets t = (y + 1) / 2).
struct Buffers {
  Shape shape{0, 0};
  int copies = 0;
  std::vector<Flat> owners;
  std::vector<Matrix> x, y, grad, out;
  Kokkos::View<float, Mem> result;  ///< a reduced loss, or a peer's dot
  double sum = 0;                   ///< of the losses
  double grad_sum = 0, dot = 0, abs_dot = 0, abs_x = 0;
  double bce_sum = 0;    ///< of the BCEWithLogits losses
  std::uint64_t id = 0;  ///< distinct for every set of buffers the program makes
  /// Inputs other variants derive from these (16-bit copies, ...), made on first use and freed with the buffers.
  mutable std::map<std::string, std::shared_ptr<void>> derived;
};
/// The buffers of `shape` with at least `copies` sets of them; one set of buffers lives at a time.
const Buffers& buffers(const Shape& shape, int copies);
Vector flat(const Matrix& m);

/// Inputs of type D derived from b, made once per set of buffers by make(b) and kept in b.derived; after the first
/// call on b, a comparison (the timed calls look them up every time).
template <class D, class Make>
const D& derived(const Buffers& b, Make make) {
  static std::uint64_t cached_id = 0;
  static const D* cached = nullptr;
  if (b.id == cached_id) return *cached;
  auto& slot = b.derived[typeid(D).name()];
  if (!slot) slot = std::make_shared<D>(make(b));
  cached_id = b.id;
  cached = static_cast<const D*>(slot.get());
  return *cached;
}

/// How a variant's first call is checked against the fp64 references (relative error).
enum class Check {
  None,      ///< calibration rows
  Mean,      ///< result vs the mean loss
  Sum,       ///< result vs the summed loss
  Losses,    ///< out vs every fp64 loss (sum of absolute differences over sum of losses)
  Grad,      ///< grad vs every fp64 gradient of the mean (grad_loss 1)
  Fused,     ///< Mean and Grad
  Dot,       ///< result vs x . y, relative to sum |x y|
  Axpy,      ///< grad (zeroed first) vs x
  BceMean,   ///< result vs the mean BCEWithLogits loss (targets t = (y + 1) / 2)
  BceGrad,   ///< grad vs every fp64 BCEWithLogits gradient of the mean (grad_loss 1)
  BceFused,  ///< BceMean and BceGrad
  Own        ///< the variant's own_check (inputs of their own, e.g. 16-bit)
};
/// The peer moving the same compulsory bytes: a dot (x, y read: 8 bytes per element), an axpy (12: x, y read, one
/// full-size output written).
enum class PeerKind { None, Dot, Axpy };

using Call = std::function<void(const Buffers&, int copy)>;
struct Variant {
  std::string name;  ///< "softmargin/forward_mean/native", "peer/cublasSdot", ...
  Call call;
  Check check;
  int bytes_per_element;  ///< compulsory traffic (0: calibration, no size)
  PeerKind peer;
  double tol = 1e-5;
  /// Check::Own: calls the variant on copy 0 and returns its relative error.
  std::function<double(const Variant&, const Buffers&)> own_check = nullptr;
};
void add_variant(Variant v);
const std::vector<Variant>& variants();
const Variant* find_variant(const std::string& name);
/// The variant name of the peer of this kind under --peers ("" when none is built).
std::string peer_name(PeerKind kind);

/// The variants of each file; bench_main.cpp calls those that are built.
void add_softmargin_variants();
void add_unfused_variants();
void add_host_variants();
void add_launch_variants();
void add_cuda_variants();
void add_kokkosblas_variants();
void add_half_variants();
void add_bce_variants();
void add_family_variants();

/// Relative error of v's first call on copy 0 (Check of v), run before it is timed.
double check_error(const Variant& v, const Buffers& b);

/// Times v on `shape` (bench_timing.cpp): isolated calls (fenced, one by one) or pipelined batches (back to back),
/// rotating through `copies` buffer sets, alternating with the calls of v's peer; sets the iteration times
/// (manual) and the counters.
void run_timed(benchmark::State& state, const Variant& v, const Shape& shape, int copies, bool pipelined);
/// How many variants failed their check (the exit status is 1 if any did).
int failed_checks();

/// Frees the buffers and the variants (their Views and handles), before Kokkos is finalized.
void release_buffers();
void release_variants();

}  // namespace bench

#endif

// The reference problem (x, y fp32 512x4096, y in {-1, +1}, mean) spread over MPI ranks.
//
//   mpirun -np 4 softmargin_mpi_reference_problem            global loss against the one-process loss (rank 0)
//   mpirun -np 2 softmargin_mpi_reference_problem --time [--sizes 512x4096,2^28] [--reps 20]
//                                                            cost of the global calls against the local one
//   --transport auto|staged|direct                           how the partial sums travel (default auto)
//
// Every rank generates the same inputs from one seed (drawn by rank 0) and takes its rows: an uneven split, rank r
// holding a share proportional to r + 1. With --time the split is even, and each rank generates only its own slice
// (element i of the global problem is a hash of i), so that 2^28 elements fit whatever the rank count.
#include <mpi.h>

#include <SoftMargin_MPI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <string>
#include <vector>

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;

int rank_of(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}
int size_of(MPI_Comm comm) {
  int s = 1;
  MPI_Comm_size(comm, &s);
  return s;
}

/// First of rank r's units (rows or elements) out of n: uneven, rank r holding a share proportional to r + 1, or
/// even.
std::size_t first_unit(std::size_t n, int r, int ranks, bool uneven = true) {
  if (!uneven) return static_cast<std::size_t>(static_cast<double>(n) * r / ranks);
  const std::size_t total = static_cast<std::size_t>(ranks) * (ranks + 1) / 2;
  const std::size_t before = static_cast<std::size_t>(r) * (r + 1) / 2;
  return static_cast<std::size_t>(static_cast<double>(n) * before / total);
}

/// The reference problem: the global loss on every rank; rank 0 prints it with the one-process loss.
int reference(MPI_Comm comm, const softmargin::mpi::Options& options) {
  constexpr std::size_t rows = 512, cols = 4096;
  const int rank = rank_of(comm), ranks = size_of(comm);
  std::uint64_t seed = std::random_device{}();
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, comm);
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::bernoulli_distribution coin(0.5);
  Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace> hx("hx", rows, cols), hy("hy", rows, cols);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) hx(i, j) = normal(gen), hy(i, j) = coin(gen) ? 1.0f : -1.0f;

  const std::size_t begin = first_unit(rows, rank, ranks), end = first_unit(rows, rank + 1, ranks);
  Kokkos::View<float**, Kokkos::LayoutRight, Mem> x("x", end - begin, cols), y("y", end - begin, cols);
  const auto slice = std::make_pair(begin, end);
  Kokkos::deep_copy(x, Kokkos::subview(hx, slice, Kokkos::ALL));
  Kokkos::deep_copy(y, Kokkos::subview(hy, slice, Kokkos::ALL));

  const Exec space;
  const softmargin::mpi::Communicator with_options(comm, options);
  Kokkos::View<float, Mem> result("result");
  softmargin::mpi::loss(with_options, space, x, y, result);  // mean over all 512 x 4096 elements
  float global = 0;
  Kokkos::deep_copy(global, result);
  Kokkos::View<float**, Kokkos::LayoutRight, Mem> grad("grad", end - begin, cols);
  const float fused = softmargin::mpi::loss_and_grad(with_options, space, x, y, grad);

  std::vector<unsigned long> held(ranks);
  const unsigned long mine = end - begin;
  MPI_Gather(&mine, 1, MPI_UNSIGNED_LONG, held.data(), 1, MPI_UNSIGNED_LONG, 0, comm);
  if (rank != 0) return 0;
  auto fx = Kokkos::create_mirror_view_and_copy(Mem(), hx);
  auto fy = Kokkos::create_mirror_view_and_copy(Mem(), hy);
  const float one = softmargin::loss(space, fx, fy);
  const double rel = std::abs(static_cast<double>(global) - one) / one;
  std::printf("SoftMarginLoss(mean) of x, y fp32 %zux%zu over %d MPI ranks on %s\n", rows, cols, ranks, Exec::name());
  std::printf("  rows per rank     =");
  for (unsigned long h : held) std::printf(" %lu", h);
  std::printf("\n  transport         = %s (CUDA-aware MPI: %s)\n",
              to_string(softmargin::mpi::transport(space, options)), softmargin::mpi::cuda_aware() ? "yes" : "no");
  std::printf("  global loss       = %.9g\n", global);
  std::printf("  fused global loss = %.9g\n", fused);
  std::printf("  one-process loss  = %.9g\n", one);
  std::printf("  relative diff     = %.2e (%s)\n", rel, rel <= 1e-6 ? "agrees" : "DISAGREES");
  return rel <= 1e-6 && std::abs(fused - global) <= 1e-6f * global ? 0 : 1;
}

/// x normal (Box-Muller of two hashes of the global index), y = +-1 (a third hash): the same element i whatever
/// the rank that holds it.
struct Generate {
  Kokkos::View<float*, Mem> x, y;
  std::uint64_t first;
  KOKKOS_FUNCTION static std::uint64_t mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  KOKKOS_FUNCTION void operator()(std::size_t i) const {
    const std::uint64_t g = 3 * (first + i);
    const double u1 = (static_cast<double>(mix(g) >> 11) + 1.0) * 0x1.0p-53;
    const double u2 = static_cast<double>(mix(g + 1) >> 11) * 0x1.0p-53;
    x(i) = static_cast<float>(Kokkos::sqrt(-2.0 * Kokkos::log(u1)) * Kokkos::cos(6.283185307179586 * u2));
    y(i) = (mix(g + 2) & 1) ? 1.0f : -1.0f;
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Per-call times of the local call, the global forms and MPI_Allreduce alone: each round times a batch of each in
/// turn, every batch started together on every rank (barrier), so that the global forms are compared with the local
/// call of the same round (paired differences: the cost the MPI layer adds, drift and other load cancelled).
int timing(MPI_Comm comm, const softmargin::mpi::Options& options, const std::vector<std::size_t>& sizes, int reps) {
  const int rank = rank_of(comm), ranks = size_of(comm);
  const Exec space;
  const softmargin::mpi::Transport transport = softmargin::mpi::transport(space, options);  // throws on every rank
  const softmargin::mpi::Communicator with_options(comm, options);
  constexpr int kinds = 5;
  const char* names[kinds] = {"local", "global", "global_result", "iloss_wait", "allreduce"};
  if (rank == 0) {
    std::printf(
        "# %d ranks on %s, transport %s, even split; microseconds per call, median of %d rounds (rank 0 | "
        "slowest rank); (+x): median paired difference to the local call\n%11s %11s",
        ranks, Exec::name(), to_string(transport), reps, "N", "N_local");
    for (const char* name : names) std::printf(" %24s", name);
    std::printf("\n");
  }
  for (std::size_t n : sizes) {
    const std::size_t begin = first_unit(n, rank, ranks, false), local = first_unit(n, rank + 1, ranks, false) - begin;
    Kokkos::View<float*, Mem> x("x", local), y("y", local);
    Kokkos::parallel_for(Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::size_t>>(space, 0, local),
                         Generate{x, y, begin});
    Kokkos::View<float, Mem> result("result");
    space.fence();
    const auto call = [&](int kind) {
      if (kind == 0) {
        (void)softmargin::loss(space, x, y);
      } else if (kind == 1) {
        (void)softmargin::mpi::loss(with_options, space, x, y);
      } else if (kind == 2) {
        softmargin::mpi::loss(with_options, space, x, y, result);
        space.fence();
      } else if (kind == 3) {
        softmargin::mpi::iloss(with_options, space, x, y, result).wait();
        space.fence();
      } else {
        double sums[4] = {1, 2, 0, 0};
        MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_DOUBLE, MPI_SUM, comm);
      }
    };
    for (int k = 0; k < kinds; ++k) call(k);  // warm-up
    // Batches of about 20 ms of local calls, at most 100 calls.
    Kokkos::Timer probe;
    call(0);
    double probe_s = probe.seconds();
    MPI_Allreduce(MPI_IN_PLACE, &probe_s, 1, MPI_DOUBLE, MPI_MAX, comm);
    const int batch = std::clamp(static_cast<int>(0.02 / std::max(probe_s, 1e-9)), 1, 100);
    std::vector<double> t[kinds];
    for (int rep = 0; rep < reps; ++rep) {
      for (int k = 0; k < kinds; ++k) {
        MPI_Barrier(comm);
        Kokkos::Timer timer;
        for (int b = 0; b < batch; ++b) call(k);
        t[k].push_back(timer.seconds() / batch);
      }
    }
    double mine[2 * kinds], slowest[2 * kinds];
    for (int k = 0; k < kinds; ++k) {
      std::vector<double> diff(reps);
      for (int rep = 0; rep < reps; ++rep) diff[rep] = t[k][rep] - t[0][rep];
      mine[k] = median(t[k]);
      mine[kinds + k] = median(diff);
    }
    MPI_Reduce(mine, slowest, 2 * kinds, MPI_DOUBLE, MPI_MAX, 0, comm);
    if (rank == 0) {
      std::printf("%11zu %11zu", n, local);
      for (int k = 0; k < kinds; ++k) {
        char cell[64];
        if (k == 0 || k == 4)
          std::snprintf(cell, sizeof cell, "%.1f | %.1f", 1e6 * mine[k], 1e6 * slowest[k]);
        else
          std::snprintf(cell, sizeof cell, "%.1f (%+.1f) | %.1f", 1e6 * mine[k], 1e6 * mine[kinds + k],
                        1e6 * slowest[k]);
        std::printf(" %24s", cell);
      }
      std::printf("\n");
    }
  }
  return 0;
}

/// "512x4096" or "2^28" or "1000".
std::size_t parse_size(const std::string& s) {
  if (const auto p = s.find('x'); p != std::string::npos)
    return parse_size(s.substr(0, p)) * parse_size(s.substr(p + 1));
  if (const auto p = s.find('^'); p != std::string::npos)
    return static_cast<std::size_t>(std::pow(std::stod(s.substr(0, p)), std::stod(s.substr(p + 1))));
  return std::stoull(s);
}

}  // namespace

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    Kokkos::ScopeGuard guard(argc, argv);
    bool time = false;
    int reps = 20;
    softmargin::mpi::Options options;
    std::vector<std::size_t> sizes{512 * 4096, std::size_t(1) << 28};
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--time")
        time = true;
      else if (a == "--reps" && i + 1 < argc)
        reps = std::atoi(argv[++i]);
      else if (a == "--transport" && i + 1 < argc) {
        const std::string t = argv[++i];
        options.transport = t == "staged"   ? softmargin::mpi::Transport::HostStaged
                            : t == "direct" ? softmargin::mpi::Transport::DeviceDirect
                                            : softmargin::mpi::Transport::Auto;
      } else if (a == "--sizes" && i + 1 < argc) {
        sizes.clear();
        std::string list = argv[++i];
        for (std::size_t p = 0; p != std::string::npos;) {
          const std::size_t q = list.find(',', p);
          sizes.push_back(parse_size(list.substr(p, q == std::string::npos ? q : q - p)));
          p = q == std::string::npos ? q : q + 1;
        }
      }
    }
    try {
      status = time ? timing(MPI_COMM_WORLD, options, sizes, reps) : reference(MPI_COMM_WORLD, options);
    } catch (const std::exception& e) {  // thrown on every rank alike
      if (rank_of(MPI_COMM_WORLD) == 0) std::fprintf(stderr, "%s\n", e.what());
      status = 1;
    }
  }
  MPI_Finalize();
  return status;
}

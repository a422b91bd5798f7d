// MPI test helpers: one global problem generated alike on every rank from a seed that rank 0 draws, each rank's
// slice of it in fresh Views, and comparisons. TEST_EXECSPACE names the backend.
#ifndef SOFTMARGIN_TEST_MPI_UTILS_HPP
#define SOFTMARGIN_TEST_MPI_UTILS_HPP

#include <gtest/gtest.h>
#include <mpi.h>

#include <SoftMargin_MPI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace softmargin::mpi::test {

using Exec = TEST_EXECSPACE;
using Mem = typename Exec::memory_space;

inline int rank(MPI_Comm comm = MPI_COMM_WORLD) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}
inline int size(MPI_Comm comm = MPI_COMM_WORLD) {
  int s = 1;
  MPI_Comm_size(comm, &s);
  return s;
}

/// Whether DeviceDirect runs here: the MPI library may read the execution space's memory (host memory, or CUDA memory
/// with a CUDA-aware MPI).
inline bool direct_runs() { return Impl::host_memory_v<Exec> || cuda_aware(); }

/// The transports a test can run here: Auto and HostStaged always, DeviceDirect where it runs.
inline std::vector<Transport> transports() {
  if (direct_runs()) return {Transport::Auto, Transport::HostStaged, Transport::DeviceDirect};
  return {Transport::Auto, Transport::HostStaged};
}

/// comm with the options that ask for transport t.
inline Communicator with(Transport t, MPI_Comm comm = MPI_COMM_WORLD) { return Communicator(comm, {.transport = t}); }

/// A fresh seed drawn by rank 0 and shared with every rank (printed with failures by the callers' SCOPED_TRACE).
inline std::uint64_t shared_seed() {
  std::uint64_t seed = 0;
  if (rank() == 0) {
    std::random_device rd;
    seed = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return seed;
}

/// Row ranges of the ranks: uneven random cuts; with `empty`, rank 0 and (with 3 ranks or more) the second-last rank
/// hold no rows, and the last rank holds at least one.
inline std::vector<std::size_t> cuts(std::size_t rows, int ranks, std::mt19937_64& gen, bool empty) {
  std::vector<std::size_t> c(ranks + 1, 0);
  std::uniform_int_distribution<std::size_t> pick(0, rows);
  for (int r = 1; r < ranks; ++r) c[r] = pick(gen);
  c[ranks] = rows;
  std::sort(c.begin(), c.end());
  if (empty && ranks > 1) {
    c[1] = 0;
    if (ranks > 2) c[ranks - 1] = c[ranks - 2];
    if (rows > 0)
      for (int r = 1; r < ranks; ++r) c[r] = std::min(c[r], rows - 1);
  }
  return c;
}

/// The global rows x cols problem (x normal, y +-1, row-major on the host and in full Views), and this rank's rows
/// [begin, end) in fresh Views of layout L.
template <class T, class L = Kokkos::LayoutRight>
struct Problem {
  std::size_t rows, cols, begin = 0, end = 0;
  std::vector<T> hx, hy;
  Kokkos::View<T**, Kokkos::LayoutRight, Mem> x, y;
  Kokkos::View<T**, L, Mem> lx, ly;

  Problem(std::uint64_t seed, std::size_t rows_, std::size_t cols_, bool empty = false, MPI_Comm comm = MPI_COMM_WORLD)
      : rows(rows_), cols(cols_), hx(rows_ * cols_), hy(rows_ * cols_) {
    std::mt19937_64 gen(seed);
    std::normal_distribution<double> normal(0.0, 2.0);
    std::bernoulli_distribution coin(0.5);
    for (std::size_t i = 0; i < hx.size(); ++i) {
      hx[i] = static_cast<T>(normal(gen));
      hy[i] = coin(gen) ? T(1) : T(-1);
    }
    const auto c = cuts(rows, size(comm), gen, empty);
    begin = c[rank(comm)];
    end = c[rank(comm) + 1];
    x = decltype(x)("x", rows, cols);
    y = decltype(y)("y", rows, cols);
    lx = decltype(lx)("lx", end - begin, cols);
    ly = decltype(ly)("ly", end - begin, cols);
    fill(x, y, 0, rows);
    fill(lx, ly, begin, end);
  }

  /// The fp64 sum of the losses of rows [b, e).
  double reference_sum(std::size_t b, std::size_t e) const {
    double sum = 0;
    for (std::size_t i = b * cols; i < e * cols; ++i) {
      const double z = static_cast<T>(-hy[i] * hx[i]);
      sum += std::max(z, 0.0) + std::log1p(std::exp(-std::abs(z)));
    }
    return sum;
  }

 private:
  template <class V>
  void fill(const V& vx, const V& vy, std::size_t b, std::size_t e) {
    auto mx = Kokkos::create_mirror_view(vx);
    auto my = Kokkos::create_mirror_view(vy);
    for (std::size_t i = b; i < e; ++i)
      for (std::size_t j = 0; j < cols; ++j) mx(i - b, j) = hx[i * cols + j], my(i - b, j) = hy[i * cols + j];
    Kokkos::deep_copy(vx, mx);
    Kokkos::deep_copy(vy, my);
  }
};

template <class T>
double tolerance() {
  return std::is_same_v<T, float> ? 1e-6 : 1e-12;
}

/// |a - b| <= tol |b|, NaN only against NaN.
inline ::testing::AssertionResult close(double a, double b, double tol) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b) ? ::testing::AssertionSuccess()
                                          : ::testing::AssertionFailure() << a << " vs " << b;
  if (std::abs(a - b) <= tol * std::abs(b)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << a << " vs " << b << ": relative difference " << std::abs(a - b) / std::abs(b)
                                       << " > " << tol;
}

/// Whether every rank holds the same bits of v.
inline bool same_on_every_rank(double v, MPI_Comm comm = MPI_COMM_WORLD) {
  std::vector<double> all(size(comm));
  MPI_Allgather(&v, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, comm);
  for (double a : all)
    if (std::memcmp(&a, &v, sizeof v) != 0) return false;
  return true;
}

/// The value of a rank-0 View.
template <class V>
double value_of(const V& v) {
  typename V::non_const_value_type h{};
  Kokkos::deep_copy(Kokkos::View<typename V::non_const_value_type, Kokkos::HostSpace>(&h), v);
  return static_cast<double>(h);
}

/// The elements of a rank-2 View in row-major order, as double.
template <class V>
std::vector<double> elements_of(const V& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  std::vector<double> out;
  for (std::size_t i = 0; i < h.extent(0); ++i)
    for (std::size_t j = 0; j < h.extent(1); ++j) out.push_back(static_cast<double>(h(i, j)));
  return out;
}

/// f() throws std::invalid_argument on every rank, with rank 0's message, which names `ranks` and `problem`.
template <class F>
void expect_same_error(F&& f, const std::string& ranks, const std::string& problem) {
  std::string message, other = "nothing thrown";
  bool caught = false;
  try {
    f();
  } catch (const std::invalid_argument& e) {
    caught = true, message = e.what();
  } catch (const std::exception& e) {
    other = std::string("another exception: ") + e.what();
  }
  EXPECT_TRUE(caught) << other;
  EXPECT_NE(message.find(ranks), std::string::npos) << message;
  EXPECT_NE(message.find(problem), std::string::npos) << message;
  int length = static_cast<int>(message.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string first = rank() == 0 ? message : std::string(length, ' ');
  MPI_Bcast(first.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
  EXPECT_EQ(message, first);
}

}  // namespace softmargin::mpi::test

#endif

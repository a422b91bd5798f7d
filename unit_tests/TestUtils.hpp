// Test helpers: device views of every layout filled from host data, and the fp64 reference.
#ifndef SOFTMARGIN_TEST_UTILS_HPP
#define SOFTMARGIN_TEST_UTILS_HPP

#include <gtest/gtest.h>

#include <SoftMargin.hpp>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace softmargin::test {

/// Every algorithm a call can ask for.
constexpr Algorithm kAlgorithms[] = {Algorithm::Auto, Algorithm::RangeReduce, Algorithm::TeamScratch,
                                     Algorithm::Native};

/// One combination of value type and the layouts of x, y and (for outputs) out.
template <class T, class LX, class LY, class LO>
struct Case {
  using value_type = T;
  using x_layout = LX;
  using y_layout = LY;
  using out_layout = LO;
};

/// Fresh seed per test, printed with every failure.
inline std::uint64_t fresh_seed() {
  static std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

/// Whether a test that sweeps sizes leaves out those above 2^17 elements: where SOFTMARGIN_TEST_SHORT is set, for runs
/// under emulation (scripts/host_archs.sh runs the aarch64 tests under qemu), where they take minutes.
inline bool size_left_out(const std::size_t n) {
  static const bool short_sizes = std::getenv("SOFTMARGIN_TEST_SHORT") != nullptr;
  return short_sizes && n > (std::size_t(1) << 17);
}

/// The fp64 reference loss, from the same (rounded) inputs. The margin -y x is formed in the inputs' precision, as
/// the library and PyTorch do (a float product beyond float max is inf), and everything after it in fp64.
template <class T>
double ref_loss(T x, T y) {
  const double z = static_cast<T>(-y * x);
  if (std::isnan(z)) return std::numeric_limits<double>::quiet_NaN();
  return std::max(z, 0.0) + std::log1p(std::exp(-std::abs(z)));
}

/// fp64 reference of d loss / d x.
inline double ref_grad(double x, double y) {
  const double z = -y * x;
  if (std::isnan(z)) return std::numeric_limits<double>::quiet_NaN();
  const double e = std::exp(-std::abs(z));
  return -y * ((z >= 0 ? 1.0 : e) / (1.0 + e));
}

/// A view of type ViewType on the test's execution space, made so that its layout really is what it says:
/// LayoutStride views are non-contiguous (every other element of a larger allocation).
template <class ViewType>
struct DeviceData {
  using view_type = ViewType;
  using T = typename ViewType::non_const_value_type;
  static constexpr int rank = static_cast<int>(ViewType::rank());
  static constexpr bool strided = std::is_same_v<typename ViewType::array_layout, Kokkos::LayoutStride>;
  using parent_type =
      std::conditional_t<strided,
                         Kokkos::View<typename softmargin::Impl::add_rank<T, rank + 1>::type, Kokkos::LayoutRight,
                                      typename ViewType::memory_space>,
                         Kokkos::View<typename softmargin::Impl::add_rank<T, rank>::type,
                                      typename ViewType::array_layout, typename ViewType::memory_space>>;

  std::array<std::size_t, rank> shape;
  parent_type parent;
  view_type view;

  explicit DeviceData(std::array<std::size_t, rank> s, const std::string& label = "data") : shape(s) {
    if constexpr (strided) {
      if constexpr (rank == 1) {
        parent = parent_type(label, s[0], 2);
        view = Kokkos::subview(parent, Kokkos::ALL, 1);
      } else {
        parent = parent_type(label, s[0], s[1], 2);
        view = Kokkos::subview(parent, Kokkos::ALL, Kokkos::ALL, 1);
      }
    } else {
      if constexpr (rank == 1)
        parent = parent_type(label, s[0]);
      else
        parent = parent_type(label, s[0], s[1]);
      view = parent;
    }
  }

  std::size_t size() const {
    std::size_t n = 1;
    for (auto e : shape) n *= e;
    return n;
  }

  /// Writes values (row-major logical order) into the view; the rest of the parent is filled with `fill`.
  void upload(const std::vector<T>& values, T fill = T(-7)) {
    auto host = Kokkos::create_mirror_view(parent);
    Kokkos::deep_copy(host, fill);
    for (std::size_t i = 0; i < values.size(); ++i) host_at(host, i) = values[i];
    Kokkos::deep_copy(parent, host);
  }

  /// The view's values in row-major logical order.
  std::vector<T> download() const {
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), parent);
    std::vector<T> out(size());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = host_at(host, i);
    return out;
  }

  /// Every parent element (to check that nothing outside the view, or nothing at all, was written).
  std::vector<T> download_parent() const {
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), parent);
    return std::vector<T>(host.data(), host.data() + host.span());
  }

 private:
  template <class H>
  T& host_at(const H& host, std::size_t i) const {
    const std::size_t last = strided ? 1 : 0;
    if constexpr (rank == 1) {
      if constexpr (strided)
        return host(i, last);
      else
        return host(i);
    } else {
      const std::size_t i0 = i / shape[1], i1 = i % shape[1];
      if constexpr (strided)
        return host(i0, i1, last);
      else
        return host(i0, i1);
    }
  }
};

/// call() throws std::invalid_argument whose message contains needle.
template <class Call>
void expect_invalid_argument(Call&& call, const std::string& needle) {
  try {
    call();
    ADD_FAILURE() << "no exception; expected one mentioning '" << needle << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

/// Every element of out's parent outside the view is still NaN (the poison it was uploaded with): nothing was written
/// outside the view. NaNs the view holds itself are counted out.
template <class Data>
void expect_nothing_written_outside(const Data& out) {
  std::size_t nan_parent = 0, nan_view = 0;
  const auto parent = out.download_parent();
  for (auto v : parent) nan_parent += std::isnan(v) ? 1 : 0;
  for (auto v : out.download()) nan_view += std::isnan(v) ? 1 : 0;
  EXPECT_EQ(nan_parent, parent.size() - out.size() + nan_view) << "wrote outside the view";
}

/// Random inputs: x ~ U(-3, 3), y in {-1, +1}.
template <class T>
void fill_random(std::uint64_t seed, std::vector<T>& x, std::vector<T>& y) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> ux(-3.0, 3.0);
  std::bernoulli_distribution coin(0.5);
  for (auto& v : x) v = static_cast<T>(ux(gen));
  for (auto& v : y) v = coin(gen) ? T(1) : T(-1);
}

/// fp64 reference of a reduction over the (rounded) inputs; Kahan-free but exact enough: terms are summed in long
/// double.
template <class T>
double ref_reduce(const std::vector<T>& x, const std::vector<T>& y, softmargin::Reduction r) {
  long double s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) s += ref_loss(x[i], y[i]);
  if (r == softmargin::Reduction::Mean) return static_cast<double>(s / static_cast<long double>(x.size()));
  return static_cast<double>(s);
}

/// Bound on |got - ref| for one fp element: a few ulps, relative to the loss and to the size of the margin.
template <class T>
double elem_tol(double x, double y, double ref) {
  const double eps = std::numeric_limits<T>::epsilon();
  return 4 * eps * (1 + std::abs(x * y)) * std::max(std::abs(ref), std::numeric_limits<double>::min()) +
         4 * std::numeric_limits<T>::denorm_min();
}

/// Relative accuracy the reductions must reach: 1e-6 for float (the product's bound), 1e-12 for double.
template <class T>
constexpr double reduce_rtol() {
  return sizeof(T) < sizeof(double) ? 1e-6 : 1e-12;
}

/// dst = src for rank-3 views on Exec (any layouts).
template <class Exec, class D, class S>
void copy_rank3(const D& dst, const S& src) {
  Kokkos::parallel_for(
      "copy_rank3",
      Kokkos::MDRangePolicy<Exec, Kokkos::Rank<3>>({0, 0, 0}, {src.extent(0), src.extent(1), src.extent(2)}),
      KOKKOS_LAMBDA(int i, int j, int k) { dst(i, j, k) = src(i, j, k); });
}

/// Counter-based random inputs on the device (splitmix64): x ~ U(-3, 3), y = +-1.
template <class Exec, class V>
void fill_counter_random(const V& x, const V& y, std::uint64_t seed) {
  Kokkos::parallel_for(
      "fill_counter_random", Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, x.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i) {
        std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(i + 1);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        x(i) = static_cast<typename V::value_type>(-3.0 + 6.0 * static_cast<double>(z >> 11) * 0x1.0p-53);
        y(i) = (z & 1) ? 1 : -1;
      });
}

/// y(i) = +1 for even i, -1 for odd i.
template <class Exec, class V>
void alternate_signs(const V& y) {
  Kokkos::parallel_for(
      "alternate_signs", Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, y.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i) { y(i) = (i % 2 == 0) ? 1 : -1; });
}

/// Largest error, in float ulps, of Impl::log1p_unit against fp64 log1p over `samples` floats spread over every
/// exponent of [FLT_MIN, 1], evaluated on Exec.
template <class Exec>
double log1p_unit_max_ulp(std::int64_t samples) {
  double worst = 0;
  Kokkos::parallel_reduce(
      "log1p_unit_accuracy", Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, samples),
      KOKKOS_LAMBDA(std::int64_t i, double& w) {
        const std::uint32_t bits = 0x00800000u + static_cast<std::uint32_t>((0x3f000000ull * i) / samples);
        const float e = Kokkos::bit_cast<float>(bits);
        const double ref = Kokkos::log1p(static_cast<double>(e));
        const float got = softmargin::Impl::log1p_unit(e);
        // One float ulp at ref: 2^(exponent - 23), from float bits (subnormal below 2^-126 + 23).
        const std::uint32_t efield = (Kokkos::bit_cast<std::uint32_t>(static_cast<float>(ref)) >> 23) & 0xffu;
        const std::uint32_t ubits = efield > 23 ? (efield - 23) << 23 : 1u << (efield - 1);
        const double err = Kokkos::abs(static_cast<double>(got) - ref) / Kokkos::bit_cast<float>(ubits);
        if (err > w) w = err;
      },
      Kokkos::Max<double>(worst));
  return worst;
}

/// fp64 mean of the losses of rank-1 x and y, reduced on the device (for sizes too large to copy to the host).
template <class Exec, class V>
double fp64_mean(const V& x, const V& y) {
  double sum = 0;
  Kokkos::parallel_reduce(
      "fp64_reference", Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, x.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i, double& s) {
        const double z = -static_cast<double>(y(i)) * static_cast<double>(x(i));
        s += (z > 0 ? z : 0.0) + Kokkos::log1p(Kokkos::exp(-Kokkos::abs(z)));
      },
      sum);
  return sum / static_cast<double>(x.extent(0));
}

}  // namespace softmargin::test

#endif

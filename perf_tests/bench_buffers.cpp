// The inputs and outputs of every variant, their fp64 references (SoftMarginLoss and BCEWithLogitsLoss), and the check
// of a variant's first call.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "bench_common.hpp"

#if !defined(KOKKOS_ENABLE_CUDA)
#include <unistd.h>
#endif

namespace bench {
// (A named namespace, not an anonymous one: nvcc's extended lambdas need functions of external linkage.)
namespace buffers_impl {

using Range = Kokkos::RangePolicy<Exec, Kokkos::IndexType<Index>>;

std::unique_ptr<Buffers>& current() {
  static std::unique_ptr<Buffers> b;
  return b;
}

/// x ~ U(-3, 3) and y = +-1 from a counter-based hash of the seed and the index modulo n (every copy the same).
void fill(const Flat& x, const Flat& y, const Index n, const std::uint64_t seed) {
  Kokkos::parallel_for(
      "bench::fill", Range(space(), 0, x.size()), KOKKOS_LAMBDA(Index i) {
        std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(i % n + 1);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        x(i) = static_cast<float>(-3.0 + 6.0 * static_cast<double>(z >> 11) * 0x1.0p-53);
        y(i) = (z & 1) ? 1.0f : -1.0f;
      });
}

KOKKOS_INLINE_FUNCTION double loss64(double x, double y) {
  const double z = -y * x;
  return (z > 0 ? z : 0.0) + Kokkos::log1p(Kokkos::exp(-Kokkos::abs(z)));
}
/// d loss / d x of the mean of n losses.
KOKKOS_INLINE_FUNCTION double grad64(double x, double y, double n) { return -y / (1.0 + Kokkos::exp(y * x)) / n; }
/// BCEWithLogitsLoss of x against the target (y + 1) / 2, and d loss / d x of the mean of n losses.
KOKKOS_INLINE_FUNCTION double bce64(double x, double y) {
  const double t = 0.5 * (y + 1.0);
  return (x > 0 ? x : 0.0) - x * t + Kokkos::log1p(Kokkos::exp(-Kokkos::abs(x)));
}
KOKKOS_INLINE_FUNCTION double bce_grad64(double x, double y, double n) {
  return (1.0 / (1.0 + Kokkos::exp(-x)) - 0.5 * (y + 1.0)) / n;
}

struct LossWant {
  KOKKOS_INLINE_FUNCTION double operator()(double x, double y) const { return loss64(x, y); }
};
struct GradWant {
  double n;
  KOKKOS_INLINE_FUNCTION double operator()(double x, double y) const { return grad64(x, y, n); }
};
struct BceGradWant {
  double n;
  KOKKOS_INLINE_FUNCTION double operator()(double x, double y) const { return bce_grad64(x, y, n); }
};
struct XWant {
  KOKKOS_INLINE_FUNCTION double operator()(double x, double) const { return x; }
};

void references(Buffers& b) {
  const Vector x = flat(b.x[0]), y = flat(b.y[0]);
  const double n = static_cast<double>(x.size());
  Kokkos::parallel_reduce(
      "bench::references", Range(space(), 0, x.size()),
      KOKKOS_LAMBDA(Index i, double& s, double& g, double& d, double& ad, double& ax, double& bce) {
        s += loss64(x(i), y(i));
        g += grad64(x(i), y(i), n);
        d += double(x(i)) * y(i);
        ad += Kokkos::abs(double(x(i)) * y(i));
        ax += Kokkos::abs(double(x(i)));
        bce += bce64(x(i), y(i));
      },
      b.sum, b.grad_sum, b.dot, b.abs_dot, b.abs_x, b.bce_sum);
}

/// sum |got_i - want_i| / sum |want_i| over copy 0, want_i from x_i and y_i.
template <class Want>
double elementwise_error(const Buffers& b, const Matrix& got, Want want) {
  const Vector x = flat(b.x[0]), y = flat(b.y[0]), g = flat(got);
  double diff = 0, norm = 0;
  Kokkos::parallel_reduce(
      "bench::elementwise_error", Range(space(), 0, x.size()),
      KOKKOS_LAMBDA(Index i, double& d, double& w) {
        const double v = want(x(i), y(i));
        const double e = Kokkos::abs(double(g(i)) - v);
        d += e == e ? e : Kokkos::Experimental::infinity<double>::value;  // a NaN fails the check
        w += Kokkos::abs(v);
      },
      diff, norm);
  return diff / norm;
}

double result_of(const Buffers& b) {
  float v = 0;
  Kokkos::deep_copy(v, b.result);
  return v;
}

}  // namespace buffers_impl
using namespace buffers_impl;

Vector flat(const Matrix& m) { return Vector(m.data(), m.size()); }

std::size_t cache_bytes() {
#if defined(KOKKOS_ENABLE_CUDA)
  return static_cast<std::size_t>(space().cuda_device_prop().l2CacheSize);
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

const Buffers& buffers(const Shape& shape, int copies) {
  auto& b = current();
  if (b && b->shape.rows == shape.rows && b->shape.cols == shape.cols && b->copies >= copies) return *b;
  b.reset();  // the old set is freed before the new one is allocated
  b = std::make_unique<Buffers>();
  static std::uint64_t made = 0;
  b->id = ++made;
  b->shape = shape;
  b->copies = copies;
  const Index n = shape.size();
  const int allocations = options().separate ? copies : 1;
  const Index per_allocation = options().separate ? n : copies * n;
  const auto alloc = [&](const char* name) {
    return Flat(Kokkos::view_alloc(space(), Kokkos::WithoutInitializing, std::string(name)), per_allocation);
  };
  for (int a = 0; a < allocations; ++a) {
    const Flat X = alloc("x"), Y = alloc("y"), G = alloc("grad"), O = alloc("out");
    fill(X, Y, n, options().seed);
    fill(G, O, n, options().seed + 1);  // outputs are written once before timing (no shared zero pages on hosts)
    b->owners.insert(b->owners.end(), {X, Y, G, O});
    for (Index at = 0; at < per_allocation; at += n) {
      b->x.emplace_back(X.data() + at, shape.rows, shape.cols);
      b->y.emplace_back(Y.data() + at, shape.rows, shape.cols);
      b->grad.emplace_back(G.data() + at, shape.rows, shape.cols);
      b->out.emplace_back(O.data() + at, shape.rows, shape.cols);
    }
  }
  b->result = Kokkos::View<float, Mem>("result");
  references(*b);
  space().fence();
  return *b;
}

void release_buffers() { current().reset(); }

double check_error(const Variant& v, const Buffers& b) {
  if (v.check == Check::Own) return v.own_check(v, b);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const double n = static_cast<double>(b.shape.size());
  // Outputs start as NaN (zero for the axpy), so that a call that writes nothing fails.
  Kokkos::deep_copy(space(), b.result, nan);
  if (v.check == Check::Losses) Kokkos::deep_copy(space(), flat(b.out[0]), nan);
  if (v.check == Check::Grad || v.check == Check::Fused || v.check == Check::BceGrad || v.check == Check::BceFused)
    Kokkos::deep_copy(space(), flat(b.grad[0]), nan);
  if (v.check == Check::Axpy) Kokkos::deep_copy(space(), flat(b.grad[0]), 0.0f);
  space().fence();
  v.call(b, 0);
  space().fence();
  switch (v.check) {
    case Check::None:
      return 0;
    case Check::Mean:
      return std::abs(result_of(b) - b.sum / n) / (b.sum / n);
    case Check::Sum:
      return std::abs(result_of(b) - b.sum) / b.sum;
    case Check::Losses:
      return elementwise_error(b, b.out[0], LossWant{});
    case Check::Grad:
      return elementwise_error(b, b.grad[0], GradWant{n});
    case Check::Fused:
      return std::max(std::abs(result_of(b) - b.sum / n) / (b.sum / n), elementwise_error(b, b.grad[0], GradWant{n}));
    case Check::Dot:
      return std::abs(result_of(b) - b.dot) / b.abs_dot;
    case Check::Axpy:
      return elementwise_error(b, b.grad[0], XWant{});
    case Check::BceMean:
      return std::abs(result_of(b) - b.bce_sum / n) / (b.bce_sum / n);
    case Check::BceGrad:
      return elementwise_error(b, b.grad[0], BceGradWant{n});
    case Check::BceFused:
      return std::max(std::abs(result_of(b) - b.bce_sum / n) / (b.bce_sum / n),
                      elementwise_error(b, b.grad[0], BceGradWant{n}));
    case Check::Own:
      break;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace bench

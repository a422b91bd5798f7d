// The family's other members on the library (Algorithm::Auto), forward mean, backward and the fused pass on fp32:
// SoftMarginLoss with a per-column weight (softmargin::soft_margin(x, y, w), w broadcast over the rows with stride 0,
// as PyTorch broadcasts a weight of shape (C,)) and the pairwise logistic loss of reward models
// (softmargin::pairwise(a, b, 0.5) with a = x, b = y, both gradients written: grads(grad_a, grad_b)), each against the
// fp32 peer of the same N. Checked against fp64 references of their own over copy 0.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "bench_common.hpp"

namespace bench {
namespace family_impl {

using Range = Kokkos::RangePolicy<Exec, Kokkos::IndexType<Index>>;
using Strided = Kokkos::View<float**, Kokkos::LayoutStride, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
constexpr double kMargin = 0.5;

/// The per-column weight w_c = 0.5 + (c mod 7) / 8 as a View of x's shape (row stride 0), and its fp64 references.
struct Weights {
  Kokkos::View<float*, Mem> w;
  Strided rows;
  double sum = 0;  ///< of the weighted losses over copy 0
};
/// The pairwise loss's fp64 reference over copy 0.
struct PairSums {
  double sum = 0;
};

KOKKOS_INLINE_FUNCTION double softplus64(double z) {
  return (z > 0 ? z : 0.0) + Kokkos::log1p(Kokkos::exp(-Kokkos::abs(z)));
}
KOKKOS_INLINE_FUNCTION double weight64(Index i, Index cols) { return 0.5 + static_cast<double>(i % cols % 7) / 8.0; }

// (The make functions are named functions: nvcc's extended lambdas may not sit inside another lambda.)
Weights make_weights(const Buffers& b) {
  Weights d;
  const Index cols = b.shape.cols;
  d.w = Kokkos::View<float*, Mem>(Kokkos::view_alloc(space(), Kokkos::WithoutInitializing, "bench_weight"), cols);
  const auto w = d.w;
  Kokkos::parallel_for(
      "bench::weights", Range(space(), 0, cols),
      KOKKOS_LAMBDA(Index c) { w(c) = static_cast<float>(weight64(c, cols)); });
  d.rows = Strided(d.w.data(), Kokkos::LayoutStride(b.shape.rows, 0, cols, 1));
  const Vector x = flat(b.x[0]), y = flat(b.y[0]);
  Kokkos::parallel_reduce(
      "bench::weighted_reference", Range(space(), 0, x.size()),
      KOKKOS_LAMBDA(Index i, double& s) { s += weight64(i, cols) * softplus64(-double(y(i)) * x(i)); }, d.sum);
  return d;
}
const Weights& weights(const Buffers& b) { return derived<Weights>(b, make_weights); }

PairSums make_pair_sums(const Buffers& b) {
  PairSums d;
  const Vector x = flat(b.x[0]), y = flat(b.y[0]);
  Kokkos::parallel_reduce(
      "bench::pairwise_reference", Range(space(), 0, x.size()),
      KOKKOS_LAMBDA(Index i, double& s) { s += softplus64(-(double(x(i)) - y(i) - kMargin)); }, d.sum);
  return d;
}
const PairSums& pair_sums(const Buffers& b) { return derived<PairSums>(b, make_pair_sums); }

double result_of(const Kokkos::View<float, Mem>& r) {
  float v = 0;
  Kokkos::deep_copy(v, r);
  return v;
}

/// sum |got_i - want(i)| / sum |want(i)| over copy 0; a NaN fails.
template <class Want>
double grad_error(const Matrix& got, Index n, Want want) {
  const Vector g = flat(got);
  double diff = 0, norm = 0;
  Kokkos::parallel_reduce(
      "bench::family_grad_error", Range(space(), 0, n),
      KOKKOS_LAMBDA(Index i, double& d, double& w) {
        const double v = want(i);
        const double e = Kokkos::abs(double(g(i)) - v);
        d += e == e ? e : Kokkos::Experimental::infinity<double>::value;
        w += Kokkos::abs(v);
      },
      diff, norm);
  return diff / norm;
}

/// The fp64 gradients of the means (grad_loss 1).
struct WeightedGrad {
  Vector x, y;
  Index cols;
  double n;
  KOKKOS_INLINE_FUNCTION double operator()(Index i) const {
    return -weight64(i, cols) * y(i) / (1.0 + Kokkos::exp(double(y(i)) * x(i))) / n;
  }
};
struct PairGrad {
  Vector x, y;
  double n, sign;  ///< +1: grad_a, -1: grad_b
  KOKKOS_INLINE_FUNCTION double operator()(Index i) const {
    return -sign / (1.0 + Kokkos::exp(double(x(i)) - y(i) - kMargin)) / n;
  }
};

enum Pass { Forward, Backward, Fused };

/// The relative error of v's first call on copy 0: the mean and/or the gradients, outputs set to NaN first.
double check(const Variant& v, const Buffers& b, Pass pass, bool pairwise) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Index n = b.shape.size();
  Kokkos::deep_copy(space(), b.result, nan);
  Kokkos::deep_copy(space(), flat(b.grad[0]), nan);
  Kokkos::deep_copy(space(), flat(b.out[0]), nan);
  space().fence();
  v.call(b, 0);
  space().fence();
  const Vector x = flat(b.x[0]), y = flat(b.y[0]);
  const double mean = (pairwise ? pair_sums(b).sum : weights(b).sum) / static_cast<double>(n);
  double error = 0;
  if (pass != Backward) error = std::abs(result_of(b.result) - mean) / mean;
  if (pass != Forward) {
    if (pairwise) {
      error = std::max(error, grad_error(b.grad[0], n, PairGrad{x, y, double(n), 1.0}));
      error = std::max(error, grad_error(b.out[0], n, PairGrad{x, y, double(n), -1.0}));
    } else {
      error = std::max(error, grad_error(b.grad[0], n, WeightedGrad{x, y, b.shape.cols, double(n)}));
    }
  }
  return error;
}

template <bool Pairwise>
auto inputs(const Buffers& b, int k) {
  if constexpr (Pairwise)
    return softmargin::pairwise(b.x[k], b.y[k], kMargin);
  else
    return softmargin::soft_margin(b.x[k], b.y[k], weights(b).rows);
}
template <bool Pairwise>
auto grads(const Buffers& b, int k) {
  if constexpr (Pairwise)
    return softmargin::grads(b.grad[k], b.out[k]);
  else
    return b.grad[k];
}

/// forward_mean, backward and fused rows of one member; grad_bytes: what its gradients write per element.
template <bool Pairwise>
void add(const std::string& prefix, int grad_bytes) {
  using softmargin::Algorithm;
  using softmargin::Reduction;
  const auto row = [&](const char* name, Call call, Pass pass, int bytes, PeerKind peer) {
    Variant v{prefix + name, std::move(call), Check::Own, bytes, peer};
    v.own_check = [pass](const Variant& v, const Buffers& b) { return check(v, b, pass, Pairwise); };
    add_variant(std::move(v));
  };
  row(
      "/forward_mean",
      [](const Buffers& b, int k) {
        softmargin::loss(space(), inputs<Pairwise>(b, k), b.result, Reduction::Mean, Algorithm::Auto);
      },
      Forward, 8, PeerKind::Dot);
  row(
      "/backward",
      [](const Buffers& b, int k) {
        softmargin::backward(space(), inputs<Pairwise>(b, k), 1.0f, grads<Pairwise>(b, k), Reduction::Mean,
                             Algorithm::Auto);
      },
      Backward, 8 + grad_bytes, PeerKind::Axpy);
  row(
      "/fused",
      [](const Buffers& b, int k) {
        softmargin::loss_and_grad(space(), inputs<Pairwise>(b, k), b.result, grads<Pairwise>(b, k), Reduction::Mean,
                                  1.0f, Algorithm::Auto);
      },
      Fused, 8 + grad_bytes, PeerKind::Axpy);
}

}  // namespace family_impl

void add_family_variants() {
  family_impl::add<false>("weighted/soft_margin_fp32", 4);
  family_impl::add<true>("pairwise/fp32", 8);
}

}  // namespace bench

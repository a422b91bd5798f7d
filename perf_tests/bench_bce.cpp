// BCEWithLogitsLoss on the library (softmargin::bce_with_logits, Algorithm::Auto): forward mean, backward and the
// fused pass on fp32 x with float targets (x's type: the soft-label path) or int8_t targets, each against the fp32 peer
// of the same N (cublasSdot, cublasSaxpy, or KokkosBlas). The targets are t = (y + 1) / 2 of the fp32 buffers' y (0 or
// 1; there the loss equals SoftMarginLoss of x and y), made once per set of buffers; outputs are the buffers' own,
// checked against fp64 BCEWithLogits references of x and y.
#include <cstdint>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace bench {
namespace bce_impl {

template <class T>
using Rows = Kokkos::View<T**, Kokkos::LayoutRight, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using Range = Kokkos::RangePolicy<Exec, Kokkos::IndexType<Index>>;

/// Every copy of a Buffers' y as targets of type T in {0, 1}, one allocation, a matrix per copy.
template <class T>
struct Targets {
  Kokkos::View<T*, Mem> all;
  std::vector<Rows<T>> t;
};

/// The targets of b (a named function: nvcc's extended lambdas may not sit inside another lambda).
template <class T>
Targets<T> make_targets(const Buffers& b) {
  Targets<T> d;
  const Index n = b.shape.size();
  d.all = Kokkos::View<T*, Mem>(Kokkos::view_alloc(space(), Kokkos::WithoutInitializing, "bce_targets"), n * b.copies);
  const auto all = d.all;
  for (int k = 0; k < b.copies; ++k) {
    const Vector yk = flat(b.y[k]);
    const Index at = k * n;
    Kokkos::parallel_for(
        "bench::bce_targets", Range(space(), 0, n),
        KOKKOS_LAMBDA(Index i) { all(at + i) = static_cast<T>((yk(i) + 1.0f) * 0.5f); });
    d.t.emplace_back(d.all.data() + at, b.shape.rows, b.shape.cols);
  }
  space().fence();
  return d;
}
template <class T>
const Targets<T>& targets(const Buffers& b) {
  return derived<Targets<T>>(b, make_targets<T>);
}

/// forward_mean (x and t read), backward and fused (grad_x written too) for targets of T, of target_bytes each.
template <class T>
void add(const std::string& name, const int target_bytes) {
  using softmargin::Algorithm;
  using softmargin::Reduction;
  const std::string prefix = "bce/" + name + "/";
  add_variant({prefix + "forward_mean",
               [](const Buffers& b, int k) {
                 softmargin::loss(space(), softmargin::bce_with_logits(b.x[k], targets<T>(b).t[k]), b.result,
                                  Reduction::Mean, Algorithm::Auto);
               },
               Check::BceMean, 4 + target_bytes, PeerKind::Dot});
  add_variant({prefix + "backward",
               [](const Buffers& b, int k) {
                 softmargin::backward(space(), softmargin::bce_with_logits(b.x[k], targets<T>(b).t[k]), 1.0f, b.grad[k],
                                      Reduction::Mean, Algorithm::Auto);
               },
               Check::BceGrad, 8 + target_bytes, PeerKind::Axpy});
  add_variant({prefix + "fused",
               [](const Buffers& b, int k) {
                 softmargin::loss_and_grad(space(), softmargin::bce_with_logits(b.x[k], targets<T>(b).t[k]), b.result,
                                           b.grad[k], Reduction::Mean, 1.0f, Algorithm::Auto);
               },
               Check::BceFused, 8 + target_bytes, PeerKind::Axpy});
}

}  // namespace bce_impl

void add_bce_variants() {
  bce_impl::add<float>("fp32_fp32", 4);
  bce_impl::add<std::int8_t>("fp32_int8", 1);
}

}  // namespace bench

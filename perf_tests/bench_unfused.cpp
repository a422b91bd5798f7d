// PyTorch's op-by-op SoftMarginLoss (the picture before fusion), one Kokkos kernel per ATen op with a full-size
// temporary: neg_out, mul_, exp_, log1p_, mean (accumulated in double, dividing by N in its final), and the copy of
// that scalar into the output. Float arithmetic, no stable softplus: right on these inputs, not in general.
#include <memory>

#include "bench_common.hpp"

namespace bench {

struct UnfusedMean {
  using value_type = double;
  Flat t;
  double n;
  KOKKOS_INLINE_FUNCTION void operator()(const Index i, double& s) const { s += t(i); }
  KOKKOS_INLINE_FUNCTION void final(double& s) const { s /= n; }
};

void unfused_chain(const Vector& x, const Vector& y, const Flat& t, const Kokkos::View<double, Mem>& mean,
                   const Kokkos::View<float, Mem>& result) {
  const Kokkos::RangePolicy<Exec, Kokkos::IndexType<Index>> all(space(), 0, x.size());
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
      "unfused::copy", Kokkos::RangePolicy<Exec>(space(), 0, 1),
      KOKKOS_LAMBDA(int) { result() = static_cast<float>(mean()); });
}

void add_unfused_variants() {
  struct Scratch {
    Flat t;
    Kokkos::View<double, Mem> mean{"unfused_mean"};
  };
  auto s = std::make_shared<Scratch>();
  add_variant({"peer/unfused_chain",
               [s](const Buffers& b, int k) {
                 const auto n = static_cast<std::size_t>(b.shape.size());
                 if (s->t.size() < n) {  // grown on the untimed first call of a size (its check)
                   s->t = Flat();
                   s->t = Flat(Kokkos::view_alloc(space(), Kokkos::WithoutInitializing, "unfused_temp"), n);
                 }
                 unfused_chain(flat(b.x[k]), flat(b.y[k]), s->t, s->mean, b.result);
               },
               Check::Mean, 8, PeerKind::Dot});
}

}  // namespace bench

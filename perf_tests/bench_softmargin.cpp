// The library's variants: forward (reductions none, sum, mean), backward and the fused pass, with each algorithm.
#include <utility>

#include "bench_common.hpp"

namespace bench {

void add_softmargin_variants() {
  using softmargin::Algorithm;
  using softmargin::Reduction;
  std::vector<std::pair<std::string, Algorithm>> algorithms = {
      {"auto", Algorithm::Auto}, {"range_reduce", Algorithm::RangeReduce}, {"team_scratch", Algorithm::TeamScratch}};
#if defined(KOKKOS_ENABLE_CUDA)
  algorithms.emplace_back("native", Algorithm::Native);  // elsewhere the same as team_scratch
#endif
  for (const auto& [name, a] : algorithms) {
    add_variant(
        {"softmargin/forward_mean/" + name,
         [a](const Buffers& b, int k) { softmargin::loss(space(), b.x[k], b.y[k], b.result, Reduction::Mean, a); },
         Check::Mean, 8, PeerKind::Dot});
    add_variant(
        {"softmargin/forward_sum/" + name,
         [a](const Buffers& b, int k) { softmargin::loss(space(), b.x[k], b.y[k], b.result, Reduction::Sum, a); },
         Check::Sum, 8, PeerKind::Dot});
    add_variant(
        {"softmargin/forward_none/" + name,
         [a](const Buffers& b, int k) { softmargin::loss(space(), b.x[k], b.y[k], b.out[k], Reduction::None, a); },
         Check::Losses, 12, PeerKind::Axpy});
  }
  // The gradient passes read x and y and write grad_x: 12 bytes per element, against an axpy.
  for (const auto& [name, a] : algorithms) {
    add_variant({"softmargin/backward/" + name,
                 [a](const Buffers& b, int k) {
                   softmargin::backward(space(), b.x[k], b.y[k], 1.0f, b.grad[k], Reduction::Mean, a);
                 },
                 Check::Grad, 12, PeerKind::Axpy});
    add_variant({"softmargin/fused/" + name,
                 [a](const Buffers& b, int k) {
                   softmargin::loss_and_grad(space(), b.x[k], b.y[k], b.result, b.grad[k], Reduction::Mean, 1.0f, a);
                 },
                 Check::Fused, 12, PeerKind::Axpy});
  }
}

}  // namespace bench

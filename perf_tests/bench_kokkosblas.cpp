// Kokkos Kernels' own kernels (no vendor library behind them) as the portable peers, on every backend:
// KokkosBlas::dot reads x and y as the forward pass does; KokkosBlas::axpy (grad += x) reads two vectors and writes
// one, as the gradient passes do.
#include <KokkosBlas1_axpby.hpp>
#include <KokkosBlas1_dot.hpp>

#include "bench_common.hpp"

namespace bench {

void add_kokkosblas_variants() {
  add_variant({"peer/KokkosBlas_dot",
               [](const Buffers& b, int k) { KokkosBlas::dot(space(), b.result, flat(b.x[k]), flat(b.y[k])); },
               Check::Dot, 8, PeerKind::Dot, 1e-4});
  add_variant({"peer/KokkosBlas_axpy",
               [](const Buffers& b, int k) { KokkosBlas::axpy(space(), 1.0f, flat(b.x[k]), flat(b.grad[k])); },
               Check::Axpy, 12, PeerKind::Axpy});
}

}  // namespace bench

// Host builds: the library on one thread (Kokkos::Serial), and the plain loop a host code would write.
#include <algorithm>
#include <cmath>

#include "bench_common.hpp"

namespace bench {

void add_host_variants() {
#if !defined(KOKKOS_ENABLE_CUDA) && !defined(KOKKOS_ENABLE_HIP) && !defined(KOKKOS_ENABLE_SYCL)
  {
#if defined(KOKKOS_ENABLE_SERIAL)
    if (!std::is_same_v<Exec, Kokkos::Serial>)
      add_variant({"host/softmargin_serial",
                   [](const Buffers& b, int k) { softmargin::loss(Kokkos::Serial(), b.x[k], b.y[k], b.result); },
                   Check::Mean, 8, PeerKind::Dot});
#endif
    // One thread, libm's exp and log1p, the stable form, a double sum.
    add_variant({"host/libm_loop",
                 [](const Buffers& b, int k) {
                   const float* x = b.x[k].data();
                   const float* y = b.y[k].data();
                   const Index n = b.shape.size();
                   double s = 0;
                   for (Index i = 0; i < n; ++i) {
                     const float z = -y[i] * x[i];
                     s += std::max(z, 0.0f) + std::log1p(std::exp(-std::abs(z)));
                   }
                   *b.result.data() = static_cast<float>(s / static_cast<double>(n));  // host memory
                 },
                 Check::Mean, 8, PeerKind::Dot});
  }
#endif
}

}  // namespace bench

// softmargin_ab: one side's passes. The library's namespace is renamed (SOFTMARGIN_AB_NS) so that two source trees
// link into one program without sharing a definition.
#include <Kokkos_Core.hpp>
#include <type_traits>

#include "ab.hpp"

#define softmargin SOFTMARGIN_AB_NS
#include <SoftMargin.hpp>

namespace {
template <class T>
using Unmanaged = Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/// One pass; the gradients' upstream is N, so that a mean's gradients stay in fp16's normal range (as the benchmark's
/// 16-bit rows).
template <class Exec, class X, class Y, class G, class Out>
void pass(const Exec& space, const void* x, const void* y, void* g, std::size_t n, const Out& out, AbPass p) {
  using namespace softmargin;
  using R = typename Out::non_const_value_type;
  const Unmanaged<const X> xv(static_cast<const X*>(x), n);
  const Unmanaged<const Y> yv(static_cast<const Y*>(y), n);
  const Unmanaged<G> gv(static_cast<G*>(g), n);
  switch (p) {
    case AbPass::Mean:
      loss(space, xv, yv, out, Reduction::Mean);
      break;
    case AbPass::None:
      loss(space, xv, yv, gv, Reduction::None);
      break;
    case AbPass::Backward:
      backward(space, xv, yv, R(n), gv, Reduction::Mean);
      break;
    case AbPass::Fused:
      loss_and_grad(space, xv, yv, out, gv, Reduction::Mean, R(n));
      break;
  }
  space.fence();
}
}  // namespace

void SOFTMARGIN_AB_RUN(const AbBuffers& b, AbType type, AbPass p) {
  using softmargin::bf16;
  using softmargin::fp16;
  using O = Kokkos::OpenMP;
  const auto& f = b.loss_f;
  switch (type) {
    case AbType::Fp32:
      pass<O, float, float, float>(b.omp, b.xf, b.yf, b.gf, b.n, f, p);
      break;
    case AbType::Bf16Int8:
      pass<O, bf16, std::int8_t, bf16>(b.omp, b.xh, b.y8, b.gh, b.n, f, p);
      break;
    case AbType::Bf16Bf16:
      pass<O, bf16, bf16, bf16>(b.omp, b.xh, b.yh, b.gh, b.n, f, p);
      break;
    case AbType::Fp16Int8:
      pass<O, fp16, std::int8_t, fp16>(b.omp, b.xh, b.y8, b.gh, b.n, f, p);
      break;
    case AbType::Fp16Fp16:
      pass<O, fp16, fp16, fp16>(b.omp, b.xh, b.yh, b.gh, b.n, f, p);
      break;
    case AbType::Fp64:
      pass<O, double, double, double>(b.omp, b.xd, b.yd, b.gd, b.n, b.loss_d, p);
      break;
    case AbType::Fp32Serial:
      pass<Kokkos::Serial, float, float, float>(b.serial, b.xf, b.yf, b.gf, b.n, f, p);
      break;
  }
}

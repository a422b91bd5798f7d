// softmargin_ab: the buffers both sides read and write, and each side's entry.
#ifndef SOFTMARGIN_AB_HPP
#define SOFTMARGIN_AB_HPP
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>

/// Inputs and outputs of n elements (16-bit values as their bits), in Kokkos allocations (aligned as the library's
/// packs need), the reduced losses, and the execution space instances both sides run on.
struct AbBuffers {
  const float *xf, *yf;
  float* gf;
  const double *xd, *yd;
  double* gd;
  const std::uint16_t *xh, *yh;
  std::uint16_t* gh;
  const std::int8_t* y8;
  std::size_t n;
  Kokkos::View<float, Kokkos::HostSpace> loss_f;
  Kokkos::View<double, Kokkos::HostSpace> loss_d;
  Kokkos::OpenMP omp;
  Kokkos::Serial serial;
};

enum class AbType { Fp32, Bf16Int8, Bf16Bf16, Fp16Int8, Fp16Fp16, Fp64, Fp32Serial };
enum class AbPass { Mean, None, Backward, Fused };

/// One call of the pass on OpenMP (Serial for Fp32Serial), fenced.
void run_a(const AbBuffers& b, AbType type, AbPass pass);
void run_b(const AbBuffers& b, AbType type, AbPass pass);
#endif

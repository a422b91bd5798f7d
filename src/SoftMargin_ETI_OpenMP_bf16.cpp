// Explicit instantiation of the SoftMargin kernels for Kokkos::OpenMP, bf16 x with bf16 and int8_t targets.
#define SOFTMARGIN_ETI_DEFINITION
#include "SoftMargin.hpp"

#if defined(KOKKOS_ENABLE_OPENMP)
SOFTMARGIN_ETI_HOST_BACKEND_16(, Kokkos::OpenMP, softmargin::bf16)
#endif

// Explicit instantiation of the SoftMargin kernels for Kokkos::Cuda, bf16 x with bf16 and int8_t targets.
#define SOFTMARGIN_ETI_DEFINITION
#include "SoftMargin.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
SOFTMARGIN_ETI_DEVICE_BACKEND_16(, Kokkos::Cuda, softmargin::bf16)
#endif

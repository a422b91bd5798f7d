// Explicit instantiation of the SoftMargin kernels for Kokkos::Cuda, fp16 x with fp16 and int8_t targets.
#define SOFTMARGIN_ETI_DEFINITION
#include "SoftMargin.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
SOFTMARGIN_ETI_DEVICE_BACKEND_16(, Kokkos::Cuda, softmargin::fp16)
#endif

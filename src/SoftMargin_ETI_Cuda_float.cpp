// Explicit instantiation of the SoftMargin kernels for Kokkos::Cuda, float.
#define SOFTMARGIN_ETI_DEFINITION
#include "SoftMargin.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
SOFTMARGIN_ETI_DEVICE_BACKEND(, Kokkos::Cuda, float)
#endif

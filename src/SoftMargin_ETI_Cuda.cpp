// Explicit instantiation of the SoftMargin launchers for Kokkos::Cuda.
#define SOFTMARGIN_ETI_DEFINITION
#include "SoftMargin.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
SOFTMARGIN_ETI_FORWARD_DEVICE(, Kokkos::Cuda, float)
SOFTMARGIN_ETI_FORWARD_DEVICE(, Kokkos::Cuda, double)
#endif

// Explicit instantiation of the SoftMargin kernels for Kokkos::OpenMP, float.
#define SOFTMARGIN_ETI_DEFINITION
#include "SoftMargin.hpp"

#if defined(KOKKOS_ENABLE_OPENMP)
SOFTMARGIN_ETI_HOST_BACKEND(, Kokkos::OpenMP, float)
#endif

// Explicit instantiation of the SoftMargin kernels for Kokkos::Serial, double.
#define SOFTMARGIN_ETI_DEFINITION
#include "SoftMargin.hpp"

#if defined(KOKKOS_ENABLE_SERIAL)
SOFTMARGIN_ETI_HOST_BACKEND(, Kokkos::Serial, double)
#endif

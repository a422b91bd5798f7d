// Explicit instantiation of the SoftMargin kernels for Kokkos::Serial, fp16 x with fp16 and int8_t targets.
#define SOFTMARGIN_ETI_DEFINITION
#include "SoftMargin.hpp"

#if defined(KOKKOS_ENABLE_SERIAL)
SOFTMARGIN_ETI_HOST_BACKEND_16(, Kokkos::Serial, softmargin::fp16)
#endif

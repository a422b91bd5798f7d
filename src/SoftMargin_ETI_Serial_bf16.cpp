// Explicit instantiation of the SoftMargin kernels for Kokkos::Serial, bf16 x with bf16 and int8_t targets.
#define SOFTMARGIN_ETI_DEFINITION
#include "SoftMargin.hpp"

#if defined(KOKKOS_ENABLE_SERIAL)
SOFTMARGIN_ETI_HOST_BACKEND_16(, Kokkos::Serial, softmargin::bf16)
#endif

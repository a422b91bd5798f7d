// Explicit instantiation of the SoftMargin launchers for Kokkos::Serial.
#define SOFTMARGIN_ETI_DEFINITION
#include "SoftMargin.hpp"

#if defined(KOKKOS_ENABLE_SERIAL)
SOFTMARGIN_ETI_FORWARD(, Kokkos::Serial, float)
SOFTMARGIN_ETI_FORWARD(, Kokkos::Serial, double)
#endif

// Explicit instantiation of the SoftMargin launchers for Kokkos::OpenMP.
#define SOFTMARGIN_ETI_DEFINITION
#include "SoftMargin.hpp"

#if defined(KOKKOS_ENABLE_OPENMP)
SOFTMARGIN_ETI_FORWARD(, Kokkos::OpenMP, float)
SOFTMARGIN_ETI_FORWARD(, Kokkos::OpenMP, double)
#endif

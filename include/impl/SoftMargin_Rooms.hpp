// SoftMargin: the hardware rooms, the one list of them. Each room is a folder impl/<family>/ whose entry header
// specializes Hardware<Exec> and, for a backend with kernels of its own, Backend<Exec> (SoftMargin_Hardware.hpp) for
// its execution spaces. A backend without a room runs the portable kernels as they are. Adding one: a folder, and a
// line here (behind the Kokkos macro that says the backend is enabled).
#ifndef SOFTMARGIN_IMPL_ROOMS_HPP
#define SOFTMARGIN_IMPL_ROOMS_HPP

#include <Kokkos_Core.hpp>

#include "host/SoftMargin_Host.hpp"  // every host backend: Serial, OpenMP, Threads, HPX
#if defined(KOKKOS_ENABLE_CUDA)
#include "cuda/SoftMargin_Cuda.hpp"
#endif

#endif

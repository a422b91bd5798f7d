// Test category of the Kokkos::Cuda backend.
#ifndef SOFTMARGIN_TEST_CUDA_CATEGORY_HPP
#define SOFTMARGIN_TEST_CUDA_CATEGORY_HPP

#include <Kokkos_Core.hpp>

#define TEST_CATEGORY cuda
#define TEST_EXECSPACE Kokkos::Cuda

#endif

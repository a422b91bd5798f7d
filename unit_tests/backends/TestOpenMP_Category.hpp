// Test category of the Kokkos::OpenMP backend.
#ifndef SOFTMARGIN_TEST_OPENMP_CATEGORY_HPP
#define SOFTMARGIN_TEST_OPENMP_CATEGORY_HPP

#include <Kokkos_Core.hpp>

#define TEST_CATEGORY openmp
#define TEST_EXECSPACE Kokkos::OpenMP

#endif

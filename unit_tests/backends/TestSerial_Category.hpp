// Test category of the Kokkos::Serial backend.
#ifndef SOFTMARGIN_TEST_SERIAL_CATEGORY_HPP
#define SOFTMARGIN_TEST_SERIAL_CATEGORY_HPP

#include <Kokkos_Core.hpp>

#define TEST_CATEGORY serial
#define TEST_EXECSPACE Kokkos::Serial

#endif

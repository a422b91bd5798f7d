// MPI tests on the Kokkos::Serial backend.
#include <Kokkos_Core.hpp>

#define TEST_CATEGORY serial
#define TEST_EXECSPACE Kokkos::Serial

#include "TestMPI_Errors.hpp"
#include "TestMPI_Family.hpp"
#include "TestMPI_Grad.hpp"
#include "TestMPI_Loss.hpp"
#include "TestMPI_Scratch.hpp"
#include "TestMPI_Transport.hpp"

// MPI tests on the Kokkos::OpenMP backend.
#include <Kokkos_Core.hpp>

#define TEST_CATEGORY openmp
#define TEST_EXECSPACE Kokkos::OpenMP

#include "TestMPI_Errors.hpp"
#include "TestMPI_Family.hpp"
#include "TestMPI_Grad.hpp"
#include "TestMPI_Loss.hpp"
#include "TestMPI_Scratch.hpp"
#include "TestMPI_Transport.hpp"

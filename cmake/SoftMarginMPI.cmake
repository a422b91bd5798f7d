# The optional MPI layer: include/SoftMargin_MPI.hpp over the library, as the INTERFACE target softmargin_mpi
# (SoftMargin::softmargin_mpi), on by default where find_package(MPI) finds a C++ MPI.
# Not looked for where it is turned off (a cross build would find the build machine's MPI).
if(DEFINED SOFTMARGIN_ENABLE_MPI AND NOT SOFTMARGIN_ENABLE_MPI)
  return()
endif()
find_package(MPI QUIET COMPONENTS CXX)
set(_softmargin_mpi_default OFF)
if(MPI_CXX_FOUND)
  set(_softmargin_mpi_default ON)
endif()
option(SOFTMARGIN_ENABLE_MPI "Build the MPI layer (SoftMargin_MPI.hpp, target SoftMargin::softmargin_mpi)"
       ${_softmargin_mpi_default})
if(NOT SOFTMARGIN_ENABLE_MPI)
  return()
endif()
find_package(MPI REQUIRED COMPONENTS CXX)
message(STATUS "SoftMargin: MPI layer on (MPI ${MPI_CXX_VERSION}, ${MPIEXEC_EXECUTABLE})")

add_library(softmargin_mpi INTERFACE)
add_library(SoftMargin::softmargin_mpi ALIAS softmargin_mpi)
target_link_libraries(softmargin_mpi INTERFACE softmargin MPI::MPI_CXX)

install(TARGETS softmargin_mpi EXPORT SoftMarginMPITargets)
install(EXPORT SoftMarginMPITargets NAMESPACE SoftMargin:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/SoftMargin)


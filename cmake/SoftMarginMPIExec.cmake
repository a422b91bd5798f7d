# How the project's tests run mpiexec (the MPI tests, the docs' MPI examples): SOFTMARGIN_MPIEXEC_ARGS and
# SOFTMARGIN_MPI_TEST_ENVIRONMENT. Open MPI: --oversubscribe for more ranks than cores; as root it wants the two
# OMPI_ALLOW_RUN_AS_ROOT variables.
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _sm_mpiexec_version ERROR_QUIET)
if(_sm_mpiexec_version MATCHES "Open MPI|OpenRTE")
  set(SOFTMARGIN_MPIEXEC_FLAGS "--oversubscribe" CACHE STRING "Flags of mpiexec in the MPI tests")
  set(SOFTMARGIN_MPI_TEST_ENVIRONMENT
      "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
else()
  set(SOFTMARGIN_MPIEXEC_FLAGS "" CACHE STRING "Flags of mpiexec in the MPI tests")
  set(SOFTMARGIN_MPI_TEST_ENVIRONMENT "")
endif()
separate_arguments(SOFTMARGIN_MPIEXEC_ARGS UNIX_COMMAND "${SOFTMARGIN_MPIEXEC_FLAGS}")

# Provides Kokkos::kokkoskernels (component BLAS) for the perf tests' KokkosBlas peers, or sets
# SOFTMARGIN_HAVE_KOKKOSKERNELS to OFF: the library never needs Kokkos Kernels, and the perf tests build without it.
#
# 1. A target Kokkos::kokkoskernels that already exists (a parent project's) is used as it is.
# 2. Else find_package(KokkosKernels) where you point: KokkosKernels_ROOT, KokkosKernels_DIR or CMAKE_PREFIX_PATH.
# 3. Else Kokkos Kernels is built and installed into the build tree at configure time, against the Kokkos in use
#    (Kokkos_DIR) and with its compiler (nvcc_wrapper for CUDA), in two stages as in SoftMarginKokkos.cmake:
#    - source: SOFTMARGIN_KOKKOSKERNELS_SOURCE (an archive, checked against its SHA-256, or an unpacked directory);
#      empty: the pinned archive in ../shared/deps/ beside the source tree, when it is there;
#    - component BLAS only, no explicit instantiations (the perf tests instantiate what they call), and no vendor
#      libraries (cuBLAS, host BLAS): KokkosBlas calls run Kokkos Kernels' own kernels, the portable peer.
# 4. Else SOFTMARGIN_HAVE_KOKKOSKERNELS is OFF (the KokkosBlas rows are left out, with a note here).
set(SOFTMARGIN_HAVE_KOKKOSKERNELS OFF)
option(SOFTMARGIN_PERF_KOKKOSKERNELS "Use Kokkos Kernels (KokkosBlas) as a peer in the perf tests when available" ON)
if(NOT SOFTMARGIN_PERF_KOKKOSKERNELS)
  message(STATUS "SoftMargin: perf tests without Kokkos Kernels (SOFTMARGIN_PERF_KOKKOSKERNELS=OFF)")
  return()
endif()
if(TARGET Kokkos::kokkoskernels)
  set(SOFTMARGIN_HAVE_KOKKOSKERNELS ON)
  return()
endif()

# The pinned snapshot: Kokkos Kernels' development line after 4.7.00 (4.7.99), the first that builds with Kokkos 5.
set(SOFTMARGIN_KOKKOSKERNELS_ARCHIVE kokkos-kernels-2fc2af19fa7b.tar.gz)
set(SOFTMARGIN_KOKKOSKERNELS_SHA256 61820165a4b6b88462e15d4d51d77dea67ac9187eb1078c4d4dea3b16dd38b5f)
set(SOFTMARGIN_KOKKOSKERNELS_SOURCE "" CACHE STRING "Kokkos Kernels source to build for the perf tests when find_package(KokkosKernels) fails: ${SOFTMARGIN_KOKKOSKERNELS_ARCHIVE} (checked against its SHA-256) or an unpacked directory; empty: ../shared/deps/${SOFTMARGIN_KOKKOSKERNELS_ARCHIVE} beside the source tree if it is there")

set(_sm_kk_root "${CMAKE_BINARY_DIR}/_deps/kokkoskernels")
set(_sm_kk_prefix "${_sm_kk_root}/install")
set(_sm_kk_find_args CONFIG QUIET NO_CMAKE_SYSTEM_PATH NO_SYSTEM_ENVIRONMENT_PATH NO_CMAKE_PACKAGE_REGISTRY
                     NO_CMAKE_SYSTEM_PACKAGE_REGISTRY)

find_package(KokkosKernels ${_sm_kk_find_args})
if(KokkosKernels_FOUND)
  message(STATUS "SoftMargin: perf tests use Kokkos Kernels ${KokkosKernels_VERSION} from ${KokkosKernels_DIR}")
  set(SOFTMARGIN_HAVE_KOKKOSKERNELS ON)
  return()
endif()

set(_sm_kk_source "${SOFTMARGIN_KOKKOSKERNELS_SOURCE}")
if(NOT _sm_kk_source AND EXISTS "${PROJECT_SOURCE_DIR}/../shared/deps/${SOFTMARGIN_KOKKOSKERNELS_ARCHIVE}")
  get_filename_component(_sm_kk_source "${PROJECT_SOURCE_DIR}/../shared/deps/${SOFTMARGIN_KOKKOSKERNELS_ARCHIVE}"
                         ABSOLUTE)
endif()
if(NOT _sm_kk_source)
  message(STATUS "SoftMargin: no Kokkos Kernels (set KokkosKernels_ROOT, or SOFTMARGIN_KOKKOSKERNELS_SOURCE to "
                 "${SOFTMARGIN_KOKKOSKERNELS_ARCHIVE}): the perf tests leave out the KokkosBlas peers")
  return()
endif()
if(NOT EXISTS "${_sm_kk_source}")
  message(FATAL_ERROR "SoftMargin: SOFTMARGIN_KOKKOSKERNELS_SOURCE=${_sm_kk_source} does not exist")
endif()
if(NOT Kokkos_DIR)
  message(STATUS "SoftMargin: Kokkos::kokkos comes from a parent project (no Kokkos_DIR to build Kokkos Kernels "
                 "against): the perf tests leave out the KokkosBlas peers")
  return()
endif()

# --- The options of the build; a stamp records them so that an unchanged configuration builds it once. ---
# Kokkos' own compiler (nvcc_wrapper for CUDA) when it is still there, else this project's.
set(_sm_kk_cxx "${CMAKE_CXX_COMPILER}")
if(Kokkos_CXX_COMPILER AND EXISTS "${Kokkos_CXX_COMPILER}")
  set(_sm_kk_cxx "${Kokkos_CXX_COMPILER}")
endif()
set(_sm_kk_args
    -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_INSTALL_PREFIX=${_sm_kk_prefix}
    -DCMAKE_INSTALL_LIBDIR=lib
    -DCMAKE_CXX_STANDARD=20
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON
    -DCMAKE_CXX_COMPILER=${_sm_kk_cxx}
    -DKokkos_DIR=${Kokkos_DIR}
    -DKokkosKernels_ENABLE_ALL_COMPONENTS=OFF
    -DKokkosKernels_ENABLE_COMPONENT_BLAS=ON
    -DKokkosKernels_ADD_DEFAULT_ETI=OFF
    -DKokkosKernels_ENABLE_TESTS=OFF
    -DKokkosKernels_ENABLE_EXAMPLES=OFF
    -DKokkosKernels_ENABLE_PERFTESTS=OFF
    -DKokkosKernels_ENABLE_BENCHMARKS=OFF
    -DKokkosKernels_NO_DEFAULT_CUDA_TPLS=ON
    -DKokkosKernels_ENABLE_TPL_BLAS=OFF
    -DKokkosKernels_ENABLE_TPL_LAPACK=OFF)
set(_sm_kk_env)
kokkos_check(DEVICES CUDA RETURN_VALUE _sm_kk_cuda)
if(_sm_kk_cuda)
  find_package(CUDAToolkit REQUIRED)
  get_filename_component(_sm_cuda_root "${CUDAToolkit_BIN_DIR}" DIRECTORY)
  set(_sm_kk_env "CUDA_ROOT=${_sm_cuda_root}" "NVCC_WRAPPER_DEFAULT_COMPILER=${CMAKE_CXX_COMPILER}")
endif()
string(SHA256 _sm_kk_stamp "${_sm_kk_source};${_sm_kk_args};${_sm_kk_env}")
if(EXISTS "${_sm_kk_root}/stamp" AND EXISTS "${_sm_kk_prefix}")
  file(READ "${_sm_kk_root}/stamp" _sm_kk_old_stamp)
endif()

if(NOT _sm_kk_old_stamp STREQUAL _sm_kk_stamp)
  # --- The source: an unpacked directory as it is; an archive checked and unpacked. ---
  if(IS_DIRECTORY "${_sm_kk_source}")
    set(_sm_kk_src "${_sm_kk_source}")
  else()
    file(SHA256 "${_sm_kk_source}" _sm_have)
    if(NOT _sm_have STREQUAL SOFTMARGIN_KOKKOSKERNELS_SHA256)
      message(FATAL_ERROR "SoftMargin: ${_sm_kk_source} has SHA-256 ${_sm_have}, expected "
                          "${SOFTMARGIN_KOKKOSKERNELS_SHA256} (${SOFTMARGIN_KOKKOSKERNELS_ARCHIVE})")
    endif()
    file(REMOVE_RECURSE "${_sm_kk_root}/src")
    file(ARCHIVE_EXTRACT INPUT "${_sm_kk_source}" DESTINATION "${_sm_kk_root}/src")
    file(GLOB _sm_top LIST_DIRECTORIES true "${_sm_kk_root}/src/*")
    list(LENGTH _sm_top _n)
    if(NOT _n EQUAL 1)
      message(FATAL_ERROR "SoftMargin: unexpected layout of ${_sm_kk_source}")
    endif()
    set(_sm_kk_src "${_sm_top}")
  endif()
  if(NOT EXISTS "${_sm_kk_src}/blas/src/KokkosBlas1_dot.hpp")
    message(FATAL_ERROR "SoftMargin: ${_sm_kk_src} is not a Kokkos Kernels source tree")
  endif()

  # --- Configure, build and install it. ---
  include(ProcessorCount)
  ProcessorCount(_sm_jobs)
  if(_sm_jobs EQUAL 0)
    set(_sm_jobs 2)
  endif()
  message(STATUS "SoftMargin: building Kokkos Kernels (BLAS) against ${Kokkos_DIR} into ${_sm_kk_prefix}")
  file(REMOVE_RECURSE "${_sm_kk_root}/build" "${_sm_kk_prefix}")
  foreach(_step IN ITEMS configure build install)
    if(_step STREQUAL "configure")
      set(_cmd ${CMAKE_COMMAND} -S ${_sm_kk_src} -B ${_sm_kk_root}/build -G ${CMAKE_GENERATOR} ${_sm_kk_args})
    elseif(_step STREQUAL "build")
      set(_cmd ${CMAKE_COMMAND} --build ${_sm_kk_root}/build --parallel ${_sm_jobs})
    else()
      set(_cmd ${CMAKE_COMMAND} --install ${_sm_kk_root}/build)
    endif()
    execute_process(COMMAND ${CMAKE_COMMAND} -E env ${_sm_kk_env} ${_cmd} RESULT_VARIABLE _rc
                    OUTPUT_FILE ${_sm_kk_root}/${_step}.log ERROR_FILE ${_sm_kk_root}/${_step}.log)
    if(NOT _rc EQUAL 0)
      file(READ ${_sm_kk_root}/${_step}.log _log)
      string(LENGTH "${_log}" _len)
      if(_len GREATER 6000)
        math(EXPR _from "${_len} - 6000")
        string(SUBSTRING "${_log}" ${_from} 6000 _log)
      endif()
      message(FATAL_ERROR "SoftMargin: Kokkos Kernels ${_step} failed (log: ${_sm_kk_root}/${_step}.log):\n${_log}")
    endif()
  endforeach()
  file(WRITE "${_sm_kk_root}/stamp" "${_sm_kk_stamp}")
endif()

find_package(KokkosKernels CONFIG REQUIRED PATHS "${_sm_kk_prefix}" NO_DEFAULT_PATH)
message(STATUS "SoftMargin: perf tests use Kokkos Kernels ${KokkosKernels_VERSION} built in ${_sm_kk_prefix}")
set(SOFTMARGIN_HAVE_KOKKOSKERNELS ON)

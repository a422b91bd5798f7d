# Provides Kokkos::kokkos (Kokkos >= 5).
#
# 1. A target Kokkos::kokkos that already exists (a parent project's) is used as it is.
# 2. Else find_package(Kokkos 5) where you point: Kokkos_ROOT, Kokkos_DIR or CMAKE_PREFIX_PATH (system prefixes are
#    not searched, so that a stray installation with other backends is never picked up by accident). When
#    SOFTMARGIN_KOKKOS_BACKENDS is set (the presets set it), the installation must have those backends.
# 3. Else Kokkos 5.0.2 is built and installed into the build tree at configure time (two stages, so that a CUDA build
#    compiles Kokkos with its nvcc_wrapper while this project keeps its own C++ compiler) and then found as in 2:
#    - source: SOFTMARGIN_KOKKOS_SOURCE (an archive or an unpacked directory), else Debian's
#      kokkos_5.0.2.orig.tar.gz downloaded from the Debian mirror named in this machine's apt sources;
#      an archive is always checked against its SHA-256;
#    - backends: SOFTMARGIN_KOKKOS_BACKENDS (e.g. "SERIAL;OPENMP" or "SERIAL;CUDA"), architecture:
#      SOFTMARGIN_KOKKOS_ARCH (e.g. "HOPPER90"), extra Kokkos options: SOFTMARGIN_KOKKOS_OPTIONS.
if(TARGET Kokkos::kokkos)
  return()
endif()

set(SOFTMARGIN_KOKKOS_VERSION 5.0.2)
set(SOFTMARGIN_KOKKOS_SHA256 188817bb452ca805ee8701f1c5adbbb4fb83dc8d1c50624566a18a719ba0fa5e)
set(SOFTMARGIN_KOKKOS_SOURCE "" CACHE STRING "Kokkos ${SOFTMARGIN_KOKKOS_VERSION} source to build when find_package(Kokkos) fails: an archive (checked against its SHA-256) or an unpacked directory; empty downloads it")
set(SOFTMARGIN_KOKKOS_BACKENDS "" CACHE STRING "Kokkos backends (SERIAL, OPENMP, CUDA, ...) to build Kokkos with here, and to require of a found Kokkos; empty: SERIAL;OPENMP for a build, anything for a found one")
set(SOFTMARGIN_KOKKOS_ARCH "" CACHE STRING "Kokkos architectures to enable when Kokkos is built here (e.g. HOPPER90)")
set(SOFTMARGIN_KOKKOS_OPTIONS "" CACHE STRING "Further -D options for the Kokkos build (a ;-list)")

string(TOUPPER "${SOFTMARGIN_KOKKOS_BACKENDS}" _sm_backends_upper)

# Whether the Kokkos found provides every backend asked for (FATAL_ERROR if not: it was pointed to explicitly).
macro(_softmargin_check_kokkos_backends)
  foreach(_b IN LISTS _sm_backends_upper)
    kokkos_check(DEVICES ${_b} RETURN_VALUE _sm_has)
    if(NOT _sm_has)
      message(FATAL_ERROR "SoftMargin: the Kokkos in ${Kokkos_DIR} has no ${_b} backend, which "
                          "SOFTMARGIN_KOKKOS_BACKENDS=${SOFTMARGIN_KOKKOS_BACKENDS} asks for (point Kokkos_ROOT to "
                          "another installation, or leave it unset to build Kokkos here)")
    endif()
  endforeach()
endmacro()

find_package(Kokkos 5 CONFIG QUIET NO_CMAKE_SYSTEM_PATH NO_SYSTEM_ENVIRONMENT_PATH NO_CMAKE_PACKAGE_REGISTRY
             NO_CMAKE_SYSTEM_PACKAGE_REGISTRY)
if(Kokkos_FOUND)
  _softmargin_check_kokkos_backends()
  message(STATUS "SoftMargin: using Kokkos ${Kokkos_VERSION} from ${Kokkos_DIR}")
  return()
endif()
if(NOT _sm_backends_upper)
  set(_sm_backends_upper SERIAL OPENMP)
endif()

set(_sm_kokkos_root "${CMAKE_BINARY_DIR}/_deps/kokkos")
set(_sm_kokkos_prefix "${_sm_kokkos_root}/install")

# --- The options of the build; a stamp records them so that an unchanged configuration builds Kokkos once. ---
set(_sm_kokkos_args
    -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_INSTALL_PREFIX=${_sm_kokkos_prefix}
    -DCMAKE_INSTALL_LIBDIR=lib
    -DCMAKE_CXX_STANDARD=20
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON
    -DKokkos_ENABLE_TESTS=OFF
    -DKokkos_ENABLE_EXAMPLES=OFF
    -DKokkos_ENABLE_BENCHMARKS=OFF)
foreach(_b IN LISTS _sm_backends_upper)
  list(APPEND _sm_kokkos_args -DKokkos_ENABLE_${_b}=ON)
endforeach()
foreach(_a IN LISTS SOFTMARGIN_KOKKOS_ARCH)
  string(TOUPPER "${_a}" _a)
  list(APPEND _sm_kokkos_args -DKokkos_ARCH_${_a}=ON)
endforeach()
list(APPEND _sm_kokkos_args ${SOFTMARGIN_KOKKOS_OPTIONS})
set(_sm_kokkos_env)
if("CUDA" IN_LIST _sm_backends_upper)
  # Kokkos' CUDA build compiles through its nvcc_wrapper; nvcc is taken from the CUDA toolkit CMake finds.
  find_package(CUDAToolkit REQUIRED)
  get_filename_component(_sm_cuda_root "${CUDAToolkit_BIN_DIR}" DIRECTORY)
  list(APPEND _sm_kokkos_args -DCMAKE_CXX_COMPILER=@NVCC_WRAPPER@ -DCMAKE_CUDA_COMPILER=${CUDAToolkit_NVCC_EXECUTABLE})
  set(_sm_kokkos_env "CUDA_ROOT=${_sm_cuda_root}" "NVCC_WRAPPER_DEFAULT_COMPILER=${CMAKE_CXX_COMPILER}")
else()
  list(APPEND _sm_kokkos_args -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER})
endif()
if(CMAKE_TOOLCHAIN_FILE)
  # A cross build (cmake/toolchains/): Kokkos is built for the same target, its checks run under the same emulator.
  get_filename_component(_sm_toolchain "${CMAKE_TOOLCHAIN_FILE}" ABSOLUTE BASE_DIR "${CMAKE_BINARY_DIR}")
  list(APPEND _sm_kokkos_args -DCMAKE_TOOLCHAIN_FILE=${_sm_toolchain})
endif()
string(SHA256 _sm_kokkos_stamp "${SOFTMARGIN_KOKKOS_VERSION};${SOFTMARGIN_KOKKOS_SOURCE};${_sm_kokkos_args};${_sm_kokkos_env}")

if(EXISTS "${_sm_kokkos_root}/stamp" AND EXISTS "${_sm_kokkos_prefix}")
  file(READ "${_sm_kokkos_root}/stamp" _sm_old_stamp)
endif()

if(NOT _sm_old_stamp STREQUAL _sm_kokkos_stamp)
  # --- Obtain the source. ---
  set(_sm_src "")
  set(_sm_archive "")
  if(SOFTMARGIN_KOKKOS_SOURCE)
    if(IS_DIRECTORY "${SOFTMARGIN_KOKKOS_SOURCE}")
      set(_sm_src "${SOFTMARGIN_KOKKOS_SOURCE}")
    elseif(EXISTS "${SOFTMARGIN_KOKKOS_SOURCE}")
      set(_sm_archive "${SOFTMARGIN_KOKKOS_SOURCE}")
    else()
      message(FATAL_ERROR "SoftMargin: SOFTMARGIN_KOKKOS_SOURCE=${SOFTMARGIN_KOKKOS_SOURCE} does not exist")
    endif()
  else()
    set(_sm_archive "${_sm_kokkos_root}/kokkos_${SOFTMARGIN_KOKKOS_VERSION}.orig.tar.gz")
    if(EXISTS "${_sm_archive}")
      file(SHA256 "${_sm_archive}" _sm_have)
      if(NOT _sm_have STREQUAL SOFTMARGIN_KOKKOS_SHA256)
        file(REMOVE "${_sm_archive}")
      endif()
    endif()
    if(NOT EXISTS "${_sm_archive}")
      include(${CMAKE_CURRENT_LIST_DIR}/SoftMarginDebianMirror.cmake)
      softmargin_debian_mirrors(_sm_mirrors)
      if(NOT _sm_mirrors)
        message(FATAL_ERROR "SoftMargin: Kokkos 5 was not found (set Kokkos_ROOT), and no Debian mirror is named in "
                            "the apt sources to download it from (or set SOFTMARGIN_KOKKOS_SOURCE to its archive)")
      endif()
      foreach(_m IN LISTS _sm_mirrors)
        set(_url "${_m}/pool/main/k/kokkos/kokkos_${SOFTMARGIN_KOKKOS_VERSION}.orig.tar.gz")
        message(STATUS "SoftMargin: downloading ${_url}")
        file(DOWNLOAD "${_url}" "${_sm_archive}.part" STATUS _st TLS_VERIFY ON)
        list(GET _st 0 _code)
        if(_code EQUAL 0)
          file(RENAME "${_sm_archive}.part" "${_sm_archive}")
          break()
        endif()
        message(STATUS "SoftMargin: download failed: ${_st}")
        file(REMOVE "${_sm_archive}.part")
      endforeach()
      if(NOT EXISTS "${_sm_archive}")
        message(FATAL_ERROR "SoftMargin: could not download Kokkos ${SOFTMARGIN_KOKKOS_VERSION} from ${_sm_mirrors} "
                            "(set Kokkos_ROOT to an installation or SOFTMARGIN_KOKKOS_SOURCE to its archive)")
      endif()
    endif()
  endif()
  if(_sm_archive)
    file(SHA256 "${_sm_archive}" _sm_have)
    if(NOT _sm_have STREQUAL SOFTMARGIN_KOKKOS_SHA256)
      message(FATAL_ERROR "SoftMargin: ${_sm_archive} has SHA-256 ${_sm_have}, expected ${SOFTMARGIN_KOKKOS_SHA256}")
    endif()
    file(REMOVE_RECURSE "${_sm_kokkos_root}/src")
    file(ARCHIVE_EXTRACT INPUT "${_sm_archive}" DESTINATION "${_sm_kokkos_root}/src")
    file(GLOB _sm_top LIST_DIRECTORIES true "${_sm_kokkos_root}/src/*")
    list(LENGTH _sm_top _n)
    if(NOT _n EQUAL 1)
      message(FATAL_ERROR "SoftMargin: unexpected layout of ${_sm_archive}")
    endif()
    set(_sm_src "${_sm_top}")
  endif()
  if(NOT EXISTS "${_sm_src}/CMakeLists.txt")
    message(FATAL_ERROR "SoftMargin: ${_sm_src} is not a Kokkos source tree")
  endif()

  # --- Configure, build and install it. ---
  string(REPLACE "@NVCC_WRAPPER@" "${_sm_src}/bin/nvcc_wrapper" _sm_args "${_sm_kokkos_args}")
  include(ProcessorCount)
  ProcessorCount(_sm_jobs)
  if(_sm_jobs EQUAL 0)
    set(_sm_jobs 2)
  endif()
  message(STATUS "SoftMargin: building Kokkos ${SOFTMARGIN_KOKKOS_VERSION} (${_sm_backends_upper}) into ${_sm_kokkos_prefix}")
  file(REMOVE_RECURSE "${_sm_kokkos_root}/build" "${_sm_kokkos_prefix}")
  foreach(_step IN ITEMS configure build install)
    if(_step STREQUAL "configure")
      set(_cmd ${CMAKE_COMMAND} -S ${_sm_src} -B ${_sm_kokkos_root}/build -G ${CMAKE_GENERATOR} ${_sm_args})
    elseif(_step STREQUAL "build")
      set(_cmd ${CMAKE_COMMAND} --build ${_sm_kokkos_root}/build --parallel ${_sm_jobs})
    else()
      set(_cmd ${CMAKE_COMMAND} --install ${_sm_kokkos_root}/build)
    endif()
    execute_process(COMMAND ${CMAKE_COMMAND} -E env ${_sm_kokkos_env} ${_cmd}
                    RESULT_VARIABLE _rc OUTPUT_FILE ${_sm_kokkos_root}/${_step}.log ERROR_FILE ${_sm_kokkos_root}/${_step}.log)
    if(NOT _rc EQUAL 0)
      file(READ ${_sm_kokkos_root}/${_step}.log _log)
      string(LENGTH "${_log}" _len)
      if(_len GREATER 6000)
        math(EXPR _from "${_len} - 6000")
        string(SUBSTRING "${_log}" ${_from} 6000 _log)
      endif()
      message(FATAL_ERROR "SoftMargin: Kokkos ${_step} failed (log: ${_sm_kokkos_root}/${_step}.log):\n${_log}")
    endif()
  endforeach()
  file(WRITE "${_sm_kokkos_root}/stamp" "${_sm_kokkos_stamp}")
endif()

# NO_CMAKE_FIND_ROOT_PATH: a cross toolchain's root would otherwise be put in front of the build tree's path.
find_package(Kokkos 5 CONFIG REQUIRED PATHS "${_sm_kokkos_prefix}" NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
_softmargin_check_kokkos_backends()
message(STATUS "SoftMargin: using Kokkos ${Kokkos_VERSION} built in ${_sm_kokkos_prefix}")

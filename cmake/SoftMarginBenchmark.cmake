# Finds Google Benchmark (>= 1.7) for the perf tests and sets benchmark_FOUND.
#
# 1. find_package(benchmark) where CMake looks (an installed libbenchmark-dev, benchmark_ROOT, CMAKE_PREFIX_PATH).
# 2. Else, when SOFTMARGIN_BENCHMARK_DEBS names a folder holding Debian's libbenchmark-dev_*.deb and
#    libbenchmark1debian_*.deb (`apt-get download libbenchmark-dev libbenchmark1debian`), they are unpacked under the
#    build tree (no dpkg, no root: CMake reads the .deb archives itself) and found there; the benchmark executable
#    finds the shared library through its build RPATH. This is for machines without the package and without network.
set(SOFTMARGIN_BENCHMARK_DEBS "" CACHE PATH "Folder with Debian's libbenchmark-dev and libbenchmark1debian .deb files, unpacked under the build tree when find_package(benchmark) fails")

find_package(benchmark 1.7 QUIET)
if(benchmark_FOUND OR NOT SOFTMARGIN_BENCHMARK_DEBS)
  return()
endif()

file(GLOB _sm_gb_debs "${SOFTMARGIN_BENCHMARK_DEBS}/libbenchmark-dev_*.deb"
     "${SOFTMARGIN_BENCHMARK_DEBS}/libbenchmark1debian_*.deb")
list(LENGTH _sm_gb_debs _n)
if(NOT _n EQUAL 2)
  message(FATAL_ERROR "SoftMargin: SOFTMARGIN_BENCHMARK_DEBS=${SOFTMARGIN_BENCHMARK_DEBS} must hold one "
                      "libbenchmark-dev_*.deb and one libbenchmark1debian_*.deb (found: ${_sm_gb_debs})")
endif()

set(_sm_gb_root "${CMAKE_BINARY_DIR}/_deps/gbench")
set(_sm_gb_prefix "${_sm_gb_root}/root")
string(SHA256 _sm_gb_stamp "${_sm_gb_debs}")
if(EXISTS "${_sm_gb_root}/stamp")
  file(READ "${_sm_gb_root}/stamp" _sm_gb_old_stamp)
endif()
if(NOT _sm_gb_old_stamp STREQUAL _sm_gb_stamp)
  file(REMOVE_RECURSE "${_sm_gb_root}")
  foreach(_deb IN LISTS _sm_gb_debs)
    # A .deb is an ar archive holding data.tar.*; the files installed lie in that inner archive.
    get_filename_component(_name "${_deb}" NAME_WE)
    set(_outer "${_sm_gb_root}/deb/${_name}")
    file(ARCHIVE_EXTRACT INPUT "${_deb}" DESTINATION "${_outer}")
    file(GLOB _data "${_outer}/data.tar.*")
    if(NOT _data)
      message(FATAL_ERROR "SoftMargin: ${_deb} holds no data.tar.*")
    endif()
    file(ARCHIVE_EXTRACT INPUT "${_data}" DESTINATION "${_sm_gb_prefix}")
  endforeach()
  file(WRITE "${_sm_gb_root}/stamp" "${_sm_gb_stamp}")
endif()

file(GLOB _sm_gb_config "${_sm_gb_prefix}/usr/lib/*/cmake/benchmark/benchmarkConfig.cmake"
     "${_sm_gb_prefix}/usr/lib/cmake/benchmark/benchmarkConfig.cmake")
if(NOT _sm_gb_config)
  message(FATAL_ERROR "SoftMargin: no benchmarkConfig.cmake in the packages of ${SOFTMARGIN_BENCHMARK_DEBS}")
endif()
list(GET _sm_gb_config 0 _sm_gb_config)
get_filename_component(_sm_gb_dir "${_sm_gb_config}" DIRECTORY)
find_package(benchmark 1.7 CONFIG REQUIRED PATHS "${_sm_gb_dir}" NO_DEFAULT_PATH)
message(STATUS "SoftMargin: Google Benchmark ${benchmark_VERSION} from the packages in ${SOFTMARGIN_BENCHMARK_DEBS}")

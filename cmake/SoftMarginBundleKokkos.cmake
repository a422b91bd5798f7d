# Installs the Kokkos that cmake/SoftMarginKokkos.cmake built in this build tree (if it did) into the install prefix,
# next to the library, so that the installed package works after the build tree is moved or deleted.
#
# Sets, for SoftMarginConfig.cmake:
#   SOFTMARGIN_KOKKOS_BUNDLED     ON when Kokkos is installed with the library
#   SOFTMARGIN_KOKKOS_CONFIG_DIR  Kokkos' package directory: relative to the prefix when bundled, else Kokkos_DIR
#
# Kokkos' installed config names two paths of the tree it was built in: the install prefix (a fallback search hint)
# and, in a CUDA build, its compiler (nvcc_wrapper in the Kokkos source). At install time the first becomes the new
# prefix and the second the nvcc_wrapper installed with Kokkos, found relative to the config file; the install fails
# if any path into the Kokkos build area (build tree/_deps/kokkos) remains.
set(SOFTMARGIN_KOKKOS_BUNDLED OFF)
set(SOFTMARGIN_KOKKOS_CONFIG_DIR "${Kokkos_DIR}")
set(_sm_kokkos_root "${CMAKE_BINARY_DIR}/_deps/kokkos")
set(_sm_kokkos_prefix "${_sm_kokkos_root}/install")
if(NOT Kokkos_DIR)
  return()
endif()
cmake_path(IS_PREFIX _sm_kokkos_prefix "${Kokkos_DIR}" NORMALIZE _sm_built_here)
if(NOT _sm_built_here)
  return()
endif()

set(SOFTMARGIN_KOKKOS_BUNDLED ON)
file(REAL_PATH "${Kokkos_DIR}" _sm_config_dir)
file(REAL_PATH "${_sm_kokkos_prefix}" _sm_prefix_real)
file(RELATIVE_PATH SOFTMARGIN_KOKKOS_CONFIG_DIR "${_sm_prefix_real}" "${_sm_config_dir}")  # lib/cmake/Kokkos
file(RELATIVE_PATH _sm_config_to_prefix "${_sm_config_dir}" "${_sm_prefix_real}")          # ../../..

install(DIRECTORY "${_sm_kokkos_prefix}/" DESTINATION . USE_SOURCE_PERMISSIONS)
install(CODE "set(_sm_config_dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${SOFTMARGIN_KOKKOS_CONFIG_DIR}\")
set(_sm_config_to_prefix \"${_sm_config_to_prefix}\")
set(_sm_old_prefix \"${_sm_kokkos_prefix}\")
set(_sm_kokkos_root \"${_sm_kokkos_root}\")")
install(CODE [[
file(GLOB _sm_files "${_sm_config_dir}/*.cmake")
foreach(_sm_file IN LISTS _sm_files)
  file(READ "${_sm_file}" _sm_text)
  set(_sm_before "${_sm_text}")
  # Kokkos' compiler when it is one of Kokkos' own scripts (a CUDA build's nvcc_wrapper, in the Kokkos source): the
  # copy installed in <prefix>/bin.
  if(_sm_text MATCHES "set\\(Kokkos_CXX_COMPILER \"([^\"]*)\"\\)")
    set(_sm_compiler "${CMAKE_MATCH_1}")
    get_filename_component(_sm_name "${_sm_compiler}" NAME)
    if(EXISTS "${_sm_config_dir}/${_sm_config_to_prefix}/bin/${_sm_name}")
      set(_sm_installed "\${CMAKE_CURRENT_LIST_DIR}/${_sm_config_to_prefix}/bin/${_sm_name}")
      string(REPLACE "set(Kokkos_CXX_COMPILER \"${_sm_compiler}\")"
                     "get_filename_component(Kokkos_CXX_COMPILER \"${_sm_installed}\" ABSOLUTE)" _sm_text "${_sm_text}")
    endif()
  endif()
  string(REPLACE "${_sm_old_prefix}" "${CMAKE_INSTALL_PREFIX}" _sm_text "${_sm_text}")
  string(FIND "${_sm_text}" "${_sm_kokkos_root}/" _sm_at)
  if(NOT _sm_at EQUAL -1)
    message(FATAL_ERROR "SoftMargin: ${_sm_file} still names the build tree (${_sm_kokkos_root}): the installed "
                        "Kokkos would break when the build tree is removed")
  endif()
  if(NOT _sm_text STREQUAL _sm_before)
    file(WRITE "${_sm_file}" "${_sm_text}")
  endif()
endforeach()
]])

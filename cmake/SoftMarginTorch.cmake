# Finds PyTorch for the operator library in python/ and sets SOFTMARGIN_ENABLE_TORCH's default.
#
# torch is found through a Python interpreter that imports it: SOFTMARGIN_PYTHON, else Python3_EXECUTABLE, else the
# first of `python3` on PATH and /usr/bin/python3 that can `import torch` (so Debian's python3-torch is found even when
# another python3, without torch, comes first on PATH). torch itself names its headers, its libraries (the directory
# of the libc10 it loaded), its C++ ABI (torch._C._GLIBCXX_USE_CXX11_ABI) and whether it was built with CUDA; they
# become the imported target SoftMargin::torch. TorchConfig.cmake is not used: for a CUDA build of torch it runs
# Caffe2's CUDA toolkit discovery, which an operator library does not need and which fails on some toolkits.
#
# Sets: SOFTMARGIN_PYTHON (cache), SoftMarginTorch_FOUND, SoftMarginTorch_VERSION, SoftMarginTorch_CUDA (torch has
# CUDA), SoftMarginTorch_CUDA_VERSION, SoftMarginTorch_CXX11_ABI, SoftMarginTorch_LIBRARY_DIR,
# SoftMarginTorch_PYTHON_ENTRY (Python's headers, pybind11 and libtorch_python found) and
# SoftMarginTorch_PYTHON_EXT_SUFFIX; defines SoftMargin::torch when found, and SoftMargin::torch_python with the entry.

set(SoftMarginTorch_FOUND FALSE)
set(SoftMarginTorch_CUDA FALSE)

set(_sm_torch_query [=[
import os, sys
import torch
lib = ""
with open("/proc/self/maps") as maps:
    for line in maps:
        path = line.split()[-1]
        if os.path.basename(path).startswith("libc10.so"):
            lib = os.path.dirname(os.path.realpath(path))
            break
root = os.path.dirname(torch.__file__)
print("version=" + torch.__version__.split("+")[0])
print("include=" + os.path.join(root, "include") + ";" + os.path.join(root, "include", "torch", "csrc", "api", "include"))
print("libdir=" + lib)
print("abi=" + str(int(torch._C._GLIBCXX_USE_CXX11_ABI)))
print("cuda=" + (torch.version.cuda or ""))
import sysconfig
print("pyinclude=" + (sysconfig.get_paths().get("include") or ""))
print("extsuffix=" + (sysconfig.get_config_var("EXT_SUFFIX") or ""))
]=])

function(_softmargin_torch_probe python out_ok)
  execute_process(COMMAND "${python}" -c "${_sm_torch_query}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_QUIET
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(rc EQUAL 0 AND out MATCHES "libdir=/")
    set(${out_ok} TRUE PARENT_SCOPE)
    set(_sm_torch_out "${out}" PARENT_SCOPE)
  else()
    set(${out_ok} FALSE PARENT_SCOPE)
  endif()
endfunction()

set(SOFTMARGIN_PYTHON "" CACHE FILEPATH "Python interpreter whose torch the PyTorch operators are built for (and which runs their tests); empty: found")
set(_sm_candidates "${SOFTMARGIN_PYTHON}")
if(NOT SOFTMARGIN_PYTHON)
  find_program(_sm_path_python3 NAMES python3 NO_CACHE)
  set(_sm_candidates "${Python3_EXECUTABLE}" "${_sm_path_python3}" /usr/bin/python3)
endif()
foreach(_py IN LISTS _sm_candidates)
  if(NOT _py OR NOT EXISTS "${_py}")
    continue()
  endif()
  _softmargin_torch_probe("${_py}" _ok)
  if(_ok)
    set(SOFTMARGIN_PYTHON "${_py}" CACHE FILEPATH "" FORCE)
    set(SoftMarginTorch_FOUND TRUE)
    break()
  endif()
endforeach()

if(NOT SoftMarginTorch_FOUND)
  message(STATUS "SoftMargin: no Python interpreter that imports torch (tried: ${_sm_candidates}); "
                 "the PyTorch operators are not built (set SOFTMARGIN_PYTHON)")
  return()
endif()

string(REGEX MATCH "version=([^\n]*)" _ "${_sm_torch_out}")
set(SoftMarginTorch_VERSION "${CMAKE_MATCH_1}")
string(REGEX MATCH "include=([^\n]*)" _ "${_sm_torch_out}")
set(_sm_torch_includes "${CMAKE_MATCH_1}")
string(REGEX MATCH "libdir=([^\n]*)" _ "${_sm_torch_out}")
set(SoftMarginTorch_LIBRARY_DIR "${CMAKE_MATCH_1}")
string(REGEX MATCH "abi=([01])" _ "${_sm_torch_out}")
set(SoftMarginTorch_CXX11_ABI "${CMAKE_MATCH_1}")
string(REGEX MATCH "cuda=([^\n]*)" _ "${_sm_torch_out}")
set(SoftMarginTorch_CUDA_VERSION "${CMAKE_MATCH_1}")
if(SoftMarginTorch_CUDA_VERSION)
  set(SoftMarginTorch_CUDA TRUE)
endif()
string(REGEX MATCH "pyinclude=([^\n]*)" _ "${_sm_torch_out}")
set(_sm_python_include "${CMAKE_MATCH_1}")
string(REGEX MATCH "extsuffix=([^\n]*)" _ "${_sm_torch_out}")
set(SoftMarginTorch_PYTHON_EXT_SUFFIX "${CMAKE_MATCH_1}")

set(_sm_torch_libs c10 torch_cpu)
if(SoftMarginTorch_CUDA)
  list(APPEND _sm_torch_libs c10_cuda)
endif()
set(_sm_torch_link)
foreach(_lib IN LISTS _sm_torch_libs)
  find_library(SOFTMARGIN_TORCH_LIB_${_lib} NAMES ${_lib} PATHS "${SoftMarginTorch_LIBRARY_DIR}" NO_DEFAULT_PATH)
  if(NOT SOFTMARGIN_TORCH_LIB_${_lib})
    message(STATUS "SoftMargin: torch ${SoftMarginTorch_VERSION} (${SOFTMARGIN_PYTHON}) has no lib${_lib} in "
                   "${SoftMarginTorch_LIBRARY_DIR}; the PyTorch operators are not built")
    set(SoftMarginTorch_FOUND FALSE)
    return()
  endif()
  list(APPEND _sm_torch_link "${SOFTMARGIN_TORCH_LIB_${_lib}}")
endforeach()

# The lean Python entry (python/csrc/SoftMarginTorch_Entry.cpp) needs Python's headers, pybind11's (torch's own, else
# the system's) and libtorch_python; without them the package calls the operator through torch.ops.
set(SoftMarginTorch_PYTHON_ENTRY FALSE)
find_path(SOFTMARGIN_PYBIND11_INCLUDE pybind11/pybind11.h HINTS ${_sm_torch_includes})
find_library(SOFTMARGIN_TORCH_LIB_torch_python NAMES torch_python PATHS "${SoftMarginTorch_LIBRARY_DIR}"
             NO_DEFAULT_PATH)
if(EXISTS "${_sm_python_include}/Python.h" AND SOFTMARGIN_PYBIND11_INCLUDE AND SOFTMARGIN_TORCH_LIB_torch_python
   AND SoftMarginTorch_PYTHON_EXT_SUFFIX)
  set(SoftMarginTorch_PYTHON_ENTRY TRUE)
  add_library(SoftMargin::torch_python INTERFACE IMPORTED)
  set_target_properties(SoftMargin::torch_python PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${_sm_python_include};${SOFTMARGIN_PYBIND11_INCLUDE}"
    INTERFACE_LINK_LIBRARIES "${SOFTMARGIN_TORCH_LIB_torch_python}")
endif()

add_library(SoftMargin::torch INTERFACE IMPORTED)
set_target_properties(SoftMargin::torch PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${_sm_torch_includes}"
  INTERFACE_COMPILE_DEFINITIONS "_GLIBCXX_USE_CXX11_ABI=${SoftMarginTorch_CXX11_ABI}"
  INTERFACE_LINK_LIBRARIES "${_sm_torch_link}")
if(SoftMarginTorch_CUDA)
  set(_sm_torch_kind "CUDA ${SoftMarginTorch_CUDA_VERSION}")
else()
  set(_sm_torch_kind "CPU")
endif()
message(STATUS "SoftMargin: torch ${SoftMarginTorch_VERSION} (${_sm_torch_kind}) from ${SOFTMARGIN_PYTHON}, "
               "libraries in ${SoftMarginTorch_LIBRARY_DIR}")
if(NOT SoftMarginTorch_CXX11_ABI)
  message(WARNING "SoftMargin: torch was built with the pre-C++11 libstdc++ ABI (_GLIBCXX_USE_CXX11_ABI=0); Kokkos and "
                  "this project must then be built with -D_GLIBCXX_USE_CXX11_ABI=0 too (CMAKE_CXX_FLAGS), or linking "
                  "the operators fails")
endif()

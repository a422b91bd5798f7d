# The configuration of a build of the Python package (pip install / pip wheel through scikit-build-core, which sets
# SKBUILD; pyproject.toml): the PyTorch operators and the library they link, nothing else, for the torch of the Python
# that runs the build. Included before Kokkos is found or built, once torch is known (cmake/SoftMarginTorch.cmake).
#
# SOFTMARGIN_TORCH_CUDA (AUTO, ON, OFF): AUTO builds the CUDA kernels where torch has CUDA and nvcc is found (on PATH
# or in /usr/local/cuda), ON requires both, OFF makes a CPU build. A CUDA build is Kokkos' CUDA backend with Serial on
# the host, for one GPU architecture: SOFTMARGIN_CUDA_ARCH (90, 9.0, sm_90 or HOPPER90), else that of torch's GPU 0.
# A CPU build is the `openmp` preset's: OpenMP (and Serial), tuned for this CPU. Either sets the Kokkos backends and
# architecture and the library's instantiations (SOFTMARGIN_ETI_BACKENDS: the host backend the operators run on)
# unless they are given.
set(SOFTMARGIN_TORCH_CUDA AUTO CACHE STRING "Python package: CUDA kernels for the operators (AUTO: where torch has CUDA and nvcc is found; ON; OFF)")
set_property(CACHE SOFTMARGIN_TORCH_CUDA PROPERTY STRINGS AUTO ON OFF)
set(SOFTMARGIN_CUDA_ARCH "" CACHE STRING "Python package: the GPU architecture of a CUDA build (90, 9.0, sm_90 or HOPPER90); empty: torch's GPU 0")

if(NOT SoftMarginTorch_FOUND)
  message(FATAL_ERROR "SoftMargin: the Python package builds the PyTorch operators, but the Python that runs the build "
                      "(${Python3_EXECUTABLE}) does not import torch. Install torch >= 2.4 there and build without "
                      "isolation: pip install --no-build-isolation .")
endif()
if(SoftMarginTorch_VERSION VERSION_LESS 2.4)
  message(FATAL_ERROR "SoftMargin: torch ${SoftMarginTorch_VERSION} is too old; the package needs torch >= 2.4 "
                      "(torch.library.register_fake, opcheck, symbolic shapes in C++)")
endif()

# Kokkos' names of the NVIDIA architectures, by compute capability.
set(_sm_arch_60 PASCAL60)
set(_sm_arch_61 PASCAL61)
set(_sm_arch_70 VOLTA70)
set(_sm_arch_72 VOLTA72)
set(_sm_arch_75 TURING75)
set(_sm_arch_80 AMPERE80)
set(_sm_arch_86 AMPERE86)
set(_sm_arch_87 AMPERE87)
set(_sm_arch_89 ADA89)
set(_sm_arch_90 HOPPER90)
set(_sm_arch_100 BLACKWELL100)
set(_sm_arch_120 BLACKWELL120)

# The CUDA choice and why.
string(TOUPPER "${SOFTMARGIN_TORCH_CUDA}" _sm_want_cuda)
find_program(SOFTMARGIN_NVCC nvcc HINTS ENV CUDA_HOME PATHS /usr/local/cuda/bin)
set(_sm_cuda OFF)
if(_sm_want_cuda STREQUAL "OFF")
  set(_sm_why "CPU build: SOFTMARGIN_TORCH_CUDA=OFF")
elseif(NOT SoftMarginTorch_CUDA)
  set(_sm_why "CPU build: torch ${SoftMarginTorch_VERSION} has no CUDA")
elseif(NOT SOFTMARGIN_NVCC)
  set(_sm_why "CPU build: torch ${SoftMarginTorch_VERSION} has CUDA ${SoftMarginTorch_CUDA_VERSION}, but nvcc is not found (PATH, CUDA_HOME, /usr/local/cuda)")
else()
  set(_sm_cuda ON)
endif()
if(_sm_want_cuda STREQUAL "ON" AND NOT _sm_cuda)
  message(FATAL_ERROR "SoftMargin: SOFTMARGIN_TORCH_CUDA=ON, but this is a ${_sm_why}")
elseif(NOT _sm_want_cuda MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "SoftMargin: SOFTMARGIN_TORCH_CUDA=${SOFTMARGIN_TORCH_CUDA}: expected AUTO, ON or OFF")
endif()

if(_sm_cuda)
  if(SOFTMARGIN_CUDA_ARCH)
    string(TOUPPER "${SOFTMARGIN_CUDA_ARCH}" _sm_cc)
    string(REGEX REPLACE "^(SM_|COMPUTE_)" "" _sm_cc "${_sm_cc}")
    string(REPLACE "." "" _sm_cc "${_sm_cc}")
    set(_sm_source "SOFTMARGIN_CUDA_ARCH=${SOFTMARGIN_CUDA_ARCH}")
  else()
    execute_process(COMMAND "${SOFTMARGIN_PYTHON}" -c
                            "import torch; assert torch.cuda.is_available(); print('%d%d' % torch.cuda.get_device_capability(0), torch.cuda.get_device_name(0))"
                    RESULT_VARIABLE _sm_rc OUTPUT_VARIABLE _sm_gpu ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT _sm_rc EQUAL 0)
      message(FATAL_ERROR "SoftMargin: torch has CUDA and nvcc is found (${SOFTMARGIN_NVCC}), but torch sees no GPU to "
                          "take the architecture from: pass SOFTMARGIN_CUDA_ARCH (e.g. pip install --no-build-isolation "
                          "-C cmake.define.SOFTMARGIN_CUDA_ARCH=90 . for H100/H200), or SOFTMARGIN_TORCH_CUDA=OFF for a "
                          "CPU build")
    endif()
    string(REGEX MATCH "^[0-9]+" _sm_cc "${_sm_gpu}")
    string(REGEX REPLACE "^[0-9]+ " "" _sm_gpu_name "${_sm_gpu}")
    set(_sm_source "torch's GPU 0, ${_sm_gpu_name}")
  endif()
  set(_sm_arch "")
  foreach(_sm_known IN ITEMS 60 61 70 72 75 80 86 87 89 90 100 120)
    if(_sm_cc STREQUAL "${_sm_known}" OR _sm_cc STREQUAL "${_sm_arch_${_sm_known}}")
      set(_sm_arch "${_sm_arch_${_sm_known}}")
    endif()
  endforeach()
  if(NOT _sm_arch)
    message(FATAL_ERROR "SoftMargin: compute capability ${_sm_cc} (${_sm_source}) has no Kokkos architecture; Kokkos "
                        "knows 60 61 70 72 75 80 86 87 89 90 100 120 (pass SOFTMARGIN_CUDA_ARCH, the nearest below)")
  endif()
  set(_sm_why "CUDA build for ${_sm_arch} (${_sm_source}; torch CUDA ${SoftMarginTorch_CUDA_VERSION}, nvcc ${SOFTMARGIN_NVCC})")
  set(_sm_backends "SERIAL;CUDA")
  # The library holds the host passes of every algorithm (few and quick to compile); the CUDA operators compile the
  # native kernels they run (softmargin::auto_only) rather than link those of all three algorithms.
  set(_sm_eti "Serial")
  get_filename_component(_sm_nvcc_dir "${SOFTMARGIN_NVCC}" DIRECTORY)
  set(ENV{PATH} "${_sm_nvcc_dir}:$ENV{PATH}")  # Kokkos' nvcc_wrapper calls nvcc
else()
  set(_sm_arch NATIVE)
  set(_sm_backends "SERIAL;OPENMP")
  set(_sm_eti "OpenMP")
endif()

# What the user did not give.
if(NOT SOFTMARGIN_KOKKOS_BACKENDS)
  set(SOFTMARGIN_KOKKOS_BACKENDS "${_sm_backends}" CACHE STRING "" FORCE)
endif()
if(NOT SOFTMARGIN_KOKKOS_ARCH)
  set(SOFTMARGIN_KOKKOS_ARCH "${_sm_arch}" CACHE STRING "" FORCE)
endif()
if(NOT DEFINED CACHE{SOFTMARGIN_ETI_BACKENDS})
  set(SOFTMARGIN_ETI_BACKENDS "${_sm_eti}" CACHE STRING "")
endif()
message(STATUS "SoftMargin: Python package, ${_sm_why}")

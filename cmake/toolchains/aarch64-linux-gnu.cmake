# Cross build for 64-bit Arm Linux (aarch64, e.g. NVIDIA Grace) with Debian's cross compiler (g++-aarch64-linux-gnu;
# OpenMP: libgomp1-arm64-cross). Programs built here run under Debian's qemu-user (CMAKE_CROSSCOMPILING_EMULATOR):
# CTest's tests and Kokkos' configure-time checks. cmake/SoftMarginKokkos.cmake passes this file on to the Kokkos it
# builds, so that Kokkos is cross-built too.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(SOFTMARGIN_CROSS_PREFIX aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${SOFTMARGIN_CROSS_PREFIX}-gcc)
set(CMAKE_CXX_COMPILER ${SOFTMARGIN_CROSS_PREFIX}-g++)

# Libraries, headers and packages come from the target's root only (never x86's GoogleTest or MPI); programs (the
# build's tools) from the build machine.
set(CMAKE_FIND_ROOT_PATH /usr/${SOFTMARGIN_CROSS_PREFIX})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# The CPU qemu emulates: "max" has every extension qemu knows, SVE included, here with SVE vectors of 128 bits
# (16 bytes; qemu-user's default is 512), Grace's (Neoverse V2) length. Kokkos_ARCH_ARMV84_SVE probes the length by
# running a program under this emulator and compiles for it (-msve-vector-bits=128: code built for one length is wrong
# at another). SOFTMARGIN_QEMU_CPU in the environment overrides it.
if(DEFINED ENV{SOFTMARGIN_QEMU_CPU})
  set(_sm_qemu_cpu "$ENV{SOFTMARGIN_QEMU_CPU}")
else()
  set(_sm_qemu_cpu "max,sve-default-vector-length=16")
endif()
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-${CMAKE_SYSTEM_PROCESSOR};-L;/usr/${SOFTMARGIN_CROSS_PREFIX};-cpu;${_sm_qemu_cpu})

#!/usr/bin/env bash
# Installs what the build needs from Debian's packages when it is missing (a stock machine has all of it).
# Usage: scripts/ensure_tools.sh [aarch64]   aarch64: also the Arm cross build's tools (scripts/host_archs.sh)
set -euo pipefail
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v g++ >/dev/null || need+=(g++)
command -v make >/dev/null || need+=(make)
command -v python3 >/dev/null || need+=(python3)
[ -f /usr/include/benchmark/benchmark.h ] || need+=(libbenchmark-dev)
# MPI (the optional layer and its tests): Debian's Open MPI, unless an MPI is there already.
command -v mpicxx >/dev/null || need+=(libopenmpi-dev)
command -v mpiexec >/dev/null || need+=(openmpi-bin)
[ -d /usr/src/googletest ] || [ -f /usr/lib/x86_64-linux-gnu/cmake/GTest/GTestConfig.cmake ] || need+=(libgtest-dev)
# The Python package's check (scripts/wheel_check.sh): a venv of /usr/bin/python3, into which PyTorch, the build
# backend and the test tools come from PyPI (python/requirements-ci.txt).
/usr/bin/python3 -c "import ensurepip, venv" 2>/dev/null || need+=(python3-venv)
# Python's headers: the package's lean entry (softmargin._entry) and torch.compile's C++ kernels on the CPU.
/usr/bin/python3 -c "import os, sysconfig; assert os.path.isfile(sysconfig.get_paths()['include'] + '/Python.h')" \
  2>/dev/null || need+=(python3-dev)
# The aarch64 cross build (preset aarch64): Debian's cross compiler and its OpenMP runtime, and qemu-user to run
# what it builds; GoogleTest is built from /usr/src/googletest with the cross compiler.
if [ "${1:-}" = aarch64 ]; then
  command -v aarch64-linux-gnu-g++ >/dev/null || need+=(g++-aarch64-linux-gnu)
  [ -e /usr/aarch64-linux-gnu/lib/libgomp.so.1 ] || need+=(libgomp1-arm64-cross)
  command -v qemu-aarch64 >/dev/null || need+=(qemu-user)
  [ -d /usr/src/googletest ] || need+=(googletest)
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${need[@]}"
fi

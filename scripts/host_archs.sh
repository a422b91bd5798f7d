#!/usr/bin/env bash
# Builds the library and its Serial and OpenMP unit tests for host architectures other than this machine's own, and
# runs the tests:
#   avx2     preset avx2: x86-64 without AVX-512 (Kokkos_ARCH_HSW), the host pack kernels on Kokkos SIMD's AVX2 ABI
#            with AVX2 and F16C conversions; the tests run natively.
#   aarch64  preset aarch64: Arm with SVE for NVIDIA Grace (Kokkos_ARCH_ARMV84_SVE, 128-bit vectors), cross-built with
#            Debian's g++-aarch64-linux-gnu (cmake/toolchains/aarch64-linux-gnu.cmake); the tests run under
#            qemu-aarch64 (-cpu max with 128-bit SVE vectors), with short sizes (below).
#   neon     preset aarch64-neon: Arm without SVE (Kokkos_ARCH_ARMV80), Kokkos SIMD's NEON ABI, built and run as
#            aarch64.
#   all      the three (the default).
# Each build's tests check the host pack path and vector instructions it compiles (the presets'
# SOFTMARGIN_TEST_HOST_PATH and SOFTMARGIN_TEST_HOST_ISA), so that a silent fall back to narrower code fails.
# Installs what is missing (scripts/ensure_tools.sh aarch64); takes Kokkos' archive from ../shared/deps when it is
# there (else the build downloads it). Prints, per build, the seconds of each stage and each test executable's gtest
# summary lines; the whole output of each stage is in build/<preset>/host_archs.<stage>.log.
# Usage: scripts/host_archs.sh [avx2|aarch64|neon|all]
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-all}" in
  avx2) presets=(avx2) ;;
  aarch64) presets=(aarch64) ;;
  neon) presets=(aarch64-neon) ;;
  all) presets=(avx2 aarch64 aarch64-neon) ;;
  *)
    echo "usage: $0 [avx2|aarch64|neon|all]" >&2
    exit 2
    ;;
esac
jobs="$(nproc)"

if [[ " ${presets[*]} " == *" aarch64"* ]]; then
  bash scripts/ensure_tools.sh aarch64
else
  bash scripts/ensure_tools.sh
fi
kokkos=()
archive="$PWD/../shared/deps/kokkos_5.0.2.orig.tar.gz"
[ -f "$archive" ] && kokkos=(-DSOFTMARGIN_KOKKOS_SOURCE="$archive")
export OMP_PROC_BIND="${OMP_PROC_BIND:-false}"

# Under emulation the tests that sweep sizes leave out those above 2^17 elements (SOFTMARGIN_TEST_SHORT): the 2^20
# and 512x4096 passes of every algorithm and reduction take most of an emulated run's time and check nothing on this
# CPU that the smaller sizes do not (they run natively: avx2, and the host builds of .ci/run).

summary=()
status=0
# stage PRESET NAME COMMAND...: runs COMMAND into build/PRESET/host_archs.NAME.log and adds its seconds to the summary.
stage() {
  local preset=$1 name=$2
  shift 2
  local t0=$SECONDS rc=0
  mkdir -p "build/$preset"
  "$@" > "build/$preset/host_archs.$name.log" 2>&1 || rc=$?
  summary+=("$(printf '%-8s %-30s %5d s%s' "$preset" "$name" $((SECONDS - t0)) "$([ $rc -eq 0 ] || echo "  FAILED (exit $rc)")")")
  if [ $rc -ne 0 ]; then
    tail -n 40 "build/$preset/host_archs.$name.log"
    echo "$preset: $name failed (exit $rc; log: build/$preset/host_archs.$name.log)"
  fi
  return $rc
}

for preset in "${presets[@]}"; do
  t0=$SECONDS
  echo "== $preset   [$(date -u +%H:%M:%S) UTC]"
  # configure (builds Kokkos into build/<preset>/_deps/kokkos the first time), then the library and the unit tests
  if ! stage "$preset" configure cmake --preset "$preset" "${kokkos[@]}" ||
    ! stage "$preset" build cmake --build --preset "$preset" -j "$jobs"; then
    status=1
    continue
  fi
  test_env=()
  [[ "$preset" == aarch64* ]] && test_env=(SOFTMARGIN_TEST_SHORT=1)
  for backend in serial openmp; do
    exe="softmargin_unit_tests_$backend"
    # CTest runs each test as the build registered it: under the toolchain's emulator in a cross build.
    stage "$preset" "$exe" env "${test_env[@]}" ctest --test-dir "build/$preset" -R "^$exe\$" -V --no-tests=error ||
      status=1
    while read -r line; do
      summary+=("         $line")
    done < <(sed -E 's/^[0-9]+: //' "build/$preset/host_archs.$exe.log" |
      grep -E '^\[(==========|  PASSED  |  SKIPPED |  FAILED  )\] [0-9]+ tests?' || true)
  done
  summary+=("$(printf '%-8s %-30s %5d s' "$preset" total $((SECONDS - t0)))")
done

echo "== summary (seconds on $jobs cores)"
printf '%s\n' "${summary[@]}"
exit $status

#!/usr/bin/env bash
# Checks the house's layout (docs/building.md, "Layout"): the portable core (include/*.hpp and include/impl/*.hpp)
# has no preprocessor branch on a compiler, an instruction set or a backend, uses no intrinsics, and includes no
# hardware room; only impl/SoftMargin_Rooms.hpp includes the rooms (include/impl/<family>/), and no room includes
# another. Prints each violation and exits 1 if there is any.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
fail() {
  echo "layout: $*"
  status=1
}

core=$(ls include/*.hpp include/impl/*.hpp | grep -v '^include/impl/SoftMargin_Rooms.hpp$')
rooms=$(find include/impl -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort)

# Compiler, instruction-set and backend macros, intrinsics headers and inline assembly: only in rooms.
branch='^\s*#\s*(if|ifdef|ifndef|elif)\b.*(__CUDACC__|__CUDA_ARCH__|__HIPCC__|__HIP_DEVICE_COMPILE__|__SYCL_DEVICE_ONLY__|__x86_64__|__i386__|__AVX|__SSE|__F16C__|__FMA__|__aarch64__|__arm__|__ARM_|__riscv|__powerpc|__GNUC__|__clang__|__INTEL|_MSC_VER|__NVCOMPILER|KOKKOS_ENABLE_(CUDA|HIP|SYCL|OPENMP|OPENMPTARGET|SERIAL|THREADS|HPX)|KOKKOS_ARCH_)'
intrinsics='^\s*#\s*include\s*[<"](immintrin|x86intrin|arm_neon|arm_sve|cuda_runtime|cuda/|hip/|sycl/)'
# report WHAT PATTERN FILES...: one line per match
report() {
  local what=$1 pattern=$2
  shift 2
  while read -r line; do fail "$what: $line"; done < <(grep -nHE "$pattern" "$@" || true)
}
for f in $core; do
  report "branch on the hardware in the portable core" "$branch" "$f"
  report "hardware header in the portable core" "$intrinsics" "$f"
  report "intrinsics in the portable core" '\basm\s*(volatile\s*)?\(|__ldg|_mm[0-9]*_' "$f"
  for r in $rooms; do
    report "the portable core includes room $r" "^\s*#\s*include\s*\"(impl/)?$r/" "$f"
  done
done
# Rooms: each includes the core and itself only.
for r in $rooms; do
  for other in $rooms; do
    [ "$r" = "$other" ] && continue
    report "room $r includes room $other" "^\s*#\s*include\s*\"(\.\./)?$other/" $(find "include/impl/$r" -name '*.hpp')
  done
done
# The list includes every room.
for r in $rooms; do
  grep -qE "^\s*#\s*include\s*\"$r/" include/impl/SoftMargin_Rooms.hpp || fail "include/impl/SoftMargin_Rooms.hpp does not list the room $r"
done
exit $status

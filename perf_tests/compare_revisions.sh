#!/usr/bin/env bash
# The host passes of a base revision (A) and of this tree (B) side by side in one process (perf_tests/ab): fp32,
# fp64 and 16-bit inputs, mean, none, backward and fused, OpenMP with each thread count given and Serial, at each size;
# prints a Markdown table of B / A per row (medians of alternating rounds; below 1: B is faster). Only the headers
# under include/ differ between the two sides; both use the Kokkos of the build directory given.
# Usage: perf_tests/compare_revisions.sh BASE_REF [build dir (build/openmp)] [threads (1,2)] [output dir (build/ab)]
#   env: ROUNDS (21), SIZES (2^16,2^18,2^20,512x4096,2^22,2^24)
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:?usage: $0 BASE_REF [build dir] [threads] [output dir]}"
build="${2:-build/openmp}"
threads="${3:-1,2}"
out="${4:-build/ab}"
kokkos_dir="$(sed -n 's/^Kokkos_DIR:[A-Z]*=//p' "$build/CMakeCache.txt")"
[ -n "$kokkos_dir" ] || { echo "no Kokkos_DIR in $build/CMakeCache.txt (configure that build first)"; exit 1; }
rm -rf "$out/base" && mkdir -p "$out/base"
git archive "$base" include | tar -x -C "$out/base"
cmake -S perf_tests/ab -B "$out/build" -DKokkos_DIR="$kokkos_dir" -DSOFTMARGIN_AB_BASE="$PWD/$out/base/include" \
  -DSOFTMARGIN_AB_HEAD="$PWD/include" > "$out/configure.log"
cmake --build "$out/build" -j "$(nproc)" > "$out/build.log"
export OMP_PROC_BIND="${OMP_PROC_BIND:-false}"
echo "A: $base ($(git rev-parse --short "$base")), B: this tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD -- include || echo ' + changes')); $(uptime)"
for t in ${threads//,/ }; do
  "$out/build/softmargin_ab" --kokkos-num-threads="$t" --rounds="${ROUNDS:-21}" \
    --sizes="${SIZES:-2^16,2^18,2^20,512x4096,2^22,2^24}" | tee "$out/ab_threads$t.md"
done

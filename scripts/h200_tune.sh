#!/usr/bin/env bash
# Tuning run on the H200: only the benchmark (no ETI, no tests: a short build), with the ptxas resource report of
# its kernels, over grid sizes (teams per multiprocessor). Usage: bash scripts/h200_tune.sh [sizes] [teams per SM list]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/out}"
mkdir -p "$OUT"
sizes="${1:-512x4096,2^24,2^28}"
export PATH="$PATH:/usr/local/cuda/bin"
cmake --preset cuda -B build/cuda-tune -DSOFTMARGIN_KOKKOS_SOURCE="$PWD/.deps/kokkos_5.0.2.orig.tar.gz" \
  -DSOFTMARGIN_ENABLE_ETI=OFF -DSOFTMARGIN_ENABLE_TESTS=OFF -DSOFTMARGIN_ENABLE_EXAMPLES=OFF \
  -DSOFTMARGIN_PTXAS_VERBOSE=ON > "$OUT/configure.log" 2>&1 || { tail -50 "$OUT/configure.log"; exit 1; }
cmake --build build/cuda-tune -j "$(nproc)" --target softmargin_bench > "$OUT/build.log" 2>&1 ||
  { grep -B2 -A10 error "$OUT/build.log" | head -80; exit 1; }
# Resource usage of the project's kernels (mangled names contain 'softmargin').
grep -A2 "Compiling entry function.*softmargin" "$OUT/build.log" | grep -E "registers|spill" | sort | uniq -c | head -30
for t in ${2:-6}; do
  echo "== SOFTMARGIN_TEAMS_PER_SM=$t"
  SOFTMARGIN_TEAMS_PER_SM=$t build/cuda-tune/perf_tests/softmargin_bench --sizes="$sizes" --benchmark_min_time=0.05 \
    --benchmark_filter=/hot/ --benchmark_out="$OUT/tune_$t.json" --benchmark_out_format=json 2>&1 |
    tee "$OUT/tune_$t.txt" | grep -E "^(softmargin|peer|launch)/"
done

#!/usr/bin/env bash
# One device call on the H200: build Kokkos (CUDA, sm_90) and the project from the carried sources in .deps/,
# run the CUDA unit tests, the reference problem and the forward benchmark. Logs and CSVs go to $OUT.
# Usage (through the device tool, carrying .deps): bash scripts/h200.sh [perf sizes]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/out}"
mkdir -p "$OUT"
sizes="${1:-512x4096,2^20,2^22,2^24,2^26,2^28}"
export PATH="$PATH:/usr/local/cuda/bin"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
cmake --version | head -1
t0=$(date +%s)
cmake --preset cuda -DSOFTMARGIN_KOKKOS_SOURCE="$PWD/.deps/kokkos_5.0.2.orig.tar.gz" \
  -DSOFTMARGIN_GTEST_SOURCE="$PWD/.deps/googletest" > /tmp/configure.log 2>&1 || { tail -50 /tmp/configure.log; exit 1; }
cmake --build --preset cuda -j "$(nproc)" > "$OUT/build.log" 2>&1 || { grep -B2 -A10 error "$OUT/build.log" | head -80; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
ctest --preset cuda -V > "$OUT/ctest.log" 2>&1
grep -E "tests passed|tests failed|PASSED|FAILED" "$OUT/ctest.log" | tail -6
SOFTMARGIN_TEST_HUGE=1 build/cuda/unit_tests/softmargin_unit_tests_cuda --gtest_filter='*huge*' 2>&1 |
  grep -E "OK|FAILED|Failure|PASSED|got" | tee -a "$OUT/ctest.log"
build/cuda/examples/softmargin_reference_problem 2>&1 | tee "$OUT/reference.log"
build/cuda/perf_tests/softmargin_perf_forward --sizes "$sizes" --csv "$OUT/perf_forward.csv" 2>&1 | tee "$OUT/perf_forward.txt"
PYTHONUNBUFFERED=1 python3 perf_tests/torch_softmargin.py --sizes "$sizes" 2>&1 | tee "$OUT/perf_torch.txt"
if [ "${SANITIZE:-0}" = 1 ]; then
  # compute-sanitizer over the tests that run every kernel kind (team and range; packed and scalar; reduce and map);
  # the typed sweeps and the 2^28 test take too long under it.
  tests='cuda.forward_in_place:cuda.backward_in_place_and_aliasing:cuda.forward_and_backward_every_alignment'
  for tool in memcheck racecheck synccheck; do
    timeout 100 compute-sanitizer --tool "$tool" build/cuda/unit_tests/softmargin_unit_tests_cuda \
      --gtest_filter="$tests" > "/tmp/sanitizer_$tool.log" 2>&1
    rc=$?
    { echo "== $tool (rc $rc)"; tail -25 "/tmp/sanitizer_$tool.log"; } >> "$OUT/sanitizer.log"
    echo "compute-sanitizer $tool (rc $rc): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "/tmp/sanitizer_$tool.log" | tail -1)"
  done
fi

#!/usr/bin/env bash
# Builds and tests the CUDA configuration on a GPU machine without network, from local source archives.
#
#   scripts/gpu_offline.sh [--bench | --bench-only] [--sanitize] [--huge] [--out DIR] [DEPS_DIR]
#
# DEPS_DIR (or $SOFTMARGIN_DEPS_DIR) holds the sources the build cannot download there:
#   kokkos_5.0.2.orig.tar.gz   Kokkos 5.0.2 (checked against its SHA-256), or an unpacked kokkos-5.0.2/ folder;
#                              not needed when Kokkos_ROOT names an installed Kokkos 5 with the CUDA backend
#   googletest/                GoogleTest's source (Debian's /usr/src/googletest is used when this is absent, and
#                              an installed GTest package before either)
#   kokkos-kernels-2fc2af19fa7b.tar.gz   Kokkos Kernels, for the benchmark's KokkosBlas peers (optional)
#   benchmark/libbenchmark-dev_*.deb, benchmark/libbenchmark1debian_*.deb   Google Benchmark: Debian's packages
#                              (`apt-get download libbenchmark-dev libbenchmark1debian`, in benchmark/ or DEPS_DIR
#                              itself), unpacked under the build folder when the machine has no Google Benchmark
#                              (SOFTMARGIN_BENCHMARK_DEBS); without either the benchmark is not built
# Steps, each logged to the output folder (--out DIR, else $SOFTMARGIN_OUT_DIR, else build/<preset>/offline-logs):
#   configure, build   cmake --preset cuda with the local sources, then the library, tests, benchmark, examples
#   test               ctest --preset cuda (the CUDA unit tests)
#   reference          the reference problem (x, y fp32 512x4096, mean): loss, fp64 agreement, time per call
#   --bench            the benchmark (softmargin_bench, JSON in bench.json) at $BENCH_SIZES (default
#                      2^10:2^28,512x4096; more options in $BENCH_ARGS, default --iterations=30, e.g.
#                      "--benchmark_filter=/hot/"), and PyTorch's nn.SoftMarginLoss at the same sizes (torch.json,
#                      options in $TORCH_ARGS) when $PYTHON (default python3; empty: none) has torch
#   --bench-only       the benchmark alone: configure without tests, examples and PyTorch operators, build only
#                      softmargin_bench (and Kokkos, Kokkos Kernels), skip the test and reference steps
#   --huge             the opt-in N = 2^31 + 5 test (SOFTMARGIN_TEST_HUGE=1, about 18 GB of device memory)
#   --sanitize         compute-sanitizer memcheck, racecheck and synccheck over each CUDA test executable, the three
#                      tools at once, each within $SANITIZE_TIMEOUT seconds (default 1800)
# Other settings: PRESET (default cuda; e.g. openmp for a dry run on a host), JOBS (default: all cores), CMAKE_ARGS
# (further configure options, e.g. "-DSOFTMARGIN_ENABLE_TORCH=OFF -DSOFTMARGIN_ENABLE_EXAMPLES=OFF" for a quicker
# cold build).
# Prints a summary line per step, writes it to summary.txt, and exits non-zero when any step fails.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
deps="${SOFTMARGIN_DEPS_DIR:-}"
out="${SOFTMARGIN_OUT_DIR:-}"
bench=0 bench_only=0 sanitize=0 huge=0
while [ $# -gt 0 ]; do
  case "$1" in
    --bench) bench=1 ;;
    --bench-only) bench=1 bench_only=1 ;;
    --sanitize) sanitize=1 ;;
    --huge) huge=1 ;;
    --out) out="${2:?--out needs a folder}"; shift ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
    *) deps="$1" ;;
  esac
  shift
done

preset="${PRESET:-cuda}"
build="build/$preset"
out="${out:-$build/offline-logs}"
jobs="${JOBS:-$(nproc)}"
mkdir -p "$out" && out="$(cd "$out" && pwd)" || exit 1
: > "$out/summary.txt"
command -v nvcc >/dev/null || export PATH="$PATH:${CUDA_HOME:-/usr/local/cuda}/bin"
export OMP_PROC_BIND="${OMP_PROC_BIND:-false}"  # host threads unpinned, as in scripts/reference.sh and the tests

failed=0
note() { echo "$*" | tee -a "$out/summary.txt"; }
fail() { note "FAILED: $*"; failed=1; }

# --- Local sources. ---
config=()
if [ -n "$deps" ]; then
  [ -d "$deps" ] || { echo "DEPS_DIR $deps is not a folder" >&2; exit 2; }
  deps="$(cd "$deps" && pwd)"
  for k in "$deps/kokkos_5.0.2.orig.tar.gz" "$deps/kokkos-5.0.2"; do
    [ -e "$k" ] && { config+=("-DSOFTMARGIN_KOKKOS_SOURCE=$k"); break; }
  done
  [ -d "$deps/googletest" ] && config+=("-DSOFTMARGIN_GTEST_SOURCE=$deps/googletest")
  for k in "$deps"/kokkos-kernels-*.tar.gz; do
    [ -e "$k" ] && config+=("-DSOFTMARGIN_KOKKOSKERNELS_SOURCE=$k")
  done
  for d in "$deps/benchmark" "$deps"; do  # used only when the machine has no Google Benchmark
    compgen -G "$d/libbenchmark-dev_*.deb" >/dev/null && { config+=("-DSOFTMARGIN_BENCHMARK_DEBS=$d"); break; }
  done
fi
if [ -z "${Kokkos_ROOT:-}" ] && [[ "${config[*]}" != *KOKKOS_SOURCE* ]]; then
  echo "note: no Kokkos source in '$deps' and no Kokkos_ROOT: configuring will try to download Kokkos"
fi

# --- Configure and build (a build that exists is brought up to date; Kokkos is built once per build folder). ---
targets=()
if [ "$bench_only" = 1 ]; then
  config+=(-DSOFTMARGIN_ENABLE_TESTS=OFF -DSOFTMARGIN_ENABLE_EXAMPLES=OFF -DSOFTMARGIN_ENABLE_TORCH=OFF)
  targets=(--target softmargin_bench)
fi
[ -n "${CMAKE_ARGS:-}" ] && read -r -a extra <<< "$CMAKE_ARGS" && config+=("${extra[@]}")
t0=$SECONDS
if ! cmake --preset "$preset" "${config[@]}" > "$out/configure.log" 2>&1; then
  tail -40 "$out/configure.log"
  fail "configure ($out/configure.log)"
  exit 1
fi
if ! cmake --build --preset "$preset" -j "$jobs" "${targets[@]}" > "$out/build.log" 2>&1; then
  grep -B2 -A12 -m5 -E "error|Error" "$out/build.log" | head -80
  fail "build ($out/build.log)"
  exit 1
fi
note "build: ok, $((SECONDS - t0)) s (nvcc: $(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*' || echo none))"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/device: /' |
  tee -a "$out/summary.txt"

# --- Unit tests. ---
test_exes=()
if [ "$bench_only" = 0 ]; then
  t0=$SECONDS
  tests_line() { grep -E '\[  (PASSED|FAILED)  \]|tests passed' "$out/ctest.log" | tr -s ' ' | paste -sd ';' -; }
  if ctest --preset "$preset" --verbose > "$out/ctest.log" 2>&1; then
    note "test: $(tests_line), $((SECONDS - t0)) s"
  else
    grep -E "FAILED|Failure" "$out/ctest.log" | head -30
    fail "test: $(tests_line) ($out/ctest.log)"
  fi
  mapfile -t test_exes < <(find "$build/unit_tests" -maxdepth 2 -type f -executable -name "softmargin_*${preset}*" |
    sort)

  if [ "$huge" = 1 ]; then
    for exe in "${test_exes[@]}"; do
      log="$out/huge_$(basename "$exe").log"
      if SOFTMARGIN_TEST_HUGE=1 "$exe" --gtest_filter='*huge*' > "$log" 2>&1; then
        note "huge ($(basename "$exe")): $(grep -E '^\[ +(OK|PASSED) ' "$log" | tr -s ' ' | paste -sd ';' -)"
      else
        fail "huge ($(basename "$exe"), $log)"
      fi
    done
  fi

  # --- The reference problem. ---
  if "$build/examples/softmargin_reference_problem" > "$out/reference.log" 2>&1; then
    note "reference: $(grep -E 'relative error|time per call' "$out/reference.log" | sed 's/^ *//' | tr -s ' ' |
      paste -sd ';' -)"
  else
    cat "$out/reference.log"
    fail "reference problem ($out/reference.log)"
  fi
fi

# --- Benchmark, and PyTorch at the same sizes. ---
if [ "$bench" = 1 ]; then
  sizes="${BENCH_SIZES:-2^10:2^28,512x4096}"
  python="${PYTHON-python3}"
  t0=$SECONDS
  # shellcheck disable=SC2086  # BENCH_ARGS: words to split
  if "$build/perf_tests/softmargin_bench" --sizes="$sizes" ${BENCH_ARGS:---iterations=30} \
    --benchmark_out="$out/bench.json" --benchmark_out_format=json > "$out/bench.txt" 2>&1; then
    note "bench: ok, $((SECONDS - t0)) s ($out/bench.txt, bench.json)"
    python3 perf_tests/bench_json.py table "$out/bench.json" \
      --filter '(forward_mean/(auto|native)|backward/auto|fused/auto|cublas|KokkosBlas|CUB|unfused)/hot' |
      grep -E "^\| (size|---|512x4096|2\^(20|24|28)) "
  else
    grep -E "CHECK FAILED|failed their check|rror" "$out/bench.txt" | head -20
    fail "bench ($out/bench.txt)"
  fi
  if [ -n "$python" ] && "$python" -c "import torch" 2>/dev/null; then
    # shellcheck disable=SC2086  # TORCH_ARGS: words to split
    if "$python" perf_tests/torch_softmargin.py --sizes "$sizes" ${TORCH_ARGS:-} --json "$out/torch.json" \
      > "$out/torch.txt" 2>&1; then
      note "torch: ok ($out/torch.txt, torch.json)"
      grep -E "^(size|512x4096|2\^28) " "$out/torch.txt"
    else
      fail "torch ($out/torch.txt)"
    fi
  else
    note "torch: skipped (${python:-PYTHON is empty}${python:+ has no torch})"
  fi
fi

# --- compute-sanitizer over the CUDA test executables. ---
if [ "$sanitize" = 1 ]; then
  if ! command -v compute-sanitizer >/dev/null; then
    fail "sanitize: compute-sanitizer not found"
  else
    t0=$SECONDS
    for exe in "${test_exes[@]}"; do
      name="$(basename "$exe")"
      for tool in memcheck racecheck synccheck; do
        timeout "${SANITIZE_TIMEOUT:-1800}" compute-sanitizer --tool "$tool" --error-exitcode 99 "$exe" \
          > "$out/sanitizer_${tool}_$name.log" 2>&1 &
      done
      wait
      for tool in memcheck racecheck synccheck; do
        log="$out/sanitizer_${tool}_$name.log"
        passed="$(grep -E '^\[  (PASSED|FAILED) ' "$log" | head -2 | tr '\n' ' ')"
        summary="$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//')"
        if grep -qE '^\[  PASSED ' "$log" && ! grep -qE '^\[  FAILED ' "$log" &&
          grep -qE 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards' "$log"; then
          note "sanitize $tool ($name): $passed$summary"
        else
          grep -m20 -E '^========= +(Invalid|Race|Barrier|Error|Warning|Program hit|Uninitialized)' "$log"
          fail "sanitize $tool ($name): ${passed:-no test summary (timed out?)} $summary ($log)"
        fi
      done
    done
    note "sanitize: $((SECONDS - t0)) s"
  fi
fi

[ "$failed" = 0 ] && note "all steps passed (logs: $out)"
exit "$failed"

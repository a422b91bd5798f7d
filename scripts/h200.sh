#!/usr/bin/env bash
# One device call on the H200: build Kokkos (CUDA, sm_90) and the project from the carried sources in .deps/ (skipped
# when build/cuda is already there), then the stages named in STAGES (default: all, in this order):
#   tests     CUDA unit tests (ctest), then the opt-in N = 2^31 + 5 test
#   perf      reference problem, benchmark (JSON: bench.json, with KokkosBlas rows when the Kokkos Kernels archive
#             is in .deps/ or ../shared/deps/), PyTorch's SoftMarginLoss on the same sizes (torch.json); MIN_TIME
#             (0.02 s) is Google Benchmark's minimum time per row, FILTER (all) its --benchmark_filter
#   tune      the benchmark's native rows with and without programmatic dependent launch, over blocks per SM
#   repeat    the latency rows (native, cublasSdot) of five (REPEAT_RUNS) benchmark runs, for the spread between runs
#   ab        the latency rows of this tree's build and of variants of it, in turn, AB_RUNS (8) rounds at AB_SIZES
#             (512x4096), hot: a variant is a folder .deps/variants/NAME of files that replace this tree's (e.g. the
#             reduce kernel of another branch), built against this build's Kokkos
#   gap       the library's latency rows with each buffer and stream setting of the benchmark (default, --separate,
#             --stream own, both) and the standalone study's kernel of the same grid, in turn, GAP_RUNS (4) rounds at
#             512x4096, hot: where a library call differs from the study's
#   sass      the SASS of the library's fp32 kernels (cuobjdump), compressed
#   sanitize  compute-sanitizer memcheck, racecheck and synccheck over the whole CUDA unit-test suite (in parallel)
#   ncu       Nsight Compute: duration, registers and occupancy of the library's reduce kernel and cublasSdot's
#             kernels at 512x4096 (ncu's defaults: caches flushed, base clocks)
#   shapes    perf_tests/tune/native_reduce_shapes.cu (needs no Kokkos, runs first): the native reduce kernel's block
#             size, packs in flight, blocks per SM and partial-combining schemes against cublasSdot, at 512x4096 and 2^10
#   gapstudy  perf_tests/tune/latency_gap.cu (needs no Kokkos, runs first): the study's latency kernel against the
#             library's, one difference at a time, GAP_RUNS (3) processes at 512x4096, and the kernels' SASS
#   timeline  perf_tests/tune/reduce_timeline.cu (needs no Kokkos, runs first): where an isolated call of the latency
#             shape's reduce goes (block dispatch, summing, the combine), from timer stamps of every block
# Logs and CSVs go to $OUT.
# Usage (through the device tool, carrying .deps): [STAGES="tests perf"] bash scripts/h200.sh [perf sizes]
# (perf sizes: softmargin_bench's --sizes, e.g. 2^10:2^28,512x4096)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/out}"
mkdir -p "$OUT"
sizes="${1:-2^10:2^28,512x4096}"
stages="${STAGES:-tests perf sanitize}"
export PATH="$PATH:/usr/local/cuda/bin"
tests=build/cuda/unit_tests/softmargin_unit_tests_cuda
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
# The stages that need no Kokkos run first, before the build.
shapes() {
  nvcc -O3 -std=c++17 -arch=sm_90 perf_tests/tune/native_reduce_shapes.cu -lcublas -o /tmp/native_reduce_shapes &&
    for n in 2097152 1024 2097152; do /tmp/native_reduce_shapes $n 20 | tee -a "$OUT/shapes.txt"; done
  # Kernel durations alone (no launch overhead), and what limits them, for each variant and cublasSdot's kernels.
  ncu --csv --metrics gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,\
lts__t_sectors_op_read.sum,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active,\
launch__registers_per_thread /tmp/native_reduce_shapes 2097152 0 2 > "$OUT/shapes_ncu.csv" 2>&1 ||
    tail -5 "$OUT/shapes_ncu.csv"
}
timeline() {
  nvcc -O3 -std=c++17 -arch=sm_90 perf_tests/tune/reduce_timeline.cu -o /tmp/reduce_timeline &&
    for per_sm in 3 2 3; do /tmp/reduce_timeline 2097152 $per_sm 300 | tee -a "$OUT/timeline.txt"; done
}
gapstudy() {
  nvcc -O3 -std=c++17 -arch=sm_90 perf_tests/tune/latency_gap.cu -lcublas -o /tmp/latency_gap || return 1
  for r in $(seq "${GAP_RUNS:-3}"); do /tmp/latency_gap 2097152 6 | tee -a "$OUT/latency_gap.txt"; done
  cuobjdump -sass /tmp/latency_gap > "$OUT/latency_gap.sass" 2>&1
}
for stage in shapes timeline gapstudy; do
  [[ " $stages " == *" $stage "* ]] || continue
  t0=$(date +%s)
  "$stage"
  echo "stage $stage: $(( $(date +%s) - t0 )) s"
  stages="${stages/$stage/}"
done
[ -z "${stages// /}" ] && exit 0
t0=$(date +%s)
# Google Benchmark for the benchmark: the system's, else Debian's packages carried in .deps/ (fetched on a Debian
# machine with `apt-get download libbenchmark-dev libbenchmark1debian`), unpacked under /tmp/gbench.
gb=()
if [ ! -f /usr/lib/x86_64-linux-gnu/cmake/benchmark/benchmarkConfig.cmake ] && ls .deps/libbenchmark*.deb >/dev/null 2>&1; then
  mkdir -p /tmp/gbench
  for d in .deps/libbenchmark*.deb; do
    if command -v dpkg-deb >/dev/null; then dpkg-deb -x "$d" /tmp/gbench; else ar p "$d" data.tar.xz | tar -xJ -C /tmp/gbench; fi
  done
  gb=(-Dbenchmark_DIR=/tmp/gbench/usr/lib/x86_64-linux-gnu/cmake/benchmark)
fi
kk="$(ls "$PWD"/.deps/kokkos-kernels-*.tar.gz "$PWD"/../shared/deps/kokkos-kernels-*.tar.gz 2>/dev/null | head -1)"
bench=build/cuda/perf_tests/softmargin_bench
if [ ! -x "$tests" ]; then
  cmake --preset cuda -DSOFTMARGIN_KOKKOS_SOURCE="$PWD/.deps/kokkos_5.0.2.orig.tar.gz" \
    -DSOFTMARGIN_GTEST_SOURCE="$PWD/.deps/googletest" ${kk:+-DSOFTMARGIN_KOKKOSKERNELS_SOURCE="$kk"} "${gb[@]}" \
    > /tmp/configure.log 2>&1 || { tail -50 /tmp/configure.log; exit 1; }
fi
# (The build log stays out of $OUT unless the build fails: the device tool returns at most 8 files.)
# BUILD_TARGETS (optional): build only these (e.g. the CUDA tests and the benchmark, for a short call).
cmake --build --preset cuda -j "$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS} > /tmp/build.log 2>&1 ||
  { cp /tmp/build.log "$OUT/"; grep -B2 -A10 error /tmp/build.log | head -80; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"

for stage in $stages; do
  t0=$(date +%s)
  case "$stage" in
    tests)
      if [ -n "${BUILD_TARGETS:-}" ]; then "$tests" > "$OUT/ctest.log" 2>&1; else ctest --preset cuda -V > "$OUT/ctest.log" 2>&1; fi
      grep -E "tests passed|tests failed|PASSED|FAILED" "$OUT/ctest.log" | tail -6
      SOFTMARGIN_TEST_HUGE=1 "$tests" --gtest_filter='*huge*' 2>&1 | grep -E "OK|FAILED|Failure|PASSED|got" |
        tee -a "$OUT/ctest.log"
      ;;
    perf)
      build/cuda/examples/softmargin_reference_problem 2>&1 | tee "$OUT/reference.log"
      "$bench" --sizes="$sizes" --benchmark_min_time="${MIN_TIME:-0.02}" --benchmark_filter="${FILTER:-.}" \
        --benchmark_out="$OUT/bench.json" --benchmark_out_format=json > "$OUT/bench.txt" 2>&1
      grep -E "CHECK FAILED|failed their check" "$OUT/bench.txt"
      python3 perf_tests/bench_json.py table "$OUT/bench.json" \
        --filter '(forward_mean/(auto|native)|backward/auto|fused/auto|cublas|KokkosBlas|CUB|unfused)/hot' |
        grep -E "^\| (size|---|512x4096|2\^(16|20|24|28)) "
      [ "${PERF_TORCH:-1}" = 0 ] ||
      PYTHONUNBUFFERED=1 python3 perf_tests/torch_softmargin.py --sizes "$sizes" --json "$OUT/torch.json" \
        > "$OUT/perf_torch.txt" 2>&1
      grep -E "512x4096|2\^28" "$OUT/perf_torch.txt"
      ;;
    tune)
      # Native-kernel launch settings: programmatic dependent launch on/off, blocks per multiprocessor.
      for pdl in 1 0; do
        for t in ${TUNE_TEAMS:-2 3 4 6}; do
          SOFTMARGIN_CUDA_PDL=$pdl SOFTMARGIN_TEAMS_PER_SM=$t "$bench" --sizes="${TUNE_SIZES:-2^16,512x4096,2^24}" \
            --benchmark_filter='(softmargin/(forward_mean|backward)/(auto|native)|cublasSdot)/hot' \
            --benchmark_min_time=0.05 > "/tmp/tune_${pdl}_$t.txt" 2>&1
          echo "== PDL $pdl, blocks per SM $t" | tee -a "$OUT/tune.txt"
          grep -E "^(softmargin|peer)/" "/tmp/tune_${pdl}_$t.txt" | tee -a "$OUT/tune.txt"
        done
      done
      ;;
    repeat)
      # The same latency rows several times, to show the spread between runs of the same build.
      for r in $(seq "${REPEAT_RUNS:-5}"); do
        "$bench" --sizes="${REPEAT_SIZES:-512x4096,2^21}" --benchmark_min_time=0.05 \
          --benchmark_filter='(forward_mean/native|cublasSdot)/hot' > "/tmp/repeat_$r.txt" 2>&1
        echo "== run $r" | tee -a "$OUT/repeat.txt"
        grep -E "^(softmargin|peer)/" "/tmp/repeat_$r.txt" | tee -a "$OUT/repeat.txt"
      done
      ;;
    ab)
      # Variant builds, all at once: this tree with the variant's files over it, against the Kokkos built above.
      bins=("this:$bench")
      for v in .deps/variants/*/; do
        name=$(basename "$v")
        src="/tmp/variant_$name"
        rm -rf "$src" && mkdir -p "$src" && tar --exclude=./build --exclude=./.deps -cf - . | tar -C "$src" -xf - &&
          cp -r "$v." "$src/" || exit 1
        ( cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=Release -DKokkos_ROOT="$PWD/build/cuda/_deps/kokkos/install" \
            -DSOFTMARGIN_ENABLE_TESTS=OFF -DSOFTMARGIN_ENABLE_EXAMPLES=OFF "${gb[@]}" > "/tmp/variant_$name.log" 2>&1 &&
          cmake --build "$src/build" -j "$(nproc)" --target softmargin_bench >> "/tmp/variant_$name.log" 2>&1 ||
          { echo "variant $name: build failed"; tail -30 "/tmp/variant_$name.log"; } ) &
        bins+=("$name:$src/build/perf_tests/softmargin_bench")
      done
      wait
      echo "variant builds: $(( $(date +%s) - t0 )) s"
      for r in $(seq "${AB_RUNS:-8}"); do
        for b in "${bins[@]}"; do
          [ -x "${b#*:}" ] || continue
          "${b#*:}" --sizes="${AB_SIZES:-512x4096}" --benchmark_min_time=0.05 \
            --benchmark_filter='(forward_mean/(native|auto)|cublasSdot)/hot' > /tmp/ab.txt 2>&1
          grep -E "CHECK FAILED" /tmp/ab.txt
          grep -E "^(softmargin|peer)/" /tmp/ab.txt | sed "s/^/${b%%:*} run $r: /" |
            tee -a "$OUT/ab.txt"
        done
      done
      ;;
    gap)
      nvcc -O3 -std=c++17 -arch=sm_90 perf_tests/tune/native_reduce_shapes.cu -lcublas -o /tmp/native_reduce_shapes ||
        exit 1
      for r in $(seq "${GAP_RUNS:-4}"); do
        for opts in "" "--separate" "--stream=own" "--separate --stream=own"; do
          # shellcheck disable=SC2086
          "$bench" --sizes=512x4096 --benchmark_min_time=0.05 \
            --benchmark_filter='(forward_mean/native|cublasSdot)/hot|empty_cuda' $opts > /tmp/gap.txt 2>&1
          grep -E "^(softmargin|peer|launch)/" /tmp/gap.txt |
            sed "s/^/run $r, library ${opts:-default}: /" | tee -a "$OUT/gap.txt"
        done
        /tmp/native_reduce_shapes 2097152 4 100 | grep -E "^(cublasSdot|empty|block  256  unroll 4  3/SM)" |
          sed "s/^/run $r, study: /" | tee -a "$OUT/gap.txt"
      done
      ;;
    sass)
      cuobjdump -sass build/cuda/src/CMakeFiles/softmargin.dir/SoftMargin_ETI_Cuda_float.cpp.o | gzip > "$OUT/sass_float.gz"
      ;;
    ncu)
      metrics=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,\
dram__bytes_read.sum,lts__t_sectors_op_read.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed
      for k in reduce_kernel "dot_kernel|reduce_1Block"; do
        ncu --csv --metrics "$metrics" --kernel-name "regex:$k" --launch-skip 4 --launch-count 6 \
          "$bench" --sizes=512x4096 --benchmark_min_time=0.001 \
            --benchmark_filter='(forward_mean/native|cublasSdot)/hot/isolated' 2>&1 | grep '^"' >> "$OUT/ncu.csv"
      done
      grep -c gpu__time_duration "$OUT/ncu.csv"
      ;;
    sanitize)
      # The whole suite (the 2^31 + 5 test is opt-in and skipped) under each tool, the three at once.
      for tool in memcheck racecheck synccheck; do
        timeout "${SANITIZE_TIMEOUT:-420}" compute-sanitizer --tool "$tool" "$tests" > "/tmp/sanitizer_$tool.log" 2>&1 &
      done
      wait
      for tool in memcheck racecheck synccheck; do
        log="/tmp/sanitizer_$tool.log"
        { echo "== $tool"; grep -E "^\[==========\]|PASSED|FAILED|SKIPPED \]" "$log"; grep -m40 -E "^========= +(Invalid|Race|Barrier|Error|Warning|Program hit|Uninitialized|Saved host)" "$log";
          tail -3 "$log"; } >> "$OUT/sanitizer.log"
        echo "compute-sanitizer $tool: $(grep -E '^\[  PASSED|^\[  FAILED' "$log" | tr '\n' ' ') $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)"
      done
      ;;
  esac
  echo "stage $stage: $(( $(date +%s) - t0 )) s"
done

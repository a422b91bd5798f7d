#!/usr/bin/env bash
# The host comparison in one run: the forward and fused passes (OpenMP) against KokkosBlas::dot and ::axpy (the same
# bytes, timed alternately in the same iterations) and against PyTorch's CPU SoftMarginLoss with the same number of
# threads, at the same sizes; prints one Markdown table (time over PyTorch's forward in the last column).
# Hand-written: it only strings the two programs together.
# Usage: perf_tests/compare_host.sh [build dir (build/openmp)] [sizes (512x4096,2^24)] [output dir (.)]
#   env: OMP_NUM_THREADS (all cores), MIN_TIME (0.2 s a row), REPS (5 repetitions), TORCH_REPS (5),
#        PYTHON (the first of python3, /usr/bin/python3 that imports torch)
set -euo pipefail
here="$(dirname "$0")"
build="${1:-build/openmp}"
sizes="${2:-512x4096,2^24}"
out="${3:-.}"
threads="${OMP_NUM_THREADS:-$(nproc)}"
export OMP_PROC_BIND="${OMP_PROC_BIND:-false}"
"$build/perf_tests/softmargin_bench" --kokkos-num-threads="$threads" --sizes="$sizes" \
  --benchmark_filter='(softmargin/(forward_mean|fused)/auto|KokkosBlas_(dot|axpy))/hot' \
  --benchmark_min_time="${MIN_TIME:-0.2}" --benchmark_repetitions="${REPS:-5}" --benchmark_report_aggregates_only=true \
  --benchmark_out="$out/host_bench.json" --benchmark_out_format=json > "$out/host_bench.txt"
json=("$out/host_bench.json")
py="${PYTHON:-}"
for p in python3 /usr/bin/python3; do
  [ -z "$py" ] && "$p" -c "import torch" 2>/dev/null && py="$p"
done
if [ -n "$py" ] && "$py" "$here/torch_softmargin.py" --device cpu --threads "$threads" --sizes "$sizes" --reps "${TORCH_REPS:-5}" \
  --json "$out/host_torch.json" > "$out/host_torch.txt" && [ -f "$out/host_torch.json" ]; then
  json+=("$out/host_torch.json")
fi
echo "# $(uptime)"
python3 "$here/bench_json.py" table "${json[@]}" --versus torch/forward_mean

#!/usr/bin/env bash
# Plots GB/s of compulsory traffic against N, one line per variant and peer, from softmargin_bench's JSON
# (--benchmark_out=FILE --benchmark_out_format=json) and, optionally, torch_softmargin.py's (--json FILE).
# Usage: perf_tests/plot_perf.sh out.png [hot|cold] [pipelined|isolated] A.json [B.json ...]   (needs gnuplot, python3)
set -euo pipefail
png="$1"
l2="${2:-hot}"
timing="${3:-pipelined}"
shift 3
command -v gnuplot >/dev/null || { echo "gnuplot not found (apt-get install gnuplot-nox)"; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python3 "$(dirname "$0")/bench_json.py" dat "$@" --dir "$tmp" --l2 "$l2" --timing "$timing"
plots=""
while IFS=$'\t' read -r file label; do
  label="${label//\'/\'\'}"  # gnuplot's single-quoted strings write ' as ''
  plots="${plots:+$plots, }'$tmp/$file.dat' using 1:2 with linespoints title '$label'"
done < "$tmp/labels.tsv"
[ -n "$plots" ] || { echo "no rows with GB/s for $l2/$timing in $*"; exit 1; }
gnuplot <<GP
set terminal pngcairo size 1350,650 noenhanced
set output '$png'
set logscale x 2
set format x "2^%L"
set xlabel 'N (elements)'
set ylabel 'GB/s of compulsory traffic ($timing, $l2 L2)'
set title 'SoftMarginLoss: library variants and peers ($(basename "$1"))'
set key outside right top
set grid
plot $plots
GP
echo "wrote $png"

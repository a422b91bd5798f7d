#!/usr/bin/env bash
# Plots GB/s (pipelined, compulsory traffic) against N, one line per variant and peer, from the benchmark's CSV.
# Usage: perf_tests/plot_perf.sh perf_forward.csv out.png [hot|cold]   (needs gnuplot: apt-get install gnuplot-nox)
set -euo pipefail
csv="$1"
png="$2"
command -v gnuplot >/dev/null || { echo "gnuplot not found (apt-get install gnuplot-nox)"; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mode="${3:-hot}"
# One data file per variant: "n gbps" of the rows in $mode (hot: buffers reused; cold: rotated through memory),
# sorted by n (rows of size '-' are calibration rows without bytes).
# CSV columns: size,n,mode,variant,isolated_us,pipelined_us,gbps_pipelined,...
awk -F, -v dir="$tmp" -v mode="$mode" 'NR > 1 && $1 != "-" && $3 == mode {
  name = $4; gsub(/[^A-Za-z0-9_]+/, "_", name); print $2, $7 > (dir "/" name ".dat"); label[name] = $4
} END { for (k in label) print k "\t" label[k] > (dir "/labels.tsv") }' "$csv"
plots=""
while IFS=$'\t' read -r file label; do
  sort -n -o "$tmp/$file.dat" "$tmp/$file.dat"
  label="${label//\'/\'\'}"  # gnuplot's single-quoted strings write ' as ''
  plots="${plots:+$plots, }'$tmp/$file.dat' using 1:2 with linespoints title '$label'"
done < <(sort "$tmp/labels.tsv")
gnuplot <<GP
set terminal pngcairo size 1350,650 noenhanced
set output '$png'
set logscale x 2
set format x "2^%L"
set xlabel 'N (elements)'
set ylabel 'GB/s of compulsory traffic (pipelined, $mode)'
set title 'SoftMarginLoss on $(basename "$csv"): library variants and peers'
set key outside right top
set grid
plot $plots
GP
echo "wrote $png"

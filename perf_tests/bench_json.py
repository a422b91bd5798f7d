#!/usr/bin/env python3
"""Reads the JSON of softmargin_bench (Google Benchmark's --benchmark_out) and of torch_softmargin.py --json.

  bench_json.py table A.json [B.json ...] [--filter REGEX] [--versus REGEX]   a Markdown table, one row per benchmark
  bench_json.py dat A.json [B.json ...] --dir DIR [--l2 hot|cold] [--timing pipelined|isolated]
                                                                            gnuplot data: DIR/<variant>.dat, "n GB/s"

Rows are named VARIANT/L2/TIMING[/rows:R/cols:C]; with --benchmark_repetitions the median aggregates are used.
--versus adds, per row, its time over that of the row matching REGEX at the same size, L2 mode and timing (e.g.
--versus 'torch/forward_mean' puts every row next to PyTorch's). In `dat`, the cold plot takes the hot rows of sizes
that have no cold row (their inputs exceed the cache: every call reads from memory anyway).
"""
import argparse
import json
import os
import re
import sys

NAME = re.compile(r"^(?P<variant>.+)/(?P<l2>hot|cold)/(?P<timing>isolated|pipelined)(?:/rows:(?P<rows>\d+)/cols:(?P<cols>\d+))?")


def rows(paths):
    """(variant, l2, timing, rows, cols, counters) of every measured benchmark, medians where repeated."""
    out = {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        benches = data.get("benchmarks", [])
        repeated = any(b.get("run_type") == "aggregate" for b in benches)
        for b in benches:
            if b.get("error_occurred"):
                continue
            if repeated and not (b.get("run_type") == "aggregate" and b.get("aggregate_name") == "median"):
                continue
            m = NAME.match(b.get("run_name", b["name"]))
            if not m or "us" not in b:
                continue
            r, c = int(m["rows"] or 0), int(m["cols"] or 0)
            out[(m["variant"], m["l2"], m["timing"], r, c)] = b
    return out


def size_name(r, c):
    n = r * c
    if n == 0:
        return "-"
    if r == 1 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return f"{r}x{c}"


def table(args):
    data = rows(args.json)
    pick = re.compile(args.filter) if args.filter else None
    versus = re.compile(args.versus) if args.versus else None
    head = ["size", "variant", "L2", "timing", "us", "GB/s", "x_peer", "peer", "rel_err"]
    if versus:
        head.append("x " + args.versus)
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for key in sorted(data, key=lambda k: (k[3] * k[4], k[3], k[1], k[2])):
        variant, l2, timing, r, c = key
        if pick and not pick.search("/".join([variant, l2, timing])):
            continue
        b = data[key]
        cells = [size_name(r, c), variant, l2, timing, f"{b['us']:.2f}", f"{b.get('GB/s', float('nan')):.1f}",
                 f"{b['x_peer']:.3f}" if "x_peer" in b else "", re.sub(r"^vs ([^,\s]+).*|.*", r"\1", b.get("label", "")),
                 f"{b['rel_err']:.1e}" if "rel_err" in b else ""]
        if versus:
            ref = [v for k, v in data.items() if versus.search(k[0]) and k[1:] == key[1:]]
            cells.append(f"{b['us'] / ref[0]['us']:.3f}" if ref else "")
        print("| " + " | ".join(cells) + " |")


def dat(args):
    os.makedirs(args.dir, exist_ok=True)
    data = rows(args.json)
    series = {}
    for (variant, l2, timing, r, c), b in data.items():
        if timing != args.timing or r * c == 0 or "GB/s" not in b:
            continue
        if l2 == args.l2 or (args.l2 == "cold" and (variant, "cold", timing, r, c) not in data):
            series.setdefault(variant, {})[r * c] = b["GB/s"]
    with open(os.path.join(args.dir, "labels.tsv"), "w") as labels:
        for variant in sorted(series):
            file = re.sub(r"[^A-Za-z0-9_]+", "_", variant)
            with open(os.path.join(args.dir, file + ".dat"), "w") as f:
                for n in sorted(series[variant]):
                    f.write(f"{n} {series[variant][n]}\n")
            labels.write(f"{file}\t{variant}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["table", "dat"])
    ap.add_argument("json", nargs="+")
    ap.add_argument("--filter", default="")
    ap.add_argument("--versus", default="")
    ap.add_argument("--dir", default="")
    ap.add_argument("--l2", default="hot", choices=["hot", "cold"])
    ap.add_argument("--timing", default="pipelined", choices=["pipelined", "isolated"])
    args = ap.parse_args()
    if args.what == "dat" and not args.dir:
        sys.exit("dat needs --dir")
    table(args) if args.what == "table" else dat(args)


if __name__ == "__main__":
    main()

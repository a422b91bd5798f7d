#!/usr/bin/env python3
"""PyTorch's nn.SoftMarginLoss and, with --loss, nn.BCEWithLogitsLoss on the benchmark's problems, for the
side-by-side table.

Times forward (reduction mean) and forward+backward, fp32, x ~ U(-3, 3), y = +-1, the same buffers reused, medians
of --reps (default 50) samples: isolated (sync, call, sync) and pipelined (a batch of calls between two timestamps,
divided by its length: 100 calls on a GPU up to 2^24 elements, else 10). CUDA events on a GPU, perf_counter on the
CPU. Prints a table and, with --json, writes softmargin_bench's JSON rows (torch/forward_mean/hot/..., torch/fused/...,
with the counters us, GB/s, rel_err), which bench_json.py and plot_perf.sh read next to the benchmark's. The
BCEWithLogitsLoss rows (torch/bce/forward_mean/..., torch/bce/fused/...) take the targets t = (y + 1) / 2 as float, as
softmargin_bench's bce/fp32_fp32 rows do. Hand-written: Google Benchmark has no Python binding on this system.

  python3 perf_tests/torch_softmargin.py --sizes 512x4096,2^24 [--device cpu|cuda] [--threads N] [--json FILE]
                                         [--loss soft_margin|bce_with_logits|both]
"""
import argparse
import json
import statistics
import sys
import time

try:
    import torch
except ImportError:
    print("torch is not importable: nothing to time", file=sys.stderr)
    sys.exit(0)


def parse_sizes(text):
    out = []
    for tok in text.split(","):
        if tok.startswith("2^") and ":" in tok:  # 2^a:2^b, every power of two from a to b
            a, b = tok.split(":")
            out.extend((f"2^{k}", (1, 1 << k)) for k in range(int(a[2:]), int(b[2:]) + 1))
        elif tok.startswith("2^"):
            out.append((tok, (1, 1 << int(tok[2:]))))
        elif "x" in tok:
            r, c = tok.split("x")
            out.append((tok, (int(r), int(c))))
        else:
            out.append((tok, (1, int(tok))))
    return out


def timer(device):
    if device == "cuda":
        def run(fn, calls):
            torch.cuda.synchronize()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(calls):
                fn()
            b.record()
            b.synchronize()
            return a.elapsed_time(b) * 1e3 / calls
    else:
        def run(fn, calls):
            t = time.perf_counter()
            for _ in range(calls):
                fn()
            return (time.perf_counter() - t) * 1e6 / calls
    return run


def time_loss(args, run, name, shape, prefix, loss_fn, x, t, err):
    """The rows PREFIX/forward_mean (no grad) and PREFIX/fused (forward + backward) of loss_fn(x, t)."""
    n = x.numel()

    def fwd():
        with torch.no_grad():
            loss_fn(x, t)

    def fwd_bwd():
        x.grad = None
        loss_fn(x, t).backward()

    rows = []
    for variant, fn, bytes_per in ((prefix + "/forward_mean", fwd, 8), (prefix + "/fused", fwd_bwd, 12)):
        for _ in range(3):
            fn()
        reps = args.reps if n < (1 << 26) or args.device == "cuda" else max(5, args.reps // 10)
        iso = statistics.median(run(fn, 1) for _ in range(reps))
        batch = 10 if args.device != "cuda" or n > (1 << 24) else 100
        pipe = statistics.median(run(fn, batch) for _ in range(max(3, reps)))
        rows.append((name, shape, variant, iso, pipe, bytes_per * n, err))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="512x4096,2^24,2^26,2^28")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (CPU)")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--json", default="")
    ap.add_argument("--loss", default="soft_margin", choices=["soft_margin", "bce_with_logits", "both"])
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    run = timer(args.device)
    # (row prefix, loss module, its targets from y = +-1, the float64 loss of x and those targets)
    losses = {
        "soft_margin": ("torch", torch.nn.SoftMarginLoss(reduction="mean"), lambda y: y,
                        lambda x, y: torch.nn.functional.softplus(-y * x)),
        "bce_with_logits": ("torch/bce", torch.nn.BCEWithLogitsLoss(reduction="mean"), lambda y: (y + 1) / 2,
                            lambda x, t: torch.clamp(x, min=0) - x * t + torch.log1p(torch.exp(-x.abs()))),
    }
    picked = list(losses) if args.loss == "both" else [args.loss]
    rows = []
    print(f"# torch {torch.__version__}, device {args.device}, threads {torch.get_num_threads()}")
    for name, shape in parse_sizes(args.sizes):
        g = torch.Generator(device=args.device).manual_seed(1)
        x = (torch.rand(shape, device=args.device, generator=g) * 6 - 3).requires_grad_(True)
        y = torch.where(torch.rand(shape, device=args.device, generator=g) < 0.5, -1.0, 1.0)
        for prefix, loss_fn, target_of, loss64 in (losses[k] for k in picked):
            t = target_of(y)
            ref = loss64(x.detach().double(), t.double()).mean().item()
            err = abs(loss_fn(x, t).item() - ref) / ref
            rows.extend(time_loss(args, run, name, shape, prefix, loss_fn, x, t, err))
    print(f"{'size':<10} {'variant':<30} {'isolated_us':>12} {'pipelined_us':>12} {'GB/s(pipe)':>10} {'rel_err':>10}")
    for r in rows:
        print(f"{r[0]:<10} {r[2]:<30} {r[3]:12.2f} {r[4]:12.2f} {r[5] / (r[4] * 1e3):10.1f} {r[6]:10.2e}")
    if args.json:
        benchmarks = []
        for name, (nr, nc), variant, iso, pipe, nbytes, err in rows:
            for timing, us in (("isolated", iso), ("pipelined", pipe)):
                benchmarks.append({"name": f"{variant}/hot/{timing}/rows:{nr}/cols:{nc}", "run_type": "iteration",
                                   "us": us, "GB/s": nbytes / (us * 1e3), "rel_err": err})
        context = {"torch": torch.__version__, "device": args.device, "threads": torch.get_num_threads()}
        with open(args.json, "w") as f:
            json.dump({"context": context, "benchmarks": benchmarks}, f, indent=1)


if __name__ == "__main__":
    main()

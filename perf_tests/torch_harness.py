#!/usr/bin/env python3
"""The harness PyTorch users judge kernels with (KernelBench's layout): Model is torch.nn.SoftMarginLoss, ModelNew
the SoftMargin library's drop-in, get_inputs() the problem (512x4096 fp32, targets +-1, reduction mean).

It checks that the outputs agree (the loss and its gradient against Model's and an fp64 reference), then times each
implementation in interleaved rounds (median of --rounds), each round a stream of --calls back-to-back calls between
two CUDA events (perf_counter on the CPU), per call:
  forward           model(x, y)
  forward+backward  x.grad = None; model(x, y).backward()           (x requires grad)
for Model (eager), ModelNew and, with --compile, torch.compile(Model) (default and max-autotune-no-cudagraphs) and
torch.compile(ModelNew); the autograd floor x.sum().backward() (the engine's own cost of a backward pass); on CUDA, both
calls captured in a CUDA graph and replayed, for Model and ModelNew, beside torch.compile(Model, mode="reduce-overhead")
(torch's own graphs). It prints a table and the verdicts on the targets: ModelNew's forward at least 5x faster than
Model and faster than every torch.compile(Model); its forward+backward within 1.10x of the floor plus its forward; in
a CUDA graph at least as fast as reduce-overhead. --pdl-ab adds ModelNew with the library's programmatic dependent
launch off (softmargin.set_launch_options), --autograd-ab the same operators under a Python torch.autograd.Function.
--loss bce_with_logits, pairwise and weighted time the same rows for BCEWithLogitsLoss, the pairwise logistic loss of
reward models and SoftMarginLoss with a weight (the problems in torch_harness_bce.py, _pairwise.py and _weighted.py;
skipped where the softmargin package lacks them); --shape ROWSxCOLS sets the problem's shape (e.g. 1x4096: 4096 pairs
of scalar rewards).

  PYTHONPATH=build/<preset>/python python3 perf_tests/torch_harness.py [--device cuda|cpu] [--compile] [--loss L]
"""
import argparse
import importlib
import statistics
import sys
import time

import torch
import torch.nn as nn

import softmargin

NAME = "SoftMarginLoss"
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
batch_size = 512
input_shape = (4096,)


class Model(nn.Module):
    """PyTorch's SoftMarginLoss."""

    def __init__(self):
        super().__init__()
        self.loss_fn = nn.SoftMarginLoss(reduction="mean")

    def forward(self, predictions, targets):
        return self.loss_fn(predictions, targets)


class ModelNew(nn.Module):
    """The same loss on the SoftMargin library, through its functional form (no inner module call)."""

    def forward(self, predictions, targets):
        return softmargin.soft_margin_loss(predictions, targets, reduction="mean")


class _PythonAutograd(torch.autograd.Function):
    """The fused operator under a Python autograd.Function: the per-call cost of autograd in Python."""

    @staticmethod
    def forward(ctx, x, y):
        if not ctx.needs_input_grad[0]:
            return torch.ops.softmargin.loss.default(x, y, 1)
        loss, grad = torch.ops.softmargin.loss_and_grad.default(x, y, 1)
        ctx.save_for_backward(grad)
        return loss

    @staticmethod
    def backward(ctx, g):
        (grad,) = ctx.saved_tensors
        return grad * g, None


class ModelNewPythonAutograd(nn.Module):
    def forward(self, predictions, targets):
        return _PythonAutograd.apply(predictions, targets)


def get_inputs():
    x = torch.randn(batch_size, *input_shape, device=DEVICE)
    y = torch.randint(0, 2, (batch_size, *input_shape), device=DEVICE).float() * 2 - 1
    return [x, y]


def get_init_inputs():
    return []


def reference(x, y):
    """The mean loss in float64 and its gradient with respect to x (float32)."""
    z = (-(y * x)).double()
    loss = (torch.clamp(z, min=0) + torch.log1p(torch.exp(-z.abs()))).mean()
    return loss, (-y.double() * torch.sigmoid(z) / x.numel()).float()


def sync():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def per_call_us(fn, calls):
    """Microseconds per call of a stream of `calls` calls of fn."""
    sync()
    if DEVICE == "cuda":
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) * 1e3 / calls
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t) * 1e6 / calls


def forward_and_grad(model, x, y):
    xg = x.detach().clone().requires_grad_(True)
    loss = model(xg, y)
    loss.backward()
    return loss.detach(), xg.grad


def check(models, x, y, reference):
    """Every model's loss and gradient against Model's and a float64 reference."""
    ref_loss, ref_grad = reference(x, y)
    base_loss, base_grad = forward_and_grad(models["Model"], x, y)
    print(f"loss: fp64 reference {ref_loss.item():.9f}, Model {base_loss.item():.9f}")
    ok = True
    for name, model in models.items():
        loss, grad = forward_and_grad(model, x, y)
        rel = abs(loss.double().item() - ref_loss.item()) / ref_loss.item()
        grad_err = ((grad - ref_grad).abs().max() / ref_grad.abs().max()).item()
        agree = torch.allclose(loss, base_loss, rtol=1e-5, atol=0) and torch.allclose(grad, base_grad, rtol=1e-5,
                                                                                        atol=1e-12)
        ok = ok and agree and rel < 1e-6 and grad_err < 1e-6
        print(f"  {name:16s} loss {loss.item():.9f} (rel. to fp64 {rel:.1e}), grad max rel. err {grad_err:.1e}, "
              f"agrees with Model: {agree}")
    return ok


def graph_of(fn):
    """A CUDA graph of one call of fn (warm-up on the capture stream first)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        fn()
    return graph


def main():
    global DEVICE
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default=DEVICE, choices=["cuda", "cpu"])
    ap.add_argument("--calls", type=int, default=None, help="calls per timed stream (default 200 CUDA, 10 CPU)")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 20 CUDA, 3 CPU)")
    ap.add_argument("--compile", action="store_true",
                    help="also time torch.compile(Model) (default, max-autotune-no-cudagraphs, and reduce-overhead "
                    "beside the CUDA graphs) and torch.compile(ModelNew)")
    ap.add_argument("--pdl-ab", action="store_true", help="also time ModelNew without programmatic dependent launch")
    ap.add_argument("--autograd-ab", action="store_true", help="also time the operators under a Python autograd")
    ap.add_argument("--loss", default="soft_margin", choices=["soft_margin", "bce_with_logits", "pairwise", "weighted"],
                    help="the problem: SoftMarginLoss (this file), BCEWithLogitsLoss (torch_harness_bce.py), the "
                    "pairwise logistic loss (torch_harness_pairwise.py) or SoftMarginLoss with a weight "
                    "(torch_harness_weighted.py)")
    ap.add_argument("--shape", default=None, help="ROWSxCOLS of the problem's inputs (default 512x4096)")
    args = ap.parse_args()
    DEVICE = args.device
    problem = sys.modules[__name__]
    if args.loss != "soft_margin":
        problem = importlib.import_module({"bce_with_logits": "torch_harness_bce", "pairwise": "torch_harness_pairwise",
                                           "weighted": "torch_harness_weighted"}[args.loss])
        if problem.missing():
            print(f"softmargin has no {' or '.join(problem.missing())}: the {problem.NAME} rows are skipped")
            return 0
        if args.autograd_ab:
            print("--autograd-ab: SoftMarginLoss only (its Python autograd.Function calls that loss's operators)")
            args.autograd_ab = False
    if args.shape:
        rows, cols = (int(v) for v in args.shape.lower().split("x"))
        problem.batch_size, problem.input_shape = rows, (cols,)
    problem.DEVICE = DEVICE
    title = f"{problem.NAME}, {problem.batch_size}x{problem.input_shape[0]} fp32, mean"
    Model, ModelNew, get_inputs, get_init_inputs = (problem.Model, problem.ModelNew, problem.get_inputs,
                                                    problem.get_init_inputs)
    calls = args.calls or (200 if DEVICE == "cuda" else 10)
    rounds = args.rounds or (20 if DEVICE == "cuda" else 3)
    compile_ = args.compile and hasattr(torch, "compile")
    if args.compile and not compile_:
        print(f"torch {torch.__version__} has no torch.compile: the compiled rows are left out")
    torch.manual_seed(0)
    where = torch.cuda.get_device_name() if DEVICE == "cuda" else f"CPU, {torch.get_num_threads()} threads"
    entry = "softmargin._entry" if getattr(softmargin, "_call", None) is not getattr(softmargin, "_loss", None) else \
        "torch.ops"
    print(f"torch {torch.__version__} on {where}; {title}; "
          f"{calls} calls a stream, median of {rounds} rounds; ModelNew calls the operator through {entry}")

    x, y = get_inputs()
    models = {"Model": Model(*get_init_inputs())}
    if compile_:
        models["torch.compile(Model)"] = torch.compile(Model(*get_init_inputs()))
        models["torch.compile(Model, max-autotune-no-cudagraphs)"] = torch.compile(
            Model(*get_init_inputs()), mode="max-autotune-no-cudagraphs")
    models["ModelNew"] = ModelNew(*get_init_inputs())
    if compile_:
        models["torch.compile(ModelNew)"] = torch.compile(ModelNew(*get_init_inputs()))
    if args.autograd_ab:
        models["ModelNew, Python autograd"] = ModelNewPythonAutograd()
    graphed = {}  # CUDA-graph rows: eager Model and ModelNew captured by hand, torch.compile's reduce-overhead
    if DEVICE == "cuda":
        graphed["CUDA graph of Model"] = models["Model"]
        graphed["CUDA graph of ModelNew"] = models["ModelNew"]
        if compile_:
            graphed["torch.compile(Model, reduce-overhead)"] = torch.compile(Model(*get_init_inputs()),
                                                                             mode="reduce-overhead")
    checked = dict(models)
    if "torch.compile(Model, reduce-overhead)" in graphed:
        checked["torch.compile(Model, reduce-overhead)"] = graphed["torch.compile(Model, reduce-overhead)"]
    ok = check(checked, x, y, problem.reference)
    setups = {name: (lambda: softmargin.set_launch_options(True)) for name in list(models) + list(graphed)}
    if args.pdl_ab:
        models["ModelNew, no PDL"] = models["ModelNew"]
        setups["ModelNew, no PDL"] = lambda: softmargin.set_launch_options(False)

    xg = x.detach().clone().requires_grad_(True)
    cases = {}  # (name, case) -> callable

    def step(m):
        xg.grad = None
        m(xg, y).backward()

    for name, model in models.items():
        cases[(name, "forward")] = lambda m=model: m(x, y)
        cases[(name, "forward+backward")] = lambda m=model: step(m)
    # The engine's own cost of a backward pass of one elementwise op: what any loss's forward+backward adds to its
    # forward at least.
    floor = "autograd floor: x.sum().backward()"
    setups[floor] = lambda: None
    cases[(floor, "forward+backward")] = lambda: step(lambda a, b: a.sum())
    for name, model in graphed.items():
        setups[name]()
        if name.startswith("torch.compile"):  # graphs of its own
            cases[(name, "forward")] = lambda m=model: m(x, y)
            cases[(name, "forward+backward")] = lambda m=model: step(m)
            continue
        fwd = graph_of(lambda m=model: m(x, y))
        bwd = graph_of(lambda m=model: step(m))  # the gradient lands in the buffer the capture allocated
        cases[(name, "forward")] = fwd.replay
        cases[(name, "forward+backward")] = bwd.replay
    for (name, _), fn in cases.items():  # warm-up (and compilation)
        setups[name]()
        for _ in range(3):
            fn()
    samples = {key: [] for key in cases}
    for _ in range(rounds):
        for key, fn in cases.items():
            setups[key[0]]()
            samples[key].append(per_call_us(fn, calls))
    softmargin.set_launch_options(True)
    med = {key: statistics.median(v) for key, v in samples.items()}

    names = list(dict.fromkeys(name for name, _ in cases))
    print(f"\n| {title}, per call | forward | forward+backward |")
    print("|---|---:|---:|")
    for name in names:
        cells = [med.get((name, c)) for c in ("forward", "forward+backward")]
        print(f"| {name} | " + " | ".join("" if v is None else f"{v:.1f} us" for v in cells) + " |")
    spread = {key: (min(v), max(v)) for key, v in samples.items()}
    print("\nrange over rounds (us): " + "; ".join(f"{n} {c} {lo:.1f}-{hi:.1f}" for (n, c), (lo, hi) in spread.items()))

    def verdict(text, met):
        return f"{text}: {'met' if met else 'not met'}"

    new_f, new_fb = med[("ModelNew", "forward")], med[("ModelNew", "forward+backward")]
    verdicts = [verdict(f"forward: ModelNew {med[('Model', 'forward')] / new_f:.1f}x faster than Model (target 5x)",
                        med[("Model", "forward")] >= 5 * new_f)]
    for name in names:
        if name.startswith("torch.compile(Model") and name in models:
            verdicts.append(verdict(f"forward: ModelNew {med[(name, 'forward')] / new_f:.2f}x faster than {name} "
                                    "(target > 1x)", med[(name, "forward")] > new_f))
    bound = med[(floor, "forward+backward")] + new_f
    verdicts.append(verdict(f"forward+backward: ModelNew {new_fb:.1f} us = {new_fb / bound:.2f}x (the autograd floor "
                            f"+ ModelNew's forward, {bound:.1f} us; target <= 1.10x)", new_fb <= 1.10 * bound))
    ro = "torch.compile(Model, reduce-overhead)"
    if ro in graphed:
        for c in ("forward", "forward+backward"):
            g = med[("CUDA graph of ModelNew", c)]
            verdicts.append(verdict(f"{c} in a CUDA graph: ModelNew {g:.1f} us against {ro} {med[(ro, c)]:.1f} us "
                                    "(target: at most)", g <= med[(ro, c)]))
    print("\n".join(verdicts))
    print("outputs agree" if ok else "OUTPUTS DISAGREE")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

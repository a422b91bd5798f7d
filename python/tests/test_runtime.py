"""The operators in a process: Kokkos' lifetime, CUDA streams and graphs, torch.compile and torch.library's checks."""

import os
import subprocess
import sys

import pytest
import torch

import softmargin



def test_process_exits_cleanly():
    # Kokkos is initialized on first use and finalized at exit: the process exits 0 and prints nothing.
    code = ("import torch, softmargin\n"
            "x = torch.randn(100, requires_grad=True)\n"
            "softmargin.soft_margin_loss(x, torch.randn(100)).backward()\n"
            "if torch.cuda.is_available():\n"
            "    softmargin.soft_margin_loss(x.detach().cuda(), torch.randn(100, device='cuda'))\n"
            "    torch.cuda.synchronize()\n")
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "" and "Kokkos" not in result.stderr, result.stderr


def cuda_only():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_streams(seed, reduction):
    # Work is enqueued on torch's current stream: results on a side stream, used there without a synchronization.
    cuda_only()
    x = torch.randn(1000, 37, device="cuda")
    y = torch.randn(37, device="cuda")
    expected = torch.nn.functional.soft_margin_loss(x.double(), y.double(), reduction=reduction).float()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        out = softmargin.soft_margin_loss(x, y, reduction=reduction) * 1.0  # consumed on the same stream
    torch.cuda.current_stream().wait_stream(side)
    torch.testing.assert_close(out, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("warm_up", [False, True])
def test_cuda_graph(seed, warm_up):
    # Capture on torch.cuda.graph's own stream; without a warm-up, the first call on that stream is the captured one.
    cuda_only()
    x = torch.randn(512, 4096, device="cuda")
    y = (torch.randint(0, 2, (512, 4096), device="cuda") * 2 - 1).float()
    model = softmargin.SoftMarginLoss()
    if warm_up:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                model(x, y)
        torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = model(x, y)
    for _ in range(3):
        x.copy_(torch.randn_like(x))
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(out, torch.nn.functional.soft_margin_loss(x.double(), y.double()).float(),
                                   rtol=1e-6, atol=0)


def test_first_call_inside_a_capture_is_refused():
    # Kokkos cannot be initialized during a capture: a process whose first call is captured gets a clear error.
    cuda_only()
    code = ("import torch, softmargin\n"
            "x = torch.randn(64, device='cuda')\n"
            "g = torch.cuda.CUDAGraph()\n"
            "with torch.cuda.graph(g):\n"
            "    softmargin.soft_margin_loss(x, x)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    assert "make one call before capturing" in result.stderr, result.stderr


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_opcheck(device, seed, reduction):
    x = torch.randn(6, 5, device=device, requires_grad=True)
    y = torch.randn(5, device=device)
    torch.library.opcheck(torch.ops.softmargin.loss.default, (x, y, reduction))
    if reduction:
        torch.library.opcheck(torch.ops.softmargin.loss_and_grad.default, (x.detach(), y, reduction))
        g = torch.tensor(0.5, device=device)
    else:
        g = torch.randn(6, 5, device=device)
    torch.library.opcheck(torch.ops.softmargin.backward.default, (g, x.detach(), y, reduction))


def test_launch_options(device, seed):
    # The library's launch settings change how its CUDA kernels launch, never the result.
    x = torch.randn(1000, 33, device=device)
    y = torch.randn(33, device=device)
    expected = softmargin.soft_margin_loss(x, y, reduction="sum")
    try:
        for pdl, blocks in [(False, 0), (True, 1), (False, 3)]:
            softmargin.set_launch_options(pdl, blocks)
            torch.testing.assert_close(softmargin.soft_margin_loss(x, y, reduction="sum"), expected, rtol=1e-6, atol=0)
    finally:
        softmargin.set_launch_options()
    with pytest.raises(ValueError, match="blocks_per_sm = -1 must be 0"):
        softmargin.set_launch_options(True, -1)


def _reference(x, y, reduction):
    return torch.nn.functional.soft_margin_loss(x.double(), y.double(), reduction=reduction).to(x.dtype)


def test_sizes_in_turn(device, seed):
    # The scratch a call leaves (host: a pool of workspaces; CUDA: one per stream) serves calls of every size after.
    for n in [1, 3, 100_003, 2, 4096 * 33, 1, 7, 100_003, 5]:
        x = torch.randn(n, device=device, dtype=torch.float64 if n % 2 else torch.float32, requires_grad=True)
        y = torch.randn(n, device=device, dtype=x.dtype)
        for reduction in ["mean", "sum", "none"]:
            out = softmargin.soft_margin_loss(x, y, reduction=reduction)
            torch.testing.assert_close(out, _reference(x.detach(), y, reduction), rtol=1e-6, atol=1e-12)
        x.grad = None
        softmargin.soft_margin_loss(x, y, reduction="sum").backward()
        torch.testing.assert_close(x.grad, (-y * torch.sigmoid(-y * x.detach())), rtol=1e-6, atol=1e-12)


def test_threads(device, seed):
    # Concurrent calls from several host threads (CUDA: some on side streams) each get right results.
    import threading

    sizes = [1, 17, 5000, 100_003]
    cases = []
    for t in range(4):
        x = torch.randn(sizes[t], device=device)
        y = torch.randn(sizes[t], device=device)
        cases.append((x, y, _reference(x, y, "sum"), _reference(x, y, "none")))
    failures = []

    def work(t):
        try:
            stream = torch.cuda.Stream() if device == "cuda" and t % 2 else None
            for i in range(30):
                x, y, total, each = cases[(t + i) % len(cases)]
                if stream is not None:
                    stream.wait_stream(torch.cuda.current_stream())
                    with torch.cuda.stream(stream):
                        out, out_none = (softmargin.soft_margin_loss(x, y, reduction="sum"),
                                         softmargin.soft_margin_loss(x, y, reduction="none"))
                    stream.synchronize()
                else:
                    out = softmargin.soft_margin_loss(x, y, reduction="sum")
                    out_none = softmargin.soft_margin_loss(x, y, reduction="none")
                torch.testing.assert_close(out, total, rtol=1e-5, atol=1e-6)
                torch.testing.assert_close(out_none, each, rtol=1e-6, atol=1e-7)
        except Exception as e:  # noqa: BLE001  (reported by the main thread)
            failures.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not failures, failures[0]


def test_calls_until_exit_in_threads():
    # Workspaces pooled by threads that have ended, and by the main thread, are released at Kokkos' finalize at exit.
    code = ("import threading, torch, softmargin\n"
            "def f(n):\n"
            "    for _ in range(5): softmargin.soft_margin_loss(torch.randn(n), torch.randn(n))\n"
            "ts = [threading.Thread(target=f, args=(n,)) for n in (1, 1000, 100000)]\n"
            "[t.start() for t in ts]; [t.join() for t in ts]\n"
            "f(10)\n")
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "" and "Kokkos" not in result.stderr, result.stderr


class _Logged(torch.Tensor):
    """A tensor subclass that records the functions __torch_function__ sees."""

    seen = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.seen.append(func)
        return super().__torch_function__(func, types, args, kwargs or {})


def _seen_under_a_mode(call):
    """The functions a TorchFunctionMode sees while call() runs."""
    seen = []

    class Mode(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    with Mode():
        call()
    return seen


def test_lean_entry(device, seed):
    # The package's entry behaves as torch.ops.softmargin.loss: same results and autograd, and __torch_function__
    # (subclasses, modes) and argument errors as torch.ops has them.
    op = torch.ops.softmargin.loss.default
    x = torch.randn(9, 4, device=device, requires_grad=True)
    y = torch.randn(4, device=device)
    for reduction in [0, 1, 2]:
        torch.testing.assert_close(softmargin._call(x, y, reduction), op(x, y, reduction), rtol=0, atol=0)
    loss = softmargin._call(x, y, 2)
    assert type(loss.grad_fn).__name__ == type(op(x, y, 2).grad_fn).__name__
    w = torch.rand(4, device=device, requires_grad=True)
    for reduction in [0, 1, 2]:  # with a weight (a fourth argument)
        got, want = softmargin._call(x, y, reduction, w), op(x, y, reduction, w)
        torch.testing.assert_close(got, want, rtol=0, atol=0)
        for g, e in zip(torch.autograd.grad(got.sum(), [x, w]), torch.autograd.grad(want.sum(), [x, w])):
            torch.testing.assert_close(g, e, rtol=0, atol=0)
    loss.backward()
    torch.testing.assert_close(x.grad, -y * torch.sigmoid(-y * x.detach()), rtol=1e-6, atol=1e-12)

    _Logged.seen.clear()
    out = softmargin.soft_margin_loss(x.detach().as_subclass(_Logged), y)
    assert op in _Logged.seen and type(out) is _Logged
    if hasattr(torch.overrides, "TorchFunctionMode"):
        assert op in _seen_under_a_mode(lambda: softmargin.soft_margin_loss(x.detach(), y))
    torch.testing.assert_close(softmargin._call(x, target=y, reduction=2), op(x, y, 2), rtol=0, atol=0)
    for args in [(x, 1.0, 1), (x, y, 1, 2), (x, y, "mean")]:
        with pytest.raises(RuntimeError) as expected:
            op(*args)
        with pytest.raises(RuntimeError) as got:
            softmargin._call(*args)
        assert str(got.value) == str(expected.value)
    with pytest.raises(ValueError, match="reduction = 7 is not a valid value"):
        softmargin._call(x.detach(), y, 7)


def _family_entries(device):
    """(entry, operator, positional arguments requiring grad, a function of them) for the BCE and pairwise entries."""
    x = torch.randn(9, 4, device=device, requires_grad=True)
    t = torch.rand(9, 4, device=device)
    w = torch.rand(4, device=device)
    pw = torch.rand(4, device=device) + 0.5
    r = torch.randn(9, 1, device=device, requires_grad=True)
    m = torch.rand(4, device=device)
    return [(softmargin._bce_call, torch.ops.softmargin.bce_with_logits.default, [(x, t, w, pw), (x, t, None, None),
                                                                                  (x, t, None, pw)]),
            (softmargin._pairwise_call, torch.ops.softmargin.pairwise_logistic.default, [(x, r, m, 0.0), (x, r, None, 0.5)])]


@pytest.mark.parametrize("which", ["bce_with_logits", "pairwise_logistic"])
def test_lean_entry_family(device, seed, which):
    # The BCE and pairwise entries behave as their torch.ops operators: same results, autograd through the fused pass,
    # __torch_function__ and argument errors as torch.ops has them.
    entry, op, cases = _family_entries(device)[["bce_with_logits", "pairwise_logistic"].index(which)]
    if softmargin.build_info()["lean_entry"]:
        assert entry is getattr(softmargin._entry, which)
    for args in cases:
        for reduction in [0, 1, 2]:
            torch.testing.assert_close(entry(*args, reduction), op(*args, reduction), rtol=0, atol=0)
        loss = entry(*args, 2)
        expected = op(*args, 2)
        assert type(loss.grad_fn).__name__ == type(expected.grad_fn).__name__
        leaves = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
        got = torch.autograd.grad(loss, leaves)
        want = torch.autograd.grad(expected, leaves)
        for g, e in zip(got, want):
            torch.testing.assert_close(g, e, rtol=0, atol=0)

    args = cases[0]
    _Logged.seen.clear()
    out = entry(args[0].detach().as_subclass(_Logged), *args[1:], 1)
    assert op in _Logged.seen and type(out) is _Logged
    if hasattr(torch.overrides, "TorchFunctionMode"):
        assert op in _seen_under_a_mode(lambda: entry(*args, 1))
    torch.testing.assert_close(entry(*args, reduction=2), op(*args, 2), rtol=0, atol=0)
    bad = [(args[0], 1.0, *args[2:], 1), (*args, 1, 2), (*args, "mean")]
    for call in bad:
        with pytest.raises(RuntimeError) as expected:
            op(*call)
        with pytest.raises(RuntimeError) as got:
            entry(*call)
        assert str(got.value) == str(expected.value)
    with pytest.raises(ValueError, match="reduction = 7 is not a valid value"):
        entry(*[a.detach() if isinstance(a, torch.Tensor) else a for a in args], 7)

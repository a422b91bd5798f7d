"""The operators in a process: Kokkos' lifetime, CUDA streams and graphs, torch.compile and torch.library's checks."""

import os
import subprocess
import sys

import pytest
import torch

import softmargin

HAS_COMPILE = hasattr(torch, "compile")
HAS_OPCHECK = hasattr(torch.library, "opcheck")


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


@pytest.mark.skipif(not HAS_COMPILE, reason="torch.compile needs torch >= 2.0")
def test_compile(device, seed):
    backend = "inductor" if device == "cuda" else "aot_eager"
    model = torch.compile(softmargin.SoftMarginLoss(), backend=backend, fullgraph=True)
    x = torch.randn(64, 33, device=device, requires_grad=True)
    y = torch.randn(33, device=device)
    loss = model(x, y)
    torch.testing.assert_close(loss, softmargin.soft_margin_loss(x, y), rtol=1e-6, atol=0)
    loss.backward()
    expected = torch.func.grad(lambda t: torch.nn.functional.soft_margin_loss(t.double(), y.double()))(x.detach())
    torch.testing.assert_close(x.grad, expected.float(), rtol=1e-6, atol=1e-9)
    with torch.no_grad():
        torch.testing.assert_close(model(x, y), softmargin.soft_margin_loss(x, y), rtol=1e-6, atol=0)


@pytest.mark.skipif(not HAS_OPCHECK, reason="torch.library.opcheck needs torch >= 2.4")
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

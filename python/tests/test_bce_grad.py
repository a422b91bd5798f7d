"""Gradients of softmargin.binary_cross_entropy_with_logits: the input's against PyTorch's and a stable float64
reference for PyTorch's sample inputs and every reduction (the fused forward, upstream gradients other than 1,
retain_graph, the operators); the target's against PyTorch's; weight's and pos_weight's (PyTorch 1.13 has none)
against the float64 reference's through autograd; 16-bit inputs; torch.autograd.gradcheck and gradgradcheck in
float64 with respect to all four tensors; torch.compile, torch.library.opcheck and CUDA graphs where torch and the
machine have them.

The input's gradient in float64 in the stable form the operators compute, with e = exp(-|x|), u = 1 - t:
d = w (u - p t e) / (1 + e) for x >= 0, w (u e - p t) / (1 + e) else. Its two terms may cancel (soft labels), so the
bound is 2e-6 (float32) or 1e-12 (float64) relative to w (|u| + |p t|)."""

import pytest
import torch

import softmargin
from test_bce import DTYPES, HALF_DTYPES, REDUCTIONS, RTOL, SAMPLES, assert_matches, make, reference64
from test_half import assert_within_one_ulp

bce = softmargin.binary_cross_entropy_with_logits


def dloss64(x, t, weight=None, pos_weight=None):
    """d loss / d x per element in float64 (see the file comment) and its scale w (|u| + |p t|)."""
    x, t = x.double(), t.double()
    p = pos_weight.double() if pos_weight is not None else torch.ones((), dtype=torch.float64, device=x.device)
    w = weight.double() if weight is not None else torch.ones((), dtype=torch.float64, device=x.device)
    e, u, pt = torch.exp(-x.abs()), 1 - t, p * t
    d = torch.where(x >= 0, (u - pt * e) / (1 + e), (u * e - pt) / (1 + e)) * w
    return d.expand(x.shape), (w.abs() * (u.abs() + pt.abs())).expand(x.shape)


def upstream_of(reduction, x):
    return make(x.shape if reduction == "none" else (), x.dtype, x.device, -2.0, 2.0)


def scaled(d, reduction, upstream, n):
    return d * upstream.double() / (n if reduction == "mean" else 1)


def input_grad(x, t, weight, pos_weight, reduction, upstream, fn=bce):
    xr = x.detach().clone().requires_grad_(True)
    loss = fn(xr, t, weight, reduction=reduction, pos_weight=pos_weight)
    loss.backward(upstream)
    return xr.grad


@pytest.mark.parametrize("sample", SAMPLES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_input_grad(device, seed, dtype, sample):
    shape, w_shape, p_shape, reduction = sample
    x, t = make(shape, dtype, device), make(shape, dtype, device, 0.0, 1.0)
    weight = make(w_shape, dtype, device) if w_shape else None
    pos_weight = make(p_shape, dtype, device, 0.0) if p_shape else None
    upstream = upstream_of(reduction, x)
    ours = input_grad(x, t, weight, pos_weight, reduction, upstream)
    assert ours.shape == x.shape and ours.dtype == dtype
    d, scale = dloss64(x, t, weight, pos_weight)
    expected, bound = scaled(d, reduction, upstream, x.numel()), scaled(scale, reduction, upstream, x.numel()).abs()
    assert ((ours.double() - expected).abs() <= RTOL[dtype] * bound + torch.finfo(dtype).tiny).all()
    theirs = input_grad(x, t, weight, pos_weight, reduction, upstream,
                        torch.nn.functional.binary_cross_entropy_with_logits)
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5 * bound.max().item())


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_target_weight_and_pos_weight_grads(device, seed, dtype, reduction):
    x, t = make((6, 5), dtype, device), make((6, 5), dtype, device, 0.0, 1.0)
    weight, pos_weight = make((5,), dtype, device), make((6, 1), dtype, device, 0.0, 4.0)
    upstream = upstream_of(reduction, x)
    ins = [v.detach().clone().requires_grad_(True) for v in (x, t, weight, pos_weight)]
    bce(ins[0], ins[1], ins[2], reduction=reduction, pos_weight=ins[3]).backward(upstream)
    ref = [v.detach().double().requires_grad_(True) for v in (x, t, weight, pos_weight)]
    loss = reference64(*ref)
    loss = loss.sum() if reduction == "sum" else loss.mean() if reduction == "mean" else loss
    loss.backward(upstream.double())
    for ours, theirs in zip(ins, ref):
        assert ours.grad.shape == ours.shape and ours.grad.dtype == dtype
        torch.testing.assert_close(ours.grad.double(), theirs.grad, rtol=1e-5 if dtype == torch.float32 else 1e-11,
                                   atol=1e-5 * theirs.grad.abs().max().item())
    # PyTorch's own gradient for the target
    tr = t.detach().clone().requires_grad_(True)
    torch.nn.functional.binary_cross_entropy_with_logits(x, tr, weight, reduction=reduction,
                                                         pos_weight=pos_weight).backward(upstream)
    torch.testing.assert_close(ins[1].grad, tr.grad, rtol=1e-5, atol=1e-5 * tr.grad.abs().max().item())


def test_only_weight_requires_grad(device, seed):
    # The function runs for the weight alone: the input gets no gradient and the fused pass does not run.
    x, t = torch.randn(4, 3, device=device), torch.rand(4, 3, device=device)
    w = torch.rand(3, device=device, requires_grad=True)
    loss = bce(x, t, w)
    assert loss.requires_grad
    (grad_w,) = torch.autograd.grad(loss, (w,))
    w64 = w.detach().double().requires_grad_(True)
    (expected,) = torch.autograd.grad(reference64(x, t, w64).mean(), (w64,))
    torch.testing.assert_close(grad_w.double(), expected, rtol=1e-5, atol=1e-7)
    # torch.autograd.grad with respect to the input alone leaves weight's gradient uncomputed
    xr = x.clone().requires_grad_(True)
    (grad_x,) = torch.autograd.grad(bce(xr, t, w, reduction="sum"), (xr,))
    torch.testing.assert_close(grad_x.double(), dloss64(x, t, w.detach())[0], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gradcheck(device, seed, reduction):
    for shape, w_shape, p_shape in [((), (), ()), ((5,), (5,), (5,)), ((4, 5), (5,), (5,)), ((3, 4, 5), (4, 1), (5,))]:
        x = torch.randn(shape, dtype=torch.float64, device=device, requires_grad=True)
        t = torch.rand(shape, dtype=torch.float64, device=device, requires_grad=True)
        w = (torch.rand(w_shape, dtype=torch.float64, device=device) + 0.5).requires_grad_(True)
        p = (torch.rand(p_shape, dtype=torch.float64, device=device) * 3).requires_grad_(True)
        fn = lambda x, t, w, p: bce(x, t, w, reduction=reduction, pos_weight=p)  # noqa: E731
        assert torch.autograd.gradcheck(fn, (x, t, w, p))
        assert torch.autograd.gradgradcheck(fn, (x, t, w, p))
        xt = torch.randn(tuple(reversed(shape)), dtype=torch.float64, device=device)
        xt = xt.permute(tuple(reversed(range(len(shape))))).requires_grad_(True)
        assert torch.autograd.gradcheck(lambda x: bce(x, t.detach(), reduction=reduction), (xt,))


@pytest.mark.parametrize("dtype", HALF_DTYPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_half_grads_within_one_ulp(device, seed, dtype, reduction):
    x, t = make((7, 9), dtype, device), make((7, 9), dtype, device, 0.0, 1.0)
    weight, pos_weight = make((9,), dtype, device, 0.5, 2.0), make((9,), dtype, device, 0.0, 4.0)
    code = {"none": 0, "mean": 1, "sum": 2}[reduction]
    d = dloss64(x, t, weight, pos_weight)[0].cpu() / (x.numel() if reduction == "mean" else 1)
    upstream = upstream_of(reduction, x)
    grad = torch.ops.softmargin.bce_with_logits_backward(upstream, x, t, weight, pos_weight, code)
    assert_within_one_ulp(grad.cpu(), upstream.cpu().double() * d)
    if code:
        _, fused = torch.ops.softmargin.bce_with_logits_loss_and_grad(x, t, weight, pos_weight, code)
        assert_within_one_ulp(fused.cpu(), d)
        assert_within_one_ulp(input_grad(x, t, weight, pos_weight, reduction, None).cpu(), d)


def test_upstream_scaling_and_retain_graph(device, seed):
    x = torch.randn(6, 7, device=device, requires_grad=True)
    t, w, p = torch.rand(6, 7, device=device), torch.rand(7, device=device), torch.rand(7, device=device) * 3
    expected = (dloss64(x.detach(), t, w, p)[0] / x.numel()).float()
    loss = bce(x, t, w, pos_weight=p)
    (3.0 * loss).backward(retain_graph=True)  # upstream 3: the fused gradient scaled in place
    torch.testing.assert_close(x.grad, 3 * expected, rtol=1e-5, atol=1e-9)
    loss.backward(retain_graph=True)  # the saved gradient was handed on: recomputed from the saved tensors
    torch.testing.assert_close(x.grad, 4 * expected, rtol=1e-5, atol=1e-9)
    loss.backward()
    torch.testing.assert_close(x.grad, 5 * expected, rtol=1e-5, atol=1e-9)


def test_no_grad_paths(device, seed):
    x = torch.randn(9, device=device, requires_grad=True)
    t, w = torch.rand(9, device=device), torch.rand(9, device=device, requires_grad=True)
    with torch.no_grad():
        loss = bce(x, t, w)
    assert loss.grad_fn is None and not loss.requires_grad
    assert bce(x.detach(), t).grad_fn is None
    assert bce(x, t).grad_fn is not None and bce(x.detach(), t, w).grad_fn is not None


@pytest.mark.parametrize("reduction", [1, 2])
def test_operators_backward_and_fused(device, seed, reduction):
    x, t = torch.randn(33, 17, device=device, dtype=torch.float64), torch.rand(33, 17, device=device).double()
    w, p = torch.rand(17, device=device).double(), torch.rand(33, 1, device=device).double() * 3
    g = torch.tensor(0.7, dtype=torch.float64, device=device)
    d = dloss64(x, t, w, p)[0] / (x.numel() if reduction == 1 else 1)
    ops = torch.ops.softmargin
    torch.testing.assert_close(ops.bce_with_logits_backward(g, x, t, w, p, reduction), d * g, rtol=1e-12, atol=0)
    loss, grad = ops.bce_with_logits_loss_and_grad(x, t, w, p, reduction)
    torch.testing.assert_close(loss, ops.bce_with_logits(x, t, w, p, reduction), rtol=1e-14, atol=0)
    torch.testing.assert_close(grad, d, rtol=1e-12, atol=0)
    up = torch.randn(33, 17, device=device, dtype=torch.float64)
    torch.testing.assert_close(ops.bce_with_logits_backward(up, x, t, w, p, 0), dloss64(x, t, w, p)[0] * up,
                               rtol=1e-12, atol=0)


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_opcheck(device, seed, reduction):
    x = torch.randn(6, 5, device=device, requires_grad=True)
    t = torch.rand(6, 5, device=device)
    w, p = torch.rand(5, device=device, requires_grad=True), torch.rand(6, 1, device=device) * 3
    ops = torch.ops.softmargin
    for weights in ((w, p), (None, p), (w.detach(), None), (None, None)):
        torch.library.opcheck(ops.bce_with_logits.default, (x, t, *weights, reduction))
        if reduction:
            plain = tuple(v.detach() if v is not None else None for v in weights)
            torch.library.opcheck(ops.bce_with_logits_loss_and_grad.default, (x.detach(), t, *plain, reduction))
    g = torch.tensor(0.5, device=device) if reduction else torch.randn(6, 5, device=device)
    torch.library.opcheck(ops.bce_with_logits_backward.default, (g, x.detach(), t, w.detach(), p, reduction))


def test_cuda_graph(seed):
    # Captured after a warm-up on the capture stream's side, replayed with new logits: no host synchronization.
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    x, t = torch.randn(512, 4096, device="cuda"), torch.rand(512, 4096, device="cuda")
    w, p = torch.rand(4096, device="cuda"), torch.rand(4096, device="cuda") * 3
    model = softmargin.BCEWithLogitsLoss(weight=w, pos_weight=p)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        model(x, t)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = model(x, t)
    for _ in range(3):
        x.copy_(torch.randn_like(x))
        graph.replay()
        torch.cuda.synchronize()
        assert_matches(out, reference64(x, t, w, p), "mean", torch.float32)

"""softmargin.pairwise_logistic_loss and PairwiseLogisticLoss, the pairwise logistic (Bradley-Terry) loss of reward
models, against -torch.nn.functional.logsigmoid(chosen - rejected - margin): margins that are numbers or tensors (per
pair, broadcast), rejected broadcast, every reduction and dtype, the gradients of chosen, rejected and the margin (the
fused forward, upstream gradients other than 1, retain_graph), gradcheck and gradgradcheck, opcheck, torch.compile,
large differences, empty inputs, the module and the errors.

The judge is a float64 reference of the inputs themselves in the stable form the operators compute: with
z = chosen - rejected - margin, loss = max(-z, 0) + log1p(exp(-|z|)) and d loss / d chosen = -sigmoid(-z). Element-wise
losses are within 2e-6 (float32) or 1e-12 (float64) relative of it; reduced ones within that times the sum of the
element-wise losses (all positive)."""

import pytest
import torch
import torch.nn.functional as F

import softmargin
from test_bce import DTYPES, HALF_DTYPES, REDUCTIONS, RTOL, assert_matches, make, reduce
from test_half import assert_within_one_ulp

pairwise = softmargin.pairwise_logistic_loss
S = 5

# (chosen's shape, rejected's shape, the margin: a number, or a tensor's shape)
SAMPLES = [((), (), 0.0), ((1,), (1,), 0.5), ((S,), (S,), 0.0), ((S,), (S,), (S,)), ((S,), (), -1.5),
           ((S, S), (S, S), ()), ((S, S), (S,), (S, 1)), ((S, S), (S, 1), 2.0), ((S, S, S), (S, S, S), (S, S, S)),
           ((3, 1001), (3, 1001), (3, 1))]


def margin_of(spec, dtype, device):
    return spec if isinstance(spec, float) else make(spec, dtype, device, -2.0, 2.0)


def z64(chosen, rejected, margin):
    m = margin.double() if isinstance(margin, torch.Tensor) else margin
    return (chosen.double() - rejected.double() - m).expand(chosen.shape)


def reference64(chosen, rejected, margin):
    """The element-wise loss in float64 (see the file comment), of chosen's shape; differentiable."""
    z = z64(chosen, rejected, margin)
    return torch.clamp_min(-z, 0) + torch.log1p(torch.exp(-z.abs()))


@pytest.mark.parametrize("sample", SAMPLES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_loss(device, seed, dtype, reduction, sample):
    c_shape, r_shape, m_spec = sample
    chosen, rejected = make(c_shape, dtype, device), make(r_shape, dtype, device)
    margin = margin_of(m_spec, dtype, device)
    c0, r0 = chosen.clone(), rejected.clone()
    ours = pairwise(chosen, rejected, margin, reduction=reduction)
    assert_matches(ours, reference64(chosen, rejected, margin), reduction, dtype)
    assert torch.equal(chosen, c0) and torch.equal(rejected, r0)  # the caller's tensors are not written
    theirs = reduce(-F.logsigmoid(chosen - rejected - margin), reduction)
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("sample", SAMPLES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_grads(device, seed, dtype, reduction, sample):
    c_shape, r_shape, m_spec = sample
    tensors = [make(c_shape, dtype, device), make(r_shape, dtype, device)]
    if not isinstance(m_spec, float):
        tensors.append(margin_of(m_spec, dtype, device))
    upstream = make(c_shape if reduction == "none" else (), dtype, device, -2.0, 2.0)
    ours = [t.clone().requires_grad_(True) for t in tensors]
    margin = ours[2] if len(ours) == 3 else m_spec
    pairwise(ours[0], ours[1], margin, reduction=reduction).backward(upstream)
    ref = [t.double().requires_grad_(True) for t in tensors]
    reduce(reference64(ref[0], ref[1], ref[2] if len(ref) == 3 else m_spec), reduction).backward(upstream.double())
    for mine, theirs in zip(ours, ref):
        assert mine.grad.shape == mine.shape and mine.grad.dtype == dtype
        # |d| <= 1: the gradients are within RTOL of the upstream gradient's scale, summed where they broadcast
        scale = upstream.double().abs().max().item() * max(1, ours[0].numel() // max(1, mine.numel()))
        if reduction == "mean":
            scale /= max(1, ours[0].numel())
        torch.testing.assert_close(mine.grad.double(), theirs.grad, rtol=RTOL[dtype] * 4, atol=RTOL[dtype] * scale)


@pytest.mark.parametrize("dtype", HALF_DTYPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_half(device, seed, dtype, reduction):
    chosen, rejected = make((7, 33), dtype, device), make((7, 33), dtype, device)
    margin = make((7, 1), dtype, device, -1.0, 1.0)
    ours = pairwise(chosen, rejected, margin, reduction=reduction)
    # computed in float: float's reduction of the float inputs, rounded once to the dtype
    as_float = pairwise(chosen.float(), rejected.float(), margin.float(), reduction=reduction)
    assert ours.dtype == dtype and torch.equal(ours, as_float.to(dtype))
    if reduction == "none":
        assert_within_one_ulp(ours, reference64(chosen, rejected, margin))
    c = chosen.clone().requires_grad_(True)
    r = rejected.clone().requires_grad_(True)
    pairwise(c, r, margin, reduction=reduction).sum().backward()
    cf, rf = chosen.float().requires_grad_(True), rejected.float().requires_grad_(True)
    pairwise(cf, rf, margin.float(), reduction=reduction).sum().backward()
    assert torch.equal(c.grad, cf.grad.to(dtype)) and torch.equal(r.grad, rf.grad.to(dtype))


def test_large_differences(device, seed):
    # -logsigmoid(z) = -z for z far below 0, 0 far above; the gradient -1 and 0. PyTorch's expression agrees here.
    for dtype in DTYPES + HALF_DTYPES:
        chosen = torch.tensor([-1e4, -100.0, 0.0, 100.0, 1e4], device=device).to(dtype)
        rejected = torch.zeros(5, device=device, dtype=dtype)
        c = chosen.clone().requires_grad_(True)
        loss = pairwise(c, rejected, reduction="none")
        expected = torch.tensor([1e4, 100.0, 0.6931471805599453, 0.0, 0.0], dtype=torch.float64).to(dtype)
        torch.testing.assert_close(loss.cpu(), expected, rtol=1e-2 if dtype in HALF_DTYPES else 1e-6, atol=1e-30)
        loss.sum().backward()
        assert torch.isfinite(c.grad).all()
        expected_grad = torch.tensor([-1.0, -1.0, -0.5, 0.0, 0.0], dtype=torch.float64)
        torch.testing.assert_close(c.grad.cpu().double(), expected_grad, rtol=0, atol=1e-30)


def test_fused_forward_and_repeated_backward(device, seed):
    # The fused pass's gradients, scaled by the upstream gradient; a second backward (retain_graph) recomputes them.
    chosen, rejected = torch.randn(64, device=device), torch.randn(64, device=device)
    margin = torch.rand(64, device=device)
    c, r, m = (t.clone().requires_grad_(True) for t in (chosen, rejected, margin))
    loss = pairwise(c, r, m, reduction="sum")
    loss.backward(torch.tensor(3.0, device=device), retain_graph=True)
    first = [t.grad.clone() for t in (c, r, m)]
    d = -torch.sigmoid(-(chosen.double() - rejected.double() - margin.double()))
    torch.testing.assert_close(first[0].double(), 3 * d, rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(first[1].double(), -3 * d, rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(first[2].double(), -3 * d, rtol=1e-6, atol=1e-7)
    assert first[1].data_ptr() != first[2].data_ptr()
    loss.backward(torch.tensor(2.0, device=device))
    for t, g in zip((c, r, m), first):
        torch.testing.assert_close(t.grad, g * 5 / 3, rtol=1e-6, atol=1e-7)


def test_only_some_require_grad(device, seed):
    chosen, rejected = torch.randn(4, 3, device=device), torch.randn(4, 3, device=device)
    margin = torch.rand(4, 1, device=device)
    d = -torch.sigmoid(-(chosen - rejected - margin)).double() / 12
    r = rejected.clone().requires_grad_(True)
    (grad_r,) = torch.autograd.grad(pairwise(chosen, r, margin), (r,))
    torch.testing.assert_close(grad_r.double(), -d, rtol=1e-6, atol=1e-8)
    m = margin.clone().requires_grad_(True)
    (grad_m,) = torch.autograd.grad(pairwise(chosen, rejected, m), (m,))
    torch.testing.assert_close(grad_m.double(), -d.sum(1, keepdim=True), rtol=1e-6, atol=1e-8)
    c = chosen.clone().requires_grad_(True)
    loss = pairwise(c, rejected, margin)  # a margin that does not require grad gets none
    loss.backward()
    assert margin.grad is None and rejected.grad is None
    torch.testing.assert_close(c.grad.double(), d, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gradcheck(device, seed, reduction):
    shapes = [((), (), ()), ((5,), (5,), (5,)), ((4, 5), (5,), (4, 1)), ((3, 4, 5), (4, 1), ())]
    for c_shape, r_shape, m_shape in shapes:
        c = torch.randn(c_shape, dtype=torch.float64, device=device, requires_grad=True)
        r = torch.randn(r_shape, dtype=torch.float64, device=device, requires_grad=True)
        m = torch.rand(m_shape, dtype=torch.float64, device=device, requires_grad=True)
        fn = lambda c, r, m: pairwise(c, r, m, reduction=reduction)  # noqa: E731
        assert torch.autograd.gradcheck(fn, (c, r, m))
        assert torch.autograd.gradgradcheck(fn, (c, r, m))
        ct = torch.randn(tuple(reversed(c_shape)), dtype=torch.float64, device=device)
        ct = ct.permute(tuple(reversed(range(len(c_shape))))).requires_grad_(True)
        assert torch.autograd.gradcheck(lambda c: pairwise(c, r.detach(), 0.25, reduction=reduction), (ct,))


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_opcheck(device, seed, reduction):
    c = torch.randn(6, 5, device=device, requires_grad=True)
    r = torch.randn(6, 5, device=device, requires_grad=True)
    m = torch.rand(6, 1, device=device, requires_grad=True)
    ops = torch.ops.softmargin
    for margin, value in ((m, 0.0), (None, 0.5), (m.detach(), 0.0)):
        torch.library.opcheck(ops.pairwise_logistic.default, (c, r, margin, value, reduction))
        if reduction:
            plain = margin.detach() if margin is not None else None
            torch.library.opcheck(ops.pairwise_logistic_loss_and_grad.default,
                                  (c.detach(), r.detach(), plain, value, reduction))
    g = torch.tensor(0.5, device=device) if reduction else torch.randn(6, 5, device=device)
    torch.library.opcheck(ops.pairwise_logistic_backward.default, (g, c.detach(), r.detach(), m.detach(), 0.0,
                                                                   reduction))


@pytest.mark.parametrize("mode", [{}, {"dynamic": True}, {"fullgraph": True}], ids=["default", "dynamic", "fullgraph"])
def test_compile(device, seed, mode):
    torch._dynamo.reset()
    model = torch.compile(softmargin.PairwiseLogisticLoss(margin=0.25), **mode)
    for rows in (64, 17, 5):
        c = torch.randn(rows, device=device, requires_grad=True)
        r = torch.randn(rows, device=device, requires_grad=True)
        m = torch.rand(rows, device=device)
        loss = model(c, r, m)
        loss.backward()
        ce, re = c.detach().clone().requires_grad_(True), r.detach().clone().requires_grad_(True)
        expected = pairwise(ce, re, m)
        expected.backward()
        torch.testing.assert_close(loss, expected, rtol=1e-6, atol=0)
        torch.testing.assert_close(c.grad, ce.grad, rtol=1e-6, atol=1e-12)
        torch.testing.assert_close(r.grad, re.grad, rtol=1e-6, atol=1e-12)
        with torch.no_grad():
            torch.testing.assert_close(model(c, r), pairwise(c, r, 0.25), rtol=1e-6, atol=0)


def test_empty(device):
    e = torch.empty(0, 3, device=device)
    assert pairwise(e, e, reduction="none").shape == (0, 3)
    assert pairwise(e, e, reduction="sum").item() == 0.0
    assert torch.isnan(pairwise(e, e, reduction="mean"))
    assert torch.isnan(-F.logsigmoid(e - e).mean())  # PyTorch's value


def test_module(device, seed):
    chosen, rejected = torch.randn(9, device=device), torch.randn(9, device=device)
    module = softmargin.PairwiseLogisticLoss(margin=0.5, reduction="sum")
    assert isinstance(module, torch.nn.Module) and module.margin == 0.5 and module.reduction == "sum"
    torch.testing.assert_close(module(chosen, rejected), pairwise(chosen, rejected, 0.5, reduction="sum"))
    per_pair = torch.rand(9, device=device)
    torch.testing.assert_close(module(chosen, rejected, per_pair), pairwise(chosen, rejected, per_pair, "sum"))
    assert "margin=0.5" in repr(module)


def test_errors(device):
    c = torch.randn(3, device=device)
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):  # PyTorch's message
        pairwise(c, torch.randn(4, device=device))
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        pairwise(c, c, torch.randn(2, 3, device=device))
    with pytest.raises(RuntimeError, match="SoftMargin computes float32, float64, bfloat16 and float16"):
        pairwise(torch.arange(3, device=device), c)
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        pairwise(c, c, reduction="average")
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        softmargin.PairwiseLogisticLoss(reduction="average")
    if device == "cuda":
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            pairwise(c, torch.randn(3))

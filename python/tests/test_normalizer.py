"""The family's normalizer and SoftMarginLoss's weight: every reduced loss of the family divided by a caller's count
(a Python number, a CPU scalar or a 0-dimensional tensor on the inputs' device) equals its sum divided by that count,
and so do its gradients; micro-batches reduced with the whole step's count add up to the mean over the step; the
weighted SoftMarginLoss against a float64 reference (loss and the gradients of the input and the weight); opcheck,
gradcheck and torch.compile(fullgraph=True) with both; the errors."""

import pytest
import torch
import torch.nn.functional as F

import softmargin
from test_bce import make

# Each loss of the family: a function of (tensors, reduction, normalizer) and a maker of its tensors on a device.
# DIFFERENTIABLE: the indices of the tensors each loss is differentiable with respect to.
LOSSES = {
    "soft_margin": (lambda t, r, n: softmargin.soft_margin_loss(t[0], t[1], reduction=r, normalizer=n),
                    lambda shape, d: (make(shape, torch.float64, d),
                                      torch.randn(shape, device=d, dtype=torch.float64))),
    "soft_margin_weight": (lambda t, r, n: softmargin.soft_margin_loss(t[0], t[1], reduction=r, weight=t[2],
                                                                       normalizer=n),
                           lambda shape, d: (make(shape, torch.float64, d), torch.randn(shape, device=d).double(),
                                             make(shape[-1:], torch.float64, d, 0.0, 2.0))),
    "bce_with_logits": (lambda t, r, n: softmargin.binary_cross_entropy_with_logits(t[0], t[1], t[2], reduction=r,
                                                                                    pos_weight=t[3], normalizer=n),
                        lambda shape, d: (make(shape, torch.float64, d), make(shape, torch.float64, d, 0.0, 1.0),
                                          make(shape[-1:], torch.float64, d, 0.0, 2.0),
                                          make(shape[-1:], torch.float64, d, 0.0, 3.0))),
    "pairwise": (lambda t, r, n: softmargin.pairwise_logistic_loss(t[0], t[1], t[2], reduction=r, normalizer=n),
                 lambda shape, d: (make(shape, torch.float64, d), make(shape, torch.float64, d),
                                   make(shape[-1:], torch.float64, d, -1.0, 1.0))),
}

DIFFERENTIABLE = {"soft_margin": (0,), "soft_margin_weight": (0, 2), "bce_with_logits": (0, 1, 2, 3),
                  "pairwise": (0, 1, 2)}


def leaves(loss, tensors):
    """Copies of tensors, those the loss is differentiable with respect to requiring grad."""
    return [t.clone().requires_grad_(i in DIFFERENTIABLE[loss]) for i, t in enumerate(tensors)]


def normalizers(device):
    """The forms of the count 37.5: a number, CPU scalars, device scalars of the kernels' count types and another."""
    forms = [37.5, torch.tensor(37.5, dtype=torch.float64), torch.tensor(75) / 2]
    forms += [torch.tensor(37.5, dtype=dtype, device=device) for dtype in (torch.float64, torch.float32)]
    forms += [torch.tensor(150, dtype=dtype, device=device) / 4 for dtype in (torch.int64, torch.int32)]
    return forms + [torch.tensor(37.5, dtype=torch.float16, device=device)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("loss", LOSSES)
def test_sum_over_normalizer(device, seed, loss, dtype):
    fn, maker = LOSSES[loss]
    tensors = [t.to(dtype) for t in maker((6, 7), device)]
    total = fn(tensors, "sum", None)
    ins = leaves(loss, tensors)
    torch.autograd.backward(fn(ins, "sum", None))
    rtol = 1e-6 if dtype == torch.float32 else 1e-12
    for n in normalizers(device):
        ours_in = leaves(loss, tensors)
        ours = fn(ours_in, "mean", n)
        assert ours.shape == () and ours.dtype == dtype
        torch.testing.assert_close(ours, total / 37.5, rtol=rtol, atol=0)
        ours.backward()
        for i in DIFFERENTIABLE[loss]:
            torch.testing.assert_close(ours_in[i].grad, ins[i].grad / 37.5, rtol=rtol * 4, atol=1e-12)


@pytest.mark.parametrize("loss", LOSSES)
def test_micro_batches(device, seed, loss):
    # Gradient accumulation: micro-batches reduced with the step's count add up to the mean over the whole step.
    fn, maker = LOSSES[loss]
    tensors = maker((10, 7), device)
    whole = leaves(loss, tensors)
    fn(whole, "mean", None).backward()
    parts = leaves(loss, tensors)
    count = torch.tensor(70, device=device)
    total = 0
    for rows in (slice(0, 3), slice(3, 4), slice(4, 10)):
        piece = [p[rows] if p.dim() == 2 else p for p in parts]
        step = fn(piece, "mean", count)
        step.backward()
        total = total + step.detach()
    torch.testing.assert_close(total, fn(tensors, "mean", None), rtol=1e-12, atol=0)
    for i in DIFFERENTIABLE[loss]:
        torch.testing.assert_close(parts[i].grad, whole[i].grad, rtol=1e-11, atol=1e-15)


def test_normalizer_matches_pytorch(device, seed):
    x, y = torch.randn(32, 5, device=device), torch.randn(32, 5, device=device).sign()
    n = torch.tensor(512.0, device=device)
    torch.testing.assert_close(softmargin.SoftMarginLoss()(x, y, normalizer=n),
                               F.soft_margin_loss(x, y, reduction="sum") / n, rtol=1e-6, atol=0)
    c, r = torch.randn(64, device=device), torch.randn(64, device=device)
    torch.testing.assert_close(softmargin.PairwiseLogisticLoss()(c, r, normalizer=256),
                               -F.logsigmoid(c - r).sum() / 256, rtol=1e-6, atol=0)
    t = torch.rand(32, 5, device=device)
    torch.testing.assert_close(softmargin.BCEWithLogitsLoss()(x, t, normalizer=n),
                               F.binary_cross_entropy_with_logits(x, t, reduction="sum") / n, rtol=1e-6, atol=0)


def test_empty_with_normalizer(device):
    e = torch.empty(0, 4, device=device)
    assert softmargin.soft_margin_loss(e, e, normalizer=10).item() == 0.0  # 0 / 10, where the mean would be NaN


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_weighted_soft_margin(device, seed, dtype, reduction):
    for shape, w_shape in [((), ()), ((7,), (7,)), ((6, 5), (5,)), ((6, 5), (6, 1)), ((4, 3, 5), (3, 5)),
                           ((3, 1001), ())]:
        x, y = make(shape, dtype, device), torch.randn(shape, device=device).to(dtype)
        w = make(w_shape, dtype, device, -1.0, 2.0)
        xs, ws = x.clone().requires_grad_(True), w.clone().requires_grad_(True)
        ours = softmargin.soft_margin_loss(xs, y, reduction=reduction, weight=ws)
        x64, w64 = x.double().requires_grad_(True), w.double().requires_grad_(True)
        z = -y.double() * x64
        ref = (torch.clamp_min(z, 0) + torch.log1p(torch.exp(-z.abs()))) * w64
        ref = ref.sum() if reduction == "sum" else ref.mean() if reduction == "mean" else ref
        rtol = 2e-6 if dtype == torch.float32 else 1e-12
        scale = (z.detach().abs() + 1).mul(w64.detach().abs()).sum().item()
        torch.testing.assert_close(ours.double(), ref.detach(), rtol=rtol, atol=rtol * scale / max(1, x.numel()))
        upstream = make(ours.shape, dtype, device, -2.0, 2.0)
        ours.backward(upstream)
        ref.backward(upstream.double())
        assert xs.grad.dtype == dtype and ws.grad.shape == w.shape
        torch.testing.assert_close(xs.grad.double(), x64.grad, rtol=rtol * 4, atol=rtol * x64.grad.abs().max().item())
        # the weight's gradient sums softplus(-y x) u over the dimensions it broadcasts along: within rtol (times the
        # terms' count, for the float32 sum) of the sum of their magnitudes
        terms = (torch.clamp_min(z, 0) + torch.log1p(torch.exp(-z.abs()))).detach() * upstream.double().abs()
        if reduction == "mean":
            terms = terms / max(1, x.numel())
        bound = rtol * (1 + x.numel() // max(1, w.numel())) * terms.expand(x.shape).sum_to_size(w.shape)
        assert ((ws.grad.double() - w64.grad).abs() <= bound + 1e-300).all()


def test_weighted_module(device, seed):
    w = torch.rand(5, device=device)
    module = softmargin.SoftMarginLoss(reduction="sum", weight=w)
    assert torch.equal(module.weight, w) and "weight" in dict(module.named_buffers())
    x, y = torch.randn(4, 5, device=device), torch.randn(4, 5, device=device).sign()
    torch.testing.assert_close(module(x, y), (F.soft_margin_loss(x, y, reduction="none") * w).sum(), rtol=1e-6,
                               atol=1e-6)
    assert softmargin.SoftMarginLoss().weight is None


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_weighted_half(device, seed, dtype):
    x, w = make((7, 33), dtype, device), make((33,), dtype, device)
    y = torch.randn(7, 33, device=device).sign().to(dtype)
    for reduction in ("none", "sum"):
        ours = softmargin.soft_margin_loss(x, y, reduction=reduction, weight=w)
        as_float = softmargin.soft_margin_loss(x.float(), y.float(), reduction=reduction, weight=w.float())
        assert ours.dtype == dtype and torch.equal(ours, as_float.to(dtype))


def test_gradcheck(device, seed):
    x = torch.randn(4, 5, dtype=torch.float64, device=device, requires_grad=True)
    y = torch.randn(4, 5, dtype=torch.float64, device=device)
    w = torch.rand(5, dtype=torch.float64, device=device, requires_grad=True)
    n = torch.tensor(7.0, dtype=torch.float64, device=device)
    for fn in (lambda x, w: softmargin.soft_margin_loss(x, y, weight=w, normalizer=n),
               lambda x, w: softmargin.soft_margin_loss(x, y, reduction="none", weight=w),
               lambda x, w: softmargin.binary_cross_entropy_with_logits(x, y.sigmoid(), w, normalizer=n),
               lambda x, w: softmargin.pairwise_logistic_loss(x, w, 0.5, normalizer=n)):
        assert torch.autograd.gradcheck(fn, (x, w))
        assert torch.autograd.gradgradcheck(fn, (x, w))


def test_opcheck(device, seed):
    ops = torch.ops.softmargin
    x, y = torch.randn(6, 5, device=device, requires_grad=True), torch.randn(6, 5, device=device)
    w = torch.rand(5, device=device, requires_grad=True)
    for n in (torch.tensor(9.0, device=device), torch.tensor(9, dtype=torch.int32, device=device), None):
        torch.library.opcheck(ops.loss.default, (x, y, 1, w, n))
        torch.library.opcheck(ops.loss_and_grad.default, (x.detach(), y, 1, w.detach(), n))
        torch.library.opcheck(ops.backward.default, (torch.tensor(0.5, device=device), x.detach(), y, 1, w.detach(), n))
        torch.library.opcheck(ops.bce_with_logits.default, (x, y.sigmoid(), w, None, 1, n))
        torch.library.opcheck(ops.pairwise_logistic.default, (x, y, None, 0.5, 1, n))
    torch.library.opcheck(ops.loss.default, (x, y, 0, w, None))


@pytest.mark.parametrize("loss", ["soft_margin", "bce", "pairwise"])
def test_compile_fullgraph(device, seed, loss):
    # A normalizer tensor on the device: no graph break, no host read; the count may change between calls.
    torch._dynamo.reset()
    w = torch.rand(33, device=device)
    fns = {"soft_margin": lambda x, t, n: softmargin.soft_margin_loss(x, t, weight=w, normalizer=n),
           "bce": lambda x, t, n: softmargin.binary_cross_entropy_with_logits(x, t, w, normalizer=n),
           "pairwise": lambda x, t, n: softmargin.pairwise_logistic_loss(x, t, w, normalizer=n)}
    eager = fns[loss]
    compiled = torch.compile(eager, fullgraph=True)
    for count in (100.0, 250.0):
        n = torch.tensor(count, device=device)
        x = torch.randn(8, 33, device=device, requires_grad=True)
        t = torch.rand(8, 33, device=device) if loss == "bce" else torch.randn(8, 33, device=device)
        ours = compiled(x, t, n)
        ours.backward()
        xe = x.detach().clone().requires_grad_(True)
        expected = eager(xe, t, n)
        expected.backward()
        torch.testing.assert_close(ours, expected, rtol=1e-6, atol=0)
        torch.testing.assert_close(x.grad, xe.grad, rtol=1e-6, atol=1e-12)


def test_errors(device):
    x, y = torch.randn(3, 4, device=device), torch.randn(3, 4, device=device)
    for reduction in ("sum", "none"):
        with pytest.raises(ValueError, match="a normalizer divides the sum of the losses .* needs reduction mean"):
            softmargin.soft_margin_loss(x, y, reduction=reduction, normalizer=5)
    with pytest.raises(RuntimeError, match="normalizer must be a number or a 0-dimensional tensor"):
        softmargin.soft_margin_loss(x, y, normalizer=torch.ones(1, device=device))
    for bad in (0, -2.0, float("inf")):
        with pytest.raises(ValueError, match="must be a positive, finite count"):
            softmargin.pairwise_logistic_loss(x, y, normalizer=bad)
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'normalizer'"):
        softmargin.soft_margin_loss(x.requires_grad_(True), y,
                                    normalizer=torch.tensor(3.0, device=device, requires_grad=True))
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        softmargin.soft_margin_loss(x, y, weight=torch.ones(2, 3, 4, device=device))
    if device == "cuda":  # a CPU call with the count on the GPU
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            softmargin.soft_margin_loss(x.detach().cpu(), y.cpu(), normalizer=torch.tensor(3.0, device=device))

"""bfloat16 and float16 inputs: every reduction, layout and shape of test_loss, the gradients (backward,
loss_and_grad, autograd), large margins, NaN and infinity, converted targets; int8 targets (read without a
conversion) with every x dtype.

16-bit inputs are exact in float64 and so is their product z = -y x, so the reference is the fp64 loss of the inputs
themselves. The operators compute in float and round once to the input's dtype: every output (element-wise, reduced,
gradient) is within one unit in the last place of that dtype of the reference (and infinite exactly where the
reference rounds to infinity). PyTorch itself computes in the 16-bit dtype (several roundings; inf at large margins),
and torch 1.13 has no float16 exp on the CPU, so the fp64 reference is the judge here."""

import pytest
import torch

import softmargin
from test_loss import LAYOUTS, REDUCTIONS, SHAPES, make_inputs

HALF_DTYPES = [torch.bfloat16, torch.float16]
MANTISSA_BITS = {torch.bfloat16: 7, torch.float16: 10}


def ulp(v, dtype):
    """One unit in the last place of dtype at the float64 values v (subnormal spacing below the normal range)."""
    exponent = torch.floor(torch.log2(v.abs().clamp(min=torch.finfo(dtype).tiny)))
    return torch.exp2(exponent - MANTISSA_BITS[dtype])


def assert_within_one_ulp(ours, reference):
    """ours (16-bit) is within one ulp of its dtype of the float64 reference; where the reference rounds to an
    infinity or is NaN, ours is the same."""
    assert ours.shape == reference.shape and ours.dtype in HALF_DTYPES
    rounded = reference.to(ours.dtype)
    special = ~torch.isfinite(rounded)
    assert torch.equal(torch.isnan(ours), torch.isnan(rounded))
    assert torch.equal(ours[special & ~torch.isnan(rounded)], rounded[special & ~torch.isnan(rounded)])
    finite = ~special
    err = (ours[finite].double() - reference[finite]).abs()
    bound = ulp(reference[finite], ours.dtype)
    assert (err <= bound).all(), f"largest error {(err / bound).max().item():.3f} ulp"


def loss64(x, y):
    """The element-wise loss in float64 of the exact product: max(z, 0) + log1p(exp(-|z|)), z = -y x."""
    z = -(y.double() * x.double())
    return torch.clamp(z, min=0) + torch.log1p(torch.exp(-z.abs()))


def dloss64(x, y):
    """d loss / d x in float64: -y sigmoid(-y x)."""
    yd = y.double().expand(x.shape)
    return -yd * torch.sigmoid(-(yd * x.double()))


def reduce64(loss, reduction):
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


def scale64(reduction, n):
    return 1.0 / n if reduction == "mean" else 1.0


@pytest.mark.parametrize("targets", ["real", "sign"])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", HALF_DTYPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_loss_within_one_ulp(device, seed, reduction, dtype, shape, layout, targets):
    x, y = make_inputs(shape, layout, dtype, device, targets)
    x0, y0 = x.clone(), y.clone()
    ours = softmargin.SoftMarginLoss(reduction=reduction)(x, y)
    assert ours.dtype == dtype and ours.device == x.device
    assert_within_one_ulp(ours.cpu(), reduce64(loss64(x, y).cpu(), reduction))
    assert torch.equal(x, x0) and torch.equal(y, y0)  # the caller's tensors are not written


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", [(5,), (5, 5), (5, 5, 5)], ids=str)
@pytest.mark.parametrize("dtype", HALF_DTYPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gradients_within_one_ulp(device, seed, reduction, dtype, shape, layout):
    x, y = make_inputs(shape, layout, dtype, device, "real")
    n = x.numel()
    upstream = torch.randn(x.shape if reduction == "none" else (), device=device).to(dtype)
    code = {"none": 0, "mean": 1, "sum": 2}[reduction]
    d = dloss64(x, y).cpu() * scale64(reduction, n)
    grad = torch.ops.softmargin.backward(upstream, x, y, code)
    assert grad.dtype == dtype and grad.shape == x.shape
    assert_within_one_ulp(grad.cpu(), upstream.cpu().double() * d)
    if reduction != "none":
        loss, grad = torch.ops.softmargin.loss_and_grad(x, y, code)
        assert_within_one_ulp(loss.cpu(), reduce64(loss64(x, y).cpu(), reduction))
        assert_within_one_ulp(grad.cpu(), d)
        # autograd with the engine's upstream 1: the fused pass's gradient as it is
        xr = x.detach().clone().requires_grad_()
        softmargin.soft_margin_loss(xr, y, reduction=reduction).backward()
        assert xr.grad.dtype == dtype
        assert_within_one_ulp(xr.grad.cpu(), d)


@pytest.mark.parametrize("dtype", HALF_DTYPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_large_margins(device, reduction, dtype):
    big = torch.finfo(dtype).max
    x = torch.tensor([100.0, -100.0, big, -big, 0.0, 5.0], dtype=dtype, device=device)
    y = torch.tensor([-1.0, 1.0, -1.0, -1.0, 1.0, 1.0], dtype=dtype, device=device)
    ours = softmargin.soft_margin_loss(x, y, reduction=reduction)
    assert_within_one_ulp(ours.cpu(), reduce64(loss64(x, y).cpu(), reduction))
    if reduction == "none":
        assert torch.isfinite(ours).all() and ours[0].item() == 100.0 and ours[2].item() == big
    grad = torch.ops.softmargin.backward(torch.ones((), dtype=dtype, device=device), x, y, 2)
    assert torch.isfinite(grad).all()
    assert_within_one_ulp(grad.cpu(), dloss64(x, y).cpu())


@pytest.mark.parametrize("dtype", HALF_DTYPES, ids=str)
def test_special_values(device, dtype):
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([nan, 1.0, inf, -inf], dtype=dtype, device=device)
    y = torch.tensor([1.0, nan, 1.0, 1.0], dtype=dtype, device=device)
    none = softmargin.soft_margin_loss(x, y, reduction="none")
    assert torch.isnan(none[:2]).all()
    assert none[2].item() == 0.0 and none[3].item() == inf
    assert torch.isnan(softmargin.soft_margin_loss(x, y))
    grad = torch.ops.softmargin.backward(torch.ones((), dtype=dtype, device=device), x, y, 2)
    assert torch.isnan(grad[:2]).all() and grad[2].item() == 0.0 and grad[3].item() == -1.0


@pytest.mark.parametrize("dtype", HALF_DTYPES, ids=str)
def test_large_input(device, seed, dtype):
    x = torch.randn(512, 4096, device=device).to(dtype)
    y = (torch.randint(0, 2, (512, 4096), device=device) * 2 - 1).to(dtype)
    for reduction in ("mean", "sum"):
        ours = softmargin.soft_margin_loss(x, y, reduction=reduction)
        assert_within_one_ulp(ours.cpu(), reduce64(loss64(x, y).cpu(), reduction))
    loss, grad = torch.ops.softmargin.loss_and_grad(x, y, 1)
    assert_within_one_ulp(grad.cpu(), dloss64(x, y).cpu() / x.numel())


@pytest.mark.parametrize("dtype", HALF_DTYPES, ids=str)
def test_targets_are_converted(device, seed, dtype):
    # As in PyTorch, the target is converted to the input's dtype (a bool target: true 1, false 0).
    x = torch.randn(4, 6, device=device).to(dtype)
    for y in (torch.randint(0, 2, (4, 6), device=device) * 2 - 1,
              torch.randn(4, 6, device=device),
              torch.randint(0, 2, (6,), device=device).bool()):
        ours = softmargin.soft_margin_loss(x, y, reduction="none")
        assert ours.dtype == dtype
        assert torch.equal(ours, softmargin.soft_margin_loss(x, y.to(dtype), reduction="none"))
        assert_within_one_ulp(ours.cpu(), loss64(x, y.to(dtype).expand(x.shape)).cpu())


def test_bfloat16_agrees_with_pytorch_where_it_is_finite(device, seed):
    # PyTorch computes in bfloat16 (its rounding of 1 + exp(z) and of z alone: a few ulp); ours is within those.
    x = torch.randn(64, 33, device=device).to(torch.bfloat16) * 3
    y = (torch.randint(0, 2, (64, 33), device=device) * 2 - 1).to(torch.bfloat16)
    ours = softmargin.soft_margin_loss(x, y, reduction="none")
    theirs = torch.nn.functional.soft_margin_loss(x, y, reduction="none")
    torch.testing.assert_close(ours, theirs, rtol=4 * 2.0**-8, atol=2.0**-8)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "broadcast"])
@pytest.mark.parametrize("dtype", HALF_DTYPES + [torch.float32, torch.float64], ids=str)
def test_int8_target_is_read_as_converted(device, seed, dtype, layout):
    # An int8 target is read as it is (one byte an element); its values are exact in every x dtype, so every output
    # equals that of the target converted to x's dtype, as PyTorch converts it.
    x, y = make_inputs((6, 9), layout, dtype, device, "real")
    y8 = (y * 20).to(torch.int8)  # -128..127 after truncation
    yx = y8.to(dtype)
    for reduction, code in (("none", 0), ("mean", 1), ("sum", 2)):
        assert torch.equal(softmargin.soft_margin_loss(x, y8, reduction=reduction),
                           softmargin.soft_margin_loss(x, yx, reduction=reduction))
        upstream = torch.randn(x.shape if code == 0 else (), device=device).to(dtype)
        assert torch.equal(torch.ops.softmargin.backward(upstream, x, y8, code),
                           torch.ops.softmargin.backward(upstream, x, yx, code))
        if code:
            for ours, converted in zip(torch.ops.softmargin.loss_and_grad(x, y8, code),
                                       torch.ops.softmargin.loss_and_grad(x, yx, code)):
                assert torch.equal(ours, converted)
    if dtype in HALF_DTYPES:
        assert_within_one_ulp(softmargin.soft_margin_loss(x, y8, reduction="none").cpu(), loss64(x, yx).cpu())


def test_int8_target_is_not_converted(device):
    # The profile of a call with an int8 target holds the operator alone (a float target's holds its conversion).
    x = torch.randn(6, 9, device=device).to(torch.bfloat16)
    for y, converts in ((torch.ones(6, 9, dtype=torch.int8, device=device), False),
                        (torch.ones(6, 9, device=device), True)):
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            torch.ops.softmargin.loss(x, y, 1)
        names = {e.name for e in prof.events()}
        assert "softmargin::loss" in names and ("aten::_to_copy" in names) == converts, names

"""softmargin.BCEWithLogitsLoss and binary_cross_entropy_with_logits against torch.nn.BCEWithLogitsLoss: PyTorch's own
OpInfo samples (weights and pos_weight that broadcast, soft labels, every reduction), other broadcasts and layouts,
every input dtype with every target dtype, empty inputs, large margins, the module and the errors.

The judge is a reference in float64 of the inputs themselves, in the stable form the operators compute:
loss = w (m + c log1p(exp(-|x|))), c = 1 + (p - 1) t, m = (1 - t) x for x > 0 and -p t x else. Element-wise losses
are within 2e-6 (float32) or 1e-12 (float64) relative of it; reduced ones within that times the sum of the absolute
element-wise losses (weights may be negative: the sum may cancel). PyTorch's own form cancels where x < 0 (about
|x| eps absolute), so the comparison with PyTorch allows that much."""

import pytest
import torch

import softmargin
from test_half import assert_within_one_ulp

S = 5
REDUCTIONS = ["none", "mean", "sum"]
DTYPES = [torch.float32, torch.float64]
HALF_DTYPES = [torch.bfloat16, torch.float16]
RTOL = {torch.float32: 2e-6, torch.float64: 1e-12}


def _samples():
    """PyTorch's sample_inputs_binary_cross_entropy_with_logits: (shape, weight shape, pos_weight shape, reduction)."""
    out = [(shape, None, None, "mean") for shape in ((), (1,), (S,), (S, S), (S, S, S))]
    out += [((S, S), None, None, r) for r in REDUCTIONS]
    out += [((S, S), w, None, r) for w in ((1,), (1, S), (S,), (S, S)) for r in REDUCTIONS]
    out += [((S, S), None, (S,), r) for r in REDUCTIONS]
    out += [((S, S), (S, S), (S,), r) for r in REDUCTIONS]
    return out


SAMPLES = _samples()


def make(shape, dtype, device, low=-9.0, high=9.0):
    return (torch.rand(shape, dtype=torch.float64, device=device) * (high - low) + low).to(dtype)


def reference64(x, t, weight=None, pos_weight=None):
    """The element-wise loss in float64 (see the file comment), of x's shape."""
    x, t = x.double(), t.double()
    p = pos_weight.double() if pos_weight is not None else torch.ones((), dtype=torch.float64, device=x.device)
    c = 1 + (p - 1) * t
    loss = torch.where(x > 0, (1 - t) * x, -p * t * x) + c * torch.log1p(torch.exp(-x.abs()))
    if weight is not None:
        loss = loss * weight.double()
    return loss.expand(x.shape)


def reduce(loss, reduction):
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


def assert_matches(ours, elementwise, reduction, dtype, atol_elementwise=None):
    """ours is reduce(elementwise) within RTOL relative per element (reduced: of the sum of magnitudes) plus
    atol_elementwise (summed for reductions)."""
    rtol = RTOL[dtype]
    bound = rtol * elementwise.abs() + torch.finfo(dtype).tiny
    if atol_elementwise is not None:
        bound = bound + atol_elementwise
    expected = reduce(elementwise, reduction)
    bound = reduce(bound, reduction).abs() if reduction != "none" else bound
    assert ours.shape == expected.shape and ours.dtype == dtype
    err = (ours.double() - expected).abs()
    assert (err <= bound).all(), f"largest error {(err / bound).max().item():.3g} of the bound"


def pytorch_rounding(x, t, weight, pos_weight, dtype):
    """PyTorch's absolute error per element: its (1 - t) x - x cancels for x < 0 (a few ulp of |x| + 1, times c w)."""
    c = 1 + ((pos_weight.double() - 1) * t.double()).abs() if pos_weight is not None else 1.0
    w = weight.double().abs() if weight is not None else 1.0
    return (8 * torch.finfo(dtype).eps * (1 + x.double().abs()) * c * w).expand(x.shape)


@pytest.mark.parametrize("sample", SAMPLES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("labels", ["soft", "hard"])
def test_opinfo_samples_match_pytorch(device, seed, dtype, sample, labels):
    shape, w_shape, p_shape, reduction = sample
    x = make(shape, dtype, device)
    t = make(shape, dtype, device, 0.0, 1.0)
    if labels == "hard":
        t = t.round()
    weight = make(w_shape, dtype, device) if w_shape else None
    pos_weight = make(p_shape, dtype, device, 0.0) if p_shape else None
    x0, t0 = x.clone(), t.clone()
    ours = softmargin.binary_cross_entropy_with_logits(x, t, weight, reduction=reduction, pos_weight=pos_weight)
    assert torch.equal(x, x0) and torch.equal(t, t0)  # the caller's tensors are not written
    assert_matches(ours, reference64(x, t, weight, pos_weight), reduction, dtype)
    module = softmargin.BCEWithLogitsLoss(weight=weight, reduction=reduction, pos_weight=pos_weight)
    assert torch.equal(module(x, t), ours)
    theirs = torch.nn.BCEWithLogitsLoss(weight=weight, reduction="none", pos_weight=pos_weight)(x, t)
    assert_matches(ours, theirs.double(), reduction, dtype, pytorch_rounding(x, t, weight, pos_weight, dtype))


# weight and pos_weight shapes that broadcast to x's (PyTorch applies pos_weight along the last dimension).
BROADCASTS = [((4, 6), (), (6,)), ((4, 6), (4, 1), (1, 6)), ((4, 6), (1,), ()), ((4, 6), (4, 6), (4, 6)),
              ((3, 4, 6), (6,), (6,)), ((3, 4, 6), (3, 1, 6), (4, 1)), ((2, 3, 4, 5), (3, 1, 1), (5,)),
              ((2, 3, 4, 5, 2), (1, 3, 1, 5, 1), (2,))]
LAYOUTS = ["contiguous", "transposed", "sliced", "expanded"]


def layout_of(t, layout):
    """t (contiguous) seen in another layout, same shape and values."""
    if t.dim() == 0:
        return t
    if layout == "transposed":
        dims = tuple(reversed(range(t.dim())))
        return t.permute(dims).contiguous().permute(dims)
    if layout == "sliced":
        big = torch.zeros(t.shape[:-1] + (2 * t.shape[-1],), dtype=t.dtype, device=t.device)
        big[..., 1::2] = t
        return big[..., 1::2]
    if layout == "expanded":
        return t.expand((2,) + t.shape)[1]
    return t


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shapes", BROADCASTS, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_broadcasts_and_layouts(device, seed, reduction, shapes, layout):
    shape, w_shape, p_shape = shapes
    x = layout_of(make(shape, torch.float32, device), layout)
    t = layout_of(make(shape, torch.float32, device, 0.0, 1.0), layout)
    weight = layout_of(make(w_shape, torch.float32, device, 0.5, 2.0), layout)
    pos_weight = make(p_shape, torch.float32, device, 0.0, 4.0)
    for w, p in ((weight, pos_weight), (None, pos_weight), (weight, None)):
        ours = softmargin.binary_cross_entropy_with_logits(x, t, w, reduction=reduction, pos_weight=p)
        assert_matches(ours, reference64(x, t, w, p), reduction, torch.float32)


@pytest.mark.parametrize("dtype", HALF_DTYPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_half_within_one_ulp(device, seed, dtype, reduction):
    x = make((7, 9), dtype, device)
    t = make((7, 9), dtype, device, 0.0, 1.0)
    weight, pos_weight = make((9,), dtype, device, 0.5, 2.0), make((9,), dtype, device, 0.0, 4.0)
    ours = softmargin.binary_cross_entropy_with_logits(x, t, weight, reduction=reduction, pos_weight=pos_weight)
    assert ours.dtype == dtype
    assert_within_one_ulp(ours.cpu(), reduce(reference64(x, t, weight, pos_weight), reduction).cpu())


@pytest.mark.parametrize("dtype", DTYPES + HALF_DTYPES, ids=str)
def test_target_dtypes(device, seed, dtype):
    # int8 and bool targets are read as they are, any other is converted to x's dtype; the loss has x's dtype.
    x = make((6, 9), dtype, device)
    labels = torch.randint(0, 2, (6, 9), device=device)
    weight, pos_weight = make((9,), dtype, device, 0.5, 2.0), make((9,), dtype, device, 0.0, 4.0)
    converted = labels.to(dtype)
    for reduction, code in (("none", 0), ("mean", 1), ("sum", 2)):
        expected = softmargin.binary_cross_entropy_with_logits(x, converted, weight, reduction=reduction,
                                                               pos_weight=pos_weight)
        for t in (labels.to(torch.int8), labels.bool(), labels.to(torch.uint8), labels, labels.double()):
            ours = softmargin.binary_cross_entropy_with_logits(x, t, weight, reduction=reduction,
                                                               pos_weight=pos_weight)
            assert ours.dtype == dtype and torch.equal(ours, expected), t.dtype
        up = make(x.shape if code == 0 else (), dtype, device)
        ops = torch.ops.softmargin
        assert torch.equal(ops.bce_with_logits_backward(up, x, labels.bool(), weight, pos_weight, code),
                           ops.bce_with_logits_backward(up, x, converted, weight, pos_weight, code))
        if code:
            for ours, theirs in zip(ops.bce_with_logits_loss_and_grad(x, labels.bool(), weight, pos_weight, code),
                                    ops.bce_with_logits_loss_and_grad(x, converted, weight, pos_weight, code)):
                assert torch.equal(ours, theirs)


def test_bool_target_is_not_converted(device):
    # The profile of a call with a bool or int8 target holds the operator alone (a float64 one's its conversion).
    x = torch.randn(6, 9, device=device)
    for t, converts in ((torch.ones(6, 9, dtype=torch.bool, device=device), False),
                        (torch.ones(6, 9, dtype=torch.int8, device=device), False),
                        (torch.ones(6, 9, dtype=torch.float64, device=device), True)):
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            torch.ops.softmargin.bce_with_logits(x, t, None, None, 1)
        names = {e.name for e in prof.events()}
        assert "softmargin::bce_with_logits" in names and ("aten::_to_copy" in names) == converts, names


def test_empty_inputs(device):
    for shape in ((0,), (0, 3), (3, 0, 2)):
        x = torch.empty(shape, device=device, requires_grad=True)
        t = torch.empty(shape, device=device)
        w, p = torch.ones(shape[-1:], device=device), torch.ones(shape[-1:], device=device)
        assert torch.isnan(softmargin.binary_cross_entropy_with_logits(x, t, w, pos_weight=p))
        total = softmargin.binary_cross_entropy_with_logits(x, t, w, reduction="sum", pos_weight=p)
        assert total.item() == 0.0
        assert softmargin.binary_cross_entropy_with_logits(x, t, reduction="none").shape == shape
        total.backward()
        assert x.grad.shape == shape


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_large_margins(device, dtype, reduction):
    # Finite and accurate at every margin, and PyTorch's result where that is finite (its max-shifted form is stable
    # too, but cancels: see pytorch_rounding).
    big = 1e37 if dtype == torch.float32 else 1e300
    x = torch.tensor([100.0, -100.0, 1000.0, -1000.0, big, -big, 1e30, -1e30, 0.0, 20.0], dtype=dtype, device=device)
    for t_value in (0.0, 1.0, 0.25):
        t = torch.full_like(x, t_value)
        for p in (None, torch.full((), 3.0, dtype=dtype, device=device)):
            ours = softmargin.binary_cross_entropy_with_logits(x, t, reduction=reduction, pos_weight=p)
            assert torch.isfinite(ours).all()
            assert_matches(ours, reference64(x, t, None, p), reduction, dtype)
            theirs = torch.nn.functional.binary_cross_entropy_with_logits(x, t, reduction="none", pos_weight=p)
            if torch.isfinite(theirs).all():
                assert_matches(ours, theirs.double(), reduction, dtype, pytorch_rounding(x, t, None, p, dtype))
    t = torch.tensor([0.0, 1.0], dtype=dtype, device=device)
    assert softmargin.binary_cross_entropy_with_logits(x[:2], t, reduction="none").tolist() == [100.0, 100.0]


def test_special_values(device):
    # NaN in gives NaN; an infinite logit on the wrong side of its label gives an infinite loss (PyTorch: inf - inf,
    # NaN, at x = -inf, t = 1) and a gradient of +-1.
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([nan, 1.0, inf, -inf], device=device, requires_grad=True)
    t = torch.tensor([1.0, nan, 0.0, 1.0], device=device)
    none = softmargin.binary_cross_entropy_with_logits(x, t, reduction="none")
    assert torch.isnan(none[:2]).all() and none[2:].tolist() == [inf, inf]
    assert torch.isnan(softmargin.binary_cross_entropy_with_logits(x, t))
    softmargin.binary_cross_entropy_with_logits(x[2:], t[2:], reduction="sum").backward()
    assert x.grad[2:].tolist() == [1.0, -1.0]


def test_module(device):
    w, p = torch.rand(3, device=device), torch.rand(3, device=device)
    module = softmargin.BCEWithLogitsLoss(weight=w, pos_weight=p, reduction="sum")
    assert isinstance(module, torch.nn.BCEWithLogitsLoss)
    assert module.state_dict().keys() == torch.nn.BCEWithLogitsLoss(weight=w, pos_weight=p).state_dict().keys()
    x, t = torch.randn(4, 3, device=device), torch.rand(4, 3, device=device)
    with pytest.warns(UserWarning):
        legacy = softmargin.BCEWithLogitsLoss(weight=w, size_average=False, pos_weight=p)
    assert legacy.reduction == "sum" and torch.equal(legacy(x, t), module(x, t))
    with pytest.warns(UserWarning):
        legacy = softmargin.binary_cross_entropy_with_logits(x, t, w, size_average=False, pos_weight=p)
    assert torch.equal(legacy, module(x, t))


def test_errors(device):
    x, t = torch.randn(3, 4, device=device), torch.rand(3, 4, device=device)
    bce = softmargin.binary_cross_entropy_with_logits
    with pytest.raises(ValueError, match=r"Target size \(torch.Size\(\[4\]\)\) must be the same as input size"):
        bce(x, t[0])
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        bce(x, t, reduction="foo")
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(4\) must match the size of tensor b \(3\) at "
                                           r"non-singleton dimension 1"):
        bce(x, t, torch.ones(3, device=device))
    with pytest.raises(RuntimeError, match=r"output with shape \[3, 4\] doesn't match the broadcast shape \[2, 3, 4\]"):
        bce(x, t, pos_weight=torch.ones(2, 3, 4, device=device))
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(4\) must match the size of tensor b \(5\)"):
        bce(x, t, pos_weight=torch.ones(5, device=device))
    with pytest.raises(RuntimeError, match="result type ComplexFloat can't be cast to the desired output type Float"):
        bce(x, t, torch.ones(4, device=device, dtype=torch.complex64))
    with pytest.raises(RuntimeError, match="input has dtype Long; SoftMargin computes float32, float64, bfloat16"):
        bce(torch.ones(3, 4, device=device, dtype=torch.long), t)
    ops = torch.ops.softmargin
    with pytest.raises(RuntimeError, match="bce_with_logits_loss_and_grad: reduction none has no scalar loss"):
        ops.bce_with_logits_loss_and_grad(x, t, None, None, 0)
    with pytest.raises(RuntimeError, match="bce_with_logits_backward: grad_output of a reduced loss must hold one"):
        ops.bce_with_logits_backward(torch.ones(2, device=device), x, t, None, None, 1)
    with pytest.raises(ValueError, match="reduction = 3 is not a valid value"):
        ops.bce_with_logits(x, t, None, None, 3)
    if torch.cuda.is_available():
        other = "cpu" if device == "cuda" else "cuda"
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            bce(x, t, torch.ones(4, device=other))

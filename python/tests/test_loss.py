"""The loss against torch.nn.SoftMarginLoss: every reduction, float and double, contiguous, transposed, sliced,
broadcast (y) and expanded (x) inputs, the shapes of PyTorch's own OpInfo samples, real-valued and +-1 targets; and against a stable fp64
reference, also where PyTorch overflows.

PyTorch computes each loss as log(1 + exp(z)), z = -y x: rounding 1 + exp(z) costs it up to half an epsilon of
absolute error per element (for z < -16.6 in float32 its loss is exactly 0 where the true one is about exp(z)). So
the comparison with PyTorch is within 1e-6 relative plus one epsilon per summed element, and the comparison with the
fp64 reference (of the product y x rounded to the inputs' dtype) is within 1e-6 relative (1e-12 for float64) and
nothing absolute above the smallest normal number."""

import pytest
import torch

import softmargin

SHAPES = [(), (5,), (5, 5), (5, 5, 5)]
REDUCTIONS = ["none", "mean", "sum"]
DTYPES = [torch.float32, torch.float64]
LAYOUTS = ["contiguous", "transposed", "sliced", "broadcast", "expanded"]
RTOL = 1e-6


def make_inputs(shape, layout, dtype, device, targets):
    """x and y of `shape` (y possibly of a shape that broadcasts to it) in the given layout."""
    def target(s):
        if targets == "sign":
            return (torch.randint(0, 2, s, device=device) * 2 - 1).to(dtype)
        return torch.randn(s, dtype=dtype, device=device) * 2
    if layout == "contiguous":
        return torch.randn(shape, dtype=dtype, device=device) * 3, target(shape)
    if layout == "transposed":  # the same shape, dimensions in reverse memory order
        rev = tuple(reversed(shape))
        perm = tuple(reversed(range(len(shape))))
        return (torch.randn(rev, dtype=dtype, device=device) * 3).permute(perm), target(rev).permute(perm)
    if layout == "sliced":  # every other element of the last dimension, from an offset
        big = tuple(shape[:-1]) + (2 * shape[-1] + 1,) if shape else (3,)
        idx = (Ellipsis, slice(1, None, 2)) if shape else (1,)
        return (torch.randn(big, dtype=dtype, device=device) * 3)[idx], target(big)[idx]
    if layout == "expanded":  # x itself of stride 0 along its first dimension (read-only, as PyTorch allows)
        x = (torch.randn(shape[1:], dtype=dtype, device=device) * 3).expand(shape)
        return x, target(shape)
    # broadcast: y of the trailing dimensions (and a leading 1) or a 0-d y
    x = torch.randn(shape, dtype=dtype, device=device) * 3
    y = target((1,) + tuple(shape[1:]) if len(shape) > 1 else ())
    return x, y


def assert_close(actual, expected, rtol=RTOL, atol=0.0):
    """actual equals expected (same shape, dtype and device) within rtol and atol wherever expected is finite."""
    assert actual.shape == expected.shape and actual.dtype == expected.dtype and actual.device == expected.device
    finite = torch.isfinite(expected)
    torch.testing.assert_close(actual[finite], expected[finite], rtol=rtol, atol=atol)


def assert_matches_pytorch(ours, x, y, reduction):
    """ours is PyTorch's loss within 1e-6 relative plus PyTorch's own rounding, and the fp64 reference's within
    1e-6 (float32) or 1e-12 (float64) relative."""
    theirs = torch.nn.SoftMarginLoss(reduction=reduction)(x, y)
    eps = torch.finfo(x.dtype).eps
    assert_close(ours, theirs, atol=eps * (x.numel() if reduction == "sum" else 1))
    expected = reference64(x, y, reduction)
    assert_close(ours.double(), expected, rtol=RTOL if x.dtype == torch.float32 else 1e-12,
                 atol=torch.finfo(x.dtype).tiny)


@pytest.mark.parametrize("targets", ["real", "sign"])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_matches_pytorch(device, seed, reduction, dtype, shape, layout, targets):
    x, y = make_inputs(shape, layout, dtype, device, targets)
    x0, y0 = x.clone(), y.clone()
    ours = softmargin.SoftMarginLoss(reduction=reduction)(x, y)
    assert_matches_pytorch(ours, x, y, reduction)
    assert torch.equal(x, x0) and torch.equal(y, y0)  # the caller's tensors are not written


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_functional_and_legacy_arguments(device, seed, reduction):
    x = torch.randn(7, 3, device=device)
    y = torch.randn(7, 3, device=device)
    assert_matches_pytorch(softmargin.soft_margin_loss(x, y, reduction=reduction), x, y, reduction)
    assert_matches_pytorch(torch.ops.softmargin.loss(x, y, {"none": 0, "mean": 1, "sum": 2}[reduction]), x, y,
                           reduction)
    with pytest.warns(UserWarning):
        legacy = softmargin.soft_margin_loss(x, y, size_average=False)
    assert_matches_pytorch(legacy, x, y, "sum")
    module = softmargin.SoftMarginLoss(reduction=reduction)
    assert isinstance(module, torch.nn.SoftMarginLoss) and module.reduction == reduction


def reference64(x, y, reduction):
    """The loss in float64, stably: log(1 + exp(z)) = max(z, 0) + log1p(exp(-|z|)), at z = -y x rounded to the
    inputs' dtype, as every implementation in that dtype (PyTorch's too) computes it: the exact loss moves by up to
    |z| eps relative for that rounding alone."""
    z = (-(y * x)).double()
    loss = torch.clamp(z, min=0) + torch.log1p(torch.exp(-z.abs()))
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_finite_where_pytorch_overflows(device, reduction, dtype):
    big = 1e38 if dtype == torch.float32 else 1e300  # two such losses still sum to a finite number
    x = torch.tensor([100.0, -100.0, 1000.0, big, -big, 0.0, 5.0], dtype=dtype, device=device)
    y = torch.tensor([-1.0, 1.0, -1.0, -1.0, 1.0, 1.0, 1.0], dtype=dtype, device=device)
    overflow = 0 if dtype == torch.float32 else 2  # exp(100) overflows float32, exp(1000) float64
    assert torch.isinf(torch.nn.functional.soft_margin_loss(x[overflow], y[overflow]))
    ours = softmargin.soft_margin_loss(x, y, reduction=reduction)
    assert torch.isfinite(ours).all()
    expected = reference64(x, y, reduction)
    torch.testing.assert_close(ours.double(), expected, rtol=1e-6, atol=0)
    one = softmargin.soft_margin_loss(x[:1], y[:1], reduction=reduction)
    assert float(one.reshape(())) == 100.0


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_large_input_against_fp64(device, seed, dtype):
    x = torch.randn(512, 4096, dtype=dtype, device=device)
    y = (torch.randint(0, 2, (512, 4096), device=device) * 2 - 1).to(dtype)
    for reduction in ("mean", "sum"):
        ours = softmargin.soft_margin_loss(x, y, reduction=reduction)
        torch.testing.assert_close(ours.double(), reference64(x, y, reduction), rtol=1e-6, atol=0)


def test_target_dtypes_are_converted(device, seed):
    x = torch.randn(4, 6, device=device)
    for y in (torch.randint(0, 2, (4, 6), device=device) * 2 - 1,  # int64, as torch.randint gives
              torch.randn(4, 6, device=device, dtype=torch.float64),
              torch.randint(0, 2, (6,), device=device).bool()):
        ours = softmargin.soft_margin_loss(x, y, reduction="none")
        assert ours.dtype == torch.float32
        assert_matches_pytorch(ours, x, y.to(x.dtype), "none")


def test_cpu_scalar_target_with_cuda_input():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    x = torch.randn(8, device="cuda")
    y = torch.tensor(-1.0)
    assert_matches_pytorch(softmargin.soft_margin_loss(x, y), x, y.cuda(), "mean")


def test_special_values(device):
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([nan, 1.0, inf, -inf], device=device)
    y = torch.tensor([1.0, nan, 1.0, 1.0], device=device)
    none = softmargin.soft_margin_loss(x, y, reduction="none")
    assert torch.isnan(none[:2]).all()
    assert none[2].item() == 0.0 and none[3].item() == inf
    assert torch.isnan(softmargin.soft_margin_loss(x, y))


def test_empty_input(device):
    x = torch.empty(0, 3, device=device)
    y = torch.empty(0, 3, device=device)
    assert torch.isnan(softmargin.soft_margin_loss(x, y))
    assert softmargin.soft_margin_loss(x, y, reduction="sum").item() == 0.0
    assert softmargin.soft_margin_loss(x, y, reduction="none").shape == (0, 3)


def test_high_rank_strided_input(device, seed):
    # Seven dimensions that do not coalesce below four: computed on contiguous copies, same result.
    base = torch.randn(2, 3, 2, 3, 2, 3, 4, device=device)
    x = base.permute(6, 0, 5, 1, 4, 2, 3)[..., :2]
    y = torch.randn(x.shape, device=device)
    for reduction in REDUCTIONS:
        assert_matches_pytorch(softmargin.soft_margin_loss(x, y, reduction=reduction), x, y, reduction)


def test_threads(seed):
    # Calls from several host threads at once (each thread its own inputs).
    import concurrent.futures

    xs = [torch.randn(300, 70) for _ in range(8)]
    ys = [torch.randn(70) for _ in range(8)]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda i: softmargin.soft_margin_loss(xs[i], ys[i], reduction="sum"), range(8)))
    for x, y, r in zip(xs, ys, results):
        assert_matches_pytorch(r, x, y, "sum")

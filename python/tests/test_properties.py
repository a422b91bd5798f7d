"""Property-based tests (hypothesis): random shapes of rank 0 to 4 with targets that broadcast, contiguous, transposed,
sliced and expanded views of x and y, every x dtype with every target dtype, every reduction, and random special
values (0, -0, +-inf, NaN, huge and tiny margins, subnormals). The loss and its gradient are checked against a
reference in extended precision with the documented bounds (test_loss, test_half) and, for float32 and float64 x,
against torch.nn.SoftMarginLoss wherever PyTorch's result is finite (PyTorch's 16-bit chain is off by hundreds of ulp,
and torch 1.13 has no float16 loss on the CPU).

The reference: y converted to x's dtype; z = -y x as the operators form it (rounded to x's dtype for float32 and
float64 x, to float for 16-bit x: exact unless it overflows float); loss = max(z, 0) + log1p(exp(-|z|)) and gradient
-y sigmoid(z), reduced, in long double (x86's 80-bit extended precision, whose range holds every float64 sum). Bounds:
1e-6 relative (float32) or 1e-12 (float64) plus the smallest normal number (a float64 mean sums its losses times
2^-k, 2^k > N, so that the sum cannot overflow where the mean fits: losses below 2^(k - 1022) lose bits, by less than
that term while N < 2^52); one unit in the last place for bfloat16 and float16; NaN exactly where the reference is
NaN, and the same infinity where the reference rounds to one in the output's dtype.

Examples are derandomized (the same ones every run) and bounded in number; a failure prints its example.
SOFTMARGIN_HYPOTHESIS_PROFILE=deep draws many more, at random.
"""

import os

import numpy as np
import pytest
import torch

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import softmargin

settings.register_profile("ci", max_examples=400, derandomize=True, deadline=None, database=None, print_blob=True,
                          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
settings.register_profile("deep", max_examples=5000, derandomize=False, deadline=None, database=None,
                          print_blob=True, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
settings.load_profile(os.environ.get("SOFTMARGIN_HYPOTHESIS_PROFILE", "ci"))

X_DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16]
HALF = (torch.bfloat16, torch.float16)
MANTISSA_BITS = {torch.bfloat16: 7, torch.float16: 10}
Y_DTYPES = ["same", torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int8, torch.uint8,
            torch.int16, torch.int32, torch.int64, torch.bool]
REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}
LAYOUTS = ["contiguous", "transposed", "sliced", "expanded"]
# Special values, converted to each tensor's dtype (float max, tiny and subnormals are float64's, float32's and the
# 16-bit types' own: see _specials).
SPECIALS = ["0", "-0", "inf", "-inf", "nan", "max", "-max", "tiny", "-tiny", "subnormal", "-subnormal", 16.6, -16.6,
            88.7, -88.7, 100.0, -100.0, 1000.0, -1000.0, 1e-30, 1e30, -1e30]


def _specials(names, dtype):
    """The values of the special names in dtype (as float64 before the conversion)."""
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype) if dtype != torch.bool else None
        out = []
        for n in names:
            if dtype == torch.bool:
                out.append(float(n in ("inf", "max", 16.6, 100.0)))
            elif n in ("max", "inf"):
                out.append(float(info.max))
            elif n in ("-max", "-inf"):
                out.append(float(info.min))
            elif isinstance(n, float) and info.min <= n <= info.max:
                out.append(float(int(n)))
            else:
                out.append(0.0)
        return out
    fi = torch.finfo(dtype)
    table = {"0": 0.0, "-0": -0.0, "inf": float("inf"), "-inf": float("-inf"), "nan": float("nan"), "max": fi.max,
             "-max": -fi.max, "tiny": fi.tiny, "-tiny": -fi.tiny, "subnormal": fi.tiny * fi.eps,
             "-subnormal": -fi.tiny * fi.eps}
    return [table[n] if isinstance(n, str) else n for n in names]


def _values(shape, dtype, gen, scale, density, specials):
    """Random values of dtype: normal (times scale), integers for integer dtypes, and the given special values at
    random places (a `density` of them)."""
    if dtype == torch.bool:
        v = torch.randint(0, 2, shape, generator=gen).double()
    elif not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        v = torch.randint(max(info.min, -100), min(info.max, 100) + 1, shape, generator=gen).double()
    else:
        v = torch.randn(shape, generator=gen, dtype=torch.float64) * scale
    if specials and v.numel():
        pool = torch.tensor(_specials(specials, dtype), dtype=torch.float64)
        pick = torch.randint(0, len(pool), shape, generator=gen)
        mask = torch.rand(shape, generator=gen) < density
        v = torch.where(mask, pool[pick], v)
    return v.to(dtype)


def _view(shape, dtype, layout, gen, scale, density, specials, device):
    """A tensor of `shape` in `layout`: contiguous, transposed (dimensions in another memory order), sliced (every
    other element of a dimension, from an offset) or expanded (stride 0 where a dimension is broadcast from 1)."""
    rank = len(shape)
    make = lambda s: _values(s, dtype, gen, scale, density, specials).to(device)  # noqa: E731
    if layout == "transposed" and rank >= 2:
        perm = torch.randperm(rank, generator=gen).tolist()
        base = make(tuple(shape[p] for p in perm))  # base.permute(inverse of perm) has `shape`
        inverse = [perm.index(d) for d in range(rank)]
        return base.permute(inverse)
    if layout == "sliced" and rank >= 1:
        d = int(torch.randint(0, rank, (1,), generator=gen))
        big = list(shape)
        big[d] = 2 * shape[d] + 1
        index = [slice(None)] * rank
        index[d] = slice(1, None, 2)
        return make(tuple(big))[tuple(index)]
    if layout == "expanded" and rank >= 1:
        small = [1 if torch.rand((), generator=gen) < 0.5 else s for s in shape]
        small[int(torch.randint(0, rank, (1,), generator=gen))] = 1
        return make(tuple(small)).expand(shape)
    return make(tuple(shape))


@st.composite
def problems(draw):
    """x, y (broadcasting to x's shape), the reduction, and the example's drawn parameters."""
    rank = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=rank, max_size=rank)))
    y_rank = draw(st.integers(0, rank))
    y_shape = tuple(1 if draw(st.booleans()) else s for s in shape[rank - y_rank:])
    x_dtype = draw(st.sampled_from(X_DTYPES))
    y_dtype = draw(st.sampled_from(Y_DTYPES))
    y_dtype = x_dtype if y_dtype == "same" else y_dtype
    params = dict(x_layout=draw(st.sampled_from(LAYOUTS)), y_layout=draw(st.sampled_from(LAYOUTS)),
                  seed=draw(st.integers(0, 2**32 - 1)), scale=draw(st.sampled_from([1.0, 3.0, 30.0, 1e4])),
                  density=draw(st.sampled_from([0.1, 0.5, 1.0])),
                  x_specials=draw(st.lists(st.sampled_from(SPECIALS), max_size=4, unique=True)),
                  y_specials=draw(st.lists(st.sampled_from(SPECIALS), max_size=4, unique=True)))
    reduction = draw(st.sampled_from(list(REDUCTIONS)))
    return dict(shape=shape, y_shape=y_shape, x_dtype=x_dtype, y_dtype=y_dtype, reduction=reduction, **params)


def _make(p, device):
    gen = torch.Generator().manual_seed(p["seed"])
    x = _view(p["shape"], p["x_dtype"], p["x_layout"], gen, p["scale"], p["density"], p["x_specials"], device)
    y = _view(p["y_shape"], p["y_dtype"], p["y_layout"], gen, p["scale"], p["density"], p["y_specials"], device)
    return x, y


def _z(x, y):
    """-y x as the operators compute it: rounded to x's dtype for float32 and float64 x, to float for 16-bit x (exact,
    unless it overflows float); and y converted to x's dtype; both broadcast to x's shape, in extended precision."""
    yc = y.to(x.dtype).expand(x.shape)
    z = -(yc.float() * x.float()) if x.dtype in HALF else -(yc * x)
    return _extended(z), _extended(yc)


def _extended(t):
    """t as a NumPy array of long double (x86's 80-bit extended: 64-bit significand, float64's range and more)."""
    return t.detach().cpu().double().numpy().astype(np.longdouble)


def _loss_ref(x, y, reduction):
    z, _ = _z(x, y)
    with np.errstate(all="ignore"):
        loss = np.maximum(z, 0) + np.log1p(np.exp(-np.abs(z)))
        if reduction == "none":
            return np.asarray(loss, dtype=np.longdouble)
        total = np.sum(loss, dtype=np.longdouble)
        return np.asarray(total if reduction == "sum" else total / loss.size, dtype=np.longdouble)


def _grad_ref(x, y, reduction, upstream):
    z, yc = _z(x, y)
    with np.errstate(all="ignore"):
        d = -yc / (1 + np.exp(-z)) * _extended(upstream)
        return np.asarray(d / x.numel() if reduction == "mean" else d, dtype=np.longdouble)


def assert_bounded(ours, reference, what):
    """ours (x's dtype) against the extended-precision reference with the documented bounds."""
    dtype = ours.dtype
    o = _extended(ours)
    assert o.shape == reference.shape, (what, o.shape, reference.shape)
    nan = np.isnan(reference)
    assert (np.isnan(o) == nan).all(), (what, "NaN where the reference has none, or none where it has",
                                        o[np.isnan(o) != nan], reference[np.isnan(o) != nan])
    with np.errstate(all="ignore"):
        rounded = _extended(torch.from_numpy(np.asarray(reference, dtype=np.float64)).to(dtype))
    inf = np.isinf(rounded) & ~nan
    assert (o[inf] == rounded[inf]).all(), (what, "infinities", o[inf], reference[inf])
    finite = ~nan & ~inf
    err = np.abs(o[finite] - reference[finite])
    magnitude = np.abs(reference[finite])
    if dtype in HALF:  # one unit in the last place (the subnormal spacing below the normal range)
        fi = torch.finfo(dtype)
        bound = np.exp2(np.floor(np.log2(np.maximum(magnitude, fi.tiny))) - MANTISSA_BITS[dtype])
    else:
        rtol = 1e-6 if dtype == torch.float32 else 1e-12
        bound = rtol * magnitude + torch.finfo(dtype).tiny
    bad = err > bound
    assert not bad.any(), (what, "beyond the bound: ours", o[finite][bad], "reference", reference[finite][bad])


def assert_matches_pytorch(ours, theirs, atol):
    """ours is PyTorch's result within 1e-6 relative plus atol (PyTorch's own rounding) wherever PyTorch's is finite."""
    ours, theirs = ours.cpu(), theirs.cpu()
    finite = torch.isfinite(theirs)
    torch.testing.assert_close(ours[finite], theirs[finite], rtol=1e-6, atol=atol)


def _describe(p, x, y):
    return (f"x {tuple(x.shape)} {x.dtype} stride {x.stride()}, y {tuple(y.shape)} {y.dtype} stride {y.stride()}, "
            f"reduction {p['reduction']}")


@given(p=problems())
# subnormal x with y = float max: margins of about 1e-7, read without flushing x to zero
@example(p=dict(shape=(3,), y_shape=(3,), x_dtype=torch.float32, y_dtype=torch.float32, reduction="none",
                x_layout="contiguous", y_layout="contiguous", seed=0, scale=1.0, density=1.0,
                x_specials=["subnormal", "-subnormal"], y_specials=["max"]))
# a bfloat16 margin beyond float's range: that element's loss is inf in float, so the mean is inf too (the product of
# 16-bit inputs is rounded to float, as float32 inputs' is to float32)
@example(p=dict(shape=(1, 2, 2), y_shape=(), x_dtype=torch.bfloat16, y_dtype=torch.bfloat16, reduction="mean",
                x_layout="transposed", y_layout="contiguous", seed=3, scale=30.0, density=0.1, x_specials=["-max"],
                y_specials=[]))
# float64 losses whose sum overflows although their mean fits (x = -max, y = True: two losses of float64's max): the
# mean and the fused pass's loss are finite (the sum is taken scaled by a power of two)
@example(p=dict(shape=(2,), y_shape=(), x_dtype=torch.float64, y_dtype=torch.bool, reduction="mean",
                x_layout="contiguous", y_layout="contiguous", seed=0, scale=1.0, density=1.0, x_specials=["-max"],
                y_specials=["max"]))
def test_loss(device, p):
    x, y = _make(p, device)
    reduction = p["reduction"]
    ours = softmargin.soft_margin_loss(x, y, reduction=reduction)
    assert ours.dtype == x.dtype and ours.device == x.device, _describe(p, x, y)
    assert_bounded(ours, _loss_ref(x, y, reduction), _describe(p, x, y))
    module = softmargin.SoftMarginLoss(reduction=reduction)(x, y)
    torch.testing.assert_close(module, ours, rtol=0, atol=0, equal_nan=True)
    if x.dtype in (torch.float32, torch.float64):
        theirs = torch.nn.SoftMarginLoss(reduction=reduction)(x, y.to(x.dtype))
        eps = torch.finfo(x.dtype).eps
        assert_matches_pytorch(ours, theirs, eps * (max(x.numel(), 1) if reduction == "sum" else 1))


@given(p=problems(), upstream_seed=st.integers(0, 2**32 - 1))
# float64 losses whose sum overflows although their mean fits (x = -max, y = True: two losses of float64's max): the
# mean and the fused pass's loss are finite (the sum is taken scaled by a power of two)
@example(upstream_seed=0, p=dict(shape=(2,), y_shape=(), x_dtype=torch.float64, y_dtype=torch.bool, reduction="mean",
                x_layout="contiguous", y_layout="contiguous", seed=0, scale=1.0, density=1.0, x_specials=["-max"],
                y_specials=["max"]))
def test_gradient(device, p, upstream_seed):
    x, y = _make(p, device)
    reduction, code = p["reduction"], REDUCTIONS[p["reduction"]]
    gen = torch.Generator().manual_seed(upstream_seed)
    out_shape = x.shape if reduction == "none" else ()
    upstream = torch.randn(out_shape, generator=gen).to(x.dtype).to(device)
    what = _describe(p, x, y)
    expected = _grad_ref(x, y, reduction, upstream)
    assert_bounded(torch.ops.softmargin.backward(upstream, x, y, code), expected, what + ", backward")
    # autograd: the fused forward's gradient, scaled by the upstream gradient
    xr = x.detach().requires_grad_(True)
    softmargin.soft_margin_loss(xr, y, reduction=reduction).backward(upstream)
    assert xr.grad.dtype == x.dtype and xr.grad.shape == x.shape
    if reduction != "none":
        loss, grad = torch.ops.softmargin.loss_and_grad(x, y, code)
        assert_bounded(loss, _loss_ref(x, y, reduction), what + ", loss_and_grad's loss")
        assert_bounded(grad, _grad_ref(x, y, reduction, torch.ones(())), what + ", loss_and_grad's gradient")
    if x.dtype in HALF and reduction != "none":
        # the fused forward's gradient, rounded to x's dtype, times the upstream gradient: rounded once more
        _, fused = torch.ops.softmargin.loss_and_grad(x, y, code)
        assert_bounded(xr.grad, np.asarray(_extended(fused) * _extended(upstream)), what + ", autograd")
    else:
        assert_bounded(xr.grad, expected, what + ", autograd")
    if x.dtype in (torch.float32, torch.float64):
        xt = x.detach().requires_grad_(True)
        torch.nn.functional.soft_margin_loss(xt, y.to(x.dtype), reduction=reduction).backward(upstream)
        assert_matches_pytorch(xr.grad, xt.grad, torch.finfo(x.dtype).tiny)

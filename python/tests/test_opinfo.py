"""softmargin's drop-ins against PyTorch on PyTorch's own test samples (torch.testing._internal, in the PyPI wheel):
the OpInfos nn.functional.soft_margin_loss and nn.functional.binary_cross_entropy_with_logits of op_db and the
ModuleInfos of torch.nn.SoftMarginLoss and torch.nn.BCEWithLogitsLoss of module_db (each must be found: a test
fails, rather than skips, where this torch lacks one). For every sample in float32, float64, bfloat16 and float16 (the
dtypes the OpInfo supports on the device; ModuleInfo declares float32 and float64, its 16-bit samples are extra), our
function or module and PyTorch's get the sample's tensors, arguments and keyword arguments; the outputs (with and
without autograd) and the gradients, for a random upstream gradient, of the tensors that require grad (the input;
BCE's target too: the samples' weight and pos_weight do not require grad, and PyTorch 2.11 cannot differentiate them)
agree within torch.testing.assert_close's tolerances for the dtype, raised to the OpInfo's own toleranceOverride for
the device and dtype where it sets one (as TestCase.assertEqual does; neither OpInfo sets one off MPS).

The reference is PyTorch's op, in the dtype itself for float32 and float64. For bfloat16 and float16 it is PyTorch in
float32 on the same values (exact in float32) with outputs and gradients rounded to the dtype (OpInfo's
reference_in_float): PyTorch's own 16-bit chain overflows (float16 exp(-y x) is inf past 11.09, so PyTorch's loss is
inf from about 11 on, and the samples' margins reach 81) or rounds at every step (bfloat16 1 + 1e-5 is 1), where ours
computes in float and rounds once. The tolerance stays assert_close's for the 16-bit dtype: ours and the rounded
reference are each within about half an ulp of the exact value, so within one ulp of each other, and float16's rtol
1e-3 is 1.02 to 2 ulp, bfloat16's 1.6e-2 2 to 4.
Where that reference (PyTorch in float32, for float32 and 16-bit inputs) has a non-finite output or gradient, the
whole sample's reference is PyTorch in float64 rounded to the dtype instead: PyTorch's log1p(exp(-y x)) overflows
float32 past -y x = 88.7 (x = 100, y = -1 gives inf, its gradient NaN) where the true loss, and ours, is finite.
The samples' values lie in [-9, 9] and never get there; test_past_float32_overflow has samples of its own that do.

Then torch.autograd.gradcheck and gradgradcheck in float64 of softmargin.soft_margin_loss and
binary_cross_entropy_with_logits on the OpInfo samples, each distinct sample with each reduction, with respect to the
input, BCE's target, and BCE's weight and pos_weight where the sample has them (made to require grad: ours
differentiates them, PyTorch does not), at the OpInfo's gradcheck_nondet_tol.

Samples come from torch's generator seeded by the `seed` fixture (printed with a failure), not from the fixed seed that
OpInfo.sample_inputs sets before each sample by default (set_seed=False)."""

import functools

import pytest
import torch
from torch.autograd.gradcheck import GradcheckError
from torch.testing import make_tensor
from torch.testing._comparison import default_tolerances

import softmargin

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16]
HALF_DTYPES = (torch.bfloat16, torch.float16)
REDUCTIONS = ("none", "mean", "sum")
OPS = {"nn.functional.soft_margin_loss": softmargin.soft_margin_loss,
       "nn.functional.binary_cross_entropy_with_logits": softmargin.binary_cross_entropy_with_logits}
MODULES = {torch.nn.SoftMarginLoss: softmargin.SoftMarginLoss, torch.nn.BCEWithLogitsLoss: softmargin.BCEWithLogitsLoss}
POSITIONAL = ("input", "target")


@functools.cache
def _databases():
    # Imported on first use: the import takes seconds and freezes torch.backends' global flags (common_utils).
    from torch.testing._internal.common_methods_invocations import op_db
    from torch.testing._internal.common_modules import module_db
    return op_db, module_db


def find_opinfo(name):
    found = [op for op in _databases()[0] if op.name == name and op.variant_test_name == ""]
    assert len(found) == 1, f"torch {torch.__version__} has {len(found)} OpInfos named {name}"
    return found[0]


def find_moduleinfo(cls):
    found = [info for info in _databases()[1] if info.module_cls is cls]
    assert len(found) == 1, f"torch {torch.__version__} has {len(found)} ModuleInfos of {cls.__name__}"
    return found[0]


def tolerance(info, device, dtype):
    """assert_close's rtol and atol for dtype, raised to a toleranceOverride of the OpInfo or ModuleInfo that applies
    to the device type and dtype (of any of PyTorch's tests)."""
    from torch.testing._internal.common_device_type import toleranceOverride
    from torch.testing._internal.opinfo.core import DecorateInfo
    rtol, atol = default_tolerances(dtype)
    device_type = torch.device(device).type
    for decorate in info.decorators:
        if (not isinstance(decorate, DecorateInfo) or not decorate.active_if
                or decorate.device_type not in (None, device_type)
                or (decorate.dtypes is not None and dtype not in decorate.dtypes)):
            continue
        for override in decorate.decorators:
            if isinstance(override, toleranceOverride) and dtype in override.d:
                rtol, atol = max(rtol, override.d[dtype].rtol), max(atol, override.d[dtype].atol)
    return dict(rtol=rtol, atol=atol)


def evaluate(make_fn, inputs, kwargs, dtype, upstream):
    """make_fn(dtype)(*inputs, **kwargs) on copies of the tensors in dtype, leaves that require grad where the
    originals do: the output and {name: gradient for upstream} of those leaves."""
    def copy(v):
        return v.detach().to(dtype).requires_grad_(v.requires_grad) if isinstance(v, torch.Tensor) else v

    inputs, kwargs = [copy(v) for v in inputs], {k: copy(v) for k, v in kwargs.items()}
    leaves = {name: v for name, v in (*zip(POSITIONAL, inputs), *kwargs.items())
              if isinstance(v, torch.Tensor) and v.requires_grad}
    out = make_fn(dtype)(*inputs, **kwargs)
    grads = torch.autograd.grad(out, list(leaves.values()), upstream.to(dtype))
    return out.detach(), dict(zip(leaves, grads))


def reference(make_fn, inputs, kwargs, dtype, upstream):
    """PyTorch's output and gradients: in dtype, or float32 for 16-bit dtypes, rounded to dtype; in float64 rounded to
    dtype where that is not finite (see the file comment)."""
    compute = torch.float32 if dtype in HALF_DTYPES else dtype
    out, grads = evaluate(make_fn, inputs, kwargs, compute, upstream)
    if compute != torch.float64 and not all(torch.isfinite(t).all() for t in (out, *grads.values())):
        out, grads = evaluate(make_fn, inputs, kwargs, torch.float64, upstream)
    return out.to(dtype), {name: g.to(dtype) for name, g in grads.items()}


def describe(inputs, kwargs):
    def one(v):
        if isinstance(v, torch.Tensor):
            return f"{str(v.dtype)[6:]}{list(v.shape)}{' requires_grad' if v.requires_grad else ''}"
        return repr(v)

    named = [*zip(POSITIONAL, inputs), *kwargs.items()]
    return ", ".join(f"{name}={one(v)}" for name, v in named)


def assert_agrees(ours_fn, theirs_fn, inputs, kwargs, dtype, tol, context):
    """ours_fn(dtype) and theirs_fn(dtype) called with (inputs, kwargs) give the same output and gradients within tol
    (see the file comment for the reference)."""
    context = f"{context}: {describe(inputs, kwargs)}"
    with torch.no_grad():
        plain = ours_fn(dtype)(*inputs, **kwargs)  # no gradient wanted: the forward alone
    upstream = make_tensor(plain.shape, dtype=dtype, device=plain.device, low=-2, high=2)
    out, grads = evaluate(ours_fn, inputs, kwargs, dtype, upstream)
    expected, expected_grads = reference(theirs_fn, inputs, kwargs, dtype, upstream)
    assert grads.keys() == expected_grads.keys(), context
    for what, ours, theirs in (("output", out, expected), ("output without grad", plain, expected),
                               *((f"gradient of {name}", grads[name], g) for name, g in expected_grads.items())):
        torch.testing.assert_close(ours, theirs, **tol, msg=lambda m, what=what: f"{context}: {what}\n{m}")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", OPS)
def test_opinfo_samples(device, seed, name, dtype):
    op = find_opinfo(name)
    if dtype not in op.supported_dtypes(torch.device(device).type):
        pytest.skip(f"the OpInfo does not support {dtype} on {device}")
    tol = tolerance(op, device, dtype)
    count = 0
    for i, sample in enumerate(op.sample_inputs(device, dtype, requires_grad=True, set_seed=False)):
        inputs = (sample.input, *sample.args)
        assert_agrees(lambda _: OPS[name], lambda _: op.op, inputs, sample.kwargs, dtype, tol, f"{name} sample {i}")
        count += 1
    assert count > 0


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("cls", MODULES, ids=lambda cls: cls.__name__)
def test_moduleinfo_samples(device, seed, cls, dtype):
    info = find_moduleinfo(cls)
    tol = tolerance(info, device, dtype)
    count = 0
    for sample in info.module_inputs_func(info, device=device, dtype=dtype, requires_grad=True, training=True):
        args, kwargs = sample.constructor_input.args, sample.constructor_input.kwargs
        ours = MODULES[cls](*args, **kwargs)
        assert isinstance(ours, cls) and ours.reduction == cls(*args, **kwargs).reduction

        def theirs(compute, args=args, kwargs=kwargs):  # buffers (weight, pos_weight) in the reference's dtype
            return cls(*args, **kwargs).to(compute)

        forward = sample.forward_input
        assert_agrees(lambda _, ours=ours: ours, theirs, forward.args, forward.kwargs, dtype, tol,
                      f"{cls.__name__}({describe((), kwargs)}) sample {sample.desc!r}")
        count += 1
    assert count > 0


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", OPS)
def test_past_float32_overflow(device, seed, name, dtype):
    # Margins past the samples' [-9, 9], where PyTorch's float32 soft margin loss is inf (and its gradient NaN) while
    # the loss is finite: judged against PyTorch in float64 rounded to dtype (BCE's form does not overflow).
    x = torch.tensor([100.0, -100.0, 30.0, -30.0, 9.0, 0.0], device=device)
    if name == "nn.functional.soft_margin_loss":
        target = torch.tensor([-1.0, 1.0, -1.0, 1.0, -1.0, 1.0], device=device)
        assert not torch.isfinite(torch.nn.functional.soft_margin_loss(x, target, reduction="none")).all()
        extras = [{}]
    else:
        target = torch.tensor([0.0, 1.0, 0.0, 1.0, 0.25, 1.0], device=device)
        extras = [{}, {"pos_weight": torch.tensor(3.0, device=device)},
                  {"weight": torch.tensor([0.5, 2.0, 1.0, -1.0, 3.0, 1.0], device=device)}]
    op = find_opinfo(name)
    tol = tolerance(op, device, dtype)
    inputs = (x.to(dtype).requires_grad_(), target.to(dtype))
    for reduction in REDUCTIONS:
        for extra in extras:
            kwargs = {k: v.to(dtype) for k, v in extra.items()} | {"reduction": reduction}
            assert_agrees(lambda _: OPS[name], lambda _: op.op, inputs, kwargs, dtype, tol, name)


def _gradcheck_cases(op, device):
    """The OpInfo's float64 samples, each distinct one (shapes and keyword arguments) with each reduction: the names
    and values of its tensors and other keyword arguments, and which tensors to differentiate."""
    seen = set()
    for sample in op.sample_inputs(device, torch.float64, requires_grad=True, set_seed=False):
        tensors = dict(zip(POSITIONAL, (sample.input, *sample.args)))
        tensors |= {k: v for k, v in sample.kwargs.items() if isinstance(v, torch.Tensor)}
        for reduction in REDUCTIONS:
            key = (tuple((k, tuple(v.shape)) for k, v in tensors.items()), reduction)
            if key in seen:
                continue
            seen.add(key)
            wanted = {k: v.requires_grad or k in ("weight", "pos_weight") for k, v in tensors.items()}
            yield {k: v.detach() for k, v in tensors.items()}, {"reduction": reduction}, wanted


@pytest.mark.parametrize("name", OPS)
def test_gradcheck_and_gradgradcheck(device, seed, name):
    op = find_opinfo(name)
    fn = OPS[name]
    count = 0
    for tensors, options, wanted in _gradcheck_cases(op, device):
        names = [k for k in tensors if wanted[k]]
        assert names[0] == "input" and (name.endswith("soft_margin_loss") or "target" in names)

        def call(*diff, tensors=tensors, options=options, names=names):
            values = tensors | dict(zip(names, diff))
            return fn(values["input"], values["target"], **{k: v for k, v in values.items() if k not in POSITIONAL},
                      **options)

        diff = tuple(tensors[k].clone().requires_grad_() for k in names)
        context = f"{name} {options}: {describe((), tensors)}, differentiated: {names}"
        try:
            assert torch.autograd.gradcheck(call, diff, nondet_tol=op.gradcheck_nondet_tol)
            assert torch.autograd.gradgradcheck(call, diff, nondet_tol=op.gradcheck_nondet_tol)
        except GradcheckError as error:
            raise AssertionError(context) from error
        count += 1
    assert count > 0

"""Gradients: against PyTorch's for every reduction, layout and dtype; torch.autograd.gradcheck and gradgradcheck in
float64; finite where PyTorch's is NaN; upstream gradients other than 1, retain_graph, and the C++ operators."""

import pytest
import torch

import softmargin
from test_loss import DTYPES, LAYOUTS, REDUCTIONS, SHAPES, make_inputs


def grads(loss_fn, x, y, reduction, upstream):
    """x's gradient of loss_fn(x, y) with the given upstream gradient (of the loss's shape)."""
    xr = x.detach().clone().requires_grad_(True)
    loss = loss_fn(xr, y, reduction=reduction)
    loss.backward(upstream)
    return loss.detach(), xr.grad


def reference_grad64(x, y, reduction, upstream):
    """d loss / d x in float64: -y sigmoid(z) times the upstream gradient (/ N for the mean), z = -y x rounded to
    the inputs' dtype (as in test_loss.reference64)."""
    y64 = y.double()
    d = -y64 * torch.sigmoid((-(y * x)).double()) * upstream.double()
    return d / x.numel() if reduction == "mean" else d


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_grad_matches_pytorch(device, seed, reduction, dtype, shape, layout):
    x, y = make_inputs(shape, layout, dtype, device, "real")
    x0, y0 = x.clone(), y.clone()
    out_shape = x.shape if reduction == "none" else ()
    upstream = torch.randn(out_shape, dtype=dtype, device=device)
    _, ours = grads(softmargin.soft_margin_loss, x, y, reduction, upstream)
    _, theirs = grads(torch.nn.functional.soft_margin_loss, x, y, reduction, upstream)
    assert ours.shape == x.shape and ours.dtype == dtype and ours.device == x.device
    finite = torch.isfinite(theirs)
    torch.testing.assert_close(ours[finite], theirs[finite], rtol=1e-6, atol=torch.finfo(dtype).tiny)
    torch.testing.assert_close(ours.double(), reference_grad64(x, y.expand(x.shape), reduction, upstream),
                               rtol=1e-6 if dtype == torch.float32 else 1e-12, atol=torch.finfo(dtype).tiny)
    assert torch.equal(x, x0) and torch.equal(y, y0)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gradcheck(device, seed, reduction):
    for shape, y_shape in [((), ()), ((5,), (5,)), ((4, 5), (5,)), ((3, 4, 5), (3, 1, 5))]:
        x = torch.randn(shape, dtype=torch.float64, device=device, requires_grad=True)
        y = torch.randn(y_shape, dtype=torch.float64, device=device)
        fn = lambda x: softmargin.soft_margin_loss(x, y, reduction=reduction)  # noqa: E731
        assert torch.autograd.gradcheck(fn, (x,))
        assert torch.autograd.gradgradcheck(fn, (x,))
        perm = tuple(reversed(range(len(shape))))
        xt = torch.randn(tuple(reversed(shape)), dtype=torch.float64, device=device).permute(perm)
        assert torch.autograd.gradcheck(fn, (xt.requires_grad_(True),))  # a transposed input


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_grad_finite_where_pytorch_is_nan(device, reduction, dtype):
    x = torch.tensor([1000.0, -1000.0, 100.0, 0.0], dtype=dtype, device=device)
    y = torch.tensor([-1.0, 1.0, -1.0, 1.0], dtype=dtype, device=device)
    upstream = torch.ones(x.shape if reduction == "none" else (), dtype=dtype, device=device)
    _, theirs = grads(torch.nn.functional.soft_margin_loss, x, y, reduction, upstream)
    assert torch.isnan(theirs[0])  # PyTorch: exp overflows, inf / inf
    loss, ours = grads(softmargin.soft_margin_loss, x, y, reduction, upstream)
    assert torch.isfinite(loss).all() and torch.isfinite(ours).all()
    n = 4 if reduction == "mean" else 1
    torch.testing.assert_close(ours, torch.tensor([1.0, -1.0, 1.0, -0.5], dtype=dtype, device=device) / n)


def test_upstream_scaling_and_retain_graph(device, seed):
    x = torch.randn(6, 7, device=device, requires_grad=True)
    y = torch.randn(7, device=device)
    expected = reference_grad64(x.detach(), y, "mean", torch.tensor(1.0)).float()
    loss = softmargin.soft_margin_loss(x, y)
    (3.0 * loss).backward(retain_graph=True)  # upstream 3: the fused gradient scaled in place
    torch.testing.assert_close(x.grad, 3 * expected, rtol=1e-6, atol=0)
    loss.backward(retain_graph=True)  # the saved gradient was handed on: recomputed from x and y
    torch.testing.assert_close(x.grad, 4 * expected, rtol=1e-6, atol=0)
    loss.backward()
    torch.testing.assert_close(x.grad, 5 * expected, rtol=1e-6, atol=0)


def test_grad_of_sum_of_elementwise_losses(device, seed):
    # loss(reduction='none').sum(): the upstream gradient arrives expanded (stride 0)
    x = torch.randn(5, 4, device=device, requires_grad=True)
    y = torch.randn(5, 4, device=device)
    softmargin.soft_margin_loss(x, y, reduction="none").sum().backward()
    expected = reference_grad64(x.detach(), y, "sum", torch.tensor(1.0)).float()
    torch.testing.assert_close(x.grad, expected, rtol=1e-6, atol=0)


def test_no_grad_paths(device, seed):
    x = torch.randn(9, device=device, requires_grad=True)
    y = torch.randn(9, device=device)
    with torch.no_grad():
        loss = softmargin.soft_margin_loss(x, y)
    assert loss.grad_fn is None and not loss.requires_grad
    loss = softmargin.soft_margin_loss(x.detach(), y)
    assert loss.grad_fn is None
    loss = softmargin.soft_margin_loss(x, y)
    assert loss.requires_grad and loss.grad_fn is not None


@pytest.mark.parametrize("reduction", [1, 2])
def test_operators_backward_and_fused(device, seed, reduction):
    x = torch.randn(33, 17, device=device, dtype=torch.float64)
    y = torch.randn(17, device=device, dtype=torch.float64)
    g = torch.tensor(0.7, dtype=torch.float64, device=device)
    name = "mean" if reduction == 1 else "sum"
    expected = reference_grad64(x, y.expand(x.shape), name, g)
    torch.testing.assert_close(torch.ops.softmargin.backward(g, x, y, reduction), expected, rtol=1e-12, atol=0)
    loss, grad = torch.ops.softmargin.loss_and_grad(x, y, reduction)
    torch.testing.assert_close(loss, torch.ops.softmargin.loss(x, y, reduction), rtol=1e-14, atol=0)
    torch.testing.assert_close(grad * g, expected, rtol=1e-12, atol=0)
    up = torch.randn(33, 17, device=device, dtype=torch.float64)
    torch.testing.assert_close(torch.ops.softmargin.backward(up, x, y, 0),
                               reference_grad64(x, y.expand(x.shape), "none", up), rtol=1e-12, atol=0)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_grad_through_expanded_input(device, seed, reduction):
    # x.expand(...) reaches the operator with stride 0; autograd sums the gradient back to x's shape.
    x = torch.randn(7, device=device, requires_grad=True)
    y = torch.randn(3, 7, device=device)
    upstream = torch.randn((3, 7) if reduction == "none" else (), device=device)
    softmargin.soft_margin_loss(x.expand(3, 7), y, reduction=reduction).backward(upstream)
    ours = x.grad.clone()
    x.grad = None
    torch.nn.functional.soft_margin_loss(x.expand(3, 7), y, reduction=reduction).backward(upstream)
    torch.testing.assert_close(ours, x.grad, rtol=1e-5, atol=1e-7)

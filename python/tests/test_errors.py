"""Bad inputs raise, with PyTorch's message where PyTorch has one and otherwise one that names the problem."""

import pytest
import torch

import softmargin


def test_invalid_reduction_string():
    x, y = torch.randn(3), torch.randn(3)
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        softmargin.soft_margin_loss(x, y, reduction="foo")
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        softmargin.SoftMarginLoss(reduction="foo")(x, y)


def test_invalid_reduction_code():
    with pytest.raises(ValueError, match="reduction = 7 is not a valid value"):
        torch.ops.softmargin.loss(torch.randn(3), torch.randn(3), 7)


def test_shapes_that_do_not_broadcast(device):
    x = torch.randn(3, device=device)
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(4\) at "
                                           r"non-singleton dimension 0"):
        softmargin.soft_margin_loss(x, torch.randn(4, device=device))
    # The target broadcasts to the input, not the other way round (as in PyTorch, whose output has x's shape).
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        softmargin.soft_margin_loss(x, torch.randn(2, 3, device=device))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int8, torch.bool, torch.complex64])
def test_unsupported_input_dtype(device, dtype):
    x = torch.ones(4, device=device, dtype=dtype)
    with pytest.raises(RuntimeError,
                       match="input has dtype .*; SoftMargin computes float32, float64, bfloat16 and float16 inputs"):
        softmargin.soft_margin_loss(x, torch.ones(4, device=device))


def test_complex_target(device):
    with pytest.raises(RuntimeError, match="result type ComplexFloat can't be cast to the desired output type Float"):
        softmargin.soft_margin_loss(torch.randn(4, device=device), torch.ones(4, device=device, dtype=torch.complex64))


def test_sparse_input():
    x = torch.randn(4, 4).to_sparse()
    with pytest.raises(NotImplementedError, match="Could not run 'softmargin::loss' with arguments from the "
                                                  "'SparseCPU' backend"):
        softmargin.soft_margin_loss(x, torch.randn(4, 4))


def test_devices_differ():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but found at least two "
                                           "devices"):
        softmargin.soft_margin_loss(torch.randn(4, device="cuda"), torch.randn(4))
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        softmargin.soft_margin_loss(torch.randn(4), torch.randn(4, device="cuda"))


def test_target_requiring_grad(device):
    x = torch.randn(4, device=device, requires_grad=True)
    y = torch.randn(4, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'target'"):
        softmargin.soft_margin_loss(x, y)
    with torch.no_grad():  # as in PyTorch, only with grad enabled
        softmargin.soft_margin_loss(x, y)


def test_operator_arguments(device):
    x, y = torch.randn(4, 3, device=device), torch.randn(4, 3, device=device)
    with pytest.raises(RuntimeError, match="reduction none has no scalar loss"):
        torch.ops.softmargin.loss_and_grad(x, y, 0)
    with pytest.raises(RuntimeError, match="grad_output of a reduced loss must hold one element"):
        torch.ops.softmargin.backward(torch.ones(2, device=device), x, y, 1)
    with pytest.raises(RuntimeError, match=r"grad_output of shape \[5\] does not broadcast to the input's shape"):
        torch.ops.softmargin.backward(torch.ones(5, device=device), x, y, 0)


def test_nothing_written_on_error(device):
    x = torch.randn(3, device=device)
    y = torch.randn(4, device=device)
    x0, y0 = x.clone(), y.clone()
    with pytest.raises(RuntimeError):
        softmargin.soft_margin_loss(x, y)
    assert torch.equal(x, x0) and torch.equal(y, y0)

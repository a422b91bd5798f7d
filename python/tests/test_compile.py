"""torch.compile of the drop-ins, forward and backward: the default compiler (inductor) as a user calls it, with
dynamic=True (symbolic shapes: one compiled graph serves a second shape, whose backward divides by a symbolic count)
and fullgraph=True (no graph break: the operators trace through their fake kernels). Results and gradients against
the eager operators, which the other files check against PyTorch."""

import pytest
import torch

import softmargin

# Each loss: a module, its eager function and inputs of shape (rows, 33) on a device.
LOSSES = {
    "soft_margin": (lambda w, p: softmargin.SoftMarginLoss(),
                    lambda x, t, w, p: softmargin.soft_margin_loss(x, t),
                    lambda rows, device: torch.randn(33, device=device)),
    "bce_with_logits": (lambda w, p: softmargin.BCEWithLogitsLoss(weight=w, pos_weight=p),
                        lambda x, t, w, p: softmargin.binary_cross_entropy_with_logits(x, t, w, pos_weight=p),
                        lambda rows, device: torch.rand(rows, 33, device=device)),
}
MODES = {"default": {}, "dynamic": {"dynamic": True}, "fullgraph": {"fullgraph": True}}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("loss", LOSSES)
def test_compile_forward_and_backward(device, seed, loss, mode):
    make_module, eager, make_target = LOSSES[loss]
    torch._dynamo.reset()
    w, p = torch.rand(33, device=device), torch.rand(33, device=device) * 3
    model = torch.compile(make_module(w, p), **MODES[mode])
    for rows in (64, 17, 5):  # dynamic: the later shapes reuse the graph of symbolic shape
        x = torch.randn(rows, 33, device=device, requires_grad=True)
        # BCE's soft targets require grad too (distillation): their gradient comes from the composite backward
        t = make_target(rows, device).requires_grad_(loss == "bce_with_logits")
        loss_value = model(x, t)
        loss_value.backward()
        x_eager, t_eager = x.detach().clone().requires_grad_(), t.detach().clone().requires_grad_(t.requires_grad)
        expected = eager(x_eager, t_eager, w, p)
        expected.backward()
        torch.testing.assert_close(loss_value, expected, rtol=1e-6, atol=0)
        torch.testing.assert_close(x.grad, x_eager.grad, rtol=1e-6, atol=1e-12)
        if t.requires_grad:  # w ((p - 1) softplus(-x) - x): its terms cancel, and inductor fuses them its own way
            torch.testing.assert_close(t.grad, t_eager.grad, rtol=1e-5, atol=1e-6 / t.numel())
        with torch.no_grad():
            torch.testing.assert_close(model(x, t), expected, rtol=1e-6, atol=0)

"""BCEWithLogitsLoss in KernelBench's layout, timed by torch_harness.py --loss bce_with_logits: Model is
torch.nn.BCEWithLogitsLoss, ModelNew the SoftMargin library's drop-in (softmargin.BCEWithLogitsLoss's functional form,
softmargin.binary_cross_entropy_with_logits), get_inputs() the problem (512x4096 fp32 logits, float targets 0 or 1,
reduction mean), reference() the float64 loss and gradient.
"""
import torch
import torch.nn as nn

import softmargin

NAME = "BCEWithLogitsLoss"
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # set by torch_harness.py
batch_size = 512
input_shape = (4096,)


def missing():
    """The names the package lacks for these rows ([] when it has both)."""
    return [name for name in ("BCEWithLogitsLoss", "binary_cross_entropy_with_logits") if not hasattr(softmargin, name)]


class Model(nn.Module):
    """PyTorch's BCEWithLogitsLoss."""

    def __init__(self):
        super().__init__()
        self.loss_fn = nn.BCEWithLogitsLoss(reduction="mean")

    def forward(self, predictions, targets):
        return self.loss_fn(predictions, targets)


class ModelNew(nn.Module):
    """The same loss on the SoftMargin library, through its functional form (no inner module call)."""

    def forward(self, predictions, targets):
        return softmargin.binary_cross_entropy_with_logits(predictions, targets, reduction="mean")


def get_inputs():
    x = torch.randn(batch_size, *input_shape, device=DEVICE)
    t = torch.randint(0, 2, (batch_size, *input_shape), device=DEVICE).float()
    return [x, t]


def get_init_inputs():
    return []


def reference(x, t):
    """The mean loss in float64 and its gradient with respect to x (float32)."""
    z, t64 = x.double(), t.double()
    loss = (torch.clamp(z, min=0) - z * t64 + torch.log1p(torch.exp(-z.abs()))).mean()
    return loss, ((torch.sigmoid(z) - t64) / x.numel()).float()

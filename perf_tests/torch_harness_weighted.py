"""SoftMarginLoss with a per-element weight (broadcast along the rows) in KernelBench's layout, timed by
torch_harness.py --loss weighted: Model is PyTorch's expression (F.soft_margin_loss(x, y, reduction="none") * w).mean(),
ModelNew the SoftMargin library's softmargin.soft_margin_loss(x, y, weight=w), get_inputs() the problem (512x4096 fp32
or --shape's, targets +-1, w of shape (4096,)), reference() the float64 loss and its gradient with respect to x.
"""
import inspect

import torch
import torch.nn as nn
import torch.nn.functional as F

import softmargin

NAME = "weighted SoftMarginLoss"
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # set by torch_harness.py
batch_size = 512
input_shape = (4096,)
_weight = {}


def weight():
    """The weight of the problem's shape on DEVICE, made once."""
    key = (DEVICE, input_shape)
    if key not in _weight:
        _weight[key] = torch.rand(*input_shape, generator=torch.Generator().manual_seed(1)).to(DEVICE) + 0.5
    return _weight[key]


def missing():
    """The names the package lacks for these rows ([] when it has them)."""
    return [] if "weight" in inspect.signature(softmargin.soft_margin_loss).parameters else ["soft_margin_loss(weight=)"]


class Model(nn.Module):
    """PyTorch's expression: the element-wise loss, times the weight, then the mean."""

    def forward(self, predictions, targets):
        return (F.soft_margin_loss(predictions, targets, reduction="none") * weight()).mean()


class ModelNew(nn.Module):
    """The same loss in one fused pass."""

    def forward(self, predictions, targets):
        return softmargin.soft_margin_loss(predictions, targets, weight=weight())


def get_inputs():
    x = torch.randn(batch_size, *input_shape, device=DEVICE)
    y = torch.randint(0, 2, (batch_size, *input_shape), device=DEVICE).float() * 2 - 1
    return [x, y]


def get_init_inputs():
    return []


def reference(x, y):
    """The mean loss in float64 and its gradient with respect to x (float32)."""
    z, w = -y.double() * x.double(), weight().double()
    loss = ((torch.clamp(z, min=0) + torch.log1p(torch.exp(-z.abs()))) * w).mean()
    return loss, (-y.double() * torch.sigmoid(z) * w / z.numel()).float()

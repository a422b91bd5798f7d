"""The pairwise logistic (Bradley-Terry) loss of reward models in KernelBench's layout, timed by torch_harness.py
--loss pairwise: Model is PyTorch's expression -F.logsigmoid(chosen - rejected - margin).mean(), ModelNew the SoftMargin
library's softmargin.pairwise_logistic_loss, get_inputs() the problem (fp32 rewards of chosen and rejected responses,
512x4096 or --shape's, margin 0.5), reference() the float64 loss and its gradient with respect to chosen.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

import softmargin

NAME = "pairwise logistic loss"
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # set by torch_harness.py
batch_size = 512
input_shape = (4096,)
MARGIN = 0.5


def missing():
    """The names the package lacks for these rows ([] when it has them)."""
    return [name for name in ("pairwise_logistic_loss",) if not hasattr(softmargin, name)]


class Model(nn.Module):
    """PyTorch's expression of the loss: three kernels and their temporaries, and a backward through each."""

    def forward(self, chosen, rejected):
        return -F.logsigmoid(chosen - rejected - MARGIN).mean()


class ModelNew(nn.Module):
    """The same loss in one fused pass."""

    def forward(self, chosen, rejected):
        return softmargin.pairwise_logistic_loss(chosen, rejected, MARGIN)


def get_inputs():
    return [torch.randn(batch_size, *input_shape, device=DEVICE), torch.randn(batch_size, *input_shape, device=DEVICE)]


def get_init_inputs():
    return []


def reference(chosen, rejected):
    """The mean loss in float64 and its gradient with respect to chosen (float32)."""
    z = chosen.double() - rejected.double() - MARGIN
    loss = (torch.clamp(-z, min=0) + torch.log1p(torch.exp(-z.abs()))).mean()
    return loss, (-torch.sigmoid(-z) / z.numel()).float()

"""Fake (meta) kernels of the softmargin operators (SoftMarginLoss's, BCEWithLogitsLoss's and the pairwise loss's):
output shapes, dtypes and strides without computing, so that torch.compile and torch.export can trace them
(torch.library.register_fake).
They allocate as the real kernels do: the loss of reduction none and the gradients like the input (empty_like),
reduced losses 0-dimensional."""

import torch

_register = torch.library.register_fake


def _check(input, target, reduction, *others, normalizer=None):
    """The operators' checks of shapes, dtypes and reduction; others: weight, pos_weight or a margin (None when
    absent); normalizer: 0-dimensional, with reduction mean."""
    torch._check(input.dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16),
                 lambda: f"softmargin: input has dtype {input.dtype}; SoftMargin computes float32, float64, bfloat16 "
                 "and float16 inputs")
    torch._check(reduction in (0, 1, 2), lambda: f"softmargin: reduction = {reduction} is not a valid value")
    for other in (target,) + others:
        if other is None:
            continue
        shape = torch.broadcast_shapes(input.shape, other.shape)
        torch._check(shape == input.shape,
                     lambda: f"output with shape {list(input.shape)} doesn't match the broadcast shape {list(shape)}")
    if normalizer is not None:
        torch._check(reduction == 1, lambda: "softmargin: a normalizer needs reduction mean")
        torch._check(normalizer.dim() == 0, lambda: "softmargin: normalizer must be a 0-dimensional tensor")


@_register("softmargin::loss")
def _loss_fake(input, target, reduction=1, weight=None, normalizer=None):
    _check(input, target, reduction, weight, normalizer=normalizer)
    return torch.empty_like(input) if reduction == 0 else input.new_empty(())


@_register("softmargin::backward")
def _backward_fake(grad_output, input, target, reduction=1, weight=None, normalizer=None):
    _check(input, target, reduction, weight, normalizer=normalizer)
    return torch.empty_like(input)


@_register("softmargin::loss_and_grad")
def _loss_and_grad_fake(input, target, reduction=1, weight=None, normalizer=None):
    _check(input, target, reduction, weight, normalizer=normalizer)
    torch._check(reduction != 0, lambda: "softmargin::loss_and_grad: reduction none has no scalar loss")
    return input.new_empty(()), torch.empty_like(input)


@_register("softmargin::bce_with_logits")
def _bce_fake(input, target, weight=None, pos_weight=None, reduction=1, normalizer=None):
    _check(input, target, reduction, weight, pos_weight, normalizer=normalizer)
    return torch.empty_like(input) if reduction == 0 else input.new_empty(())


@_register("softmargin::bce_with_logits_backward")
def _bce_backward_fake(grad_output, input, target, weight=None, pos_weight=None, reduction=1, normalizer=None):
    _check(input, target, reduction, weight, pos_weight, normalizer=normalizer)
    return torch.empty_like(input)


@_register("softmargin::bce_with_logits_loss_and_grad")
def _bce_loss_and_grad_fake(input, target, weight=None, pos_weight=None, reduction=1, normalizer=None):
    _check(input, target, reduction, weight, pos_weight, normalizer=normalizer)
    torch._check(reduction != 0,
                 lambda: "softmargin::bce_with_logits_loss_and_grad: reduction none has no scalar loss")
    return input.new_empty(()), torch.empty_like(input)


@_register("softmargin::pairwise_logistic")
def _pairwise_fake(chosen, rejected, margin=None, margin_value=0.0, reduction=1, normalizer=None):
    _check(chosen, rejected, reduction, margin, normalizer=normalizer)
    return torch.empty_like(chosen) if reduction == 0 else chosen.new_empty(())


@_register("softmargin::pairwise_logistic_backward")
def _pairwise_backward_fake(grad_output, chosen, rejected, margin=None, margin_value=0.0, reduction=1,
                            normalizer=None):
    _check(chosen, rejected, reduction, margin, normalizer=normalizer)
    return torch.empty_like(chosen), torch.empty_like(chosen)


@_register("softmargin::pairwise_logistic_loss_and_grad")
def _pairwise_loss_and_grad_fake(chosen, rejected, margin=None, margin_value=0.0, reduction=1, normalizer=None):
    _check(chosen, rejected, reduction, margin, normalizer=normalizer)
    torch._check(reduction != 0,
                 lambda: "softmargin::pairwise_logistic_loss_and_grad: reduction none has no scalar loss")
    return chosen.new_empty(()), torch.empty_like(chosen), torch.empty_like(chosen)

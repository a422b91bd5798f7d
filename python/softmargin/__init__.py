"""SoftMarginLoss and BCEWithLogitsLoss for PyTorch, computed by the SoftMargin library (Kokkos): drop-ins for
torch.nn.SoftMarginLoss and torch.nn.BCEWithLogitsLoss, and the pairwise logistic (Bradley-Terry) loss of reward
models, -logsigmoid(chosen - rejected - margin).

    from softmargin import SoftMarginLoss, soft_margin_loss
    loss = SoftMarginLoss()(x, y)                    # as torch.nn.SoftMarginLoss(reduction='mean')(x, y)
    loss = soft_margin_loss(x, y, reduction="sum")   # as torch.nn.functional.soft_margin_loss
    loss = BCEWithLogitsLoss(pos_weight=p)(x, t)     # as torch.nn.BCEWithLogitsLoss
    loss = binary_cross_entropy_with_logits(x, t, weight=w)  # as torch.nn.functional's
    loss = PairwiseLogisticLoss(margin=0.5)(chosen, rejected)  # -F.logsigmoid(chosen - rejected - 0.5).mean()

One fused, numerically stable pass: finite where PyTorch overflows (x = 100, y = -1 gives 100, PyTorch inf), and
with x requiring grad the forward computes the gradient in the same pass. CPU tensors run on Kokkos' host backend,
CUDA tensors on torch's current stream. x is float32, float64, bfloat16 or float16 (computed in float, or double for
float64, and rounded once to x's dtype); y broadcasts to x's shape and is converted to its dtype, as in PyTorch
(weight and pos_weight too). The operators are torch.ops.softmargin.{loss, backward, loss_and_grad},
{bce_with_logits, bce_with_logits_backward, bce_with_logits_loss_and_grad} and {pairwise_logistic,
pairwise_logistic_backward, pairwise_logistic_loss_and_grad}.
"""

import importlib
import os
import warnings

import torch
from torch.nn import _reduction

from . import _build_info

__version__ = _build_info.version


SUPPORTED_TORCH = "2.4 or later (CI tests 2.11)"


def _check_torch(built, running):
    """Raises ImportError unless torch `running` has the major.minor version of torch `built`, the one the operators
    are compiled against (torch's C++ API and ABI change between minor releases; the build takes torch >= 2.4)."""
    def major_minor(version):
        return tuple(version.split("+")[0].split(".")[:2])

    if major_minor(built) != major_minor(running):
        raise ImportError(f"softmargin {__version__} is built against torch {built}, but torch {running} is imported: "
                          f"rebuild softmargin with this torch (pip install --no-build-isolation .; softmargin "
                          f"supports torch {SUPPORTED_TORCH}) or use torch {'.'.join(major_minor(built))}")


_check_torch(_build_info.torch_version, torch.__version__)

torch.ops.load_library(os.path.join(os.path.dirname(os.path.abspath(__file__)), "libsoftmargin_torch.so"))

from . import _fake  # noqa: E402  (fake kernels for torch.compile)

__all__ = ["SoftMarginLoss", "soft_margin_loss", "BCEWithLogitsLoss", "binary_cross_entropy_with_logits",
           "PairwiseLogisticLoss", "pairwise_logistic_loss", "set_launch_options", "build_info"]

_loss = torch.ops.softmargin.loss.default  # looked up once: attribute lookups on torch.ops cost per call
_bce = torch.ops.softmargin.bce_with_logits.default
_pairwise = torch.ops.softmargin.pairwise_logistic.default
_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}

# The lean entry (softmargin._entry, where the build found Python's headers) calls the same operators without
# torch.ops' generic argument handling, and hands any other call (tensor subclasses, __torch_function__ modes) to
# torch.ops. torch.compile traces the operators themselves: the entry is C code that it cannot see into.
try:
    _entry = importlib.import_module("._entry", __name__)
except ModuleNotFoundError:  # not built
    _entry = None
except ImportError as error:  # built, but it does not load here: same results, through torch.ops
    warnings.warn(f"softmargin: the lean entry softmargin._entry does not load ({error}); calls go through torch.ops")
    _entry = None
if _entry is None:
    _call, _bce_call, _pairwise_call = _loss, _bce, _pairwise
else:
    _entry.set_fallbacks(_loss, _bce, _pairwise)
    _call, _bce_call, _pairwise_call = _entry.loss, _entry.bce_with_logits, _entry.pairwise_logistic
_compiler = getattr(torch, "compiler", None)
_is_compiling = getattr(_compiler, "is_compiling", None) or (lambda: False)


def _normalizer(normalizer):
    """The operators' normalizer: a tensor as it is (0-dimensional, on the CPU or the inputs' device), a Python number
    as a float64 CPU scalar (read on the host), None as None."""
    if normalizer is None or isinstance(normalizer, torch.Tensor):
        return normalizer
    return torch.tensor(float(normalizer), dtype=torch.float64)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean", *, weight=None,
                     normalizer=None):
    """torch.nn.functional.soft_margin_loss on the SoftMargin library: same arguments, same result (finite where
    PyTorch overflows). An invalid reduction raises ValueError, as in PyTorch. weight (broadcast to the input's shape)
    multiplies each element's loss. normalizer (a number, or a 0-dimensional tensor on the CPU or the inputs' device,
    read where the kernel divides: no synchronization) replaces the mean's element count: the loss is the sum divided
    by it, as loss.sum() / normalizer, and so are the gradients (for a count over micro-batches or ranks)."""
    code = _REDUCTIONS.get(reduction)
    if code is None or size_average is not None or reduce is not None:
        code = _reduction_code(size_average, reduce, reduction)
    if normalizer is not None or _is_compiling():
        return _loss(input, target, code, weight, _normalizer(normalizer))
    return _call(input, target, code) if weight is None else _call(input, target, code, weight)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None, *, normalizer=None):
    """torch.nn.functional.binary_cross_entropy_with_logits on the SoftMargin library: same arguments, same result
    (computed in float, or double for float64, and rounded once to the input's dtype). target has the input's shape
    (ValueError otherwise, as in PyTorch) and holds soft labels of any real dtype (converted to the input's) or bool
    or int8 labels (read as they are; PyTorch refuses those); weight and pos_weight broadcast to the input's shape.
    Differentiable with respect to input, target, weight and pos_weight. normalizer: as soft_margin_loss's."""
    code = _REDUCTIONS.get(reduction)
    if code is None or size_average is not None or reduce is not None:
        code = _reduction_code(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    if normalizer is not None or _is_compiling():
        return _bce(input, target, weight, pos_weight, code, _normalizer(normalizer))
    return _bce_call(input, target, weight, pos_weight, code)


def pairwise_logistic_loss(chosen, rejected, margin=0.0, reduction="mean", *, normalizer=None):
    """The pairwise logistic (Bradley-Terry) loss of reward models, -logsigmoid(chosen - rejected - margin) per pair,
    in one fused pass: the result of -torch.nn.functional.logsigmoid(chosen - rejected - margin) reduced by `reduction`
    (none, mean or sum), finite where the difference is large. rejected and margin (a Python number or a tensor)
    broadcast to chosen's shape and are converted to its dtype (float32, float64, bfloat16 or float16; computed in
    float, or double for float64). Differentiable with respect to chosen, rejected and a margin tensor: the gradients of
    chosen and rejected come from the forward's own pass. normalizer: as soft_margin_loss's (the pairs of a whole
    step)."""
    code = _REDUCTIONS.get(reduction)
    if code is None:
        code = _reduction_code(None, None, reduction)
    tensor_margin = isinstance(margin, torch.Tensor)
    margin, margin_value = (margin, 0.0) if tensor_margin else (None, float(margin))
    if normalizer is not None or _is_compiling():
        return _pairwise(chosen, rejected, margin, margin_value, code, _normalizer(normalizer))
    return _pairwise_call(chosen, rejected, margin, margin_value, code)


def _reduction_code(size_average, reduce, reduction):
    """The reduction's enumerator from the legacy arguments or a spelling that is not one of none, mean, sum."""
    if size_average is not None or reduce is not None:
        return _reduction.legacy_get_enum(size_average, reduce)
    return _reduction.get_enum(reduction)  # PyTorch's ValueError, or its deprecated spellings


def set_launch_options(programmatic_dependent_launch=True, blocks_per_sm=0):
    """The library's launch settings of its CUDA kernels, process-wide (softmargin::LaunchOptions): programmatic
    dependent launch on Hopper and later (default on), and grid blocks per multiprocessor (0: tuned). For
    measurements."""
    torch.ops.softmargin.set_launch_options(bool(programmatic_dependent_launch), int(blocks_per_sm))


def build_info():
    """What this build is built with and against: its version, Kokkos' version, backends and architectures, the host
    backend of CPU tensors, whether the operators have CUDA kernels and for which GPU architecture, the torch version
    (and its CUDA) it is compiled against, whether the lean entry softmargin._entry is built and loads."""
    info = {name: getattr(_build_info, name) for name in (
        "version", "kokkos_version", "kokkos_backends", "kokkos_arch", "host_backend", "cuda", "cuda_arch",
        "torch_version", "torch_cuda_version", "build_type")}
    info["lean_entry"] = _call is not _loss
    return info


class SoftMarginLoss(torch.nn.SoftMarginLoss):
    """torch.nn.SoftMarginLoss on the SoftMargin library (a subclass: same constructor and attributes, and an optional
    per-element `weight`, a buffer as BCEWithLogitsLoss's). forward(input, target, normalizer=None): normalizer as
    soft_margin_loss's."""

    def __init__(self, size_average=None, reduce=None, reduction="mean", *, weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)

    def forward(self, input, target, *, normalizer=None):
        code = _REDUCTIONS.get(self.reduction)
        if code is None:
            code = _reduction_code(None, None, self.reduction)
        weight = self._buffers["weight"]  # the buffer itself: Module.__getattr__ costs a microsecond a call
        if normalizer is not None or _is_compiling():
            return _loss(input, target, code, weight, _normalizer(normalizer))
        return _call(input, target, code) if weight is None else _call(input, target, code, weight)


class BCEWithLogitsLoss(torch.nn.BCEWithLogitsLoss):
    """torch.nn.BCEWithLogitsLoss on the SoftMargin library (a subclass: same constructor, same attributes and
    buffers weight and pos_weight)."""

    def forward(self, input, target, *, normalizer=None):
        buffers = self._buffers  # the buffers themselves: Module.__getattr__ costs a microsecond a call
        code = _REDUCTIONS.get(self.reduction)
        if code is None or normalizer is not None or _is_compiling() or target.size() != input.size():
            return binary_cross_entropy_with_logits(input, target, buffers["weight"], None, None, self.reduction,
                                                    buffers["pos_weight"], normalizer=normalizer)
        return _bce_call(input, target, buffers["weight"], buffers["pos_weight"], code)


class PairwiseLogisticLoss(torch.nn.Module):
    """The pairwise logistic (Bradley-Terry) loss of reward models as a module: forward(chosen, rejected, margin=None,
    normalizer=None) is pairwise_logistic_loss(chosen, rejected, margin, reduction, normalizer=normalizer), with the
    margin of the call (a number or a tensor, for per-pair margins) or else the module's."""

    def __init__(self, margin=0.0, reduction="mean"):
        super().__init__()
        if reduction not in _REDUCTIONS:
            _reduction_code(None, None, reduction)  # PyTorch's ValueError
        self.margin = margin
        self.reduction = reduction

    def forward(self, chosen, rejected, margin=None, *, normalizer=None):
        return pairwise_logistic_loss(chosen, rejected, self.margin if margin is None else margin, self.reduction,
                                      normalizer=normalizer)

    def extra_repr(self):
        return f"margin={self.margin}, reduction={self.reduction}"

"""Shared fixtures of the softmargin pytest suite: the devices to test and input makers.

Every test that takes `device` runs on the CPU and, when torch sees a GPU, on CUDA ("cuda" fails, rather than
skips, if a GPU is present but the operators were built without CUDA kernels). SOFTMARGIN_TEST_DEVICES=cpu or =cuda
restricts the set. Inputs are fresh random tensors from a seed that pytest prints with any failure.
"""

import os
import random

import pytest
import torch

import softmargin  # noqa: F401  (loads the operators)


def pytest_report_header(config):
    return f"softmargin {softmargin.__version__} from {softmargin.__file__}: {softmargin.build_info()}"


def _devices():
    wanted = os.environ.get("SOFTMARGIN_TEST_DEVICES", "cpu,cuda").split(",")
    devices = []
    for d in wanted:
        if d == "cpu":
            devices.append("cpu")
        elif d == "cuda":
            devices.append(pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                                          reason="no CUDA device")))
    return devices


@pytest.fixture(params=_devices())
def device(request):
    if request.param == "cuda":
        assert torch._C._dispatch_has_kernel_for_dispatch_key("softmargin::loss", "CUDA"), (
            "a CUDA device is present but the softmargin operators have no CUDA kernels (build with a CUDA Kokkos "
            "and a CUDA torch)")
    return request.param


@pytest.fixture
def seed(request):
    """A fresh seed per test, printed with its failures (rerun: SOFTMARGIN_TEST_SEED=<seed>)."""
    s = int(os.environ.get("SOFTMARGIN_TEST_SEED", random.randrange(2**31)))
    torch.manual_seed(s)
    request.node.user_properties.append(("seed", s))
    print(f"seed {s}")
    return s


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()

"""The package: its version (VERSION, the installed distribution's), build_info(), the torch version check at
import, and the operator module's private symbols."""

import os
import re
import shutil
import subprocess
import sys
from importlib import metadata

import pytest
import torch

import softmargin

VERSION_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "VERSION")


def test_version_is_the_projects():
    with open(VERSION_FILE) as f:
        assert softmargin.__version__ == f.read().strip()


def test_version_is_the_distributions():
    try:
        installed = metadata.version("softmargin")
    except metadata.PackageNotFoundError:
        pytest.skip("softmargin is not installed as a distribution (run from the build tree)")
    assert installed == softmargin.__version__


def test_build_info():
    info = softmargin.build_info()
    assert info["version"] == softmargin.__version__
    assert re.fullmatch(r"5\.\d+\.\d+", info["kokkos_version"]), info
    assert info["kokkos_backends"] and all(b.isupper() for b in info["kokkos_backends"])
    assert info["host_backend"].upper() in info["kokkos_backends"]
    assert isinstance(info["kokkos_arch"], tuple)
    has_cuda = torch._C._dispatch_has_kernel_for_dispatch_key("softmargin::loss", "CUDA")
    assert info["cuda"] == has_cuda
    if info["cuda"]:
        assert "CUDA" in info["kokkos_backends"] and re.fullmatch(r"sm_\d+", info["cuda_arch"]), info
        assert info["torch_cuda_version"] == torch.version.cuda
    else:
        assert info["cuda_arch"] == ""
    built = info["torch_version"].split(".")[:2]
    assert built == torch.__version__.split("+")[0].split(".")[:2]
    assert isinstance(info["lean_entry"], bool)
    assert info is not softmargin.build_info()  # a copy: the caller may change it


@pytest.mark.parametrize("built, running", [("1.13.0a0", "1.13.1"), ("2.5.1", "2.5.0+cu124"),
                                            ("2.6.0.dev20241112+cu124", "2.6.0")])
def test_torch_check_accepts_the_same_minor(built, running):
    softmargin._check_torch(built, running)


@pytest.mark.parametrize("built, running", [("1.13.0a0", "2.1.0+cu121"), ("2.5.1", "2.4.1"), ("2.10.0", "2.1.0")])
def test_torch_check_refuses_another_minor(built, running):
    with pytest.raises(ImportError, match=re.escape(f"built against torch {built}, but torch {running} is imported")):
        softmargin._check_torch(built, running)


def test_import_with_another_torch_raises():
    # torch reporting another version: importing softmargin raises ImportError naming both.
    code = ("import torch\n"
            "torch.__version__ = '99.1.0'\n"
            "try:\n"
            "    import softmargin\n"
            "except ImportError as e:\n"
            "    print(e)\n"
            "else:\n"
            "    print('imported')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    built = softmargin.build_info()["torch_version"]
    assert f"built against torch {built}, but torch 99.1.0 is imported" in result.stdout, result.stdout


def test_module_symbols_are_private():
    # The operators register themselves at load; no Kokkos or library symbol is exported (a static Kokkos stays
    # private to the module, another Kokkos in the process never binds to it).
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("no nm")
    library = os.path.join(os.path.dirname(softmargin.__file__), "libsoftmargin_torch.so")
    out = subprocess.run([nm, "-D", "--defined-only", "-C", library], capture_output=True, text=True, check=True)
    exported = [line for line in out.stdout.splitlines() if re.search(r"\bKokkos::|\bsoftmargin::", line)]
    assert not exported, exported[:10]

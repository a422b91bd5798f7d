"""The Python package softmargin, built by the project's CMake build (setuptools drives it; pyproject.toml).

    pip install --no-build-isolation .          # or: pip wheel --no-build-isolation .
    python3 -m build --wheel --no-isolation     #     (the build needs the torch it builds for: no isolation)

CMake configures the project with the PyTorch operators on and its tests, benchmarks, examples and MPI layer off,
builds the operators (libsoftmargin_torch.so and the lean entry softmargin._entry), and installs its component
`python` (those two and the generated _build_info.py) into the package; the package's Python files come from
python/softmargin. Kokkos is the one that Kokkos_ROOT, Kokkos_DIR or CMAKE_PREFIX_PATH points to, else Kokkos 5.0.2
built in the build directory (cmake/SoftMarginKokkos.cmake).

CUDA: where torch has CUDA and nvcc is on PATH, Kokkos' CUDA backend and the operators' CUDA kernels are built (the
`cuda` preset's configuration, Serial on the host) for the architecture of torch's GPU 0; else a CPU build (the
`openmp` preset's: OpenMP, tuned for this CPU). Build-time settings, from the environment:
    SOFTMARGIN_CUDA_ARCH   the GPU architecture (90, 9.0, sm_90 or HOPPER90) instead of that of torch's GPU 0
    CMAKE_ARGS             further CMake arguments, after these (so they win), e.g. -DSOFTMARGIN_KOKKOS_SOURCE=...
    CMAKE_BUILD_PARALLEL_LEVEL   parallel build jobs (default: the CPU count)
"""

import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# Kokkos' names of the NVIDIA architectures it supports, by compute capability.
KOKKOS_CUDA_ARCHS = {"60": "PASCAL60", "61": "PASCAL61", "70": "VOLTA70", "72": "VOLTA72", "75": "TURING75",
                     "80": "AMPERE80", "86": "AMPERE86", "87": "AMPERE87", "89": "ADA89", "90": "HOPPER90",
                     "100": "BLACKWELL100", "120": "BLACKWELL120"}


def _torch():
    try:
        import torch
    except ImportError as error:
        sys.exit(f"softmargin: the build needs torch in the Python that runs it ({sys.executable}: {error}). Build "
                 "without isolation in an environment that has torch: pip install --no-build-isolation . or "
                 "python3 -m build --wheel --no-isolation")
    return torch


def _torch_requirement():
    """torch of the major.minor version the operators are built against (softmargin refuses another at import)."""
    major, minor = _torch().__version__.split("+")[0].split(".")[:2]
    return f"torch=={major}.{minor}.*"


def _kokkos_cuda_arch(torch):
    """Kokkos' name of the GPU architecture to build for: SOFTMARGIN_CUDA_ARCH, else that of torch's GPU 0."""
    wanted = os.environ.get("SOFTMARGIN_CUDA_ARCH", "").strip()
    if wanted:
        if wanted.upper() in KOKKOS_CUDA_ARCHS.values():
            return wanted.upper(), f"SOFTMARGIN_CUDA_ARCH={wanted}"
        cc = re.sub(r"^(sm_|compute_)", "", wanted.lower()).replace(".", "")
        source = f"SOFTMARGIN_CUDA_ARCH={wanted}"
    elif torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability(0)
        cc = f"{major}{minor}"
        source = f"torch's GPU 0, {torch.cuda.get_device_name(0)}"
    else:
        sys.exit("softmargin: torch has CUDA and nvcc is on PATH, but torch sees no GPU to take the architecture "
                 "from: set SOFTMARGIN_CUDA_ARCH (e.g. 90 for H100/H200), or build without nvcc on PATH for a CPU "
                 "build")
    if cc not in KOKKOS_CUDA_ARCHS:
        sys.exit(f"softmargin: compute capability {cc} ({source}) has no Kokkos architecture; Kokkos knows "
                 f"{', '.join(KOKKOS_CUDA_ARCHS)} (set SOFTMARGIN_CUDA_ARCH to the nearest one below)")
    return KOKKOS_CUDA_ARCHS[cc], f"{source}: sm_{cc}"


def _configuration():
    """The Kokkos backends and architecture to ask for, the backends the operators run on (whose instantiations the
    library holds), and why."""
    torch = _torch()
    nvcc = shutil.which("nvcc")
    if not torch.version.cuda:
        return "SERIAL;OPENMP", "NATIVE", "OpenMP", f"CPU build: torch {torch.__version__} has no CUDA"
    if not nvcc:
        return ("SERIAL;OPENMP", "NATIVE", "OpenMP", f"CPU build: torch {torch.__version__} has CUDA "
                f"{torch.version.cuda}, but nvcc is not on PATH")
    arch, why = _kokkos_cuda_arch(torch)
    return ("SERIAL;CUDA", arch, "Serial;Cuda",
            f"CUDA build for {arch} ({why}; torch CUDA {torch.version.cuda}, nvcc {nvcc})")


class CMakeBuild(build_ext):
    """Configures, builds and installs the operators with CMake into the package's directory."""

    def build_extension(self, ext):
        source = os.path.dirname(os.path.abspath(__file__))
        backends, arch, eti, why = _configuration()
        # one build directory per configuration: switching CPU and CUDA builds neither mixes nor rebuilds them
        build = os.path.abspath(os.path.join(self.build_temp, f"cmake-{backends}-{arch}".replace(";", "-").lower()))
        package_root = os.path.dirname(os.path.dirname(os.path.abspath(self.get_ext_fullpath(ext.name))))
        args = ["-DCMAKE_BUILD_TYPE=Release", f"-DSOFTMARGIN_PYTHON={sys.executable}",
                "-DSOFTMARGIN_ENABLE_TORCH=ON", "-DSOFTMARGIN_ENABLE_TESTS=OFF", "-DSOFTMARGIN_ENABLE_PERF_TESTS=OFF",
                "-DSOFTMARGIN_ENABLE_EXAMPLES=OFF", "-DSOFTMARGIN_ENABLE_MPI=OFF",
                f"-DSOFTMARGIN_KOKKOS_BACKENDS={backends}", f"-DSOFTMARGIN_KOKKOS_ARCH={arch}",
                f"-DSOFTMARGIN_ETI_BACKENDS={eti}"]
        extra = shlex.split(os.environ.get("CMAKE_ARGS", ""))
        print(f"softmargin: {why}" + (f"; CMAKE_ARGS: {' '.join(extra)}" if extra else ""), flush=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(self.parallel or os.cpu_count() or 2)
        for command in (["cmake", "-S", source, "-B", build, *args, *extra],
                        ["cmake", "--build", build, "--target", "softmargin_torch", "--parallel", jobs],
                        ["cmake", "--install", build, "--component", "python", "--prefix", package_root]):
            print("softmargin: " + shlex.join(command), flush=True)
            subprocess.run(command, check=True)


setup(ext_modules=[Extension("softmargin._entry", sources=[])], cmdclass={"build_ext": CMakeBuild},
      install_requires=[_torch_requirement()])

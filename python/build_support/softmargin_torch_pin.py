"""scikit-build-core metadata provider (pyproject.toml): the package's dependency on torch of the major.minor version
the operators are compiled against, the torch of the Python that runs the build (softmargin refuses another at
import: torch's C++ API and ABI change between minor releases)."""


def dynamic_metadata(field, settings=None):
    if field != "dependencies":
        raise RuntimeError(f"softmargin_torch_pin provides 'dependencies', not {field!r}")
    try:
        import torch
    except ImportError as error:
        raise RuntimeError("softmargin: the build needs torch in the Python that runs it; build without isolation in "
                           "an environment that has torch >= 2.4: pip install --no-build-isolation .") from error
    major, minor = torch.__version__.split("+")[0].split(".")[:2]
    return [f"torch=={major}.{minor}.*"]

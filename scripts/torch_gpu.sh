#!/usr/bin/env bash
# The PyTorch operators on a GPU machine with a CUDA build of torch and nvcc, offline: builds the CUDA preset's
# library and the operators (libsoftmargin_torch.so) against that torch, then runs the stages named in STAGES
# (default: tests harness, in this order; "build" alone only builds), logs in $OUT:
#   tests    the pytest suite (python/tests) on CPU and CUDA tensors, torch.compile and torch.library.opcheck included
#   harness  perf_tests/torch_harness.py: outputs of Model (nn.SoftMarginLoss), ModelNew and torch.compile(ModelNew())
#            agree, then forward, forward+backward and CUDA-graph forward per call, 512x4096 fp32 mean; then the same
#            for nn.BCEWithLogitsLoss (--loss bce_with_logits; skipped where the package has no BCEWithLogitsLoss), the
#            weighted SoftMarginLoss and the pairwise logistic loss (512x4096, and 4096 scalar pairs)
#
# Sources come from a folder (first argument, or SOFTMARGIN_DEPS_DIR; default .deps, else ../shared/deps):
#   kokkos_5.0.2.orig.tar.gz   Kokkos (not needed when build/cuda/_deps/kokkos/install already exists: reused)
#   python-debs/*.deb          Debian's pytest, hypothesis and their dependencies, used only if the interpreter
#                              lacks pytest (fetch them on a machine with apt: scripts/torch_gpu.sh fetch-debs <folder>)
# The interpreter is PYTHON (default: the first of python3, python that imports torch). The build goes to
# build/cuda-torch (tests, benchmarks and examples off), or to the existing build folder BUILD (e.g. build/cuda after
# scripts/gpu_offline.sh: its Kokkos and library are reused, only the operators are compiled); PRESET=openmp runs the
# same on the host (CPU tensors), with the Kokkos of build/openmp or Kokkos_ROOT. Usage:
#   [STAGES="tests harness"] [PYTHON=python3] [OUT=out] bash scripts/torch_gpu.sh [deps folder]
#   bash scripts/torch_gpu.sh fetch-debs <folder>      # on a Debian machine with apt: the pytest .debs
set -uo pipefail
cd "$(dirname "$0")/.."

PYTEST_DEBS="python3-pytest python3-pluggy python3-iniconfig python3-packaging python3-attr python3-py
python3-more-itertools python3-exceptiongroup python3-tomli python3-pkg-resources python3-hypothesis
python3-sortedcontainers"
if [ "${1:-}" = fetch-debs ]; then
  [ -n "${2:-}" ] || { echo "usage: $0 fetch-debs <folder>"; exit 2; }
  mkdir -p "$2/python-debs" && cd "$2/python-debs" && apt-get download $PYTEST_DEBS && ls
  exit $?
fi

deps="${1:-${SOFTMARGIN_DEPS_DIR:-}}"
if [ -z "$deps" ]; then
  if [ -d .deps ]; then deps=.deps; else deps=../shared/deps; fi
fi
deps="$(cd "$deps" 2>/dev/null && pwd)" || { echo "no sources folder $deps"; exit 1; }
OUT="${OUT:-$PWD/out}"
mkdir -p "$OUT"
stages="${STAGES:-tests harness}"
export PATH="$PATH:/usr/local/cuda/bin"
preset="${PRESET:-cuda}"
build="${BUILD:-build/$preset-torch}"
device=cpu
[ "$preset" = cuda ] && device=cuda

python="${PYTHON:-}"
if [ -z "$python" ]; then
  for p in python3 python; do
    if command -v "$p" >/dev/null && "$p" -c "import torch" 2>/dev/null; then python="$(command -v "$p")"; break; fi
  done
fi
[ -n "$python" ] || { echo "no Python interpreter imports torch (set PYTHON)"; exit 1; }
"$python" -c "import sys, torch; print('python', sys.version.split()[0], '| torch', torch.__version__, '| CUDA',
torch.version.cuda, '| cxx11 abi', torch._C._GLIBCXX_USE_CXX11_ABI, '|',
torch.cuda.get_device_name() if torch.cuda.is_available() else 'no GPU')" || exit 1
[ "$device" = cuda ] && nvcc --version | tail -2

# pytest: the interpreter's own, else Debian's from the .debs, unpacked here; only the modules the interpreter
# lacks are put on its path (so that its own packaging etc. stay in charge).
pypath="$PWD/$build/python"
if ! "$python" -c "import pytest" 2>/dev/null; then
  debs=("$deps"/python-debs/*.deb)
  [ -e "${debs[0]}" ] || { echo "$python has no pytest and $deps/python-debs holds no .debs"; exit 1; }
  unpacked="$PWD/$build/pytest-debs"
  rm -rf "$unpacked" && mkdir -p "$unpacked/root" "$unpacked/path"
  for deb in "${debs[@]}"; do
    if command -v dpkg-deb >/dev/null; then dpkg-deb -x "$deb" "$unpacked/root"
    else (cd "$unpacked" && ar x "$deb" data.tar.xz && tar -xJf data.tar.xz -C root && rm data.tar.xz); fi
  done
  for mod in "$unpacked"/root/usr/lib/python3/dist-packages/*; do
    name="$(basename "$mod")"
    case "$name" in *.dist-info | *.egg-info) continue ;; esac
    "$python" -c "import ${name%.py}" 2>/dev/null || ln -s "$mod" "$unpacked/path/$name"
  done
  pypath="$pypath:$unpacked/path"
  PYTHONPATH="$unpacked/path" "$python" -m pytest --version || exit 1
fi

t0=$(date +%s)
kokkos_args=(-DSOFTMARGIN_KOKKOS_SOURCE="$deps/kokkos_5.0.2.orig.tar.gz")
[ -f "build/$preset/_deps/kokkos/install/lib/cmake/Kokkos/KokkosConfig.cmake" ] &&
  kokkos_args=(-DKokkos_ROOT="$PWD/build/$preset/_deps/kokkos/install")
[ -n "${Kokkos_ROOT:-}" ] && kokkos_args=(-DKokkos_ROOT="$Kokkos_ROOT")
lean=(-DSOFTMARGIN_ENABLE_TESTS=OFF -DSOFTMARGIN_ENABLE_PERF_TESTS=OFF -DSOFTMARGIN_ENABLE_EXAMPLES=OFF)
[ -n "${BUILD:-}" ] && lean=()  # an existing build keeps what it builds
cmake --preset "$preset" -B "$build" "${kokkos_args[@]}" -DSOFTMARGIN_PYTHON="$python" -DSOFTMARGIN_ENABLE_TORCH=ON \
  "${lean[@]}" > "$OUT/torch_configure.log" 2>&1 || { tail -40 "$OUT/torch_configure.log"; exit 1; }
grep "SoftMargin:" "$OUT/torch_configure.log"
[ "$device" = cpu ] || grep -q "PyTorch operators on CUDA" "$OUT/torch_configure.log" ||
  { echo "the operators would have no CUDA kernels (torch without CUDA, or Kokkos without CUDA)"; exit 1; }
cmake --build "$build" -j "$(nproc)" --target softmargin_torch > "$OUT/torch_build.log" 2>&1 ||
  { grep -B2 -A12 -E "error|Error" "$OUT/torch_build.log" | head -120; exit 1; }
echo "build: $(($(date +%s) - t0)) s"

export OMP_PROC_BIND="${OMP_PROC_BIND:-false}"
compile=""
"$python" -c "import torch; assert hasattr(torch, 'compile')" 2>/dev/null && compile=--compile
for stage in $stages; do
  t0=$(date +%s)
  case "$stage" in
    tests)
      PYTHONPATH="$pypath" "$python" -m pytest -q -rs -p no:cacheprovider python/tests > "$OUT/torch_pytest.log" 2>&1
      echo "pytest exit $?"
      grep -E "^(FAILED|ERROR) |[0-9]+ (passed|failed|errors?)" "$OUT/torch_pytest.log" | tail -40
      ;;
    harness)
      PYTHONPATH="$pypath" "$python" perf_tests/torch_harness.py --device "$device" --pdl-ab --autograd-ab $compile 2>&1 |
        tee "$OUT/torch_harness.txt"
      PYTHONPATH="$pypath" "$python" perf_tests/torch_harness.py --device "$device" --loss bce_with_logits --pdl-ab \
        $compile 2>&1 | tee "$OUT/torch_harness_bce.txt"
      # the family's other losses: the weighted SoftMarginLoss, the pairwise loss at 512x4096 and at 4096 scalar pairs
      for run in "weighted 512x4096" "pairwise 512x4096" "pairwise 1x4096"; do
        set -- $run
        PYTHONPATH="$pypath" "$python" perf_tests/torch_harness.py --device "$device" --loss "$1" --shape "$2" \
          $compile 2>&1 | tee "$OUT/torch_harness_$1_$2.txt"
      done
      ;;
    build) ;;
    *) echo "unknown stage $stage" ;;
  esac
  echo "stage $stage: $(($(date +%s) - t0)) s"
done

#!/usr/bin/env bash
# The Python package as a user installs it: from a fresh clone of this tree (with its uncommitted changes), in a new
# venv with PyTorch and the test tools from PyPI (python/requirements-ci.txt), builds a wheel (pip wheel
# --no-build-isolation: scikit-build-core drives the project's CMake build; a CPU build), installs it, runs the whole
# pytest suite from outside the source tree against the installed package, uninstalls it and checks that nothing of
# it is left. Prints each stage's time and the wheel's size.
#
#   scripts/wheel_check.sh [BUILD_DIR]
#
# BUILD_DIR (e.g. build/openmp): a configured build tree whose Kokkos the wheel reuses (Kokkos_ROOT), so that Kokkos is
# not built again; without it the wheel's build builds Kokkos itself. Work files go to a temporary directory, removed
# at the end.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
python=/usr/bin/python3
t0=$SECONDS
stage_t0=$SECONDS
times=()
stage() {
  [ -n "${stage_name:-}" ] && times+=("$(printf '%4ds  %s' $((SECONDS - stage_t0)) "$stage_name")")
  stage_name="$1"
  stage_t0=$SECONDS
  [ -n "$1" ] && echo "== wheel check: $1"
  return 0
}
report() {
  local rc=$?
  stage ""
  echo "== wheel check stage times$([ "$rc" -eq 0 ] || echo ': the last stage failed')"
  printf '%s\n' "${times[@]}"
  printf '%4ds  total\n' $((SECONDS - t0))
  rm -rf "$work"
}
work="$(mktemp -d /tmp/softmargin-wheel.XXXXXX)"
trap report EXIT

if [ $# -gt 0 ]; then
  cache="$(cd "$1" && pwd)/CMakeCache.txt"
  [ -f "$cache" ] || { echo "wheel check: $1 is not a configured build tree (no CMakeCache.txt)"; exit 1; }
  kokkos_dir="$(sed -n 's/^Kokkos_DIR:PATH=//p' "$cache")"
  [ -f "$kokkos_dir/KokkosConfig.cmake" ] || { echo "wheel check: no Kokkos in $1 (Kokkos_DIR=$kokkos_dir)"; exit 1; }
  export Kokkos_ROOT="$(cd "$kokkos_dir/../../.." && pwd)"
  echo "wheel check: Kokkos from $Kokkos_ROOT"
fi
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"

stage "fresh clone of $root (and its uncommitted changes)"
git clone -q "$root" "$work/src"
# The working tree's uncommitted changes to tracked files, then its untracked files that git does not ignore.
git -C "$root" diff HEAD --binary | (cd "$work/src" && git apply --allow-empty --binary)
(cd "$root" && git ls-files --others --exclude-standard -z | xargs -0 -r cp --parents -t "$work/src")
git -C "$work/src" log -1 --format='%h %s' | cut -c1-100

stage "venv with PyPI's PyTorch and test tools (python/requirements-ci.txt): download and install"
"$python" -m venv "$work/venv"
py="$work/venv/bin/python"
"$py" -m pip install -q --upgrade pip
"$py" -m pip install -q -r "$work/src/python/requirements-ci.txt"
"$py" -m pip list 2>/dev/null | grep -iE '^(torch|scikit.build.core|pytest|hypothesis|expecttest|numpy) '
echo "venv: $(du -sh "$work/venv" | cut -f1)"

stage "wheel: pip wheel --no-build-isolation (scikit-build-core, the project's CMake build of the operators; CPU)"
# SOFTMARGIN_TORCH_CUDA=OFF: PyPI's torch has CUDA and nvcc may be on PATH, but this machine has no GPU.
(cd "$work/src" && "$py" -m pip wheel -v --no-build-isolation --no-deps --wheel-dir "$work/dist" \
  -C cmake.define.SOFTMARGIN_TORCH_CUDA=OFF .) > "$work/build.log" 2>&1 || { tail -n 60 "$work/build.log"; exit 1; }
grep -E 'SoftMargin: (Python package|using Kokkos|building Kokkos|PyTorch operators|torch )' "$work/build.log"
if [ -n "${Kokkos_ROOT:-}" ] && grep -q 'SoftMargin: building Kokkos' "$work/build.log"; then
  echo "wheel check: the wheel's build built Kokkos instead of using $Kokkos_ROOT"; exit 1
fi
wheel="$(ls "$work"/dist/softmargin-*.whl)"
echo "$(basename "$wheel") ($(du -h "$wheel" | cut -f1)): $("$py" -m zipfile -l "$wheel" | awk 'NR > 1 { print $1 }' | tr '\n' ' ')"
"$py" - "$wheel" <<'EOF2'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    meta = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    print(*(l for l in wheel.read(meta).decode().splitlines() if l.startswith(("Version:", "Requires-Dist:"))))
EOF2

stage "install the wheel into the venv (its torch pin is met by the venv's torch: nothing is downloaded)"
"$py" -m pip install -q --no-index "$wheel"
mkdir "$work/run"
cd "$work/run"  # outside the source tree: the suite imports the installed package
site="$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
"$py" - "$work/venv" <<'EOF2'
import sys, torch, softmargin
assert softmargin.__file__.startswith(sys.argv[1] + "/"), f"softmargin imported from {softmargin.__file__}"
print("softmargin", softmargin.__version__, "from", softmargin.__file__, "with torch", torch.__version__)
print(softmargin.build_info())
x = torch.tensor([100.0, 0.5]); y = torch.tensor([-1.0, 1.0])
print("loss", softmargin.soft_margin_loss(x, y, reduction="none").tolist())
EOF2

stage "pytest (the clone's python/tests, run from outside it) against the installed package"
# pytest puts python/tests on the path (the tests import each other), not python/: softmargin is the venv's.
# The summary lists the skips, then the failures and errors (last, so that the tail shows them); a failure's
# traceback and its seed follow.
pytest_rc=0
"$py" -m pytest -p no:cacheprovider -rsfE --durations=15 "$work/src/python/tests" > "$work/pytest.log" 2>&1 ||
  pytest_rc=$?
tail -n 45 "$work/pytest.log"
if [ "$pytest_rc" -ne 0 ]; then
  sed -n '/^=\+ \(FAILURES\|ERRORS\) =\+$/,/^=\+ \(warnings summary\|short test summary info\) =\+$/p' "$work/pytest.log" |
    head -n 300
  echo "wheel check: pytest failed (exit $pytest_rc)"
  exit 1
fi
grep -q "^softmargin .* from $site/softmargin/__init__.py" "$work/pytest.log" ||
  { echo "wheel check: the suite did not import the installed package"; head -n 5 "$work/pytest.log"; exit 1; }

stage "uninstall, then nothing of softmargin is left in site-packages"
"$py" -m pip uninstall -q -y softmargin
left="$(find "$site" -iname '*softmargin*')"
[ -z "$left" ] || { echo "wheel check: left after pip uninstall:"; echo "$left"; exit 1; }
"$py" -c 'import softmargin' 2>/dev/null && { echo "wheel check: softmargin still imports"; exit 1; }
stage ""
echo "== wheel check passed"

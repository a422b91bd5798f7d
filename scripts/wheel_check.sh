#!/usr/bin/env bash
# The Python package as a user installs it: from a fresh clone of this tree (with its uncommitted changes), builds a
# wheel (python3 -m build --wheel --no-isolation), installs it into a new venv (/usr/bin/python3, with the system's
# site-packages for torch and pytest), runs the pytest suite from outside the source tree against the installed
# package, uninstalls it and checks that nothing of it is left. Prints each stage's time.
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

stage "wheel: python3 -m build --wheel --no-isolation (the project's CMake build of the operators)"
(cd "$work/src" && "$python" -m build --wheel --no-isolation --outdir "$work/dist") > "$work/build.log" 2>&1 ||
  { tail -n 60 "$work/build.log"; exit 1; }
grep -E '^softmargin: (CPU|CUDA) build|SoftMargin: (using Kokkos|building Kokkos|PyTorch operators)' "$work/build.log"
if [ -n "${Kokkos_ROOT:-}" ] && grep -q 'SoftMargin: building Kokkos' "$work/build.log"; then
  echo "wheel check: the wheel's build built Kokkos instead of using $Kokkos_ROOT"; exit 1
fi
wheel="$(ls "$work"/dist/softmargin-*.whl)"
echo "$(basename "$wheel"): $("$python" -m zipfile -l "$wheel" | awk 'NR > 1 { print $1 }' | tr '\n' ' ')"
"$python" - "$wheel" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    meta = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    print(*(l for l in wheel.read(meta).decode().splitlines() if l.startswith(("Version:", "Requires-Dist:"))))
EOF

stage "install into a new venv (--system-site-packages: Debian's torch, pytest and hypothesis)"
"$python" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/pip" install -q --no-index "$wheel"
mkdir "$work/run"
cd "$work/run"  # outside the source tree: the suite imports the installed package
site="$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
"$work/venv/bin/python" - "$work/venv" <<'EOF'
import sys, torch, softmargin
assert softmargin.__file__.startswith(sys.argv[1] + "/"), f"softmargin imported from {softmargin.__file__}"
print("softmargin", softmargin.__version__, "from", softmargin.__file__)
print(softmargin.build_info())
x = torch.tensor([100.0, 0.5]); y = torch.tensor([-1.0, 1.0])
print("loss", softmargin.soft_margin_loss(x, y, reduction="none").tolist())
EOF

stage "pytest (the clone's python/tests, run from outside it) against the installed package"
# pytest puts python/tests on the path (the tests import each other), not python/: softmargin is the venv's.
"$work/venv/bin/python" -m pytest -p no:cacheprovider "$work/src/python/tests" 2>&1 | tee "$work/pytest.log" |
  tail -n 15
grep -q "^softmargin .* from $site/softmargin/__init__.py" "$work/pytest.log" ||
  { echo "wheel check: the suite did not import the installed package"; head -n 5 "$work/pytest.log"; exit 1; }

stage "uninstall, then nothing of softmargin is left in site-packages"
"$work/venv/bin/pip" uninstall -q -y softmargin
left="$(find "$site" -iname '*softmargin*')"
[ -z "$left" ] || { echo "wheel check: left after pip uninstall:"; echo "$left"; exit 1; }
"$work/venv/bin/python" -c 'import softmargin' 2>/dev/null && { echo "wheel check: softmargin still imports"; exit 1; }
stage ""
echo "== wheel check passed"

#!/usr/bin/env bash
# The MPI layer on a GPU machine without network and without MPI: Debian's Open MPI unpacked under a prefix, the
# CUDA configuration built with it, and its tests, example and timings with several ranks sharing the GPU.
#
#   scripts/gpu_mpi.sh [--out DIR] [DEPS_DIR]
#
# DEPS_DIR (or $SOFTMARGIN_DEPS_DIR): as scripts/gpu_offline.sh's (kokkos_5.0.2.orig.tar.gz, googletest/), plus
#   openmpi/   the .deb files of scripts/fetch_mpi_debs.sh (run where apt works: scripts/fetch_mpi_debs.sh DEPS/openmpi)
# Steps, logged to the output folder (--out DIR, else $SOFTMARGIN_OUT_DIR, else build/<preset>/mpi-logs):
#   prefix     scripts/mpi_prefix.sh into build/mpi-prefix, and its env.sh
#   configure  cmake --preset cuda with the local sources and SOFTMARGIN_ENABLE_MPI=ON (reuses build/cuda and its
#              Kokkos when scripts/gpu_offline.sh made them), then the MPI tests and example
#   test       ctest -L mpi: the Serial and CUDA MPI tests with 1, 2 and 4 ranks (the CUDA ranks share the GPU)
#   example    the reference problem over 2 and 4 ranks against the one-process loss
#   time       the example's --time with 1, 2 and 4 ranks at $TIME_SIZES (default 512x4096,2^28): microseconds per
#              call of the local call and of the global forms, the slowest rank's too
# Other settings: PRESET (default cuda; openmp for a dry run on a host), JOBS (default: all cores).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
deps="${SOFTMARGIN_DEPS_DIR:-}"
out="${SOFTMARGIN_OUT_DIR:-}"
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="${2:?--out needs a folder}"; shift ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) deps="$1" ;;
  esac
  shift
done
preset="${PRESET:-cuda}"
build="build/$preset"
out="${out:-$build/mpi-logs}"
jobs="${JOBS:-$(nproc)}"
mkdir -p "$out" && out="$(cd "$out" && pwd)" || exit 1
: > "$out/summary.txt"
command -v nvcc >/dev/null || export PATH="$PATH:${CUDA_HOME:-/usr/local/cuda}/bin"
export OMP_PROC_BIND="${OMP_PROC_BIND:-false}"
failed=0
note() { echo "$*" | tee -a "$out/summary.txt"; }
fail() { note "FAILED: $*"; failed=1; }

# --- Open MPI under a prefix (unless an MPI is on PATH already). ---
config=(-DSOFTMARGIN_ENABLE_MPI=ON)
if [ -n "$deps" ]; then
  deps="$(cd "$deps" && pwd)" || exit 2
  for k in "$deps/kokkos_5.0.2.orig.tar.gz" "$deps/kokkos-5.0.2"; do
    [ -e "$k" ] && { config+=("-DSOFTMARGIN_KOKKOS_SOURCE=$k"); break; }
  done
  [ -d "$deps/googletest" ] && config+=("-DSOFTMARGIN_GTEST_SOURCE=$deps/googletest")
fi
if [ -n "$deps" ] && [ -d "$deps/openmpi" ]; then
  bash scripts/mpi_prefix.sh "$deps/openmpi" build/mpi-prefix > "$out/prefix.log" 2>&1 ||
    { cat "$out/prefix.log"; fail "prefix"; exit 1; }
  # shellcheck disable=SC1091
  source build/mpi-prefix/env.sh
  config+=("-DMPI_CXX_COMPILER=$MPICXX" "-DMPIEXEC_EXECUTABLE=$MPIEXEC")
  note "prefix: $(tail -1 "$out/prefix.log")"
elif ! command -v mpicxx >/dev/null; then
  echo "no MPI on PATH and no $deps/openmpi with .deb files" >&2; exit 2
fi
note "mpi: $(mpiexec --version 2>&1 | head -1)"

# --- Configure (forgetting an earlier configure's failed MPI search) and build the MPI targets. ---
t0=$SECONDS
if ! cmake --preset "$preset" -U 'MPI_*' -U 'MPIEXEC_*' "${config[@]}" > "$out/configure.log" 2>&1 ||
  ! grep -q "MPI layer on" "$out/configure.log"; then
  tail -40 "$out/configure.log"; fail "configure ($out/configure.log)"; exit 1
fi
targets=(softmargin_mpi_reference_problem)
for b in serial openmp cuda; do
  grep -q "softmargin_mpi_tests_$b:" "$build/Makefile" 2>/dev/null && targets+=("softmargin_mpi_tests_$b")
done
if ! cmake --build --preset "$preset" -j "$jobs" --target "${targets[@]}" > "$out/build.log" 2>&1; then
  grep -B2 -A12 -m5 -E "error|Error" "$out/build.log" | head -80; fail "build ($out/build.log)"; exit 1
fi
note "build: ok, $((SECONDS - t0)) s (${targets[*]})"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/device: /' |
  tee -a "$out/summary.txt"

# --- Tests, example, timings. ---
t0=$SECONDS
if ctest --test-dir "$build" -L '^mpi$' --output-on-failure > "$out/ctest.log" 2>&1; then
  note "test: $(grep -E 'tests passed' "$out/ctest.log"), $((SECONDS - t0)) s"
else
  grep -E "Failed|FAILED|Failure|Timeout" "$out/ctest.log" | head -30; fail "test ($out/ctest.log)"
fi
grep -E "^ *[0-9]+/[0-9]+ Test" "$out/ctest.log" | sed 's/^ */  /' | tee -a "$out/summary.txt"
example="$build/examples/softmargin_mpi_reference_problem"
for n in 2 4; do
  if mpiexec -n "$n" "$example" > "$out/example_np$n.log" 2>&1; then
    note "example, $n ranks: $(grep -E 'transport|relative diff' "$out/example_np$n.log" | sed 's/^ *//' | tr -s ' ' |
      paste -sd ';' -)"
  else
    cat "$out/example_np$n.log"; fail "example, $n ranks ($out/example_np$n.log)"
  fi
done
for n in 1 2 4; do
  if mpiexec -n "$n" "$example" --time --sizes "${TIME_SIZES:-512x4096,2^28}" > "$out/time_np$n.txt" 2>&1; then
    grep -E "^#|^ +N|^ +[0-9]" "$out/time_np$n.txt" | tee -a "$out/summary.txt"
  else
    tail -20 "$out/time_np$n.txt"; fail "time, $n ranks ($out/time_np$n.txt)"
  fi
done
[ "$failed" = 0 ] && note "all MPI steps passed (logs: $out)"
exit "$failed"

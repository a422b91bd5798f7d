#!/usr/bin/env bash
# The main job: build the library (fetching and building Kokkos 5.0.2 if none is installed) and run the reference
# problem, 512x4096 fp32 mean. Usage: scripts/reference.sh [openmp|cuda]   (default openmp)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-openmp}"
bash scripts/ensure_tools.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" --target softmargin_reference_problem -j "$(nproc)"
export OMP_PROC_BIND="${OMP_PROC_BIND:-false}"
"build/$preset/examples/softmargin_reference_problem"

#!/usr/bin/env bash
# utils/bench/sweep.sh - the shape sweep (utils/bench/sweep.py) on a GPU host
# without LLVM/MLIR. Needs, carried from the build host:
#   .gpu/include   utils/gpu/prepare.sh (dlpack/nlohmann headers)
#   .sweep/        utils/bench/sweep.py compile (bundles + manifest.json)
# Builds the runtime and the `tile` Python package (compiler OFF; nanobind
# from the host's pip) into $TILE_GPU_BUILD_DIR (default build-sweep-gpu)
# and runs `sweep.py run` with any extra arguments (--quick, --only mem|gemm|RE).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
G=$ROOT/.gpu
B=${TILE_GPU_BUILD_DIR:-$ROOT/build-sweep-gpu}
PY=$(command -v python3)
[[ -d $G/include && -f $ROOT/.sweep/manifest.json ]] ||
  { echo "sweep.sh: carry .gpu (prepare.sh) and .sweep (sweep.py compile)" >&2; exit 2; }
NB=$("$PY" -m nanobind --cmake_dir 2>/dev/null) || { echo "sweep.sh: no nanobind" >&2; exit 2; }
mkdir -p "$B"
cmake -G Ninja -S "$ROOT" -B "$B" -DCMAKE_BUILD_TYPE=Release -DTILE_ENABLE_COMPILER=OFF \
  -DTILE_ENABLE_TESTS=OFF -DTILE_ENABLE_PYTHON=ON -Dnanobind_DIR="$NB" \
  -DPython3_EXECUTABLE="$PY" -DTILE_DLPACK_INCLUDE_DIR="$G/include" \
  -DTILE_JSON_INCLUDE_DIR="$G/include" >"$B/configure.log" 2>&1 ||
  { tail -30 "$B/configure.log"; exit 2; }
ninja -C "$B" tile-python >"$B/build.log" 2>&1 || { grep -E "error|FAILED" -A3 "$B/build.log" | head -30; exit 2; }
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader
cd "$ROOT" && PYTHONPATH=$B/python_packages PYTHONUNBUFFERED=1 "$PY" utils/bench/sweep.py run "$@"

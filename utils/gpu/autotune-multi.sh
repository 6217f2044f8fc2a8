#!/usr/bin/env bash
# utils/gpu/autotune-multi.sh - multi-GPU autotuning without tilec on the GPU
# host (docs/python.md, "Tuning on several GPUs").
#
#   bash utils/gpu/autotune-multi.sh prepare
#       BUILD host (build/bin/tilec, build/python_packages): fills the ignored
#       folder .autotune/ with the runtime's header-only deps (include/), a
#       copy of the nanobind package (nanobind/, so the GPU host builds the
#       extension for its own python3) and bundles/: the 16 GEMM configs of
#       utils/gpu/autotune_multi.py compiled for sm_90a (tile export_bundles).
#   bash utils/gpu/autotune-multi.sh [--size 8192] [--rep 100] [--warmup 10]
#       GPU host (carry: [".autotune"]): builds the runtime and the Python
#       package with -DTILE_ENABLE_COMPILER=OFF (build-autotune-gpu/, or
#       TILE_GPU_BUILD_DIR), then `autotune_multi.py run`: tilec hidden,
#       tile.import_bundles(.autotune/bundles), the space tuned on GPU 0 and
#       on every visible GPU; prints both times and the speed-up. Log in
#       $OUT/autotune-multi.log when $OUT is set.
# Environment: TILE_BUILD_DIR (prepare; default build), TILE_AUTOTUNE_CHIP
# (prepare; default sm_90a).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
A=$ROOT/.autotune

if [[ ${1:-} == prepare ]]; then
  BUILD=${TILE_BUILD_DIR:-$ROOT/build}
  PY=$ROOT/.venv/bin/python
  [[ -x $PY ]] || PY=python3
  [[ -x $BUILD/bin/tilec ]] || { echo "autotune-multi.sh: $BUILD/bin/tilec not built" >&2; exit 2; }
  rm -rf "$A"; mkdir -p "$A/include"
  cp -r /usr/include/dlpack /usr/include/nlohmann "$A/include/"
  cp -r "$(dirname "$("$PY" -m nanobind --cmake_dir)")" "$A/nanobind"
  rm -rf "$A"/nanobind/__pycache__
  PATH=$BUILD/bin:$PATH PYTHONPATH=$BUILD/python_packages TILE_CACHE_DIR=$A/.cache \
    "$PY" "$ROOT/utils/gpu/autotune_multi.py" prepare "$A/bundles" \
    --target "cuda:${TILE_AUTOTUNE_CHIP:-sm_90a}"
  rm -rf "$A/.cache"
  echo ".autotune is $(du -sh "$A" | cut -f1); carry it: carry [\".autotune\"]"
  exit 0
fi

[[ -d $A/bundles ]] || { echo "autotune-multi.sh: no $A/bundles: run 'utils/gpu/autotune-multi.sh prepare' on the build host and carry .autotune" >&2; exit 2; }
B=${TILE_GPU_BUILD_DIR:-$ROOT/build-autotune-gpu}
LOG=${OUT:-$B}
mkdir -p "$B" "$LOG"
PY=$(command -v python3)
nvidia-smi -L 2>&1 | head -8
cmake -G Ninja -S "$ROOT" -B "$B" -DCMAKE_BUILD_TYPE=Release -DTILE_ENABLE_COMPILER=OFF \
  -DTILE_DLPACK_INCLUDE_DIR="$A/include" -DTILE_JSON_INCLUDE_DIR="$A/include" \
  -DPython_EXECUTABLE="$PY" -Dnanobind_DIR="$A/nanobind/cmake" -DTILE_ENABLE_PYTHON=ON \
  >"$B/configure.log" 2>&1 || { tail -30 "$B/configure.log"; exit 2; }
ninja -C "$B" >"$B/build.log" 2>&1 || { grep -E "error|FAILED" -A3 "$B/build.log" | head -30; exit 2; }
ls "$B"/python_packages/tile/_runtime*.so >/dev/null || { echo "no Python extension built" >&2; exit 2; }
echo "==> runtime + Python package built (compiler OFF) in $B"
# No tilec anywhere: the package must take every kernel from the bundles.
PATH=$(echo "$PATH" | tr ':' '\n' | grep -v "$ROOT/build" | paste -sd:) \
  PYTHONPATH=$B/python_packages TILE_CACHE_DIR=$B/tile-cache PYTHONUNBUFFERED=1 \
  "$PY" "$ROOT/utils/gpu/autotune_multi.py" run "$A/bundles" "$@" 2>&1 | tee "$LOG/autotune-multi.log"
exit "${PIPESTATUS[0]}"

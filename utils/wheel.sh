#!/usr/bin/env bash
# utils/wheel.sh - build the self-contained `tile` wheels (docs/python.md,
# "The wheel"): the tile package, the nanobind extension with the runtime,
# and tilec linked statically against the MLIR/LLVM/lld it uses, so that
# `pip install --no-index tile-*.whl` on a machine without LLVM compiles and
# runs kernels (ptxas for cuda: see python/tile/toolchain.py).
#
#   1. tilec (and tile-run, the runtime's CLI) with -DTILE_STATIC_TOOLS=ON
#      in $TILE_WHEEL_BUILD_DIR (default build-wheel/; compiles hit the ccache
#      of a normal build/, the link is a few seconds);
#   2. per CPython in $TILE_WHEEL_PYTHONS (default "3.10 3.11 3.12 3.13"),
#      one wheel each: `pip wheel python/` (scikit-build-core; runtime +
#      extension, compiler OFF, the static tilec and tile-run copied into
#      tile/bin/). Build tools (scikit-build-core, nanobind, wheel) go
#      into .cache/wheel-venvs/<version> (PyPI the first time);
#   3. utils/lib/wheel-elf.py checks every ELF file of the wheel (no
#      libMLIR/libLLVM or other non-manylinux library, no RPATH) and derives
#      the manylinux_2_N tag from the highest GLIBC_2.N symbol version;
#      `wheel tags` renames the wheel accordingly.
# Wheels land in $TILE_WHEEL_DIR (default dist/); the last lines give each
# wheel's size and tilec's. Exit status non-zero on any failure.
# Environment: TILE_WHEEL_PYTHONS, TILE_WHEEL_DIR, TILE_WHEEL_BUILD_DIR,
# TILE_JOBS (utils/lib/setup.sh).
set -euo pipefail
# shellcheck source=utils/lib/setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"

PYTHONS=${TILE_WHEEL_PYTHONS:-3.10 3.11 3.12 3.13}
OUT=${TILE_WHEEL_DIR:-$TILE_ROOT/dist}
WB=${TILE_WHEEL_BUILD_DIR:-$TILE_ROOT/build-wheel}
LOG=$WB/logs
mkdir -p "$OUT" "$LOG"
T0=$SECONDS
export CMAKE_BUILD_PARALLEL_LEVEL=$TILE_JOBS
mib() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f", b / 1048576 }'; }

# python3.X that runs: pyenv's versions, else PATH (a pyenv shim on PATH may
# refuse to run a version that is not selected).
find_python() {
  local v=$1 p
  for p in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$v".*/bin/python"$v" \
           "$(command -v "python$v" 2>/dev/null)"; do
    [[ -x $p ]] && "$p" -c '' 2>/dev/null && { echo "$p"; return; }
  done
  return 1
}

# ---- 1. the static tilec (and tile-run) -------------------------------------------
tile_step "static tilec and tile-run ($WB)"
cmake_args=(-G Ninja -S "$TILE_ROOT" -B "$WB" -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 -DLLVM_USE_LINKER=lld
  -DTILE_STATIC_TOOLS=ON -DTILE_ENABLE_TESTS=OFF -DTILE_ENABLE_PYTHON=OFF
  # No build-machine CUDA path baked in (toolchain discovery, docs/python.md).
  -DTILE_CUDA_TOOLKIT_DIR=)
command -v ccache >/dev/null &&
  cmake_args+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
tile_run_logged "$LOG/configure.log" cmake "${cmake_args[@]}"
t=$SECONDS
tile_run_logged "$LOG/build.log" ninja -C "$WB" -j "$TILE_JOBS" tilec tile-run
TILEC=$WB/bin/tilec
tile_note "tilec: $(mib "$TILEC") MiB, built in $((SECONDS - t)) s"

# ---- 2. one wheel per Python --------------------------------------------------------
nb_version=$(sed -n 's/^nanobind==//p' "$TILE_ROOT/python/requirements.txt")
built=()
for v in $PYTHONS; do
  py=$(find_python "$v") || { tile_error "python$v not found (PATH, pyenv)"; exit 1; }
  venv=$TILE_ROOT/.cache/wheel-venvs/$v
  if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c 'import scikit_build_core, nanobind, wheel' 2>/dev/null; then
    tile_step "build tools for python$v ($venv)"
    rm -rf "$venv"
    tile_run_logged "$LOG/venv-$v.log" "$py" -m venv "$venv"
    tile_run_logged "$LOG/venv-$v.log" "$venv/bin/python" -m pip install --quiet \
      "scikit-build-core>=0.10" "nanobind==${nb_version:-3.1.0}" wheel
  fi
  tile_step "wheel for python$v"
  raw=$WB/raw-$v
  rm -rf "$raw"
  t=$SECONDS
  launcher=()
  command -v ccache >/dev/null &&
    launcher=(--config-settings=cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache --config-settings=cmake.define.CMAKE_C_COMPILER_LAUNCHER=ccache)
  (cd "$TILE_ROOT" && tile_run_logged "$LOG/wheel-$v.log" \
    "$venv/bin/python" -m pip wheel --no-deps --no-build-isolation -w "$raw" python/ \
    --config-settings=build-dir="$WB/py-$v" --config-settings=cmake.define.TILE_WHEEL_TOOLS="$TILEC;$WB/bin/tile-run" \
    --config-settings=cmake.define.CMAKE_C_COMPILER=clang-22 --config-settings=cmake.define.CMAKE_CXX_COMPILER=clang++-22 \
    "${launcher[@]}")
  whl=$(ls "$raw"/tile-*.whl)
  "$venv/bin/python" -c 'import sys, zipfile; sys.exit("tile/bin/tilec" not in zipfile.ZipFile(sys.argv[1]).namelist())' "$whl" ||
    { tile_error "$whl has no tile/bin/tilec"; exit 1; }
  # ---- 3. honest platform tag ---------------------------------------------------------
  "$venv/bin/python" "$TILE_ROOT/utils/lib/wheel-elf.py" "$whl" | tee "$LOG/elf-$v.txt"
  tag=$(sed -n 's/^tag: //p' "$LOG/elf-$v.txt")
  tile_run_logged "$LOG/tags-$v.log" "$venv/bin/python" -m wheel tags --remove \
    --platform-tag "$tag" "$whl"
  final=$(ls "$raw"/tile-*"$tag".whl)
  rm -f "$OUT/$(basename "$final")"
  mv "$final" "$OUT/"
  built+=("$OUT/$(basename "$final")")
  tile_note "$(basename "$final") in $((SECONDS - t)) s"
done

# The wheel must travel to GPU machines (their carry limit: 64 MiB).
for w in "${built[@]}"; do
  if (($(stat -c %s "$w") >= 64 * 1048576)); then
    tile_error "$(basename "$w") is $(mib "$w") MiB: over the 64 MiB a GPU machine can be sent"
    exit 1
  fi
done
echo
echo "==> wheels ($((SECONDS - T0)) s)"
for w in "${built[@]}"; do
  printf '    %-58s %6s MiB\n' "$(basename "$w")" "$(mib "$w")"
done
printf '    %-58s %6s MiB (static, stripped)\n' "tile/bin/tilec" "$(mib "$TILEC")"

#!/usr/bin/env bash
# utils/gpu/wheel-check.sh [WHEEL] - on a GPU host WITHOUT LLVM/MLIR (the
# H200 device machine), with nothing carried but the wheel (utils/wheel.sh):
#   1. pip install --no-index --no-deps --target <dir> the wheel (numpy and
#      torch come from the host's python3);
#   2. check that its tilec, tile-run and extension need no libLLVM/libMLIR
#      (ldd), and which CUDA toolchain (ptxas, libdevice) the package finds;
#   3. tile.compile the examples for cuda (sm_90a cubin, sm_80 through the
#      PTX JIT; both backends) with a cold cache, run them on torch tensors
#      and check them against torch (wheel_check.py examples: compile times);
#   4. the E2E suite's CUDA cases compiled from source by the wheel's tilec
#      and run by its tile-run (TILE_E2E_TARGET=cuda, no prebuilt bundles);
#   5. tile.autotune over a small f16 GEMM config space on the GPU
#      (wheel_check.py autotune);
# and print a summary with the times. Exit status 0 when everything passed.
# WHEEL: default the newest dist/ (or .whl-tile/) wheel for this python3.
# Environment: PYTHON (default python3), TILE_E2E_JOBS (default: nproc).
# Logs: $OUT/wheel-check/ when $OUT is set (the device tool), else /tmp.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PY=${PYTHON:-python3}
LOG=${OUT:-/tmp}/wheel-check
T=/tmp/tile-wheel-target
rm -rf "$LOG" "$T"
mkdir -p "$LOG"
SUMMARY=()
FAILED=0
note() { SUMMARY+=("$1"); echo "==> $1"; }
fail() { FAILED=1; note "$1"; }

tag=$("$PY" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
WHEEL=${1:-$(ls -t "$ROOT"/dist/tile-*-"$tag"-*.whl "$ROOT"/.whl-tile/tile-*-"$tag"-*.whl 2>/dev/null | head -1)}
[[ -f $WHEEL ]] || { echo "wheel-check.sh: no tile wheel for $tag (pass its path)" >&2; exit 2; }
nvidia-smi -L 2>&1 | head -2
"$PY" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.cuda.is_available())' 2>&1 | tail -1
echo "wheel: $WHEEL ($(du -h "$WHEEL" | cut -f1)); $(nproc) cores"

# ---- 1. install ------------------------------------------------------------------
t=$SECONDS
if ! "$PY" -m pip install --no-index --no-deps --disable-pip-version-check --quiet \
     --target "$T" "$WHEEL" >"$LOG/install.log" 2>&1; then
  cat "$LOG/install.log"; echo "install failed"; exit 2
fi
note "pip install --no-index --target: ok ($((SECONDS - t)) s)"
export PYTHONPATH=$T${PYTHONPATH:+:$PYTHONPATH}
unset TILE_TILEC

# ---- 2. no LLVM, toolchain --------------------------------------------------------
bad=0
for f in "$T"/tile/bin/tilec "$T"/tile/bin/tile-run "$T"/tile/_runtime*.so; do
  ldd "$f" >"$LOG/ldd-$(basename "$f").txt" 2>&1
  if grep -qE "libLLVM|libMLIR|not found" "$LOG/ldd-$(basename "$f").txt"; then
    bad=1; cat "$LOG/ldd-$(basename "$f").txt"
  fi
done
((bad)) && fail "ldd: LLVM/MLIR or missing libraries needed (see above)" ||
  note "ldd: tilec, tile-run, extension need no libLLVM/libMLIR"
"$T"/tile/bin/tilec --version | head -2
if out=$("$PY" -c 'from tile import toolchain; print(toolchain.cuda_toolchain()[1])' 2>&1); then
  note "CUDA toolchain: $out"
  # The E2E suite runs tilec directly: give it what the package found.
  root=$("$PY" -c 'from tile import toolchain; print(toolchain.cuda_toolchain()[0].get("TILE_CUDA_PATH", ""))')
  [[ -n $root ]] && export TILE_CUDA_PATH=$root
else
  fail "CUDA toolchain: $out"
fi
command -v ld.lld >/dev/null && echo "(note: an ld.lld is on PATH here; the wheel's tilec does not use it)"

# ---- 3. examples ------------------------------------------------------------------
t=$SECONDS
"$PY" "$ROOT/utils/gpu/wheel_check.py" examples --target cuda 2>&1 | tee "$LOG/examples.log"
rc=${PIPESTATUS[0]}
n_ok=$(grep -c " ok$" "$LOG/examples.log")
((rc == 0)) && note "examples on cuda: $n_ok ok ($((SECONDS - t)) s, compile times in examples.log)" ||
  fail "examples on cuda: FAILED ($n_ok ok; see examples.log)"

# ---- 4. E2E from source -----------------------------------------------------------
B=/tmp/tile-wheel-build
rm -rf "$B"; mkdir -p "$B/bin"
ln -s "$T/tile/bin/tilec" "$B/bin/tilec"
ln -s "$T/tile/bin/tile-run" "$B/bin/tile-run"
XDIST=()
"$PY" -c 'import xdist' 2>/dev/null && XDIST=(-n "${TILE_E2E_JOBS:-$(nproc)}")
t=$SECONDS
(cd "$ROOT" && TILE_BUILD_DIR=$B TILE_E2E_TARGET=cuda TILE_E2E_CHECK_IMAGE=1 \
  "$PY" -m pytest -q -p no:cacheprovider "${XDIST[@]}" -rfE \
  --junitxml="$LOG/e2e.xml" test/E2E) >"$LOG/e2e.log" 2>&1
rc=$?
tail -5 "$LOG/e2e.log"
line=$(tail -1 "$LOG/e2e.log")
((rc == 0)) && note "E2E cuda from source (wheel's tilec + tile-run, ${XDIST[*]:-serial}, $((SECONDS - t)) s): $line" ||
  fail "E2E cuda from source: $line (see e2e.log)"

# ---- 5. autotune ------------------------------------------------------------------
t=$SECONDS
"$PY" "$ROOT/utils/gpu/wheel_check.py" autotune --target cuda 2>&1 | tee "$LOG/autotune.log"
rc=${PIPESTATUS[0]}
((rc == 0)) && note "$(tail -1 "$LOG/autotune.log")" || fail "autotune: FAILED (see autotune.log)"

echo
echo "==> summary"
for l in "${SUMMARY[@]}"; do echo "    $l"; done
exit $FAILED

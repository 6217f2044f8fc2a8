#!/usr/bin/env bash
# utils/demo.sh - set up and build tile (as utils/check.sh does), then show it
# at work on the examples:
#   1. every examples/*.mlir: parse, verify and canonicalize with tile-opt
# Each demo step is a function below, run in order from main(); add new steps
# (compile and run a GEMM, ...) the same way.
# Environment: see utils/lib/setup.sh (TILE_BUILD_DIR, TILE_JOBS, ...).
set -euo pipefail

# shellcheck source=utils/lib/setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"

TILE_OPT="$TILE_BUILD_DIR/bin/tile-opt"
DEMO_OUT="$TILE_BUILD_DIR/demo"
DEMO_FAILED=0

# Step 1: the examples through tile-opt.
demo_examples() {
  tile_step "examples: parse, verify, canonicalize"
  mkdir -p "$DEMO_OUT"
  local f name ops kernels out
  shopt -s nullglob
  local files=("$TILE_ROOT"/examples/*.mlir)
  shopt -u nullglob
  if ((${#files[@]} == 0)); then
    tile_note "no examples/*.mlir"
    return 0
  fi
  for f in "${files[@]}"; do
    name="$(basename "$f" .mlir)"
    out="$DEMO_OUT/$name.canonical.mlir"
    if ! "$TILE_OPT" "$f" -o /dev/null 2>"$DEMO_OUT/$name.err"; then
      printf '    %-24s FAILED to parse/verify:\n' "$name.mlir"
      sed 's/^/      /' "$DEMO_OUT/$name.err"
      DEMO_FAILED=1
      continue
    fi
    if ! "$TILE_OPT" --canonicalize "$f" -o "$out" 2>"$DEMO_OUT/$name.err"; then
      printf '    %-24s FAILED to canonicalize:\n' "$name.mlir"
      sed 's/^/      /' "$DEMO_OUT/$name.err"
      DEMO_FAILED=1
      continue
    fi
    # Count the tile ops and the kernels (func.func with tile.kernel).
    ops="$(grep -oE '\btile\.[a-z_]+\b' "$out" | grep -vE '^tile\.(kernel|dims|output|name|scope|raster)$' | sort | uniq -c |
      awk '{printf "%s%s x%d", sep, $2, $1; sep=", "}')"
    kernels="$(grep -cE 'func\.func .*tile\.kernel|attributes \{.*tile\.kernel' "$out" || true)"
    printf '    %-24s ok: %s kernel(s); %s\n' "$name.mlir" "$kernels" "${ops:-no tile ops}"
  done
  tile_note "canonicalized IR in $DEMO_OUT/"
}

# Compiles examples/gemm.mlir for the host CPU and runs it through both
# runtime backends (ffi, native) on random f16 inputs; checks C against numpy
# and prints the time per run.
demo_gemm() {
  tile_step "gemm: compile with tilec, run on the CPU with both backends"
  local dir="$DEMO_OUT/gemm" py="$TILE_VENV/bin/python"
  mkdir -p "$dir"
  if ! "$TILE_BUILD_DIR/bin/tilec" "$TILE_ROOT/examples/gemm.mlir" --target=cpu \
    -o "$dir/gemm.tileb" 2>"$dir/tilec.err"; then
    sed 's/^/      /' "$dir/tilec.err"
    DEMO_FAILED=1
    return
  fi
  "$TILE_BUILD_DIR/bin/tile-run" "$dir/gemm.tileb" --info | sed 's/^/    /'
  local m=1000 n=1000 k=1000
  "$py" - "$dir" "$m" "$n" "$k" <<'PY'
import sys, numpy as np
d, m, n, k = sys.argv[1], *map(int, sys.argv[2:])
rng = np.random.default_rng(0)
np.save(f"{d}/A.npy", rng.standard_normal((m, k)).astype(np.float16))
np.save(f"{d}/B.npy", rng.standard_normal((k, n)).astype(np.float16))
PY
  local backend
  for backend in ffi native; do
    if ! "$TILE_BUILD_DIR/bin/tile-run" "$dir/gemm.tileb" --backend="$backend" \
      --input "A=$dir/A.npy" --input "B=$dir/B.npy" -n 5 --warmup 1 \
      --save-outputs "$dir/$backend" >"$dir/$backend.log" 2>&1; then
      sed 's/^/      /' "$dir/$backend.log"
      DEMO_FAILED=1
      return
    fi
    grep -E "runs, median" "$dir/$backend.log" | sed 's/^/    /'
  done
  if ! "$py" - "$dir" "$m" "$n" "$k" <<'PY'
import sys, numpy as np
d, m, n, k = sys.argv[1], *map(int, sys.argv[2:])
a = np.load(f"{d}/A.npy").astype(np.float64)
b = np.load(f"{d}/B.npy").astype(np.float64)
ref = a @ b
for backend in ("ffi", "native"):
    c = np.load(f"{d}/{backend}/C.npy").astype(np.float64)
    err = np.linalg.norm(c - ref) / np.linalg.norm(ref)
    print(f"    {backend:6s} C = A x B ({m}x{k} @ {k}x{n}, f16 -> f32 accumulate -> f16): "
          f"relative error {err:.2e} vs numpy")
    if not err < 2e-3:
        sys.exit(f"    {backend}: wrong result")
ffi, native = (np.load(f"{d}/{b}/C.npy") for b in ("ffi", "native"))
if not np.array_equal(ffi, native):
    sys.exit("    ffi and native disagree")
print("    ffi and native outputs are bit-identical")
PY
  then
    DEMO_FAILED=1
  fi
}

main() {
  tile_setup_all # (no targets: build all)
  demo_examples
  demo_gemm
  if ((DEMO_FAILED)); then
    echo "demo: FAILED"
    exit 1
  fi
  echo "demo: ok"
}

main "$@"

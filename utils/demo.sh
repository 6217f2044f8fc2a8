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

main() {
  tile_setup_all # (no targets: build all)
  demo_examples
  # Later: demo_gemm (tilec + tile-run on examples/gemm.mlir).
  if ((DEMO_FAILED)); then
    echo "demo: FAILED"
    exit 1
  fi
  echo "demo: ok"
}

main "$@"

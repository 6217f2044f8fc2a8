#!/usr/bin/env bash
# utils/gpu/prepare.sh - on the BUILD host (tilec, LLVM/MLIR): fill the ignored
# folder .gpu/ with everything utils/gpu/run.sh needs on a GPU host that has
# no LLVM/MLIR and no network (docs/gpu-testing.md):
#   .gpu/include/{dlpack,nlohmann}  header-only deps of the runtime
#   .gpu/googletest                 GoogleTest sources (runtime gtests)
#   .gpu/bundles/KEY.tileb          the E2E suite's kernels for cuda, one per
#                                   (source, flags, chip); KEY.tilec-error for
#                                   cases tilec cannot compile for cuda yet
#   .gpu/examples/NAME.CHIP.tileb   examples/*.mlir (compute-sanitizer runs)
# Environment: TILE_BUILD_DIR (default build/, must hold bin/tilec),
#              TILE_E2E_CHIPS (default sm_90a,sm_80).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=$ROOT/.gpu
BUILD=${TILE_BUILD_DIR:-$ROOT/build}
[[ $BUILD = /* ]] || BUILD=$ROOT/$BUILD
CHIPS=${TILE_E2E_CHIPS:-sm_90a,sm_80}
PY=$ROOT/.venv/bin/python
[[ -x $PY ]] || PY=python3
TILEC=$BUILD/bin/tilec
[[ -x $TILEC ]] || { echo "prepare.sh: $TILEC not built" >&2; exit 2; }

rm -rf "$OUT"
mkdir -p "$OUT/include" "$OUT/bundles" "$OUT/examples"
cp -r /usr/include/dlpack /usr/include/nlohmann "$OUT/include/"
if [[ -d /usr/src/googletest ]]; then
  cp -r /usr/src/googletest "$OUT/googletest"
else
  echo "prepare.sh: no /usr/src/googletest: the GPU host will skip gtests"
fi

echo "==> compiling the E2E suite for cuda ($CHIPS)"
(cd "$ROOT" && TILE_BUILD_DIR=$BUILD TILE_E2E_TARGET=cuda TILE_E2E_CHIPS=$CHIPS \
  TILE_E2E_COMPILE_ONLY=1 TILE_BUNDLE_EXPORT=$OUT/bundles \
  "$PY" -m pytest -q -p no:cacheprovider test/E2E | tail -1)

echo "==> compiling examples/*.mlir"
for f in "$ROOT"/examples/*.mlir; do
  name=$(basename "$f" .mlir)
  for chip in ${CHIPS//,/ }; do
    "$TILEC" "$f" --target=cuda --chip="$chip" -o "$OUT/examples/$name.$chip.tileb"
  done
done
echo "bundles: $(ls "$OUT"/bundles/*.tileb | wc -l) E2E" \
  "($(ls "$OUT"/bundles/*.tilec-error 2>/dev/null | wc -l) not compilable for cuda)," \
  "$(ls "$OUT"/examples | wc -l) examples; .gpu is $(du -sh "$OUT" | cut -f1)"
# The carry to the device is limited to 64 MiB of files: the bundles and
# examples also travel as one xz archive (run.sh unpacks it when
# .gpu/bundles was not carried): carry [".gpu/pack.tar.xz", ".gpu/include",
# ".gpu/googletest"].
tar -C "$OUT" -cf - bundles examples | xz -T2 -6 > "$OUT/pack.tar.xz"
echo "pack: $OUT/pack.tar.xz ($(du -h "$OUT/pack.tar.xz" | cut -f1))"

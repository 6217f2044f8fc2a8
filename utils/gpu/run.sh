#!/usr/bin/env bash
# utils/gpu/run.sh - on a GPU host WITHOUT LLVM/MLIR (e.g. the H200 device
# machine): build the runtime + tile-run (+ gtests) with
# -DTILE_ENABLE_COMPILER=OFF from the carried .gpu/ folder (utils/gpu/prepare.sh
# fills it on the build host), then run
#   1. the runtime gtests (ctest -L gtest; CUDA ones use a mock driver),
#   2. the E2E suite on the GPU (TILE_E2E_TARGET=cuda, bundles from
#      .gpu/bundles, references from torch on the GPU when available), through
#      the ffi, native and nvrtc backends (nvrtc: the bundles' CUDA C++
#      compiled by NVRTC on this host: the pip nvidia-cuda-nvrtc wheel when
#      installed, else the system's libnvrtc; cubins cached in a fresh
#      TILE_CACHE_DIR under the logs),
#   3. the Python package's CUDA tests (python/tests/test_cuda.py),
#   4. the examples under compute-sanitizer (memcheck, racecheck; memcheck
#      also compares ffi with nvrtc),
#   5. utils/bench/nvrtc.py: gemm and softmax through nvrtc vs ffi, NVRTC's
#      first-load compile time and the cached reload,
# and print a summary. Exit status: 0 when everything passed.
# Environment: TILE_GPU_BUILD_DIR (default build-cuda-gpu), TILE_E2E_JOBS (8).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
G=$ROOT/.gpu
B=${TILE_GPU_BUILD_DIR:-$ROOT/build-cuda-gpu}
JOBS=$(nproc)
PY=${PYTHON:-python3}
LOG=$B/gpu-logs # tarred into $OUT/gpu-logs.tar.gz at the end when $OUT is set
rm -rf "$LOG"; mkdir -p "$LOG"
SUMMARY=()
FAILED=0
note() { SUMMARY+=("$1"); echo "==> $1"; }

# prepare.sh's archive of the bundles and examples (carried instead of the
# folders when they exceed the device tool's 64 MiB).
if [[ ! -d $G/bundles && -f $G/pack.tar.xz ]]; then
  tar -C "$G" -xJf "$G/pack.tar.xz" || { echo "run.sh: cannot unpack $G/pack.tar.xz" >&2; exit 2; }
fi
[[ -d $G/bundles ]] || { echo "run.sh: no $G/bundles: run utils/gpu/prepare.sh on the build host and carry .gpu" >&2; exit 2; }
nvidia-smi -L 2>&1 | head -4
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())' 2>&1 | tail -1

# NVRTC for the nvrtc backend: the pip wheel (docs/runtime.md), unless the
# caller chose one.
if [[ -z ${TILE_NVRTC_PATH:-} ]]; then
  TILE_NVRTC_PATH=$("$PY" - <<'PY' 2>/dev/null
import importlib.util, pathlib
spec = importlib.util.find_spec("nvidia")
for base in (spec.submodule_search_locations if spec else []):
    for c in sorted(pathlib.Path(base).glob("*/lib/libnvrtc.so*"), reverse=True):
        if "builtins" not in c.name and "alt" not in c.name:
            print(c); raise SystemExit
PY
)
fi
[[ -n ${TILE_NVRTC_PATH:-} ]] && export TILE_NVRTC_PATH
echo "nvrtc: ${TILE_NVRTC_PATH:-system libnvrtc (libnvrtc.so.13/.12, /usr/local/cuda/lib64)}"
export TILE_CACHE_DIR=$LOG/tile-cache

# ---- build -------------------------------------------------------------------
GT=()
if [[ -d $G/googletest ]]; then
  if cmake -G Ninja -S "$G/googletest" -B /tmp/tile-gtest-build -DBUILD_GMOCK=OFF \
       -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/tmp/tile-gtest >"$LOG/gtest-build.log" 2>&1 &&
     ninja -C /tmp/tile-gtest-build install >>"$LOG/gtest-build.log" 2>&1; then
    GT=(-DCMAKE_PREFIX_PATH=/tmp/tile-gtest)
  else
    echo "googletest build failed (see gtest-build.log); gtests skipped"
  fi
fi
cmake -G Ninja -S "$ROOT" -B "$B" -DCMAKE_BUILD_TYPE=Release \
  -DTILE_ENABLE_COMPILER=OFF -DTILE_ENABLE_PYTHON=OFF \
  -DTILE_DLPACK_INCLUDE_DIR="$G/include" -DTILE_JSON_INCLUDE_DIR="$G/include" \
  "${GT[@]}" >"$LOG/configure.log" 2>&1 || { tail -30 "$LOG/configure.log"; echo "configure failed"; exit 2; }
targets=(tile-run)
[[ ${#GT[@]} -gt 0 ]] && targets+=(TileRuntimeTests)
if ! ninja -C "$B" -j "$JOBS" "${targets[@]}" >"$LOG/build.log" 2>&1; then
  grep -E "error|FAILED" -A3 "$LOG/build.log" | head -40; echo "build failed"; exit 2
fi
note "build: ok ($B, runtime only)"

# ---- 1. gtests ----------------------------------------------------------------
if [[ ${#GT[@]} -gt 0 ]]; then
  ctest --test-dir "$B" -L gtest -j "$JOBS" --output-on-failure >"$LOG/ctest.log" 2>&1
  rc=$?
  note "gtest: $(grep -E 'tests passed' "$LOG/ctest.log" | tail -1)"
  ((rc == 0)) || { FAILED=1; grep -E "Failed|\*\*\*" "$LOG/ctest.log" | head -20; }
fi

# ---- 2. E2E on the GPU ----------------------------------------------------------
XDIST=()
"$PY" -c 'import xdist' 2>/dev/null && XDIST=(-n "${TILE_E2E_JOBS:-8}")
(cd "$ROOT" && TILE_BUILD_DIR=$B TILE_BUNDLE_DIR=$G/bundles TILE_E2E_TARGET=cuda \
  TILE_E2E_CHECK_IMAGE=1 "$PY" -m pytest -q -p no:cacheprovider "${XDIST[@]}" \
  -rfE --junitxml="$LOG/e2e.xml" test/E2E) >"$LOG/e2e.log" 2>&1
rc=$?
tail -25 "$LOG/e2e.log"
((rc == 0)) || FAILED=1
while IFS= read -r line; do note "$line"; done < <("$PY" - "$LOG/e2e.xml" <<'PY'
import collections, re, sys, xml.etree.ElementTree as ET
counts = collections.Counter()
for tc in ET.parse(sys.argv[1]).iter("testcase"):
    name = tc.get("name")
    m = re.search(r"\[(.*)\]", name)
    parts = m.group(1).split("-") if m else []
    chip = next((p for p in parts if p.startswith("sm_")), "?")
    backend = next((b for b in ("ffi", "native", "nvrtc") if b in parts), "-")
    kids = {c.tag for c in tc}
    if "failure" in kids or "error" in kids:
        res = "failed"
    elif "skipped" in kids:
        sk = tc.find("skipped")
        res = "xfailed" if (sk.get("type") or "").endswith("xfail") else "skipped"
    else:
        res = "passed"
    counts[(chip, backend, res)] += 1
for chip in sorted({k[0] for k in counts}):
    for be in ("ffi", "native", "nvrtc", "-"):
        row = {r: counts[(chip, be, r)] for r in ("passed", "failed", "xfailed", "skipped")}
        if sum(row.values()):
            print(f"e2e cuda {chip} {be:6s}: " + ", ".join(f"{v} {k}" for k, v in row.items()))
PY
)

# ---- 3. the Python package on the GPU (torch in -> torch out, streams) ------------
NB=$("$PY" -m nanobind --cmake_dir 2>/dev/null)
if [[ -n $NB ]] && cmake -S "$ROOT" -B "$B" -DTILE_ENABLE_PYTHON=ON \
     -DPython3_EXECUTABLE="$(command -v "$PY")" -Dnanobind_DIR="$NB" \
     >"$LOG/configure-python.log" 2>&1 &&
   ninja -C "$B" -j "$JOBS" tile-python >"$LOG/build-python.log" 2>&1; then
  (cd "$ROOT" && PYTHONPATH="$B/python_packages" TILE_GPU_EXAMPLES="$G/examples" \
    "$PY" -m pytest -q -p no:cacheprovider -rfEs --junitxml="$LOG/python-cuda.xml" \
    python/tests/test_cuda.py) >"$LOG/python-cuda.log" 2>&1
  rc=$?
  tail -15 "$LOG/python-cuda.log"
  ((rc == 0)) || FAILED=1
  note "python package on cuda: $(tail -1 "$LOG/python-cuda.log")"
else
  note "python package on cuda: not built (nanobind missing or build failed; see $LOG)"
fi

# ---- 4. compute-sanitizer ---------------------------------------------------------
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [[ -x $CS ]]; then
  declare -A DIMS=([elementwise_add]="N=5000" [reduce_rows]="M=130,N=300"
                   [softmax]="M=37" [gemm]="M=200,N=136,K=100"
                   [linear]="M=200,N=136,K=104")
  for tool in memcheck racecheck; do
    ok=0 bad=0
    chips="sm_90a sm_80"
    [[ $tool == racecheck ]] && chips=sm_90a # slow; the PTX path is memchecked
    pairs="ffi,native ffi,nvrtc"
    [[ $tool == racecheck ]] && pairs=ffi,native
    for name in elementwise_add reduce_rows softmax gemm linear; do
      for chip in $chips; do
       for pair in $pairs; do
        f=$G/examples/$name.$chip.tileb
        [[ -f $f ]] || continue
        out=$LOG/sanitizer-$tool-$name-$chip-${pair/,/-}.log
        timeout 120 "$CS" --tool "$tool" --error-exitcode 3 "$B/bin/tile-run" "$f" \
          --dims "${DIMS[$name]}" -n 1 --warmup 0 --compare-backends "$pair" \
          --atol 0 >"$out" 2>&1
        rc=$?
        if ((rc == 0)) && grep -q "ERROR SUMMARY: 0 errors\|RACECHECK SUMMARY: 0 hazards" "$out"; then
          ok=$((ok + 1))
        else
          bad=$((bad + 1)); FAILED=1
          echo "--- $tool $name $chip $pair (rc $rc)"; tail -15 "$out"
        fi
       done
      done
    done
    note "compute-sanitizer $tool: $ok clean, $bad with errors (5 examples x {${chips// /, }} x {${pairs// /; }})"
  done
else
  note "compute-sanitizer: not found, skipped"
fi

# ---- 5. nvrtc vs ffi (examples/gemm.mlir, softmax; utils/bench/nvrtc.py) --------
if [[ -d $B/python_packages/tile ]]; then
  (cd "$ROOT" && PYTHONPATH="$B/python_packages" "$PY" utils/bench/nvrtc.py \
    --examples "$G/examples" --out "$LOG") >"$LOG/nvrtc-bench.log" 2>&1
  rc=$?
  tail -6 "$LOG/nvrtc-bench.log"
  ((rc == 0)) || FAILED=1
  note "nvrtc benchmark: $( ((rc == 0)) && echo ok || echo "failed (rc $rc)"); table in nvrtc-bench.log, nvrtc-bench.json"
else
  note "nvrtc benchmark: skipped (the python package was not built)"
fi

if [[ -n ${OUT:-} && -d ${OUT:-} ]]; then
  tar -C "$B" -czf "$OUT/gpu-logs.tar.gz" gpu-logs
fi
echo
echo "==> summary"
for l in "${SUMMARY[@]}"; do echo "    $l"; done
exit $FAILED

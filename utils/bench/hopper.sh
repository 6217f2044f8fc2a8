#!/usr/bin/env bash
# utils/bench/hopper.sh - the Hopper GEMM benchmark on a GPU host without
# LLVM/MLIR (the H200 device machine). Needs, carried from the build host:
#   .gpu/      utils/gpu/prepare.sh (dlpack/nlohmann headers, googletest)
#   .hopper/   bench/*.tileb + hopper.json (make_kernels.py --hopper) and
#              nanobind/ (a copy of the nanobind package, for the extension)
# Builds the runtime + the Python package (compiler OFF) for the host's
# python3, runs the runtime gtests (mock driver) and then
# `gemm.py --hopper` (our kernels through our runtime, sm_90a variant
# active, next to cuBLAS and Triton). Logs under $OUT/hopper-logs (or the
# build dir). Environment: TILE_GPU_BUILD_DIR (default build-hopper-gpu);
# TILE_HOPPER_BENCH=attention or gemm_epilogue runs that benchmark
# (utils/bench/attention.py, gemm_epilogue.py) on .hopper/fused
# (make_kernels.py --fused) instead of gemm.py.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
G=$ROOT/.gpu
H=$ROOT/.hopper
B=${TILE_GPU_BUILD_DIR:-$ROOT/build-hopper-gpu}
LOG=${OUT:-$B}/hopper-logs
mkdir -p "$LOG"
PY=$(command -v python3)
nvidia-smi -L 2>&1 | head -2
"$PY" -c 'import sys, torch, triton; print(sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__)'

GT=()
if [[ -d $G/googletest ]] &&
   cmake -G Ninja -S "$G/googletest" -B /tmp/tile-gtest-build -DBUILD_GMOCK=OFF \
     -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/tmp/tile-gtest >"$LOG/gtest-build.log" 2>&1 &&
   ninja -C /tmp/tile-gtest-build install >>"$LOG/gtest-build.log" 2>&1; then
  GT=(-DCMAKE_PREFIX_PATH=/tmp/tile-gtest)
fi
NB=()
[[ -d $H/nanobind/cmake ]] && NB=(-Dnanobind_DIR="$H/nanobind/cmake" -DTILE_ENABLE_PYTHON=ON)
cmake -G Ninja -S "$ROOT" -B "$B" -DCMAKE_BUILD_TYPE=Release -DTILE_ENABLE_COMPILER=OFF \
  -DTILE_DLPACK_INCLUDE_DIR="$G/include" -DTILE_JSON_INCLUDE_DIR="$G/include" \
  -DPython_EXECUTABLE="$PY" "${NB[@]}" "${GT[@]}" >"$LOG/configure.log" 2>&1 ||
  { tail -30 "$LOG/configure.log"; exit 2; }
grep -i "python package\|python" "$LOG/configure.log" | head -3
ninja -C "$B" >"$LOG/build.log" 2>&1 || { grep -E "error|FAILED" -A3 "$LOG/build.log" | head -30; exit 2; }
echo "==> build ok; python package: $(ls "$B"/python_packages/tile/_runtime*.so 2>/dev/null || echo none)"
if [[ ${#GT[@]} -gt 0 ]]; then
  ctest --test-dir "$B" -L gtest -j "$(nproc)" --output-on-failure >"$LOG/ctest.log" 2>&1
  echo "==> gtest: $(grep -E 'tests passed' "$LOG/ctest.log" | tail -1)"
  grep -E "^\s*[0-9]+ - |\(Failed\)" "$LOG/ctest.log" | head -10
  echo "==> CUDA gtests: $(grep -cE 'Test +#[0-9]+: Cuda.* Passed' "$LOG/ctest.log") passed"
fi
BENCH=${TILE_HOPPER_BENCH:-gemm}
echo "==> $BENCH"
if [[ $BENCH == gemm ]]; then
  BENCH_ARGS=("$ROOT/utils/bench/gemm.py" --hopper "$H/bench")
else
  BENCH_ARGS=("$ROOT/utils/bench/$BENCH.py" --bundles "$H/fused")
fi
PYTHONPATH=$B/python_packages TILE_RUNTIME_LIB=$B/lib/Runtime/libtile_runtime.so \
  TILE_CUDA_VERBOSE=1 PYTHONUNBUFFERED=1 \
  "$PY" "${BENCH_ARGS[@]}" --out "$LOG" "$@" 2>"$LOG/gemm.stderr"
rc=$?
echo "==> variant dispatch (TILE_CUDA_VERBOSE, counts):"
sed -E 's/0x[0-9a-f]+//g' "$LOG/gemm.stderr" | grep "^tile:" | sort | uniq -c | sort -rn | head -12
grep -v "^tile:" "$LOG/gemm.stderr" | tail -15
exit $rc

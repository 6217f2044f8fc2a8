#!/usr/bin/env bash
# utils/check.sh - set up, build and run every test suite of tile.
#
# Installs what is missing (Debian packages, .venv), configures and builds
# $TILE_BUILD_DIR (default build/), then runs
#   lit     the compiler tests (test/: dialect, examples, plugin, C API, install)
#   ctest   the gtest programs (runtime)
#   pytest  the end-to-end numerics suite on the CPU (test/E2E) and the
#           Python package's tests (python/tests)
#   cuda    every CUDA bundle of test/E2E compiled for sm_90a and sm_80
#   hip     every HIP bundle of test/E2E compiled for gfx942 and gfx90a
#   wheel   utils/wheel.sh builds the self-contained wheel for one Python
#           (the static tilec inside) and test/Wheel installs it into a
#           fresh venv with --no-index and compiles + runs kernels with no
#           LLVM visible (docs/python.md, "The wheel")
#   nvrtc   every E2E kernel's CUDA C++ (the nvrtc backend's source)
#           through NVRTC to PTX, assembled by ptxas for sm_80 and sm_90a
#   metal   every E2E kernel's MSL (the metal-torch backend's source) run on
#           the test-only CPU shim through the metal-torch launcher and a
#           fake torch.mps, against numpy; then test/Metal (the launcher)
#   asan    ASan+UBSan build of the runtime (compiler OFF) in <build>-asan:
#           its gtests, the E2E suite through its tile-run and the Python
#           tests through its extension
#   fuzz    every tile-fuzz-* libFuzzer target for TILE_FUZZ_SECONDS each
#           (a crash, leak, timeout or OOM is a failure)
# prints a summary per suite and, as its very last line, "N passed, N failed"
# over all suites. Exits non-zero on any failure, including a setup or build
# error (counted as one failure). Works from any directory.
#
# Options: -k/--keep-going  run the suites even when the build failed
#          --no-build       skip setup and build; run the suites as built
#          --no-asan        skip the asan stage (and the fuzz stage)
#          --no-fuzz        skip the fuzz stage
#          --no-wheel       skip the wheel stage
# Environment: see utils/lib/setup.sh (TILE_BUILD_DIR, TILE_JOBS, ...);
#   TILE_FUZZ_SECONDS  seconds per fuzzer (default 60; 0: run the seeds and
#                      the saved corpus once)

# san_configure / san_build run setup.sh's functions in subshells with
# another build directory:
# shellcheck disable=SC2030,SC2031
set -uo pipefail

# shellcheck source=utils/lib/setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"

KEEP_GOING=0
NO_BUILD=0
NO_ASAN=0
NO_FUZZ=0
NO_WHEEL=0
for arg in "$@"; do
  case "$arg" in
    -k | --keep-going) KEEP_GOING=1 ;;
    --no-build) NO_BUILD=1 ;;
    --no-asan) NO_ASAN=1 NO_FUZZ=1 ;;
    --no-fuzz) NO_FUZZ=1 ;;
    --no-wheel) NO_WHEEL=1 ;;
    -h | --help)
      sed -n '2,/^$/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      tile_error "unknown argument '$arg'"
      exit 2
      ;;
  esac
done

TOTAL_PASSED=0
TOTAL_FAILED=0
SUMMARY=()
FINISHED=0
RESULTS="$TILE_BUILD_DIR/test-results"

# The venv's python once it exists (--no-build may run without one).
py() {
  if [[ -x "$TILE_VENV/bin/python" ]]; then
    "$TILE_VENV/bin/python" "$@"
  else
    python3 "$@"
  fi
}

finish() {
  FINISHED=1
  echo
  echo "==> summary"
  local line
  for line in "${SUMMARY[@]}"; do
    echo "    $line"
  done
  echo "$TOTAL_PASSED passed, $TOTAL_FAILED failed"
  if ((TOTAL_FAILED > 0)); then
    exit 1
  fi
  exit 0
}

# Interrupted or died unexpectedly: still end on the count line.
# shellcheck disable=SC2317 # invoked by the EXIT trap
on_exit() {
  local rc=$?
  if ((FINISHED == 0)); then
    ((TOTAL_FAILED == 0)) && TOTAL_FAILED=1
    SUMMARY+=("check.sh stopped unexpectedly (exit $rc)")
    finish
  fi
}
trap on_exit EXIT
trap 'exit 130' INT TERM

# A stage that is not a test suite failed (setup, configure, build).
stage_failed() {
  TOTAL_FAILED=$((TOTAL_FAILED + 1))
  SUMMARY+=("$1: FAILED (counted as 1 failure; log: $2)")
}

# record_suite NAME RC REPORT LOG: add a runner's counts from its report
# (lit JSON or JUnit XML, see utils/lib/count-tests.py).
record_suite() {
  local name="$1" rc="$2" xml="$3" log="$4"
  local passed=0 failed=0 skipped=0 counts names=""
  if [[ -s "$xml" ]] && counts="$(py "$TILE_ROOT/utils/lib/count-tests.py" "$xml")"; then
    read -r passed failed skipped <<<"$(head -n 1 <<<"$counts")"
    names="$(tail -n +2 <<<"$counts")"
  fi
  local note=""
  if ((rc != 0 && failed == 0)); then
    # The runner failed without a failing test in its report (crash, config
    # error): that is one failure.
    failed=1
    note=" (runner exited $rc without a report of the failure; log: $log)"
  fi
  TOTAL_PASSED=$((TOTAL_PASSED + passed))
  TOTAL_FAILED=$((TOTAL_FAILED + failed))
  SUMMARY+=("$(printf '%-7s %d passed, %d failed, %d skipped%s' "$name:" "$passed" "$failed" "$skipped" "$note")")
  if [[ -n "$names" ]]; then
    local n
    while IFS= read -r n; do
      SUMMARY+=("          FAILED: $n")
    done <<<"$names"
  fi
}

run_lit() {
  local site="$TILE_BUILD_DIR/test/lit.site.cfg.py"
  if [[ ! -f "$site" ]]; then
    SUMMARY+=("lit:    not configured (TILE_ENABLE_COMPILER=OFF?), 0 tests")
    return
  fi
  local lit
  lit="$(sed -n 's/^LLVM_EXTERNAL_LIT:[A-Z]*=//p' "$TILE_BUILD_DIR/CMakeCache.txt" 2>/dev/null)"
  [[ -n "$lit" && -f "$lit" ]] || lit=/usr/lib/llvm-22/bin/lit
  # lit's JSON report is what is counted (it tells XPASS from PASS); the
  # xUnit one is for CI front ends.
  local json="$RESULTS/lit.json" log="$TILE_LOG_DIR/lit.log"
  rm -f "$json" "$RESULTS/lit.xml"
  tile_step "lit $TILE_BUILD_DIR/test"
  py "$lit" -v -j "$TILE_JOBS" -o "$json" --xunit-xml-output "$RESULTS/lit.xml" \
    "$TILE_BUILD_DIR/test" 2>&1 | tee "$log"
  record_suite lit "${PIPESTATUS[0]}" "$json" "$log"
}

run_ctest() {
  local xml="$RESULTS/ctest.xml" log="$TILE_LOG_DIR/ctest.log"
  rm -f "$xml"
  if [[ ! -f "$TILE_BUILD_DIR/CTestTestfile.cmake" ]]; then
    SUMMARY+=("ctest:  no tests configured, 0 tests")
    return
  fi
  tile_step "ctest $TILE_BUILD_DIR"
  ctest --test-dir "$TILE_BUILD_DIR" -j "$TILE_JOBS" --output-on-failure \
    --no-tests=ignore --output-junit "$xml" 2>&1 | tee "$log"
  record_suite ctest "${PIPESTATUS[0]}" "$xml" "$log"
}

run_pytest() {
  # test/E2E: compile + run kernels on the CPU (tilec, tile-run, numpy);
  # python/tests: the Python package.
  local dirs=() d
  for d in "$TILE_ROOT/test/E2E" "$TILE_ROOT/python/tests"; do
    [[ -d "$d" ]] && dirs+=("$d")
  done
  if ((${#dirs[@]} == 0)); then
    SUMMARY+=("pytest: no test/E2E or python/tests, 0 tests")
    return
  fi
  local xml="$RESULTS/pytest.xml" log="$TILE_LOG_DIR/pytest.log"
  rm -f "$xml"
  tile_step "pytest ${dirs[*]#"$TILE_ROOT/"}"
  local pypath="$TILE_BUILD_DIR/python_packages:$TILE_BUILD_DIR/python:$TILE_ROOT/python"
  (
    cd "$TILE_ROOT" &&
      PATH="$TILE_BUILD_DIR/bin:$PATH" PYTHONPATH="$pypath${PYTHONPATH:+:$PYTHONPATH}" \
        TILE_BUILD_DIR="$TILE_BUILD_DIR" \
        py -m pytest -q -p no:cacheprovider \
        --rootdir="$TILE_ROOT" --junitxml="$xml" "${dirs[@]}"
  ) 2>&1 | tee "$log"
  local rc="${PIPESTATUS[0]}"
  ((rc == 5)) && rc=0 # no tests collected
  record_suite pytest "$rc" "$xml" "$log"
}

# No GPU here, but CI still builds every CUDA bundle of the E2E suite: tilec
# lowers each kernel for sm_90a and sm_80 and ptxas assembles the PTX (a test
# passes once its kernels compiled; utils/gpu/run.sh runs them on a GPU host).
run_cuda_bundles() {
  local xml="$RESULTS/cuda-bundles.xml" log="$TILE_LOG_DIR/cuda-bundles.log"
  rm -f "$xml"
  tile_step "cuda bundles: test/E2E compiled for sm_90a and sm_80 (tilec + ptxas)"
  (
    cd "$TILE_ROOT" &&
      PATH="$TILE_BUILD_DIR/bin:$PATH" TILE_BUILD_DIR="$TILE_BUILD_DIR" \
        TILE_E2E_TARGET=cuda TILE_E2E_CHIPS=sm_90a,sm_80 TILE_E2E_COMPILE_ONLY=1 \
        py -m pytest -q -p no:cacheprovider --rootdir="$TILE_ROOT" \
        --junitxml="$xml" test/E2E
  ) 2>&1 | tee "$log"
  record_suite cuda "${PIPESTATUS[0]}" "$xml" "$log"
}

# No AMD GPU here either: every E2E kernel is compiled for gfx942 and
# gfx90a (tilec: ROCDL, AMDGPU codegen, ld.lld into an hsaco), compile-only.
run_hip_bundles() {
  local xml="$RESULTS/hip-bundles.xml" log="$TILE_LOG_DIR/hip-bundles.log"
  rm -f "$xml"
  tile_step "hip bundles: test/E2E compiled for gfx942 and gfx90a (tilec, hsaco)"
  (
    cd "$TILE_ROOT" &&
      PATH="$TILE_BUILD_DIR/bin:$PATH" TILE_BUILD_DIR="$TILE_BUILD_DIR" \
        TILE_E2E_TARGET=hip TILE_E2E_CHIPS=gfx942,gfx90a TILE_E2E_COMPILE_ONLY=1 \
        py -m pytest -q -p no:cacheprovider --rootdir="$TILE_ROOT" \
        --junitxml="$xml" test/E2E
  ) 2>&1 | tee "$log"
  record_suite hip "${PIPESTATUS[0]}" "$xml" "$log"
}

# The self-contained wheel: built for TILE_WHEEL_PYTHON (default 3.12 when
# pyenv or PATH has it, else the venv's version), its dependencies (numpy)
# fetched once into .cache/wheel-deps/ for --find-links, then test/Wheel.
run_wheel() {
  local xml="$RESULTS/wheel.xml" log="$TILE_LOG_DIR/wheel.log"
  local dist="$TILE_BUILD_DIR/wheel-dist" ver whl deps
  rm -f "$xml"
  ver="${TILE_WHEEL_PYTHON:-3.12}"
  if ! compgen -G "${PYENV_ROOT:-$HOME/.pyenv}/versions/$ver.*/bin/python$ver" >/dev/null &&
    ! command -v "python$ver" >/dev/null; then
    ver="$(py -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
  fi
  tile_step "wheel: utils/wheel.sh (python$ver) + test/Wheel"
  rm -rf "$dist"
  if ! TILE_WHEEL_PYTHONS="$ver" TILE_WHEEL_DIR="$dist" "$TILE_ROOT/utils/wheel.sh" \
    >"$TILE_LOG_DIR/wheel-build.log" 2>&1; then
    tail -n 30 "$TILE_LOG_DIR/wheel-build.log"
    stage_failed "wheel build" "$TILE_LOG_DIR/wheel-build.log"
    return
  fi
  tail -n 3 "$TILE_LOG_DIR/wheel-build.log"
  whl="$(ls "$dist"/tile-*.whl)"
  deps="$TILE_ROOT/.cache/wheel-deps/$ver"
  if ! compgen -G "$deps/numpy-*.whl" >/dev/null; then
    "$TILE_ROOT/.cache/wheel-venvs/$ver/bin/python" -m pip download --quiet \
      --only-binary=:all: -d "$deps" \
      "numpy>=1.22" \
      >"$TILE_LOG_DIR/wheel-deps.log" 2>&1 ||
      { stage_failed "wheel deps (numpy)" "$TILE_LOG_DIR/wheel-deps.log"; return; }
  fi
  (
    cd "$TILE_ROOT" &&
      TILE_WHEEL="$whl" TILE_WHEEL_DEPS="$deps" py -m pytest -q -s -p no:cacheprovider \
        --rootdir="$TILE_ROOT" --junitxml="$xml" test/Wheel
  ) 2>&1 | tee "$log"
  record_suite wheel "${PIPESTATUS[0]}" "$xml" "$log"
}

# The nvrtc backend's CUDA C++ of every E2E kernel: NVRTC (the runtime's own
# NVRTC layer, through tile-nvrtc; NVRTC needs no GPU) to PTX for compute_80,
# then ptxas for sm_80 and sm_90a. The source is the same sm_80 code for
# both chips, so the sm_80 bundles are enough. Skips when NVRTC is missing.
run_nvrtc_sources() {
  local xml="$RESULTS/nvrtc-sources.xml" log="$TILE_LOG_DIR/nvrtc-sources.log"
  rm -f "$xml"
  if [[ ! -x "$TILE_BUILD_DIR/bin/tile-nvrtc" ]]; then
    SUMMARY+=("nvrtc:  tile-nvrtc not built, 0 tests")
    return
  fi
  tile_step "nvrtc sources: test/E2E CUDA C++ through NVRTC + ptxas (sm_80, sm_90a)"
  (
    cd "$TILE_ROOT" &&
      PATH="$TILE_BUILD_DIR/bin:$PATH" TILE_BUILD_DIR="$TILE_BUILD_DIR" \
        TILE_E2E_TARGET=cuda TILE_E2E_CHIPS=sm_80 TILE_E2E_COMPILE_ONLY=1 \
        TILE_E2E_NVRTC_CHECK=1 \
        py -m pytest -q -p no:cacheprovider --rootdir="$TILE_ROOT" \
        --junitxml="$xml" -k nvrtc test/E2E
  ) 2>&1 | tee "$log"
  record_suite nvrtc "${PIPESTATUS[0]}" "$xml" "$log"
}

# Metal, without Apple hardware (docs/pipelines.md, "Metal: what was run"):
# every E2E kernel compiled for --target=metal, its MSL compiled by clang++
# against the test-only CPU shim (test/Metal/shim) and run through the
# Python package's metal-torch launcher on a fake torch.mps (one std::thread
# per Metal thread), against numpy; then the launcher's own tests
# (test/Metal). The shim's shared objects are cached in the build directory.
run_metal() {
  local xml="$RESULTS/metal.xml" log="$TILE_LOG_DIR/metal.log"
  local pyxml="$RESULTS/metal-torch.xml" pylog="$TILE_LOG_DIR/metal-torch.log"
  rm -f "$xml" "$pyxml"
  if ! command -v "${TILE_METAL_SHIM_CXX:-clang++-22}" >/dev/null; then
    SUMMARY+=("metal:  no ${TILE_METAL_SHIM_CXX:-clang++-22} for the shim, 0 tests")
    return
  fi
  local pypath="$TILE_BUILD_DIR/python_packages:$TILE_BUILD_DIR/python:$TILE_ROOT/python"
  tile_step "metal: test/E2E as MSL on the CPU shim through metal-torch"
  (
    cd "$TILE_ROOT" &&
      PATH="$TILE_BUILD_DIR/bin:$PATH" TILE_BUILD_DIR="$TILE_BUILD_DIR" \
        PYTHONPATH="$pypath${PYTHONPATH:+:$PYTHONPATH}" \
        TILE_METAL_SHIM_CACHE="$TILE_BUILD_DIR/metal-shim-cache" \
        TILE_E2E_TARGET=metal \
        py -m pytest -q -p no:cacheprovider --rootdir="$TILE_ROOT" \
        --junitxml="$xml" test/E2E
  ) 2>&1 | tee "$log"
  record_suite metal "${PIPESTATUS[0]}" "$xml" "$log"
  tile_step "metal-torch: the launcher on a fake torch.mps (test/Metal)"
  (
    cd "$TILE_ROOT" &&
      PATH="$TILE_BUILD_DIR/bin:$PATH" TILE_BUILD_DIR="$TILE_BUILD_DIR" \
        PYTHONPATH="$pypath${PYTHONPATH:+:$PYTHONPATH}" \
        TILE_METAL_SHIM_CACHE="$TILE_BUILD_DIR/metal-shim-cache" \
        py -m pytest -q -p no:cacheprovider --rootdir="$TILE_ROOT" \
        --junitxml="$pyxml" test/Metal
  ) 2>&1 | tee "$pylog"
  record_suite metal-torch "${PIPESTATUS[0]}" "$pyxml" "$pylog"
}

# ---- sanitizers and fuzzers (docs/building.md, "Fuzzing and sanitizers") ----

ASAN_DIR="${TILE_BUILD_DIR}-asan"
FUZZ_DIR="${TILE_BUILD_DIR}-fuzz"
SANITIZERS=address,undefined
# Every run: leaks are errors in the C++ programs; the Python interpreter
# itself leaks by design, so not there.
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

# san_configure DIR CMAKE_ARGS...: tile_configure into DIR, sanitized.
san_configure() {
  local dir="$1"
  shift
  (
    TILE_BUILD_DIR="$dir"
    TILE_LOG_DIR="$dir/logs"
    TILE_CMAKE_ARGS="-DCMAKE_BUILD_TYPE=RelWithDebInfo -DTILE_SANITIZE=$SANITIZERS -DTILE_ENABLE_FUZZERS=ON $* ${TILE_CMAKE_ARGS:-}"
    tile_configure
  )
}

# san_build DIR [targets]
san_build() {
  local dir="$1"
  shift
  (
    TILE_BUILD_DIR="$dir"
    TILE_LOG_DIR="$dir/logs"
    tile_build "$@"
  )
}

run_asan() {
  mkdir -p "$ASAN_DIR/logs" "$ASAN_DIR/test-results"
  if ((NO_BUILD == 0)); then
    if ! san_configure "$ASAN_DIR" -DTILE_ENABLE_COMPILER=OFF; then
      stage_failed "asan configure" "$ASAN_DIR/logs/configure.log"
      return 1
    fi
    if ! san_build "$ASAN_DIR"; then
      stage_failed "asan build" "$ASAN_DIR/logs/build.log"
      return 1
    fi
  fi
  local xml="$ASAN_DIR/test-results/ctest.xml" log="$ASAN_DIR/logs/ctest.log"
  rm -f "$xml"
  tile_step "asan: ctest $ASAN_DIR"
  ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
    ctest --test-dir "$ASAN_DIR" -j "$TILE_JOBS" --output-on-failure \
    --no-tests=ignore --output-junit "$xml" 2>&1 | tee "$log"
  record_suite asan "${PIPESTATUS[0]}" "$xml" "$log"

  # The E2E suite: kernels compiled by the main build's tilec, run by the
  # sanitized tile-run (both backends).
  local tilec="$TILE_BUILD_DIR/bin/tilec"
  xml="$ASAN_DIR/test-results/e2e.xml" log="$ASAN_DIR/logs/e2e.log"
  rm -f "$xml"
  if [[ -x "$tilec" && -d "$TILE_ROOT/test/E2E" ]]; then
    tile_step "asan: pytest test/E2E through $ASAN_DIR/bin/tile-run"
    (
      cd "$TILE_ROOT" &&
        TILE_BUILD_DIR="$ASAN_DIR" TILE_TILEC="$tilec" \
          ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
          py -m pytest -q -p no:cacheprovider --rootdir="$TILE_ROOT" \
          --junitxml="$xml" test/E2E
    ) 2>&1 | tee "$log"
    local rc="${PIPESTATUS[0]}"
    ((rc == 5)) && rc=0
    record_suite asan-e2e "$rc" "$xml" "$log"
  else
    SUMMARY+=("asan-e2e: skipped (no tilec in $TILE_BUILD_DIR)")
  fi

  # The Python tests through the sanitized extension: the interpreter is
  # not instrumented, so the ASan runtime is preloaded into it.
  local asanrt
  asanrt="$(clang-22 -print-file-name=libclang_rt.asan-x86_64.so 2>/dev/null)"
  xml="$ASAN_DIR/test-results/python.xml" log="$ASAN_DIR/logs/python.log"
  rm -f "$xml"
  if [[ -x "$tilec" && -f "$asanrt" && -d "$ASAN_DIR/python_packages/tile" ]]; then
    tile_step "asan: pytest python/tests through the sanitized extension"
    (
      cd "$TILE_ROOT" &&
        PATH="$ASAN_DIR/bin:$PATH" TILE_BUILD_DIR="$ASAN_DIR" TILE_TILEC="$tilec" \
          PYTHONPATH="$ASAN_DIR/python_packages:$TILE_ROOT/python" \
          LD_PRELOAD="$asanrt" ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
          py -m pytest -q -p no:cacheprovider --rootdir="$TILE_ROOT" \
          --junitxml="$xml" python/tests
    ) 2>&1 | tee "$log"
    local rc="${PIPESTATUS[0]}"
    ((rc == 5)) && rc=0
    record_suite asan-py "$rc" "$xml" "$log"
  else
    SUMMARY+=("asan-py: skipped (needs tilec, the ASan runtime and the extension)")
  fi
}

# The fuzzers of DIR's bin/ (tile-fuzz-<name>), one name per line.
fuzzers_in() {
  local f
  for f in "$1"/bin/tile-fuzz-*; do
    [[ -x "$f" ]] && echo "${f##*/tile-fuzz-}"
  done
}

run_fuzz() {
  local secs="${TILE_FUZZ_SECONDS:-60}"
  # The runtime fuzzers come with the asan build. A fuzzer folder that
  # build does not produce needs the compiler: a second sanitized build
  # (compiler ON, no tests, no Python) builds just those fuzzers.
  local name missing=()
  for name in "$TILE_ROOT"/tools/fuzz/*/CMakeLists.txt; do
    [[ -f "$name" ]] || continue
    name="$(basename "$(dirname "$name")")"
    [[ -x "$ASAN_DIR/bin/tile-fuzz-$name" ]] || missing+=("$name")
  done
  if ((${#missing[@]} > 0)); then
    if ((NO_BUILD == 0)); then
      if san_configure "$FUZZ_DIR" -DTILE_ENABLE_COMPILER=ON \
        -DTILE_ENABLE_RUNTIME=ON -DTILE_ENABLE_TESTS=OFF -DTILE_ENABLE_PYTHON=OFF; then
        local targets=("${missing[@]/#/tile-fuzz-}")
        if ! san_build "$FUZZ_DIR" "${targets[@]}"; then
          stage_failed "fuzz build (${missing[*]})" "$FUZZ_DIR/logs/build.log"
        fi
      else
        stage_failed "fuzz configure" "$FUZZ_DIR/logs/configure.log"
      fi
    fi
  fi
  local dir total_inputs=0 stats=() runs=()
  while IFS= read -r name; do
    [[ -n "$name" ]] && runs+=("$ASAN_DIR:$name")
  done < <(fuzzers_in "$ASAN_DIR")
  for name in "${missing[@]}"; do
    if [[ -x "$FUZZ_DIR/bin/tile-fuzz-$name" ]]; then
      runs+=("$FUZZ_DIR:$name")
    else
      TOTAL_FAILED=$((TOTAL_FAILED + 1))
      stats+=("tile-fuzz-$name: not built (see $FUZZ_DIR/logs/build.log)")
    fi
  done
  local run
  for run in "${runs[@]}"; do
    dir="${run%%:*}" name="${run#*:}"
    mkdir -p "$dir/logs"
    local work="$dir/fuzz/$name" bin="$dir/bin/tile-fuzz-$name"
    local log="$dir/logs/fuzz-$name.log" args=()
    rm -rf "$work/seeds"
    mkdir -p "$work/seeds" "$work/corpus" "$work/crashes"
    py "$TILE_ROOT/utils/lib/fuzz-seeds.py" "$name" "$work/seeds" \
      --tilec "$TILE_BUILD_DIR/bin/tilec" \
      --fixtures "$TILE_BUILD_DIR/test/Runtime" >/dev/null 2>&1 ||
      tile_note "fuzz $name: seed generation failed (starting without)"
    [[ -f "$TILE_ROOT/tools/fuzz/$name/$name.dict" ]] &&
      args+=("-dict=$TILE_ROOT/tools/fuzz/$name/$name.dict")
    if ((secs > 0)); then
      args+=("-max_total_time=$secs")
    else
      args+=("-runs=0")
    fi
    local seeds=("$work/seeds")
    [[ -d "$TILE_ROOT/tools/fuzz/$name/seeds" ]] &&
      seeds+=("$TILE_ROOT/tools/fuzz/$name/seeds")
    tile_step "fuzz: tile-fuzz-$name for ${secs}s"
    ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
      timeout -k 10 $((secs + 300)) "$bin" "${args[@]}" -print_final_stats=1 \
      -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=25 \
      -artifact_prefix="$work/crashes/" "$work/corpus" "${seeds[@]}" \
      >"$log" 2>&1
    local rc=$? inputs
    inputs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
    inputs="${inputs:-0}"
    total_inputs=$((total_inputs + inputs))
    if ((rc == 0)); then
      TOTAL_PASSED=$((TOTAL_PASSED + 1))
      stats+=("tile-fuzz-$name: $inputs inputs, no crash")
    else
      TOTAL_FAILED=$((TOTAL_FAILED + 1))
      local artifact
      artifact="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)"
      stats+=("tile-fuzz-$name: $inputs inputs, FAILED (exit $rc; ${artifact:-no artifact}; log: $log)")
      tail -n 30 "$log"
    fi
  done
  SUMMARY+=("fuzz:   ${#stats[@]} targets, $total_inputs inputs in ${secs}s each")
  local line
  for line in "${stats[@]}"; do
    SUMMARY+=("          $line")
  done
}

main() {
  mkdir -p "$TILE_LOG_DIR" "$RESULTS" 2>/dev/null || {
    stage_failed "setup" "cannot create $TILE_LOG_DIR"
    finish
  }
  if ((NO_BUILD == 0)); then
    if ! tile_setup_packages; then
      stage_failed "Debian packages" "$TILE_ROOT/.cache/apt.log"
      finish
    fi
    if ! tile_setup_venv; then
      stage_failed "python venv" "$TILE_ROOT/.cache/pip.log"
      finish
    fi
    if ! tile_configure; then
      stage_failed "configure" "$TILE_LOG_DIR/configure.log"
      finish
    fi
    if ! tile_build; then
      stage_failed "build" "$TILE_LOG_DIR/build.log"
      ((KEEP_GOING)) || finish
    fi
  fi
  run_lit
  run_ctest
  run_pytest
  run_cuda_bundles
  run_hip_bundles
  ((NO_WHEEL)) || run_wheel
  run_nvrtc_sources
  run_metal
  if ((NO_ASAN == 0)) && run_asan && ((NO_FUZZ == 0)); then
    run_fuzz
  fi
  finish
}

main

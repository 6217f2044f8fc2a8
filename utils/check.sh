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
# prints a summary per suite and, as its very last line, "N passed, N failed"
# over all suites. Exits non-zero on any failure, including a setup or build
# error (counted as one failure). Works from any directory.
#
# Options: -k/--keep-going  run the suites even when the build failed
#          --no-build       skip setup and build; run the suites as built
# Environment: see utils/lib/setup.sh (TILE_BUILD_DIR, TILE_JOBS, ...).
set -uo pipefail

# shellcheck source=utils/lib/setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"

KEEP_GOING=0
NO_BUILD=0
for arg in "$@"; do
  case "$arg" in
    -k | --keep-going) KEEP_GOING=1 ;;
    --no-build) NO_BUILD=1 ;;
    -h | --help)
      sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
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
  finish
}

main

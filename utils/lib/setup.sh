# shellcheck shell=bash
# utils/lib/setup.sh - shared setup of utils/check.sh and utils/demo.sh.
#
# Source it (bash), then call, in order and each as needed:
#   tile_setup_packages   install missing Debian packages (quiet when present)
#   tile_setup_venv       .venv with python/requirements.txt (re-run on change)
#   tile_configure        cmake -G Ninja into $TILE_BUILD_DIR (clang-22, lld)
#   tile_build [targets]  ninja
# Each returns non-zero on failure after printing the tail of its log.
#
# Environment:
#   TILE_BUILD_DIR   build directory (default: <repo>/build; relative paths are
#                    taken from the repository root)
#   TILE_JOBS        parallel build jobs (default: nproc)
#   TILE_CMAKE_ARGS  extra arguments for cmake (word-split)
#   TILE_SKIP_APT=1  do not check/install Debian packages
#   TILE_PYTHON      interpreter that creates .venv (default: python3)

TILE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TILE_BUILD_DIR="${TILE_BUILD_DIR:-build}"
case "$TILE_BUILD_DIR" in
  /*) ;;
  *) TILE_BUILD_DIR="$TILE_ROOT/$TILE_BUILD_DIR" ;;
esac
TILE_VENV="$TILE_ROOT/.venv"
TILE_JOBS="${TILE_JOBS:-$(nproc 2>/dev/null || echo 2)}"
TILE_LOG_DIR="$TILE_BUILD_DIR/logs"
export TILE_ROOT TILE_BUILD_DIR

# Debian 12 packages needed to build and test everything.
TILE_DEBIAN_PACKAGES=(
  llvm-22-dev libmlir-22-dev mlir-22-tools clang-22 lld-22 llvm-22-tools
  libclang-rt-22-dev
  liblld-22-dev zlib1g-dev libzstd-dev
  ninja-build cmake ccache
  libdlpack-dev nlohmann-json3-dev libgtest-dev libgmock-dev
  python3 python3-venv
  rocm-device-libs libamdhip64-dev # hip target: ocml/ockl bitcode, HIP runtime
)

tile_step() { printf '==> %s\n' "$*"; }
tile_note() { printf '    %s\n' "$*"; }
tile_error() { printf 'error: %s\n' "$*" >&2; }

# tile_run_logged LOG CMD...: run CMD with its output in LOG; on failure print
# the last lines of LOG.
tile_run_logged() {
  local log="$1"
  shift
  mkdir -p "$(dirname "$log")"
  "$@" >"$log" 2>&1 && return 0
  local rc=$?
  tile_error "'$*' failed (exit $rc); last lines of $log:"
  tail -n 40 "$log" >&2
  return "$rc"
}

tile_setup_packages() {
  if [[ "${TILE_SKIP_APT:-0}" == 1 ]]; then
    return 0
  fi
  local missing=() pkg status
  for pkg in "${TILE_DEBIAN_PACKAGES[@]}"; do
    status="$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)"
    [[ "$status" == installed ]] || missing+=("$pkg")
  done
  if ((${#missing[@]} == 0)); then
    return 0
  fi
  tile_step "installing Debian packages: ${missing[*]}"
  local sudo=()
  if [[ "$(id -u)" != 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo)
    else
      tile_error "missing packages (${missing[*]}) and not root, no sudo"
      return 1
    fi
  fi
  local log="$TILE_ROOT/.cache/apt.log"
  tile_run_logged "$log" "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get -q update || return 1
  tile_run_logged "$log.install" "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get -q install -y --no-install-recommends "${missing[@]}" || return 1
}

tile_setup_venv() {
  local req="$TILE_ROOT/python/requirements.txt"
  local stamp="$TILE_VENV/.tile-requirements.sha256"
  local py="${TILE_PYTHON:-python3}"
  if [[ -x "$TILE_VENV/bin/python" ]] && ! "$TILE_VENV/bin/python" -c '' 2>/dev/null; then
    tile_note "removing a broken .venv"
    rm -rf "$TILE_VENV"
  fi
  if [[ ! -x "$TILE_VENV/bin/python" ]]; then
    tile_step "creating .venv ($("$py" --version 2>&1))"
    tile_run_logged "$TILE_ROOT/.cache/venv.log" "$py" -m venv "$TILE_VENV" || return 1
  fi
  local want
  want="$( (cat "$req"; "$TILE_VENV/bin/python" -c 'import sys; print(sys.version)') | sha256sum | cut -d' ' -f1)"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    return 0
  fi
  tile_step "installing python/requirements.txt into .venv"
  tile_run_logged "$TILE_ROOT/.cache/pip.log" "$TILE_VENV/bin/python" -m pip \
    install --quiet --disable-pip-version-check -r "$req" || return 1
  echo "$want" >"$stamp"
}

tile_configure() {
  local args=(
    -G Ninja -S "$TILE_ROOT" -B "$TILE_BUILD_DIR"
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22
    -DLLVM_USE_LINKER=lld
    -DPython3_EXECUTABLE="$TILE_VENV/bin/python"
  )
  if command -v ccache >/dev/null 2>&1; then
    args+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  local nb_dir
  if nb_dir="$("$TILE_VENV/bin/python" -m nanobind --cmake_dir 2>/dev/null)"; then
    args+=(-Dnanobind_DIR="$nb_dir")
  fi
  # shellcheck disable=SC2206
  args+=(${TILE_CMAKE_ARGS:-})
  tile_step "configuring $TILE_BUILD_DIR"
  tile_run_logged "$TILE_LOG_DIR/configure.log" cmake --no-warn-unused-cli "${args[@]}"
}

tile_build() {
  tile_step "building${*:+ $*} (-j$TILE_JOBS)"
  tile_run_logged "$TILE_LOG_DIR/build.log" \
    ninja -C "$TILE_BUILD_DIR" -j "$TILE_JOBS" "$@"
}

# tile_setup_all: packages, venv, configure, build.
# shellcheck disable=SC2120 # targets are optional
tile_setup_all() {
  tile_setup_packages && tile_setup_venv && tile_configure && tile_build "$@"
}

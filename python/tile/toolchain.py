"""Where tilec's CUDA toolchain (ptxas, libdevice) comes from.

tilec compiles `--target=cuda` kernels to PTX itself and assembles the cubin
with ptxas; math functions link NVIDIA's libdevice. Both come from a CUDA
toolkit root (`bin/ptxas`, `nvvm/libdevice/libdevice.10.bc`) that tilec reads
from its environment and its own search (docs/building.md, "Toolchain
discovery": $TILE_PTXAS, $TILE_CUDA_PATH, $CUDA_HOME, $CUDA_PATH, the
toolkit CMake found when tilec was built, PATH). What tilec cannot know is
where this Python's pip packages are, and the wheel's static tilec has no
build-machine toolkit baked in, so the package sets

    TILE_CUDA_PATH   a CUDA toolkit root

for its tilec runs when none of TILE_PTXAS, TILE_CUDA_PATH, CUDA_HOME,
CUDA_PATH is set (those are the user's choice and tilec reads them itself),
searching, first hit wins:

    1. the pip package nvidia-cuda-nvcc on sys.path: nvidia/cu13 (CUDA 13),
       nvidia/cuda_nvcc (nvidia-cuda-nvcc-cu12);
    2. /usr/local/cuda;
    3. the toolkit of the ptxas on PATH (left to tilec).

Nothing found is a ToolchainError naming every place searched.
"""

import functools
import os
import pathlib
import shutil
import sys

USER_VARS = ("TILE_PTXAS", "TILE_CUDA_PATH", "CUDA_HOME", "CUDA_PATH")
PIP_ROOTS = ("nvidia/cu13", "nvidia/cuda_nvcc")
SYSTEM_ROOT = "/usr/local/cuda"
LIBDEVICE = "nvvm/libdevice/libdevice.10.bc"


class ToolchainError(RuntimeError):
    """No CUDA toolchain for target 'cuda'; the message lists the places."""


def _is_toolkit(root):
    root = pathlib.Path(root)
    return (os.access(root / "bin" / "ptxas", os.X_OK)
            and (root / LIBDEVICE).is_file())


def pip_toolkit_candidates():
    """<entry>/nvidia/cu13 and <entry>/nvidia/cuda_nvcc for each sys.path
    entry (site-packages, --target directories on PYTHONPATH), in order."""
    seen, out = set(), []
    for entry in sys.path:
        if not entry or not os.path.isdir(os.path.join(entry, "nvidia")):
            continue
        for sub in PIP_ROOTS:
            cand = os.path.realpath(os.path.join(entry, sub))
            if cand not in seen:
                seen.add(cand)
                out.append(cand)
    return out


@functools.lru_cache(maxsize=None)
def _resolve(user_vars, path, sys_path):
    del sys_path  # part of the cache key only
    searched = []
    for var, value in zip(USER_VARS, user_vars):
        if value:
            return {}, f"${var}={value}"
        searched.append(f"${var} (unset)")
    cands = pip_toolkit_candidates()
    for root in cands:
        if _is_toolkit(root):
            return {"TILE_CUDA_PATH": root}, f"pip nvidia-cuda-nvcc: {root}"
        searched.append(f"pip nvidia-cuda-nvcc: {root} (no bin/ptxas + "
                        f"{LIBDEVICE})")
    if not cands:
        searched.append("pip nvidia-cuda-nvcc: no nvidia/cu13 or "
                        "nvidia/cuda_nvcc on sys.path")
    if _is_toolkit(SYSTEM_ROOT):
        return {"TILE_CUDA_PATH": SYSTEM_ROOT}, SYSTEM_ROOT
    searched.append(f"{SYSTEM_ROOT} (no bin/ptxas + {LIBDEVICE})")
    ptxas = shutil.which("ptxas", path=path)
    if ptxas:
        return {}, f"PATH: {ptxas}"
    searched.append("PATH (no ptxas)")
    raise ToolchainError(
        "tile: no CUDA toolchain (ptxas, libdevice) for target 'cuda'; "
        "looked in, in order: " + "; ".join(searched) + ". Install the pip "
        "package nvidia-cuda-nvcc (CUDA 13; nvidia-cuda-nvcc-cu12 for CUDA "
        "12) or a CUDA toolkit, or set TILE_CUDA_PATH to a toolkit root or "
        "TILE_PTXAS to a ptxas binary")


def cuda_toolchain():
    """(environment additions for tilec, description of what was found)."""
    return _resolve(tuple(os.environ.get(v, "") for v in USER_VARS),
                    os.environ.get("PATH", ""), tuple(sys.path))


def tilec_env(args):
    """The environment for a tilec run with `args`: None (inherit) unless it
    compiles a cubin for cuda, then os.environ plus the toolkit found."""
    if "--target=cuda" not in args or any(
            a in ("--emit=metadata", "--emit=mlir") for a in args):
        return None
    extra, _ = cuda_toolchain()
    return {**os.environ, **extra} if extra else None

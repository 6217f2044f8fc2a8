"""Helpers of the end-to-end suite: compile kernels with tilec, run
them with tile-run through a chosen backend, compare against numpy.

The build directory comes from $TILE_BUILD_DIR (default: <repo>/build)."""

import hashlib
import os
import pathlib
import subprocess

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("TILE_BUILD_DIR", REPO / "build"))
if not BUILD.is_absolute():
    BUILD = REPO / BUILD
TILEC = BUILD / "bin" / "tilec"
TILE_RUN = BUILD / "bin" / "tile-run"
KERNELS = pathlib.Path(__file__).resolve().parent / "kernels"
EXAMPLES = REPO / "examples"


def require(tool):
    if not tool.exists():
        pytest.skip(f"{tool.name} is not built in {BUILD}")


class Bundle:
    """A compiled kernel bundle plus helpers to run it."""

    def __init__(self, path):
        self.path = path

    def run(self, tmp_path, inputs, backend, scalars=None, save_all=True,
            runs=1):
        """Runs the kernel once per backend invocation; returns {param: array}
        of every tensor parameter after the run (outputs included)."""
        require(TILE_RUN)
        run_dir = tmp_path / f"run-{backend}"
        run_dir.mkdir(parents=True, exist_ok=True)
        cmd = [str(TILE_RUN), str(self.path), f"--backend={backend}",
               "-n", str(runs), "--warmup", "0",
               "--save-outputs", str(run_dir / "out")]
        if save_all:
            cmd.append("--save-all")
        for name, array in inputs.items():
            f = run_dir / f"in-{name}.npy"
            np.save(f, array)
            cmd += ["--input", f"{name}={f}"]
        if scalars:
            cmd += ["--scalar", ",".join(f"{k}={v}" for k, v in scalars.items())]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"tile-run failed ({proc.returncode}):\n"
                               f"{' '.join(cmd)}\n{proc.stdout}{proc.stderr}")
        return {p.stem: np.load(p) for p in (run_dir / "out").glob("*.npy")}


def rel_error(out, ref):
    out = np.asarray(out, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    assert out.shape == ref.shape, (out.shape, ref.shape)
    assert not np.isnan(out).any(), "NaN in the output"
    denom = np.linalg.norm(ref)
    return np.linalg.norm(out - ref) / (denom if denom > 0 else 1.0)

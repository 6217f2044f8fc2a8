"""Fixtures of the end-to-end suite (helpers live in e2e_util.py).

Targets: TILE_E2E_TARGET=cpu (default), cuda or hip. For cuda every test
runs once per chip of TILE_E2E_CHIPS (default "sm_90a,sm_80"; on an H200 the
sm_90a cubin runs natively and the sm_80 bundle goes through the driver's
PTX JIT); for hip (default "gfx942,gfx90a") likewise.

Bundles are cached by a key: sha256 of the kernel source + tilec flags
(target flags included). Build host / GPU host split (docs/gpu-testing.md):
  TILE_BUNDLE_EXPORT=DIR    also copy every compiled bundle to DIR/KEY.tileb
  TILE_E2E_COMPILE_ONLY=1   compile (and export), then skip the run: no
                            device needed
  TILE_BUNDLE_DIR=DIR       without tilec (GPU host): load DIR/KEY.tileb
                            instead of compiling; missing -> skip
"""

import hashlib
import os
import pathlib
import shutil
import subprocess

import pytest

from e2e_util import (TILEC, Bundle, CompiledOnly, TARGET, CHIPS, reference_backend,
                      require)


@pytest.fixture
def target():
    """The chip a test compiles for ("cpu" unless TILE_E2E_TARGET is a GPU)."""
    return "cpu"


def pytest_generate_tests(metafunc):
    if TARGET != "cpu" and "target" in metafunc.fixturenames:
        metafunc.parametrize("target", CHIPS, ids=CHIPS)


def target_flags(target):
    if target == "cpu":
        return ()
    if target.startswith("apple-"):
        return ("--target=metal", f"--chip={target}")
    return (f"--target={TARGET}", f"--chip={target}")


@pytest.fixture(scope="session")
def _compiler(tmp_path_factory):
    """compile_(source, *tilec_flags) -> Bundle (cached by text + flags)."""
    export = os.environ.get("TILE_BUNDLE_EXPORT")
    bundle_dir = os.environ.get("TILE_BUNDLE_DIR")
    have_tilec = TILEC.exists()
    if not have_tilec and not bundle_dir:
        require(TILEC)
    if export:
        pathlib.Path(export).mkdir(parents=True, exist_ok=True)
    cache = tmp_path_factory.mktemp("bundles")
    built = {}

    def compile_(source, *flags):
        key = hashlib.sha256((source + repr(flags)).encode()).hexdigest()[:16]
        if key in built:
            bundle = built[key]
        elif not have_tilec:
            path = pathlib.Path(bundle_dir) / f"{key}.tileb"
            error = path.with_suffix(".tilec-error")
            if not path.exists() and error.exists():
                pytest.xfail(f"tilec failed on the build host: "
                             f"{first_error(error.read_text())}")
            if not path.exists():
                pytest.skip(f"no tilec here and bundle {key}.tileb is not in "
                            f"TILE_BUNDLE_DIR={bundle_dir} (export it on the "
                            f"build host with TILE_BUNDLE_EXPORT)")
            bundle = built[key] = Bundle(path, flags)
        else:
            src = cache / f"{key}.mlir"
            src.write_text(source)
            out = cache / f"{key}.tileb"
            # --verify-each: every pass's output verified (tilec's default
            # verifies once at the end).
            proc = subprocess.run([str(TILEC), str(src), "-o", str(out),
                                   "--verify-each", *flags],
                                  capture_output=True, text=True)
            # hip: only a kernel over the chip's 64 KiB of LDS (tiles sized
            # for the H200's 227 KiB, e.g. 128x128 FlashAttention) is a
            # known limit; any other failure there is a failure.
            over_lds = ("--target=hip" in flags and
                        "shared memory (LDS) per block" in proc.stderr)
            if proc.returncode != 0 and ("--target=cuda" in flags or
                                         "--target=metal" in flags or
                                         over_lds):
                # Known gaps of the GPU lowering show up as xfail (with the
                # compiler's message), on this host and on the GPU host.
                if export:
                    (pathlib.Path(export) / f"{key}.tilec-error").write_text(
                        proc.stderr)
                pytest.xfail(f"tilec: {first_error(proc.stderr)}")
            if proc.returncode != 0:
                raise RuntimeError(f"tilec {' '.join(flags)} failed:\n"
                                   f"{proc.stderr}\n--- source:\n{source}")
            if export:
                shutil.copy(out, pathlib.Path(export) / f"{key}.tileb")
            bundle = built[key] = Bundle(out, flags)
        return bundle

    return compile_


def first_error(text):
    for line in text.splitlines():
        if "error:" in line:
            return line.split("error:", 1)[1].strip()
    return text.strip().splitlines()[0] if text.strip() else "(no message)"


@pytest.fixture
def compile_kernel(_compiler, target):
    """compile_kernel(source_text, *tilec_flags) -> Bundle for `target`."""
    def compile_(source, *flags):
        return _compiler(source, *target_flags(target), *flags)
    return compile_


def pytest_report_header(config):
    chips = ",".join(CHIPS) if TARGET != "cpu" else "-"
    return (f"tile e2e: target {TARGET} (chips {chips}), references "
            f"{reference_backend()}")


@pytest.hookimpl(hookwrapper=True)
def pytest_pyfunc_call(pyfuncitem):
    """Under TILE_E2E_COMPILE_ONLY=1 a test passes once its kernels compiled
    (CI builds every CUDA bundle of the suite for sm_80 and sm_90a)."""
    outcome = yield
    excinfo = outcome.excinfo
    if excinfo is not None and issubclass(excinfo[0], CompiledOnly):
        outcome.force_result(True)

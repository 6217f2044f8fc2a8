"""The self-contained wheel (utils/wheel.sh), installed the way a GPU machine
without LLVM gets it: into a fresh venv with `pip install --no-index`, then
used with no LLVM visible.

    TILE_WHEEL=.whl/tile-...-cp312-...whl   the wheel (required, else skip)
    TILE_WHEEL_PYTHON=python3.12            the interpreter it is for
                                            (default: from the wheel's tag)
    TILE_WHEEL_DEPS=DIR                     wheels of its dependencies
                                            (numpy) for --find-links

"No LLVM visible": the installed tilec and extension need no libLLVM/libMLIR
(ldd), and the kernels are compiled and run in a mount namespace in which
/usr/lib/llvm-* and the ld.lld programs are hidden (unshare, as root; where
that is not possible, with only a scrubbed environment, and the test says
so). utils/check.sh runs this file in its `wheel` stage.
"""

import glob
import os
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
WHEEL = os.environ.get("TILE_WHEEL", "")
pytestmark = pytest.mark.skipif(not WHEEL or not os.path.isfile(WHEEL),
                                reason="TILE_WHEEL not set (utils/check.sh "
                                       "builds the wheel and sets it)")


def wheel_python():
    if os.environ.get("TILE_WHEEL_PYTHON"):
        return os.environ["TILE_WHEEL_PYTHON"]
    m = re.search(r"-cp3(\d+)-", os.path.basename(WHEEL))
    ver = f"3.{m.group(1)}"
    cands = sorted(glob.glob(os.path.expanduser(
        f"~/.pyenv/versions/{ver}.*/bin/python{ver}")))
    return cands[-1] if cands else shutil.which(f"python{ver}")


def can_unshare():
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "true"],
                       capture_output=True)
    return r.returncode == 0


def hidden_paths(extra=()):
    """/usr/lib/llvm-* and every ld.lld/lld program: what 'no LLVM' hides."""
    dirs = sorted(glob.glob("/usr/lib/llvm-*")) + [d for d in extra
                                                    if os.path.isdir(d)]
    files = set()
    for pat in ("/usr/bin/ld.lld*", "/usr/bin/lld*", "/usr/bin/ld64.lld*"):
        for f in glob.glob(pat):
            f = os.path.realpath(f)
            if not any(f.startswith(d.rstrip("/") + "/") for d in dirs):
                files.add(f)  # (those in a hidden directory are hidden)
    return dirs, sorted(files)


def run_isolated(cmd, env, hide_extra=()):
    """Runs cmd with LLVM hidden (see the module docstring)."""
    if can_unshare():
        dirs, files = hidden_paths(hide_extra)
        script = "set -e\n" + "".join(
            f"mount -t tmpfs none '{d}'\n" for d in dirs) + "".join(
            f"mount --bind /dev/null '{f}'\n" for f in files) + 'exec "$@"\n'
        cmd = ["unshare", "-m", "--propagation", "private", "sh", "-c",
               script, "sh", *cmd]
    return subprocess.run(cmd, env=env, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    py = wheel_python()
    if not py:
        pytest.skip(f"no interpreter for {os.path.basename(WHEEL)}")
    root = tmp_path_factory.mktemp("wheel-venv")
    t0 = time.perf_counter()
    subprocess.run([py, "-m", "venv", str(root)], check=True)
    cmd = [str(root / "bin" / "python"), "-m", "pip", "install", "--no-index",
           "--disable-pip-version-check", "--quiet"]
    if os.environ.get("TILE_WHEEL_DEPS"):
        cmd += ["--find-links", os.environ["TILE_WHEEL_DEPS"]]
    r = subprocess.run(cmd + [WHEEL], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    print(f"venv + pip install --no-index: {time.perf_counter() - t0:.1f} s")
    site = subprocess.run(
        [str(root / "bin" / "python"), "-c",
         "import sysconfig; print(sysconfig.get_paths()['platlib'])"],
        capture_output=True, text=True, check=True).stdout.strip()
    return root, pathlib.Path(site)


def clean_env(venv_root, tmp):
    """No LLVM, CUDA or tile variables; PATH = the venv + the system."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TILE_", "LD_", "CUDA", "PYTHON"))}
    env["PATH"] = f"{venv_root}/bin:/usr/bin:/bin"
    env["TILE_CACHE_DIR"] = str(tmp / "cache")
    env["HOME"] = str(tmp)
    return env


def test_tag_is_honest():
    r = subprocess.run([sys.executable, str(ROOT / "utils/lib/wheel-elf.py"),
                        WHEEL], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    tag = re.search(r"^tag: (\S+)$", r.stdout, re.M).group(1)
    assert WHEEL.endswith(f"-{tag}.whl"), (tag, WHEEL)


def test_no_llvm_libraries(venv):
    _, site = venv
    files = [site / "tile" / "bin" / "tilec", site / "tile" / "bin" / "tile-run",
             *sorted((site / "tile").glob("_runtime*.so"))]
    assert len(files) == 3 and all(f.exists() for f in files), files
    for f in files:
        out = subprocess.run(["ldd", str(f)], capture_output=True,
                             text=True).stdout
        for bad in ("libLLVM", "libMLIR", "llvm-", "not found"):
            assert bad not in out, f"{f}:\n{out}"
    # Its linker is lld's ELF driver inside it, not an ld.lld program.
    out = subprocess.run([str(files[0]), "--print-toolchain"],
                         capture_output=True, text=True, env={}).stdout
    assert "inside this tilec" in out, out


CPU_SCRIPT = textwrap.dedent("""
    import pathlib, sys, time
    import numpy as np
    import tile
    site = pathlib.Path(tile.__file__).parent
    assert tile.find_tilec() == str(site / "bin" / "tilec"), tile.find_tilec()
    ex = pathlib.Path(sys.argv[1])
    rng = np.random.default_rng(0)
    for backend in ("ffi", "native"):
        t0 = time.perf_counter()
        k = tile.compile(ex / "elementwise_add.mlir", target="cpu",
                         execution_backend=backend)
        dt = time.perf_counter() - t0
        a = rng.standard_normal(5000).astype(np.float32)
        b = rng.standard_normal(5000).astype(np.float32)
        np.testing.assert_array_equal(k(a, b), a + b)
        print(f"elementwise_add {backend}: compiled in {dt:.2f} s, ok")
    t0 = time.perf_counter()
    k = tile.compile(ex / "gemm.mlir", target="cpu")
    dt = time.perf_counter() - t0
    a = rng.standard_normal((65, 40)).astype(np.float16)
    b = rng.standard_normal((40, 33)).astype(np.float16)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.linalg.norm(k(a, b) - ref) / np.linalg.norm(ref) < 2e-3
    print(f"gemm: compiled in {dt:.2f} s, ok")
    x = rng.standard_normal((19, 1024)).astype(np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(tile.compile(ex / "softmax.mlir", target="cpu")(x),
                               e / e.sum(axis=1, keepdims=True), rtol=1e-5,
                               atol=1e-6)
    print("softmax: ok")
""")


def test_compile_and_run_cpu_without_llvm(venv, tmp_path):
    root, _ = venv
    script = tmp_path / "cpu.py"
    script.write_text(CPU_SCRIPT)
    r = run_isolated([str(root / "bin" / "python"), str(script),
                      str(ROOT / "examples")], clean_env(root, tmp_path))
    print(r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "softmax: ok" in r.stdout
    if not can_unshare():
        print("note: no mount namespace here; LLVM was hidden from the "
              "environment only")


CUDA_SCRIPT = textwrap.dedent("""
    import pathlib, sys
    from tile import compiler, toolchain
    extra, found = toolchain.cuda_toolchain()
    print("toolchain:", found)
    assert extra["TILE_CUDA_PATH"] == sys.argv[2], extra
    src = pathlib.Path(sys.argv[1]).read_text()
    for chip in ("sm_90a", "sm_80"):
        bundle, _remarks = compiler._run_tilec(
            compiler.find_tilec(), src, ["--target=cuda", f"--chip={chip}"],
            True)
        assert len(bundle) > 1000
        print(chip, "bundle", len(bundle), "bytes")
""")


def test_cuda_compile_with_pip_ptxas(venv, tmp_path):
    """A fake `nvidia-cuda-nvcc` install (nvidia/cu13: a logging ptxas
    wrapper around a copy of the real one, libdevice) in the venv: the
    package finds it and tilec uses it, with /usr/local/cuda hidden."""
    real = pathlib.Path("/usr/local/cuda/bin/ptxas")
    libdevice = pathlib.Path("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc")
    if not real.exists() or not libdevice.exists():
        pytest.skip("no CUDA toolkit here to copy ptxas/libdevice from")
    root, site = venv
    cu = site / "nvidia" / "cu13"
    (cu / "bin").mkdir(parents=True, exist_ok=True)
    (cu / "nvvm" / "libdevice").mkdir(parents=True, exist_ok=True)
    shutil.copy2(real, cu / "bin" / "ptxas-real")
    shutil.copy2(libdevice, cu / "nvvm" / "libdevice")
    log = tmp_path / "ptxas.log"
    wrapper = cu / "bin" / "ptxas"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {log}\n'
                       f'exec "{cu}/bin/ptxas-real" "$@"\n')
    wrapper.chmod(0o755)
    script = tmp_path / "cuda.py"
    script.write_text(CUDA_SCRIPT)
    try:
        r = run_isolated([str(root / "bin" / "python"), str(script),
                          str(ROOT / "examples" / "softmax.mlir"),
                          os.path.realpath(cu)],
                         clean_env(root, tmp_path),
                         hide_extra=("/usr/local/cuda",))
        print(r.stdout, r.stderr)
        assert r.returncode == 0, r.stdout + r.stderr
        calls = log.read_text().splitlines()
        assert any("sm_90a" in c for c in calls) and any("sm_80" in c
                                                         for c in calls)
    finally:
        shutil.rmtree(site / "nvidia")


NO_TOOLKIT_SCRIPT = textwrap.dedent("""
    import pathlib, subprocess, sys
    import tile
    from tile import toolchain
    src = pathlib.Path(sys.argv[1])
    try:
        tile.compile(src, target="cuda:sm_90a")
    except toolchain.ToolchainError as e:
        print("package:", e)
    else:
        sys.exit("tile.compile for cuda worked without any CUDA toolkit")
    r = subprocess.run([tile.find_tilec(), str(src), "--target=cuda",
                        "--chip=sm_90a", "-o", "/dev/null"],
                       capture_output=True, text=True)
    assert r.returncode != 0
    print("tilec:", r.stderr.strip())
""")


def test_cuda_without_toolkit_names_every_place(venv, tmp_path):
    """No pip nvidia-cuda-nvcc, /usr/local/cuda hidden, no ptxas on PATH:
    the package and the wheel's tilec both fail with an error naming every
    place they searched (a kernel without math functions: tilec looks for
    ptxas, not libdevice)."""
    if not can_unshare():
        pytest.skip("needs a mount namespace to hide /usr/local/cuda")
    root, _ = venv
    script = tmp_path / "nocuda.py"
    script.write_text(NO_TOOLKIT_SCRIPT)
    r = run_isolated([str(root / "bin" / "python"), str(script),
                      str(ROOT / "examples" / "elementwise_add.mlir")],
                     clean_env(root, tmp_path),
                     hide_extra=("/usr/local/cuda",))
    print(r.stdout, r.stderr)
    assert r.returncode == 0, r.stdout + r.stderr
    package = next(l for l in r.stdout.splitlines() if l.startswith("package:"))
    for place in ("$TILE_PTXAS (unset)", "$TILE_CUDA_PATH (unset)",
                  "$CUDA_HOME (unset)", "$CUDA_PATH (unset)",
                  "pip nvidia-cuda-nvcc", "/usr/local/cuda", "PATH (no ptxas)"):
        assert place in package, place
    tilec = r.stdout[r.stdout.index("tilec:"):]
    for place in ("ptxas not found", "$TILE_PTXAS (unset)",
                  "$TILE_CUDA_PATH (unset)", "$CUDA_HOME (unset)",
                  "$CUDA_PATH (unset)", "PATH (no ptxas)", "nvidia-cuda-nvcc"):
        assert place in tilec, place

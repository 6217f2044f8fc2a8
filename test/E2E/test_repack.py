"""End to end: f16 GEMMs whose row pitches TMA cannot describe (an odd K or
N: rows of 2 * odd bytes). On sm_90a the runtime repacks such an operand
with the bundle's pack kernel into a workspace with 16-byte pitched rows
and launches the TMA variant (lib/Runtime/Cuda/CudaRepack.h) when the cost
rule says so or TILE_REPACK=1 forces it; TILE_REPACK=0 keeps the variant
that loads through the threads (NAME_kernel_sm90_ldg). Checked against a
float64 reference on every target (on the CPU and sm_80 the same shapes
run the generic kernels). With TILE_E2E_CHECK_IMAGE=1 (the H200 run) the
sm_90a runs must also report the repack (TILE_CUDA_VERBOSE)."""

import os

import numpy as np
import pytest

from e2e_util import EXAMPLES, TARGET, TARGET_BACKENDS, ref_matmul, rel_error

# The nvrtc backend has no sm_90a variants (nothing to repack).
BACKENDS = TARGET_BACKENDS or ["ffi", "native"]
REPACKED = "repacked tensor param"


def run_gemm(compile_kernel, tmp_path, backend, m, n, k, seed):
    bundle = compile_kernel((EXAMPLES / "gemm.mlir").read_text())
    r = np.random.default_rng(seed)
    a = r.standard_normal((m, k)).astype(np.float16)
    b = r.standard_normal((k, n)).astype(np.float16)
    out = bundle.run(tmp_path, {"A": a, "B": b}, backend)["C"]
    return bundle, out, ref_matmul(a, b)


def expect_path(bundle, repacked):
    """On the H200 run, whether the launch went through the repack."""
    if (TARGET != "cuda" or bundle.chip != "sm_90a"
            or os.environ.get("TILE_E2E_CHECK_IMAGE") != "1"):
        return
    assert (REPACKED in bundle.last_stderr) == repacked, bundle.last_stderr


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("m,n,k,mode,repacked", [
    # Both A (K = 1003) and B (N = 999) odd: the cost rule repacks.
    (1001, 999, 1003, None, True),
    # Small, three k-steps: the rule repacks (the latency regime); one
    # k-step (K = 64, only B odd) keeps the LDG kernel; forced, both are
    # repacked.
    (127, 131, 137, None, True),
    (127, 131, 64, None, False),
    (127, 131, 137, "1", True),
    # Only B odd (N = 777), a K tail; forced.
    (333, 777, 1112, "1", True),
    # Only A odd (K = 1111); off: the LDG kernel.
    (520, 264, 1111, "0", False),
])
def test_repack_gemm(compile_kernel, tmp_path, backend, m, n, k, mode,
                     repacked, monkeypatch):
    # TILE_REPACK is read per launch by the runtime (tile-run inherits it).
    if mode is None:
        monkeypatch.delenv("TILE_REPACK", raising=False)
    else:
        monkeypatch.setenv("TILE_REPACK", mode)
    bundle, out, ref = run_gemm(compile_kernel, tmp_path, backend, m, n, k,
                                seed=m + n + k)
    # f16 output: ~2^-11 relative.
    assert rel_error(out, ref) < 2e-3
    expect_path(bundle, repacked)


@pytest.mark.parametrize("backend", BACKENDS)
def test_repack_gemm_epilogue(compile_kernel, tmp_path, backend,
                              monkeypatch):
    # The bias + ReLU epilogue with an odd N (B and bias, C written by the
    # kernel's threads, never repacked).
    monkeypatch.setenv("TILE_REPACK", "1")
    m, n, k = 300, 201, 515
    bundle = compile_kernel((EXAMPLES / "gemm_epilogue.mlir").read_text())
    r = np.random.default_rng(45)
    a = r.standard_normal((m, k)).astype(np.float16)
    b = r.standard_normal((k, n)).astype(np.float16)
    bias = r.standard_normal(n).astype(np.float16)
    out = bundle.run(tmp_path, {"A": a, "B": b, "bias": bias}, backend)["C"]
    ref = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0)
    assert rel_error(out, ref) < 2e-3
    expect_path(bundle, True)

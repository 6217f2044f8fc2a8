"""End to end: a batched GEMM with 128x128 tiles (kernels/bmm.mlir.in),
C[b] = 0.5 * A[b] x op(B[b]) for 3-D tensors, B stored K x N or N x K
(`transpose_b`, attention's Q K^T), checked against a float64 reference on
every target. On sm_90a the launch goes to the TMA + wgmma variants with
rank-3 tensor maps (docs/pipelines.md "Batched GEMMs"); on the H200 (132
SMs) the shapes pick:

  (3, 70, 45, 33)       odd K and N: no tensor map, the variant loading
                        through the SM's load units
  (4, 256, 256, 2048)   16 tiles: split-K over each batch's K
  (8, 512, 512, 256)    128 tiles: the persistent kernel, TMA-store epilogue
  (3, 1000, 1000, 136)  192 blocks: wide 128x256 tiles (M and N tails)
  (2, 300, 130, 64)     C's rows not 16-byte pitched: no map of C, the
                        epilogue stores through the threads
  (4, 300, 260, 137)    an odd K: repacked into padded rows (TILE_REPACK=1
                        or the cost rule) or the LDG variant (TILE_REPACK=0)

plus one B (rank 2) for the whole batch, TILE_GEMM_TILE=large and
TILE_SPLIT_K forcing 3 slices, bf16
operands, and the generic kernels on the CPU and sm_80 on the same shapes."""

import numpy as np
import pytest

from e2e_util import KERNELS, TARGET, TARGET_BACKENDS, rel_error

BACKENDS = (TARGET_BACKENDS or
            ["ffi", "native"] + (["nvrtc"] if TARGET == "cuda" else []))


def bmm_source(dtype, tb, shared_b=False, extra_z=False):
    """kernels/bmm.mlir.in for `dtype`; B stored N x K with `tb`; one B for
    the whole batch (rank 2) with `shared_b`; a grid one block longer than
    the batch with `extra_z`."""
    dims = '"N", "K"' if tb else '"K", "N"'
    idx = "%n0, %k0" if tb else "%k0, %n0"
    return (KERNELS / "bmm.mlir.in").read_text().format(
        IN=dtype,
        BDYN="?x?" if shared_b else "?x?x?",
        BDIMS=dims if shared_b else '"B", ' + dims,
        BSHAPE="128x16" if tb else "16x128",
        BIDX=idx if shared_b else "%bz, " + idx,
        BDROP="" if shared_b else " drop_dims [0]",
        GEMM_ATTRS="transpose_b" if tb else "", EXTRA_Z=int(extra_z))


def run_bmm(compile_kernel, tmp_path, backend, batch, m, n, k, tb, seed,
            bf16=False, shared_b=False, extra_z=False):
    rng = np.random.default_rng(seed)
    b_shape = (n, k) if tb else (k, n)
    shapes = {"A": (batch, m, k),
              "B": b_shape if shared_b else (batch,) + b_shape}
    if bf16:
        # bf16 data travels as float32 (tile-run converts it).
        ml_dtypes = pytest.importorskip("ml_dtypes")
        inputs = {name: rng.standard_normal(s).astype(ml_dtypes.bfloat16)
                  .astype(np.float32) for name, s in shapes.items()}
    else:
        inputs = {name: rng.standard_normal(s).astype(np.float16)
                  for name, s in shapes.items()}
    bundle = compile_kernel(bmm_source("bf16" if bf16 else "f16", tb,
                                       shared_b, extra_z))
    out = bundle.run(tmp_path, inputs, backend)["C"]
    a, b = (inputs[name].astype(np.float64) for name in ("A", "B"))
    spec = ("nk" if tb else "kn") if shared_b else ("bnk" if tb else "bkn")
    ref = 0.5 * np.einsum(f"bmk,{spec}->bmn", a, b)
    return out, ref


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("tb", [False, True], ids=["nn", "nt"])
@pytest.mark.parametrize("batch,m,n,k", [(3, 70, 45, 33), (4, 256, 256, 2048),
                                         (8, 512, 512, 256),
                                         (3, 1000, 1000, 136),
                                         (2, 300, 130, 64), (1, 1, 1, 1)])
def test_bmm(compile_kernel, tmp_path, backend, tb, batch, m, n, k):
    out, ref = run_bmm(compile_kernel, tmp_path, backend, batch, m, n, k, tb,
                       seed=70)
    # f16 output: ~2^-11 relative.
    assert rel_error(out, ref) < 2e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("tb", [False, True], ids=["nn", "nt"])
@pytest.mark.parametrize("batch,m,n,k", [(3, 70, 45, 33), (4, 256, 256, 2048),
                                         (6, 700, 520, 264)])
def test_bmm_shared_b(compile_kernel, tmp_path, backend, tb, batch, m, n, k):
    # One B (rank 2) for every batch element of A and C: a linear layer over
    # a batch of token blocks (only A's and C's copies drop the batch dim).
    out, ref = run_bmm(compile_kernel, tmp_path, backend, batch, m, n, k, tb,
                       seed=74, shared_b=True)
    assert rel_error(out, ref) < 2e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("tb", [False, True], ids=["nn", "nt"])
@pytest.mark.parametrize("batch,m,n,k", [(3, 70, 45, 33), (4, 256, 256, 2048),
                                         (3, 1000, 1000, 136)])
def test_bmm_grid_past_batch(compile_kernel, tmp_path, backend, tb, batch, m,
                             n, k):
    # One more block along the batch than the batch has: its batch index is
    # out of bounds, so it reads zeros and writes nothing (the runner's C
    # is exactly B x M x N; the sanitized GPU run would see a stray write).
    out, ref = run_bmm(compile_kernel, tmp_path, backend, batch, m, n, k, tb,
                       seed=75, extra_z=True)
    assert rel_error(out, ref) < 2e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("tb", [False, True], ids=["nn", "nt"])
@pytest.mark.parametrize("repack", ["0", "1", "auto"])
def test_bmm_odd_k(compile_kernel, tmp_path, backend, tb, repack,
                   monkeypatch):
    # K = 137: rows of A (and of B when N x K) are not 16-byte pitched, so
    # no tensor map: repacked (TILE_REPACK=1, and the cost rule's choice for
    # this size) into padded rows of every batch, or the LDG variant (0).
    monkeypatch.setenv("TILE_REPACK", repack)
    out, ref = run_bmm(compile_kernel, tmp_path, backend, 4, 300, 260, 137,
                       tb, seed=73)
    assert rel_error(out, ref) < 2e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("env", [("TILE_GEMM_TILE", "large"),
                                 ("TILE_SPLIT_K", "3")])
def test_bmm_override(compile_kernel, tmp_path, backend, env, monkeypatch):
    # Read per launch by the runtime (tile-run inherits it).
    monkeypatch.setenv(*env)
    out, ref = run_bmm(compile_kernel, tmp_path, backend, 3, 130, 392, 264,
                       tb=True, seed=71)
    assert rel_error(out, ref) < 2e-3


@pytest.mark.parametrize("backend", BACKENDS)
def test_bmm_bf16(compile_kernel, tmp_path, backend):
    out, ref = run_bmm(compile_kernel, tmp_path, backend, 5, 300, 520, 264,
                       tb=False, seed=72, bf16=True)
    # bf16 output: ~2^-8 relative.
    assert rel_error(out, ref) < 1e-2

"""End to end: GEMM launches that the sm_90a split-K variant takes on the H200
(grids of at most 66 tiles with K long enough for S >= 2 slices,
docs/pipelines.md "Split-K"), checked against a float64 reference on every
target (on the CPU and sm_80 they check the generic kernels on the same
shapes). With 128x128 tiles (examples/gemm.mlir, gemm_epilogue.mlir) on 132
SMs the runtime's cost model (min over S of ceil(kTiles / S) + 8
ceil(log2 S), below kTiles) picks:

  (256, 256, 8192)   4 tiles, 128 K tiles  -> S = 8
  (77, 200, 4104)    2 tiles,  65 K tiles  -> S = 4   (M, N and K tails)
  (1, 4096, 4096)   32 tiles,  64 K tiles  -> S = 4   (GEMV-like)
  (1000, 1000, 1000) 64 tiles, 16 K tiles  -> not split (2 slices would
                                              cost 8 + 8; the variants above)
  (100, 136, 65000)  2 tiles, 1016 K tiles -> S = 64  (6 tree levels, tails)
  (129, 264, 3000) with the bias + ReLU epilogue: 6 tiles, 47 K tiles -> S = 4

plus TILE_SPLIT_K forcing 2, 3, 7, 33, 65 slices (odd counts: tree nodes
without a sibling; 6 tiles x 65 slices = 390 CTAs, more than one wave: no
slice ever waits for another) on M, N and K tails, or turning split-K off,
and bit-for-bit repeats (the tree's association is fixed: deterministic).
N and K are multiples of 8 so that f16 rows are 16-byte pitched (TMA;
otherwise the launch goes to the variant without tensor maps, which is not
split).

Launches of at most 16 rows of A and C go to the narrow variant first
(docs/pipelines.md "Narrow rows": the swapped m64n16 product, S from the
narrow cost model, one slice included): (1, 4096, 4096) above and the
test_narrow_* cases below (f16 and bf16, M, N and K tails, the bias + ReLU
epilogue, TILE_SPLIT_K forcing 1, 3 and 33 slices, bit-for-bit repeats);
17 rows is the first that is not narrow."""

import numpy as np
import pytest

import e2e_util
from e2e_util import EXAMPLES, TARGET, TARGET_BACKENDS, f16_inputs, rel_error

BACKENDS = (TARGET_BACKENDS or
            ["ffi", "native"] + (["nvrtc"] if TARGET == "cuda" else []))


def run_example_gemm(compile_kernel, tmp_path, backend, m, n, k, seed=40):
    return e2e_util.run_example_gemm(compile_kernel, tmp_path, backend, m, n,
                                     k, seed)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("m,n,k", [(256, 256, 8192), (77, 200, 4104),
                                   (1, 4096, 4096), (1000, 1000, 1000),
                                   (100, 136, 65000)])
def test_splitk_gemm(compile_kernel, tmp_path, backend, m, n, k):
    out, ref = run_example_gemm(compile_kernel, tmp_path, backend, m, n, k)
    # f16 output: ~2^-11 relative.
    assert rel_error(out, ref) < 2e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("m,n,k,seed", [(129, 264, 3000, 41),
                                        (7, 264, 3000, 47)])
def test_splitk_gemm_epilogue(compile_kernel, tmp_path, backend, m, n, k,
                              seed):
    # The epilogue (bias + ReLU, then f16) runs once, on the summed tile;
    # with 7 rows (the narrow variant) per value of the summed product, at
    # its row and column of C (the product is transposed).
    bundle = compile_kernel((EXAMPLES / "gemm_epilogue.mlir").read_text())
    a, b = f16_inputs(seed, m, n, k)
    bias = np.random.default_rng(seed + 1).standard_normal(n).astype(np.float16)
    out = bundle.run(tmp_path, {"A": a, "B": b, "bias": bias}, backend)["C"]
    ref = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0)
    assert rel_error(out, ref) < 2e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("slices", ["2", "3", "7", "33", "65", "off"])
def test_splitk_override(compile_kernel, tmp_path, backend, slices,
                         monkeypatch):
    # TILE_SPLIT_K is read per launch by the runtime (tile-run inherits it).
    # 130 x 264 x 4104: 2 x 3 tiles (M and N tails), 65 K tiles (a K tail).
    monkeypatch.setenv("TILE_SPLIT_K", slices)
    out, ref = run_example_gemm(compile_kernel, tmp_path, backend, 130, 264,
                                4104, seed=43)
    assert rel_error(out, ref) < 2e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("slices", ["auto", "33"])
def test_splitk_deterministic(compile_kernel, tmp_path, backend, slices,
                              monkeypatch):
    monkeypatch.setenv("TILE_SPLIT_K", slices)
    first, _ = run_example_gemm(compile_kernel, tmp_path / "a", backend, 64,
                                128, 8192, seed=44)
    again, ref = run_example_gemm(compile_kernel, tmp_path / "b", backend, 64,
                                  128, 8192, seed=44)
    np.testing.assert_array_equal(first, again)
    assert rel_error(first, ref) < 2e-3


# --------------------------------------------------------------------------
# The narrow variant (A and C of at most 16 rows).
# --------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("m,n,k", [(5, 1000, 3000), (16, 264, 4104),
                                   (17, 136, 4096), (3, 128, 40),
                                   (1, 8, 8)])
def test_narrow_gemm(compile_kernel, tmp_path, backend, m, n, k):
    out, ref = run_example_gemm(compile_kernel, tmp_path, backend, m, n, k,
                                seed=45)
    assert rel_error(out, ref) < 2e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("m,n,k", [(1, 4096, 4096), (9, 520, 1000)])
def test_narrow_gemm_bf16(compile_kernel, tmp_path, backend, m, n, k):
    # examples/gemm.mlir with bf16 operands and C (wgmma's bf16 types);
    # bf16 data travels as float32 (tile-run converts it).
    ml_dtypes = pytest.importorskip("ml_dtypes")
    src = (EXAMPLES / "gemm.mlir").read_text().replace("xf16", "xbf16")
    bundle = compile_kernel(src)
    rng = np.random.default_rng(46)
    a, b = (rng.standard_normal(s).astype(ml_dtypes.bfloat16)
            .astype(np.float32) for s in ((m, k), (k, n)))
    out = bundle.run(tmp_path, {"A": a, "B": b}, backend)["C"]
    ref = a.astype(np.float64) @ b.astype(np.float64)
    # bf16 output: ~2^-8 relative.
    assert rel_error(out, ref) < 1e-2


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("slices", ["off", "3", "33"])
def test_narrow_override(compile_kernel, tmp_path, backend, slices,
                         monkeypatch):
    monkeypatch.setenv("TILE_SPLIT_K", slices)
    out, ref = run_example_gemm(compile_kernel, tmp_path, backend, 4, 264,
                                4104, seed=49)
    assert rel_error(out, ref) < 2e-3


@pytest.mark.parametrize("backend", BACKENDS)
def test_narrow_deterministic(compile_kernel, tmp_path, backend):
    first, _ = run_example_gemm(compile_kernel, tmp_path / "a", backend, 2,
                                1024, 8192, seed=50)
    again, ref = run_example_gemm(compile_kernel, tmp_path / "b", backend, 2,
                                  1024, 8192, seed=50)
    np.testing.assert_array_equal(first, again)
    assert rel_error(first, ref) < 2e-3

"""End to end: examples/linear.mlir, Y = X W^T + bias with W stored N x K
(`transpose_b`), checked against a float64 reference on every target. On
sm_90a the launch goes to the TMA + wgmma variants with W's tiles read
K-major (docs/pipelines.md "sm_90a: TMA + wgmma GEMM variant"); the shapes
pick each of them on the H200 (132 SMs), as for examples/gemm.mlir:

  (4, 1000, 3000)     <= 16 rows: the narrow m64n16 product (M, N, K tails)
  (40, 264, 4104)     <= 64 rows: the narrow m64n64 product
  (256, 256, 8192)    4 tiles, 128 K tiles: split-K
  (1100, 2104, 200)   153 blocks: wide 128x256 tiles (M, N and K tails)
  (1000, 1000, 1000)  64 tiles: the persistent kernel, TMA-store epilogue
  (1000, 1000, 1001)  an odd K: rows of X and W not 16-byte pitched, so no
                      tensor map: repacked (TILE_REPACK=1) or the variant
                      loading through the SM's load units (TILE_REPACK=0)

plus TILE_GEMM_TILE=large / user and TILE_SPLIT_K forcing 3 slices, bf16
operands, and the generic kernels on the CPU and sm_80 on the same shapes."""

import numpy as np
import pytest

from e2e_util import EXAMPLES, TARGET, TARGET_BACKENDS, rel_error

BACKENDS = (TARGET_BACKENDS or
            ["ffi", "native"] + (["nvrtc"] if TARGET == "cuda" else []))


def rows_256(src):
    """examples/linear.mlir with 256x128 output tiles (the sm_90a split
    tiles: each block's 128-row parts with W stored N x K)."""
    edits = [("%c128 = arith.constant 128 : index\n",
              "%c128 = arith.constant 128 : index\n"
              "  %c256 = arith.constant 256 : index\n"),
             ("%gy = arith.ceildivui %M, %c128", "%gy = arith.ceildivui %M, %c256"),
             ("%m0 = arith.muli %by, %c128", "%m0 = arith.muli %by, %c256"),
             ("%Xs = tile.alloc : memref<128x32x", "%Xs = tile.alloc : memref<256x32x"),
             ("to %Xs : memref<?x?xf16> to memref<128x32x",
              "to %Xs : memref<?x?xf16> to memref<256x32x"),
             ("{transpose_b} : memref<128x32x", "{transpose_b} : memref<256x32x"),
             ("memref<128x128xf32", "memref<256x128xf32"),
             ("in [128, 128]", "in [256, 128]")]
    for old, new in edits:
        assert old in src, old
        src = src.replace(old, new)
    return src


def run_linear(compile_kernel, tmp_path, backend, m, n, k, seed, bf16=False,
               rows=128):
    src = (EXAMPLES / "linear.mlir").read_text()
    if rows == 256:
        src = rows_256(src)
    rng = np.random.default_rng(seed)
    shapes = {"X": (m, k), "W": (n, k), "bias": (n,)}
    if bf16:
        # bf16 data travels as float32 (tile-run converts it).
        ml_dtypes = pytest.importorskip("ml_dtypes")
        src = src.replace("xf16", "xbf16").replace("f16 to f32",
                                                   "bf16 to f32")
        inputs = {name: rng.standard_normal(s).astype(ml_dtypes.bfloat16)
                  .astype(np.float32) for name, s in shapes.items()}
    else:
        inputs = {name: rng.standard_normal(s).astype(np.float16)
                  for name, s in shapes.items()}
    bundle = compile_kernel(src)
    out = bundle.run(tmp_path, inputs, backend)["Y"]
    x, w, bias = (inputs[name].astype(np.float64) for name in ("X", "W",
                                                                "bias"))
    return out, x @ w.T + bias


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("m,n,k", [(4, 1000, 3000), (40, 264, 4104),
                                   (256, 256, 8192), (1100, 2104, 200),
                                   (1000, 1000, 1000), (1, 8, 8)])
def test_linear(compile_kernel, tmp_path, backend, m, n, k):
    out, ref = run_linear(compile_kernel, tmp_path, backend, m, n, k, seed=60)
    # f16 output: ~2^-11 relative.
    assert rel_error(out, ref) < 2e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("repack", ["0", "1"])
def test_linear_odd_k(compile_kernel, tmp_path, backend, repack, monkeypatch):
    # TILE_REPACK is read per launch by the runtime (tile-run inherits it).
    monkeypatch.setenv("TILE_REPACK", repack)
    out, ref = run_linear(compile_kernel, tmp_path, backend, 1000, 1000,
                          1001, seed=61)
    assert rel_error(out, ref) < 2e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("env", [("TILE_GEMM_TILE", "large"),
                                 ("TILE_GEMM_TILE", "user"),
                                 ("TILE_SPLIT_K", "3")])
def test_linear_override(compile_kernel, tmp_path, backend, env,
                         monkeypatch):
    monkeypatch.setenv(*env)
    out, ref = run_linear(compile_kernel, tmp_path, backend, 130, 392, 1032,
                          seed=62)
    assert rel_error(out, ref) < 2e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("m,n,k", [(9, 520, 1000), (300, 520, 264)])
def test_linear_bf16(compile_kernel, tmp_path, backend, m, n, k):
    out, ref = run_linear(compile_kernel, tmp_path, backend, m, n, k,
                          seed=63, bf16=True)
    # bf16 output: ~2^-8 relative.
    assert rel_error(out, ref) < 1e-2


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("m,n,k", [(1, 8, 8), (300, 520, 264),
                                   (1025, 1032, 200)])
def test_linear_256_rows(compile_kernel, tmp_path, backend, m, n, k):
    out, ref = run_linear(compile_kernel, tmp_path, backend, m, n, k, seed=64,
                          rows=256)
    assert rel_error(out, ref) < 2e-3

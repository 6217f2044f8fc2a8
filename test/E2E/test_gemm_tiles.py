"""End to end: GEMM launches that the sm_90a wide-tile variant takes on the
H200 (examples/gemm.mlir's 128x128 launch tile run as 128x256 CTA tiles of
two launch blocks, docs/pipelines.md "Tile shape"), checked against a
float64 reference on every target (on the CPU and sm_80 they check the
generic kernels on the same shapes). On 132 SMs the cost model picks:

  (1100, 2104, 200)  17 x 9 = 153 blocks -> 9 x 9 = 81 wide tiles (wide:
                     M, N and K tails; an odd grid x, so the last wide
                     tiles' second blocks lie past the grid)
  (1000, 1000, 1000)  8 x 8 = 64 blocks -> the launch tile (one wave)

and TILE_GEMM_TILE=large forces the wide tiles on small, ragged shapes
(with and without the bias + ReLU epilogue, which each half applies with
its own block's values), =user turns them off. N and K are multiples of 8
so that f16 rows are 16-byte pitched (TMA; otherwise the launch goes to
the variant without tensor maps)."""

import numpy as np
import pytest

import e2e_util
from e2e_util import EXAMPLES, TARGET, TARGET_BACKENDS, f16_inputs, rel_error

BACKENDS = (TARGET_BACKENDS or
            ["ffi", "native"] + (["nvrtc"] if TARGET == "cuda" else []))


def run_example_gemm(compile_kernel, tmp_path, backend, m, n, k, seed=50):
    return e2e_util.run_example_gemm(compile_kernel, tmp_path, backend, m, n,
                                     k, seed)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("m,n,k", [(1100, 2104, 200), (1000, 1000, 1000)])
def test_gemm_tiles_auto(compile_kernel, tmp_path, backend, m, n, k):
    out, ref = run_example_gemm(compile_kernel, tmp_path, backend, m, n, k)
    # f16 output: ~2^-11 relative.
    assert rel_error(out, ref) < 2e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("tile", ["large", "user"])
@pytest.mark.parametrize("m,n,k", [(77, 200, 136), (130, 392, 1032),
                                   (257, 136, 72), (1, 264, 64)])
def test_gemm_tiles_override(compile_kernel, tmp_path, backend, tile, m, n,
                             k, monkeypatch):
    # TILE_GEMM_TILE is read per launch by the runtime (tile-run inherits
    # it); "large" also turns split-K off.
    monkeypatch.setenv("TILE_GEMM_TILE", tile)
    out, ref = run_example_gemm(compile_kernel, tmp_path, backend, m, n, k,
                                seed=51)
    assert rel_error(out, ref) < 2e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("m,n,k", [(129, 264, 3000), (300, 520, 264)])
def test_gemm_tiles_epilogue(compile_kernel, tmp_path, backend, m, n, k,
                             monkeypatch):
    # The epilogue (bias + ReLU, then f16) on both halves of a wide tile.
    monkeypatch.setenv("TILE_GEMM_TILE", "large")
    bundle = compile_kernel((EXAMPLES / "gemm_epilogue.mlir").read_text())
    a, b = f16_inputs(52, m, n, k)
    bias = np.random.default_rng(53).standard_normal(n).astype(np.float16)
    out = bundle.run(tmp_path, {"A": a, "B": b, "bias": bias}, backend)["C"]
    ref = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0)
    assert rel_error(out, ref) < 2e-3

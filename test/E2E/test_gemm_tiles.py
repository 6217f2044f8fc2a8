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
the variant without tensor maps).

Other user tile shapes (utils/bench/sweep_kernels/gemm_tile.mlir.in, and
test/E2E/kernels/gemm.mlir.in's 64x64 tile with B stored N x K) get coarse
tiles of 128x256 on sm_90a: 2 x 4 launch blocks of 64x64, 2 x 2 of 64x128,
1 x 4 of 128x64 (a consumer warpgroup per 64-row block row; each block's
own index computations, stores skipped past the grid). At (1100, 2104,
200) the cost model picks them for all three shapes on 132 SMs
(64x64: 594 blocks -> 81 coarse tiles); TILE_GEMM_TILE=large forces them
on ragged shapes whose grid extents are not multiples of the grouping.
A 64x64 tile also gets 128x128 coarse tiles (2 x 2 blocks, the variant
_wide128), which the cost model picks for mid-size grids on 132 SMs:
(1025, 1032, 200) 17 x 17 = 289 blocks -> 9 x 9 = 81 tiles of 128x128
(the last row and column of tiles half past the grid) against 45 of
128x256 and 3 waves of launch tiles; (1000, 1000, 1000) 256 blocks -> 64.
A 256x128 tile runs as CTA tiles of 128x256: the 128-row parts of two
blocks (test_user_tiles_split: odd grids, M, N and K tails)."""

import numpy as np
import pytest

import e2e_util
from e2e_util import (EXAMPLES, TARGET, TARGET_BACKENDS, f16_inputs,
                      ref_matmul, rel_error)

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


def user_tile_source(tm, tn, dtype="f16"):
    path = EXAMPLES.parent / "utils" / "bench" / "sweep_kernels" / "gemm_tile.mlir.in"
    return path.read_text().format(TM=tm, TN=tn, KT=32, IN=dtype)


# 256x128: more rows than the consumer warpgroups cover, so 128-row parts
# of each block are the CTA tiles (_split, every launch; with "large" too).
USER_TILES = [(64, 64), (64, 128), (128, 64), (256, 128)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("tm,tn", USER_TILES)
@pytest.mark.parametrize("m,n,k", [(77, 200, 136), (300, 520, 264)])
def test_user_tiles_large(compile_kernel, tmp_path, backend, tm, tn, m, n, k,
                          monkeypatch):
    monkeypatch.setenv("TILE_GEMM_TILE", "large")
    bundle = compile_kernel(user_tile_source(tm, tn))
    a, b = f16_inputs(54, m, n, k)
    out = bundle.run(tmp_path, {"A": a, "B": b}, backend)["C"]
    assert rel_error(out, ref_matmul(a, b)) < 2e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("tm,tn", USER_TILES)
def test_user_tiles_auto(compile_kernel, tmp_path, backend, tm, tn):
    bundle = compile_kernel(user_tile_source(tm, tn))
    a, b = f16_inputs(55, 1100, 2104, 200)
    out = bundle.run(tmp_path, {"A": a, "B": b}, backend)["C"]
    assert rel_error(out, ref_matmul(a, b)) < 2e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype,tb", [("f16", True), ("bf16", False)])
def test_user_tiles_64x64_variants(compile_kernel, tmp_path, backend, dtype,
                                   tb, monkeypatch):
    # test/E2E/kernels/gemm.mlir.in: 64x64 tiles rasterized in panels of 2,
    # B stored N x K (transpose_b) or bf16.
    from test_cpu_kernels import run_gemm
    monkeypatch.setenv("TILE_GEMM_TILE", "large")
    out, ref = run_gemm(compile_kernel, tmp_path, backend, 130, 392, 1032,
                        dtype, tb=tb, seed=56)
    assert rel_error(out, ref) < (1e-2 if dtype == "bf16" else 2e-3)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("m,n,k", [(1025, 1032, 200), (1000, 1000, 1000)])
def test_user_tiles_64x64_mid(compile_kernel, tmp_path, backend, m, n, k):
    bundle = compile_kernel(user_tile_source(64, 64))
    a, b = f16_inputs(57, m, n, k)
    out = bundle.run(tmp_path, {"A": a, "B": b}, backend)["C"]
    assert rel_error(out, ref_matmul(a, b)) < 2e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype,tb", [("f16", True), ("bf16", False)])
def test_user_tiles_64x64_variants_mid(compile_kernel, tmp_path, backend,
                                       dtype, tb):
    # The 128x128 coarse tiles of the panel-rasterized 64x64 program.
    from test_cpu_kernels import run_gemm
    out, ref = run_gemm(compile_kernel, tmp_path, backend, 1025, 1032, 264,
                        dtype, tb=tb, seed=58)
    assert rel_error(out, ref) < (1e-2 if dtype == "bf16" else 2e-3)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("tm,tn", [(256, 128), (256, 64)])
@pytest.mark.parametrize("tile", [None, "user"])
@pytest.mark.parametrize("m,n,k", [(1, 72, 40), (40, 1032, 1000),
                                   (100, 1032, 1000), (200, 136, 72),
                                   (1025, 1032, 200), (300, 2056, 1000)])
def test_user_tiles_split(compile_kernel, tmp_path, backend, tm, tn, tile, m,
                          n, k, monkeypatch):
    # sm_90a: M = 1 and 40 run the narrow kernels (16 and 64 rows), M = 100
    # the first part's split-K kernel, the others the split variant of least
    # estimated time (here the 128x128 CTA tiles); TILE_GEMM_TILE=user the
    # first split variant (128x256), or the K slices' model alone for M =
    # 100 (split-K kernels are not coarse variants).
    if tile:
        monkeypatch.setenv("TILE_GEMM_TILE", tile)
    bundle = compile_kernel(user_tile_source(tm, tn))
    a, b = f16_inputs(59, m, n, k)
    out = bundle.run(tmp_path, {"A": a, "B": b}, backend)["C"]
    assert rel_error(out, ref_matmul(a, b)) < 2e-3


def bias2d_source(tm, tn):
    path = EXAMPLES.parent / "test" / "E2E" / "kernels" / "gemm_bias2d.mlir.in"
    return path.read_text().format(TM=tm, TN=tn, KT=32)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("tm,tn,tile", [(256, 128, None), (64, 64, "large"),
                                        (64, 64, None), (128, 128, "large")])
@pytest.mark.parametrize("m,n,k", [(300, 520, 264), (1025, 1032, 200)])
def test_epilogue_rows_and_columns(compile_kernel, tmp_path, backend, tm, tn,
                                   tile, m, n, k, monkeypatch):
    # relu(A B + rowb[m] + colb[n]): each coarse or split CTA tile applies
    # the epilogue with its elements' rows within their own launch block.
    if tile:
        monkeypatch.setenv("TILE_GEMM_TILE", tile)
    check_row_col_bias(compile_kernel(bias2d_source(tm, tn)), tmp_path,
                       backend, m, n, k, seed=60)


def skip_large_on_metal(m, n, k):
    # The Metal CPU shim runs every thread as an OS thread: a 300x520x264
    # GEMM takes minutes there; the small shapes are its evidence.
    if TARGET == "metal" and m * n * k > 20_000_000:
        pytest.skip("metal shim: the small shapes of this test run there")


def check_row_col_bias(bundle, tmp_path, backend, m, n, k, seed):
    """Runs C = relu(A B + rowb[m] + colb[n]) and checks it."""
    a, b = f16_inputs(seed, m, n, k)
    rng = np.random.default_rng(seed + 1)
    rowb = rng.standard_normal(m).astype(np.float16)
    colb = rng.standard_normal(n).astype(np.float16)
    out = bundle.run(tmp_path, {"A": a, "B": b, "rowb": rowb, "colb": colb},
                     backend)["C"]
    ref = np.maximum(a.astype(np.float64) @ b.astype(np.float64) +
                     rowb[:, None] + colb[None, :], 0)
    assert rel_error(out, ref) < 2e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("tm,tn,tile,scope", [
    (128, 128, None, "shared"), (128, 128, "large", "shared"),
    (64, 64, None, "shared"), (256, 128, None, "shared"),
    (128, 128, None, "fragment"), (64, 64, "large", "fragment")])
@pytest.mark.parametrize("m,n,k", [(300, 520, 264), (1025, 1032, 200),
                                   (7, 136, 72)])
def test_staged_epilogue_operands(compile_kernel, tmp_path, backend, tm, tn,
                                  tile, scope, m, n, k, monkeypatch):
    # The same epilogue with the bias tiles staged on chip by tile.copy
    # (kernels/gemm_staged_bias.mlir.in; the row tile in shared memory or
    # a fragment): on sm_90a every Hopper variant reads them from global
    # memory, zero past M and N (M = 7: the narrow kernels); the generic
    # kernels read a fragment row tile from registers.
    skip_large_on_metal(m, n, k)
    if tile:
        monkeypatch.setenv("TILE_GEMM_TILE", tile)
    path = EXAMPLES.parent / "test" / "E2E" / "kernels" / "gemm_staged_bias.mlir.in"
    bundle = compile_kernel(path.read_text().format(TM=tm, TN=tn, KT=32,
                                                    RSCOPE=scope))
    check_row_col_bias(bundle, tmp_path, backend, m, n, k, seed=63)


def transposed_a_source(tm, tn, dtype="f16"):
    path = EXAMPLES.parent / "test" / "E2E" / "kernels" / "gemm_at.mlir.in"
    return path.read_text().format(TM=tm, TN=tn, KT=32, IN=dtype)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("tm,tn,tile", [(128, 128, None), (128, 128, "large"),
                                        (64, 64, None), (64, 64, "large"),
                                        (256, 128, None), (128, 64, None)])
@pytest.mark.parametrize("m,n,k", [(300, 520, 264), (1100, 2104, 200),
                                   (333, 264, 136), (7, 136, 72)])
def test_transposed_a(compile_kernel, tmp_path, backend, tm, tn, tile, m, n,
                      k, monkeypatch):
    # A stored K x M (kernels/gemm_at.mlir.in, transpose_a): on sm_90a the
    # Hopper variants load A as 64x64 boxes and run MN-major wgmmas (M =
    # 333: A's f16 row pitch is not a multiple of 16 bytes, the repacked or
    # the tensor-map-free variant; M = 7: no narrow kernel for a K x M A).
    skip_large_on_metal(m, n, k)
    if tile:
        monkeypatch.setenv("TILE_GEMM_TILE", tile)
    bundle = compile_kernel(transposed_a_source(tm, tn))
    a, b = f16_inputs(65, m, n, k)
    out = bundle.run(tmp_path, {"A": a.T.copy(), "B": b}, backend)["C"]
    assert rel_error(out, ref_matmul(a, b)) < 2e-3


@pytest.mark.parametrize("backend", BACKENDS)
def test_transposed_a_bf16(compile_kernel, tmp_path, backend):
    from test_cpu_kernels import round_to
    bundle = compile_kernel(transposed_a_source(128, 128, "bf16"))
    r = np.random.default_rng(66)
    a = round_to(r.standard_normal((1025, 200)), "bf16")
    b = round_to(r.standard_normal((200, 1032)), "bf16")
    out = bundle.run(tmp_path, {"A": a.T.copy(), "B": b}, backend)["C"]
    assert rel_error(out, ref_matmul(a, b)) < 1e-2


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("tm,tn", [(64, 128), (128, 64)])
@pytest.mark.parametrize("tile", [None, "large"])
@pytest.mark.parametrize("m,n,k", [(200, 136, 72), (1025, 1032, 1000)])
def test_user_tiles_k128(compile_kernel, tmp_path, backend, tm, tn, tile, m,
                         n, k, monkeypatch):
    # K steps of 128: the Hopper kernels run two 64-wide steps per loop
    # iteration (K = 72 and 1000: the last step past K).
    if tile:
        monkeypatch.setenv("TILE_GEMM_TILE", tile)
    path = EXAMPLES.parent / "utils" / "bench" / "sweep_kernels" / "gemm_tile.mlir.in"
    bundle = compile_kernel(path.read_text().format(TM=tm, TN=tn, KT=128,
                                                    IN="f16"))
    a, b = f16_inputs(62, m, n, k)
    out = bundle.run(tmp_path, {"A": a, "B": b}, backend)["C"]
    assert rel_error(out, ref_matmul(a, b)) < 2e-3

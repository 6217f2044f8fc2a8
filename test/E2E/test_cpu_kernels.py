"""End to end: every example and a kernel per op, compiled with tilec and
run through the runtime backends (ffi, native; on cuda also nvrtc: the
bundle's CUDA C++ compiled by NVRTC), checked against a float64 reference. Inputs are fresh seeded random data, never zeros.

The CPU target by default; TILE_E2E_TARGET=cuda runs the same cases on a
GPU for each chip of TILE_E2E_CHIPS (conftest.py, docs/gpu-testing.md)."""

import numpy as np
import pytest

from e2e_util import (EXAMPLES, KERNELS, TARGET, TARGET_BACKENDS, ref_matmul, ref_rowsum,
                      ref_softmax, rel_error)

try:
    import ml_dtypes
    BF16 = ml_dtypes.bfloat16
except ImportError:  # pragma: no cover - the venv pins ml_dtypes
    BF16 = None

BACKENDS = (TARGET_BACKENDS or
            ["ffi", "native"] + (["nvrtc"] if TARGET == "cuda" else []))


def rng(seed):
    return np.random.default_rng(seed)


def round_to(x, dtype):
    """Rounds float data to the kernel's element type (what it will read)."""
    if dtype == "f16":
        return x.astype(np.float16).astype(np.float32)
    if dtype == "bf16":
        return x.astype(BF16).astype(np.float32)
    return x.astype(np.float32)


# --------------------------------------------------------------------------
# GEMM: tails, transposes, dtypes, pipelined vs serial, out_idx allocation.
# --------------------------------------------------------------------------

def gemm_source(dtype, ta, tb, loop, acc=None, out=None):
    acc = acc or ("f32" if dtype != "f32" else "f32")
    out = out or dtype
    a_shape, a_idx, a_dims = (("32x64", "%k0, %m0", '"K", "M"') if ta else
                              ("64x32", "%m0, %k0", '"M", "K"'))
    b_shape, b_idx, b_dims = (("64x32", "%n0, %k0", '"N", "K"') if tb else
                              ("32x64", "%k0, %n0", '"K", "N"'))
    attrs = ", ".join(a for a, on in (("transpose_a", ta),
                                      ("transpose_b", tb)) if on)
    if loop == "pipelined":
        begin = "tile.pipelined %k = %c0 to %nk step %c1 stages(3) {"
    else:
        begin = "scf.for %k = %c0 to %nk step %c1 {"
    return (KERNELS / "gemm.mlir.in").read_text().format(
        IN=dtype, ACC=acc, OUT=out, ADIMS=a_dims, BDIMS=b_dims,
        KDIM="0" if ta else "1", ASHAPE=a_shape, BSHAPE=b_shape,
        AIDX=a_idx, BIDX=b_idx, GEMM_ATTRS=attrs,
        INIT=f"tile.clear %Cf : memref<64x64x{acc}, #tile.scope<fragment>>",
        LOOP_BEGIN=begin, LOOP_END="}")


def run_gemm(compile_kernel, tmp_path, backend, m, n, k, dtype="f16",
             ta=False, tb=False, loop="pipelined", acc=None, seed=0):
    bundle = compile_kernel(gemm_source(dtype, ta, tb, loop, acc))
    r = rng(seed)
    a = round_to(r.standard_normal((m, k)), dtype)
    b = round_to(r.standard_normal((k, n)), dtype)
    a_in = a.T.copy() if ta else a
    b_in = b.T.copy() if tb else b
    outs = bundle.run(tmp_path, {"A": a_in, "B": b_in}, backend)
    return outs["C"], ref_matmul(a, b)


GEMM_SHAPES = [(17, 33, 65), (1000, 1000, 1000), (1, 4096, 4096), (128, 64, 96)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("m,n,k", GEMM_SHAPES)
def test_gemm_f16_tails(compile_kernel, tmp_path, backend, m, n, k):
    out, ref = run_gemm(compile_kernel, tmp_path, backend, m, n, k, "f16")
    # Output rounded to f16: error ~ 2^-11 relative.
    assert rel_error(out, ref) < 2e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("ta,tb", [(True, False), (False, True), (True, True)])
def test_gemm_transposed(compile_kernel, tmp_path, backend, ta, tb):
    out, ref = run_gemm(compile_kernel, tmp_path, backend, 70, 90, 100, "f16",
                        ta=ta, tb=tb, seed=1)
    assert rel_error(out, ref) < 2e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype,tol", [("bf16", 1e-2), ("f32", 1e-5)])
def test_gemm_dtypes(compile_kernel, tmp_path, backend, dtype, tol):
    if dtype == "bf16" and BF16 is None:
        pytest.skip("ml_dtypes missing")
    if dtype == "f32" and TARGET == "cuda":
        # f32 operands multiply as tf32 on the GPU's tensor cores
        # (docs/dialect.md): 10 mantissa bits.
        tol = 3e-3
    out, ref = run_gemm(compile_kernel, tmp_path, backend, 65, 130, 97, dtype,
                        seed=2)
    assert rel_error(out, ref) < tol


@pytest.mark.parametrize("backend", BACKENDS)
def test_gemm_f16_accumulator(compile_kernel, tmp_path, backend):
    out, ref = run_gemm(compile_kernel, tmp_path, backend, 64, 64, 64, "f16",
                        acc="f16", seed=3)
    assert rel_error(out, ref) < 1e-2


def test_pipelined_equals_serial(compile_kernel, tmp_path):
    # Both bundles first: a compile-only (export) run stops at the first run.
    compile_kernel(gemm_source("f32", False, False, "serial"))
    a, _ = run_gemm(compile_kernel, tmp_path / "p", "native", 77, 99, 130,
                    "f32", loop="pipelined", seed=4)
    b, _ = run_gemm(compile_kernel, tmp_path / "s", "native", 77, 99, 130,
                    "f32", loop="serial", seed=4)
    np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------------------
# The examples.
# --------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("m,n,k", [(300, 200, 100), (128, 128, 32)])
def test_example_gemm(compile_kernel, tmp_path, backend, m, n, k):
    bundle = compile_kernel((EXAMPLES / "gemm.mlir").read_text())
    r = rng(5)
    a = round_to(r.standard_normal((m, k)), "f16").astype(np.float16)
    b = round_to(r.standard_normal((k, n)), "f16").astype(np.float16)
    out = bundle.run(tmp_path, {"A": a, "B": b}, backend)["C"]
    assert rel_error(out, ref_matmul(a, b)) < 2e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("m", [1, 37, 64])
def test_example_softmax(compile_kernel, tmp_path, backend, m):
    bundle = compile_kernel((EXAMPLES / "softmax.mlir").read_text())
    x = rng(6).standard_normal((m, 1024)).astype(np.float32) * 3
    out = bundle.run(tmp_path, {"X": x}, backend)["Y"]
    assert rel_error(out, ref_softmax(x)) < 1e-5


@pytest.mark.parametrize("backend", BACKENDS)
# Odd sizes: a row pitch no 16-byte vector divides (1001, 17), a column
# tail in every chunk, a partial last block of rows (1025 = 256 * 4 + 1),
# many column chunks (70001), N = 0.
@pytest.mark.parametrize("m,n", [(1, 1), (100, 300), (64, 128), (1000, 1001),
                                 (3, 70001), (1025, 17), (8, 4096), (5, 0)])
def test_example_reduce_rows(compile_kernel, tmp_path, backend, m, n):
    bundle = compile_kernel((EXAMPLES / "reduce_rows.mlir").read_text())
    x = rng(7).standard_normal((m, n)).astype(np.float32)
    out = bundle.run(tmp_path, {"X": x}, backend)["Y"]
    assert rel_error(out, ref_rowsum(x)) < 1e-5


@pytest.mark.parametrize("backend", BACKENDS)
# Odd sizes: one element, row pitches no 16-byte vector divides (65, 1001,
# 3), partial tiles on both sides, a single row and a single column.
@pytest.mark.parametrize("m,n", [(1, 1), (64, 64), (63, 65), (1000, 1001),
                                 (1, 300), (257, 3), (128, 192)])
def test_example_transpose(compile_kernel, tmp_path, backend, m, n):
    bundle = compile_kernel((EXAMPLES / "transpose.mlir").read_text())
    x = rng(9).standard_normal((m, n)).astype(np.float32)
    out = bundle.run(tmp_path, {"X": x}, backend)["Y"]
    np.testing.assert_array_equal(out, x.T)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [1, 1000, 4096, 5000])
def test_example_elementwise_add(compile_kernel, tmp_path, backend, n):
    bundle = compile_kernel((EXAMPLES / "elementwise_add.mlir").read_text())
    r = rng(8)
    a = r.standard_normal(n).astype(np.float32)
    b = r.standard_normal(n).astype(np.float32)
    outs = bundle.run(tmp_path, {"A": a, "B": b}, backend)
    np.testing.assert_array_equal(outs["C"], a + b)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("batch,m,n,k", [(3, 70, 45, 33), (2, 128, 64, 96),
                                         (1, 1, 1, 1), (5, 17, 130, 8)])
def test_example_batched_gemm(compile_kernel, tmp_path, backend, batch, m, n,
                              k):
    bundle = compile_kernel((EXAMPLES / "batched_gemm.mlir").read_text())
    r = rng(10)
    a = round_to(r.standard_normal((batch, m, k)), "f16").astype(np.float16)
    b = round_to(r.standard_normal((batch, k, n)), "f16").astype(np.float16)
    out = bundle.run(tmp_path, {"A": a, "B": b}, backend)["C"]
    ref = np.stack([ref_matmul(a[i], b[i]) for i in range(batch)])
    assert rel_error(out, ref) < 2e-3


# --------------------------------------------------------------------------
# Rank-reducing copies and views of kernel parameters.
# --------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("b,h,s,d", [(2, 3, 77, 40), (1, 2, 64, 64),
                                     (2, 1, 5, 3)])
def test_attention_scores_bhsd(compile_kernel, tmp_path, backend, b, h, s, d):
    bundle = compile_kernel((KERNELS / "attention_scores.mlir").read_text())
    r = rng(11)
    q = round_to(r.standard_normal((b, h, s, d)), "f16").astype(np.float16)
    # K in the [B, S, H, D] layout.
    k = round_to(r.standard_normal((b, s, h, d)), "f16").astype(np.float16)
    scale = 0.125
    out = bundle.run(tmp_path, {"Q": q, "K": k}, backend,
                     scalars={"scale": scale})["S"]
    kt = k.transpose(0, 2, 3, 1)  # [B, H, D, S]
    ref = np.stack([np.stack([ref_matmul(q[i, j], kt[i, j]) for j in range(h)])
                    for i in range(b)]) * scale
    assert rel_error(out, ref) < 2e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("b,m,n", [(3, 45, 70), (1, 32, 32), (2, 1, 33)])
def test_global_views(compile_kernel, tmp_path, backend, b, m, n):
    bundle = compile_kernel((KERNELS / "global_views.mlir").read_text())
    r = rng(12)
    x = r.standard_normal((b, m, n)).astype(np.float32)
    y = r.standard_normal((b, m, n)).astype(np.float32)
    z = r.standard_normal((b, m, n)).astype(np.float32)
    outs = bundle.run(tmp_path, {"X": x, "Y": y, "Z": z}, backend)
    np.testing.assert_array_equal(outs["Y"], x + 1)
    np.testing.assert_array_equal(outs["Z"], x + 1)


# --------------------------------------------------------------------------
# reduce: every kind, with and without clear, f32 and i32.
# --------------------------------------------------------------------------

NEUTRAL = {
    ("f32", "sum"): "0.0", ("f32", "abssum"): "0.0", ("f32", "absmax"): "0.0",
    ("f32", "max"): "0xFF800000", ("f32", "min"): "0x7F800000",
    ("i32", "sum"): "0", ("i32", "abssum"): "0", ("i32", "absmax"): "0",
    ("i32", "max"): "-2147483648", ("i32", "min"): "2147483647",
}
COMBINE = {"sum": np.add, "abssum": np.add, "max": np.maximum,
           "min": np.minimum, "absmax": np.maximum}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["f32", "i32"])
@pytest.mark.parametrize("kind", ["sum", "max", "min", "abssum", "absmax"])
@pytest.mark.parametrize("clear", [False, True])
def test_reduce(compile_kernel, tmp_path, backend, dtype, kind, clear):
    src = (KERNELS / "reduce.mlir.in").read_text().format(
        T=dtype, KIND=kind, NEUTRAL=NEUTRAL[(dtype, kind)],
        CLEAR=", clear" if clear else "")
    bundle = compile_kernel(src)
    r = rng(9)
    m, n = (37, 60) if clear else (37, 150)
    if dtype == "f32":
        x = r.standard_normal((m, n)).astype(np.float32)
        y = r.standard_normal(m).astype(np.float32)
    else:
        x = r.integers(-1000, 1000, (m, n)).astype(np.int32)
        y = r.integers(-1000, 1000, m).astype(np.int32)
    out = bundle.run(tmp_path, {"X": x, "Y": y}, backend)["Y"]
    vals = np.abs(x) if kind.startswith("abs") else x
    red = {"sum": np.sum, "abssum": np.sum, "max": np.max, "min": np.min,
           "absmax": np.max}[kind](vals.astype(np.float64), axis=1)
    ref = red if clear else COMBINE[kind](y.astype(np.float64), red)
    if dtype == "i32":
        np.testing.assert_array_equal(out, ref.astype(np.int32))
    else:
        assert rel_error(out, ref) < 1e-5


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["f32", "i32"])
@pytest.mark.parametrize("kind", ["sum", "max"])
@pytest.mark.parametrize("threads", [32, 64, 128])
def test_column_reduce(compile_kernel, tmp_path, backend, dtype, kind,
                       threads):
    # A reduction over dim 0 (column statistics): 128 threads give each
    # column two holders (combined through shared memory), 64 and 32 one.
    if TARGET == "metal" and (dtype, kind) != ("f32", "sum"):
        # The Metal CPU shim runs each thread as an OS thread (about 30 s
        # per case here): the f32 sums of every thread count are its evidence.
        pytest.skip("metal shim: the f32 sums run there")
    src = (KERNELS / "column_reduce.mlir.in").read_text().format(
        T=dtype, KIND=kind, NEUTRAL=NEUTRAL[(dtype, kind)], THREADS=threads)
    bundle = compile_kernel(src)
    r = rng(11)
    m, n = 77, 300
    if dtype == "f32":
        x = r.standard_normal((m, n)).astype(np.float32)
        y = r.standard_normal(n).astype(np.float32)
    else:
        x = r.integers(-1000, 1000, (m, n)).astype(np.int32)
        y = r.integers(-1000, 1000, n).astype(np.int32)
    out = bundle.run(tmp_path, {"X": x, "Y": y}, backend)["Y"]
    red = {"sum": np.sum, "max": np.max}[kind](x.astype(np.float64), axis=0)
    ref = COMBINE[kind](y.astype(np.float64), red)
    if dtype == "i32":
        np.testing.assert_array_equal(out, ref.astype(np.int32))
    else:
        assert rel_error(out, ref) < 1e-5


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("s", [37, 130, 200])
def test_masked_scores(compile_kernel, tmp_path, backend, s):
    # A mask filled before each key tile's gemm (tile-specialize-uniform-
    # masks: interior tiles unmasked, diagonal and last tiles masked).
    if TARGET == "metal" and s != 130:
        pytest.skip("metal shim: S = 130 (interior, diagonal and last tiles) "
                    "runs there")
    bundle = compile_kernel((KERNELS / "masked_scores.mlir").read_text())
    r = rng(13)
    q = (r.standard_normal((s, 64)) / 8).astype(np.float16)
    k = (r.standard_normal((s, 64)) / 8).astype(np.float16)
    out = bundle.run(tmp_path, {"Q": q, "K": k}, backend)["M"]
    scores = q.astype(np.float64) @ k.astype(np.float64).T
    scores[np.triu(np.ones((s, s), bool), 1)] = -np.inf
    assert rel_error(out, scores.max(axis=1)) < 2e-3


@pytest.mark.parametrize("n", [1, 300])
@pytest.mark.parametrize("backend", BACKENDS)
def test_int_float_copies(compile_kernel, tmp_path, backend, n):
    # tile.copy converts between integer and float tensors: i32 -> f32 as a
    # signed value, f32 -> i32 and -> i16 toward zero, i16 -> f16.
    bundle = compile_kernel((KERNELS / "int_float_copies.mlir").read_text())
    x = rng(17).integers(-4000, 4000, n).astype(np.int32)
    out = bundle.run(tmp_path, {"X": x}, backend)
    np.testing.assert_array_equal(out["Y"], (x / 4).astype(np.float32))
    np.testing.assert_array_equal(out["Z"], np.trunc(x / 4).astype(np.int32))
    np.testing.assert_array_equal(out["W"], np.trunc(x / 4).astype(np.float16))


@pytest.mark.parametrize("tokens,vocab", [(1, 3), (37, 50)])
@pytest.mark.parametrize("backend", BACKENDS)
def test_gather_rows(compile_kernel, tmp_path, backend, tokens, vocab):
    # Tile starts and element indices loaded from tensors (an embedding
    # lookup): ids past either end of the table read zeros through the
    # copy; the element-wise gather takes ids in range.
    if BF16 is None:
        pytest.skip("ml_dtypes missing")
    bundle = compile_kernel((KERNELS / "gather_rows.mlir").read_text())
    g = rng(23)
    table = round_to(g.standard_normal((vocab, 768)), "bf16")
    table2 = g.standard_normal((vocab + 1, 100)).astype(np.float32)
    ids = g.integers(0, vocab, tokens).astype(np.int32)
    ids[:3] = [-1, vocab, vocab - 1][:tokens]
    jds = g.integers(0, vocab + 1, tokens).astype(np.int32)
    out = bundle.run(tmp_path, {"Ids": ids, "Jds": jds, "Table": table, "Table2": table2}, backend)
    want = np.zeros((tokens, 768), np.float32)
    ok = (ids >= 0) & (ids < vocab)
    want[ok] = table[ids[ok]]
    np.testing.assert_array_equal(out["Out"].astype(np.float32), want)
    np.testing.assert_array_equal(out["Out2"], table2[jds] * 2)


def _saturate(x, dtype):
    info = np.iinfo(dtype)
    with np.errstate(invalid="ignore"):
        y = np.trunc(np.nan_to_num(x.astype(np.float64), nan=0.0, posinf=np.inf, neginf=-np.inf))
    return np.clip(y, info.min, info.max).astype(dtype)


@pytest.mark.parametrize("n", [13, 1000])
@pytest.mark.parametrize("backend", BACKENDS)
def test_saturating_copies(compile_kernel, tmp_path, backend, n):
    # Float -> integer copies saturate: NaN -> 0, infinities and values
    # past the range -> the integer's min / max (f32 -> i32 near 2^31, f16
    # infinities -> i32), in range toward zero.
    bundle = compile_kernel((KERNELS / "saturating_copies.mlir").read_text())
    special = [1.7, -1.7, 127.5, -128.9, 300.0, -300.0, np.nan, np.inf, -np.inf,
               3e9, -3e9, 2147483520.0, 70000.0]
    x = rng(19).uniform(-400, 400, n).astype(np.float32)
    x[:len(special)] = special[:n]
    out = bundle.run(tmp_path, {"X": x}, backend)
    np.testing.assert_array_equal(out["A"], _saturate(x, np.int8))
    np.testing.assert_array_equal(out["B"], _saturate(x, np.int32))
    with np.errstate(over="ignore"):
        h = x.astype(np.float16)
    np.testing.assert_array_equal(out["C"], _saturate(h, np.int32))


MATH_REFS = [np.exp, np.exp2, np.log, np.log2, np.log10, np.log1p, np.sqrt,
             lambda x: 1 / np.sqrt(x), np.sin, np.cos, np.tan, np.tanh,
             np.vectorize(lambda v: __import__("math").erf(v)), np.floor,
             np.ceil, np.trunc, np.rint, np.abs]


@pytest.mark.parametrize("n", [1, 1000])
@pytest.mark.parametrize("backend", BACKENDS)
def test_math_functions(compile_kernel, tmp_path, backend, n):
    # Every float math op of the Python front end (T.exp ... T.round) on
    # every target: the CUDA C++ / Metal headers, HIP without the device
    # libraries (tan, tanh expanded), NVVM's trunc; negative inputs give
    # the NaNs of log, sqrt, rsqrt; halves check round-half-to-even.
    bundle = compile_kernel((KERNELS / "math_functions.mlir").read_text())
    x = np.linspace(-2.9, 2.9, n).astype(np.float32)
    x[:min(n, 6)] = [0.5, 1.5, 2.5, -0.5, -2.5, 0.3][:min(n, 6)]
    out = bundle.run(tmp_path, {"A": x}, backend)["B"]
    with np.errstate(all="ignore"):
        for f, ref in enumerate(MATH_REFS):
            np.testing.assert_allclose(out[f], ref(x.astype(np.float64)),
                                       rtol=1e-5, atol=1e-5, equal_nan=True,
                                       err_msg=f"function #{f}")


# --------------------------------------------------------------------------
# tile.pipelined with global -> fragment producers (register multi-buffering
# by tile-pipeline-fragment-copies for stages >= 2; stages(1) is the serial
# control): trip counts 0, 1, 2, 3 and more, odd sizes, both loop forms.
# --------------------------------------------------------------------------

PIPELINED_LOOPS = {
    "chunks": "tile.pipelined %t = %c0 to %nt step %c1 stages({S}) {{\n"
              "      %col = arith.muli %t, %c64 : index",
    "columns": "tile.pipelined %col = %start to %N step %c64 stages({S}) {{",
}


def ref_decayed_rowsum(x, w, start):
    m, n = x.shape
    acc = np.zeros((m, 64))
    for c in range(start, n, 64):
        chunk = np.zeros((m, 64))
        k = min(64, n - c)
        chunk[:, :k] = x[:, c:c + k].astype(np.float64) * w[:, c:c + k]
        acc = 0.5 * acc + chunk
    return acc.sum(axis=1)


# Trip counts 0, 1, 2, 3, 5, 16 (from column 0); 5 and 0 from a later start.
PIPELINED_SHAPES = [(5, 0, 0), (7, 37, 0), (9, 100, 0), (3, 129, 0),
                    (17, 300, 0), (33, 1000, 0)]
PIPELINED_CASES = ([("chunks",) + s for s in PIPELINED_SHAPES] +
                   [("columns",) + s for s in PIPELINED_SHAPES] +
                   [("columns", 11, 300, 45), ("columns", 6, 50, 70)])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("stages", [1, 2, 3])
@pytest.mark.parametrize("loop,m,n,start", PIPELINED_CASES)
def test_pipelined_fragment_copies(compile_kernel, tmp_path, backend, stages,
                                   loop, m, n, start):
    src = (KERNELS / "pipelined_fragment.mlir.in").read_text().format(
        STAGES=stages, LOOP=loop,
        LOOP_BEGIN=PIPELINED_LOOPS[loop].format(S=stages))
    bundle = compile_kernel(src)
    r = rng(13)
    x = r.standard_normal((m, n)).astype(np.float32)
    w = r.standard_normal((m, n)).astype(np.float32)
    out = bundle.run(tmp_path, {"X": x, "W": w}, backend,
                     scalars={"start": start})["Y"]
    assert rel_error(out, ref_decayed_rowsum(x, w, start)) < 1e-5


# --------------------------------------------------------------------------
# scalars, fill, local/shared/fragment staging, conversions, 3-D grid.
# --------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape,step", [((3, 17, 70), 2), ((5, 8, 32), 4)])
def test_axpy3d(compile_kernel, tmp_path, backend, shape, step):
    bundle = compile_kernel((KERNELS / "axpy3d.mlir").read_text())
    r = rng(10)
    x = r.standard_normal(shape).astype(np.float16)
    y = r.standard_normal(shape).astype(np.float32)
    alpha, bias = 1.5, -0.25
    outs = bundle.run(tmp_path, {"X": x, "Y": y}, backend,
                      scalars={"alpha": alpha, "bias": bias,
                               "batch_step": step})
    ref = np.float32(alpha) * x.astype(np.float32) + y + np.float32(bias)
    if step > 2:
        # Blocks cover 2 batches but the grid steps by `step`: the batches in
        # between are left alone.
        covered = np.zeros(shape[0], bool)
        for z in range(0, -(-shape[0] // step)):
            covered[2 * z:2 * z + 2] = True
        ref = np.where(covered[:, None, None], ref, y)
    np.testing.assert_allclose(outs["Y"], ref, rtol=1e-6, atol=1e-6)


# --------------------------------------------------------------------------
# atomics from concurrently running blocks.
# --------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [4, 1000, 4096])
def test_atomics(compile_kernel, tmp_path, backend, n):
    bundle = compile_kernel((KERNELS / "atomics.mlir").read_text())
    r = rng(11)
    x = r.standard_normal((n, 64)).astype(np.float32)
    acc = r.standard_normal((64, 64)).astype(np.float32)
    mx = np.array([-0.5], np.float32)
    mn = np.array([0.5], np.float32)
    count = np.array([7], np.int32)
    outs = bundle.run(tmp_path, {"X": x, "Acc": acc, "Mx": mx, "Mn": mn,
                                 "Count": count}, backend)
    blocks = -(-n // 4)
    ref_acc = acc.astype(np.float64).copy()
    padded = np.zeros((blocks * 4, 64))
    padded[:n] = x
    for b in range(blocks):
        slot = (b % 16) * 4
        ref_acc[slot:slot + 4] += padded[b * 4:b * 4 + 4]
    assert rel_error(outs["Acc"], ref_acc) < 1e-5
    assert outs["Mx"][0] == max(mx[0], x[:, 0].max())
    assert outs["Mn"][0] == min(mn[0], x[:, 0].min())
    assert outs["Count"][0] == count[0] + blocks


# --------------------------------------------------------------------------
# shared-memory atomics, then atomic_tile (issue 10: a histogram lost counts
# on the GPU without a barrier between the two).
# --------------------------------------------------------------------------

# (dtype, bins, chunk, threads, n): the 256-bin histogram over 4096-
# element blocks (one block and many); a thread count that is not a power of
# two with fewer bins than threads (register-local parallel); a chunk that is
# not a multiple of the threads (replicated layout: the iterations are
# distributed) with more bins than threads.
SHARED_ATOMICS = [
    ("i32", 256, 4096, 128, 4096),
    ("i32", 256, 4096, 128, 50001),
    ("f32", 256, 4096, 128, 50001),
    ("i32", 37, 1056, 96, 10001),
    ("f32", 300, 250, 64, 3001),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype,bins,chunk,threads,n", SHARED_ATOMICS)
def test_shared_atomics_histogram(compile_kernel, tmp_path, backend, dtype,
                                  bins, chunk, threads, n):
    src = (KERNELS / "shared_atomics.mlir.in").read_text().format(
        T=dtype, BINS=bins, CHUNK=chunk, THREADS=threads)
    bundle = compile_kernel(src)
    r = rng(12)
    # A third of the elements in bin 0: heavy contention on one address.
    x = np.where(r.random(n) < 1 / 3, 0, r.integers(0, bins, n)).astype(np.int32)
    if dtype == "f32":
        # Multiples of 1/4 of small magnitude: every partial sum is exact in
        # f32, so the result does not depend on the order of the atomics.
        w = (r.integers(-8, 9, n) / 4).astype(np.float32)
        h = (r.integers(-8, 9, bins) / 4).astype(np.float32)
    else:
        w = r.integers(-3, 4, n).astype(np.int32)
        h = r.integers(-1000, 1000, bins).astype(np.int32)
    blocks = np.array([7], np.int32)
    outs = bundle.run(tmp_path, {"X": x, "W": w, "H": h, "Blocks": blocks},
                      backend)
    ref = h.astype(np.float64) + np.bincount(x, weights=w.astype(np.float64),
                                             minlength=bins)
    np.testing.assert_array_equal(outs["H"], ref.astype(h.dtype))
    assert outs["Blocks"][0] == 7 + -(-n // chunk)

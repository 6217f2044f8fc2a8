"""tile.language kernels compiled and run on the CPU (numpy): the Python
examples (examples/python/*.py) at odd sizes, and kernels exercising the
builder's control flow, scalars, conversions, math and atomics."""

import importlib.util
import math

import numpy as np
import pytest

from tile_testutil import REPO

T = pytest.importorskip("tile.language")
EXAMPLES = REPO / "examples" / "python"


def example(name):
    spec = importlib.util.spec_from_file_location(f"tile_example_{name}",
                                                  EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def jit_cpu(tile):
    """tile.jit with target='cpu'."""
    def deco(**kw):
        return tile.jit(target="cpu", **kw)
    return deco


# ---- the examples ---------------------------------------------------------------

@pytest.mark.parametrize("m,n,k", [(100, 90, 70), (1, 3, 200), (129, 257, 33)])
def test_example_gemm(tile, m, n, k):
    example("gemm").main(m, n, k)


@pytest.mark.parametrize("batch,m,n,k", [(3, 200, 90, 70), (1, 1, 3, 40),
                                         (2, 129, 257, 33)])
def test_example_batched_gemm(tile, batch, m, n, k):
    example("batched_gemm").main(batch, m, n, k)


def test_example_gemm_bf16_small_tiles(tile):
    ml = pytest.importorskip("ml_dtypes")
    ex = example("gemm")
    a = np.random.uniform(-1, 1, (77, 45)).astype(ml.bfloat16)
    b = np.random.uniform(-1, 1, (45, 66)).astype(ml.bfloat16)
    c = ex.matmul(a, b, block_M=32, block_N=64, block_K=16, num_stages=2)
    assert c.dtype == a.dtype and c.shape == (77, 66)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("m,n,k", [(100, 90, 70), (130, 1, 5)])
def test_example_gemm_epilogue(tile, m, n, k):
    example("gemm_epilogue").main(m, n, k)


@pytest.mark.parametrize("m,n", [(37, 700), (5, 1), (3, 513)])
def test_example_softmax(tile, m, n):
    example("softmax").main(m, n)


def test_example_softmax_f16(tile):
    ex = example("softmax")
    x = np.random.uniform(-3, 3, (9, 300)).astype(np.float16)
    y = ex.softmax(x)
    assert y.dtype == np.float16
    e = np.exp(x.astype(np.float32) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y.astype(np.float32), e / e.sum(axis=1, keepdims=True),
                               rtol=1e-2, atol=1e-3)


@pytest.mark.parametrize("m,n", [(37, 1100), (1, 7)])
def test_example_rms_norm(tile, m, n):
    example("rms_norm").main(m, n)


@pytest.mark.parametrize("s,b,h", [(100, 2, 3), (1, 1, 1), (129, 1, 2)])
def test_example_flash_attention(tile, s, b, h):
    example("flash_attention").main(s, b, h, 64)


def test_example_flash_attention_dim32_f32(tile):
    ex = example("flash_attention")
    q, k, v = (np.random.uniform(-1, 1, (1, 70, 2, 32)).astype(np.float32)
               for _ in range(3))
    for causal in (False, True):
        np.testing.assert_allclose(ex.flash_attention(q, k, v, is_causal=causal),
                                   ex.reference(q, k, v, causal), rtol=1e-4, atol=1e-4)


# ---- builder features ------------------------------------------------------------

N = T.symbolic("N")


def test_control_flow_scalars_and_guarded_loads(jit_cpu):
    @jit_cpu(out_idx=1)
    def k(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"),
          alpha: T.float32, n: T.int32):
        with T.Kernel(T.ceildiv(N, 64), threads=32) as bx:
            a = T.alloc_fragment((64,), "float32")
            acc = T.alloc_local((1,), "float32")
            T.copy(A[bx * 64], a)
            acc[0] = 0.0
            for t in range(n):
                acc[0] += alpha * t
            for i in T.Parallel(64):
                g = bx * 64 + i
                if g < N and not (i == 3):
                    a[i] = a[i] * alpha if i % 2 == 0 else T.exp(a[i])
                elif 0 <= i < 5:
                    a[i] = A[g] if g < N else -1.0
                else:
                    a[i] = T.cast(g // 3 - i % 7, "float32") + acc[0]
            T.copy(a, B[bx * 64])

    for n_elems in (100, 130):
        x = np.random.uniform(-1, 1, n_elems).astype(np.float32)
        y = k(x, 0.5, 4)
        acc = sum(0.5 * t for t in range(4))
        ref = np.empty_like(x)
        for g in range(n_elems):
            i = g % 64
            if i != 3:
                ref[g] = x[g] * 0.5 if i % 2 == 0 else math.exp(x[g])
            else:
                ref[g] = x[g]
        np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6)


def test_integer_floor_semantics_and_casts(jit_cpu):
    @jit_cpu(out_idx=[1, 2])
    def k(A: T.Tensor((N,), "int32"), Q: T.Tensor((N,), "int32"),
          F: T.Tensor((N,), "float32"), d: T.int32):
        with T.Kernel(T.ceildiv(N, 32), threads=32) as bx:
            a = T.alloc_fragment((32,), "int32")
            q = T.alloc_fragment((32,), "int32")
            f = T.alloc_fragment((32,), "float32")
            T.copy(A[bx * 32], a)
            for i in T.Parallel(32):
                q[i] = a[i] // d * 100 + a[i] % d
                f[i] = T.cast(a[i], "float32") / 4 + (-a[i]) // 7
            T.copy(q, Q[bx * 32])
            T.copy(f, F[bx * 32])

    a = np.arange(-40, 41, dtype=np.int32)
    q, f = k(a, 3)
    np.testing.assert_array_equal(q, a // 3 * 100 + a % 3)
    np.testing.assert_allclose(f, a / 4 + (-a) // 7)
    q, _ = k(a, -5)
    np.testing.assert_array_equal(q, a // -5 * 100 + a % -5)


def test_saturating_float_to_int_casts(jit_cpu):
    # T.cast from float to integer saturates like tile.copy: NaN -> 0,
    # infinities and values past the range -> the integer's min / max (an
    # f32 near 2^31 included; an f16 infinity -> i32), constants too.
    @jit_cpu(out_idx=[1, 2, 3])
    def k(X: T.Tensor((N,), "float32"), A: T.Tensor((N,), "int8"),
          B: T.Tensor((N,), "int32"), C: T.Tensor((N,), "int32")):
        with T.Kernel(T.ceildiv(N, 32), threads=32) as bx:
            x = T.alloc_fragment((32,), "float32")
            a = T.alloc_fragment((32,), "int8")
            b = T.alloc_fragment((32,), "int32")
            c = T.alloc_fragment((32,), "int32")
            T.copy(X[bx * 32], x)
            for i in T.Parallel(32):
                a[i] = T.cast(x[i], "int8")
                b[i] = T.cast(x[i], "int32") + T.cast(T.float32(3e9), "int32") * 0
                c[i] = T.cast(T.cast(x[i], "float16"), "int32")
            T.copy(a, A[bx * 32])
            T.copy(b, B[bx * 32])
            T.copy(c, C[bx * 32])

    x = np.array([1.7, -1.7, 127.5, -128.9, 300, -300, np.nan, np.inf, -np.inf,
                  3e9, -3e9, 2147483520.0, 70000.0, 0.0], np.float32)

    def sat(v, dt):
        info = np.iinfo(dt)
        v = np.nan_to_num(v.astype(np.float64), nan=0.0, posinf=np.inf, neginf=-np.inf)
        return np.clip(np.trunc(v), info.min, info.max).astype(dt)

    a, b, c = k(x)
    np.testing.assert_array_equal(a, sat(x, np.int8))
    np.testing.assert_array_equal(b, sat(x, np.int32))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(c, sat(x.astype(np.float16), np.int32))


def test_math_functions(jit_cpu):
    funcs = {
        "exp": (T.exp, np.exp), "exp2": (T.exp2, np.exp2), "log": (T.log, np.log),
        "log2": (T.log2, np.log2), "sqrt": (T.sqrt, np.sqrt),
        "rsqrt": (T.rsqrt, lambda x: 1 / np.sqrt(x)), "sin": (T.sin, np.sin),
        "cos": (T.cos, np.cos), "tanh": (T.tanh, np.tanh),
        "erf": (T.erf, np.vectorize(math.erf)), "floor": (T.floor, np.floor),
        "ceil": (T.ceil, np.ceil), "round": (T.round, np.rint),
        "sigmoid": (T.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
        "abs": (T.abs, np.abs), "pow": (lambda x: T.pow(x, 1.5), lambda x: x ** 1.5),
        "log10": (T.log10, np.log10), "log1p": (T.log1p, np.log1p),
        "tan": (T.tan, np.tan), "trunc": (T.trunc, np.trunc),
    }
    names = list(funcs)

    @jit_cpu(out_idx=1)
    def k(A: T.Tensor((N,), "float32"), B: T.Tensor((len(names), N), "float32")):
        with T.Kernel(T.ceildiv(N, 64), threads=32) as bx:
            a = T.alloc_fragment((64,), "float32")
            b = T.alloc_fragment((len(names), 64), "float32")
            T.copy(A[bx * 64], a)
            for i in T.Parallel(64):
                for f, name in enumerate(names):  # a Python loop: unrolled
                    b[f, i] = funcs[name][0](a[i])
            T.copy(b, B[0, bx * 64])

    x = np.random.uniform(0.1, 3, 100).astype(np.float32)
    x[:4] = [0.5, 1.5, 2.5, 2.0]  # round half to even
    out = k(x)
    for f, name in enumerate(names):
        np.testing.assert_allclose(out[f], funcs[name][1](x), rtol=2e-6, atol=2e-6,
                                   err_msg=name)


def test_atomics_and_reduce(jit_cpu):
    M = T.symbolic("M")

    @jit_cpu()
    def k(X: T.Tensor((M, N), "float32"), total: T.Tensor((1,), "float32"),
          cols: T.Tensor((N,), "float32"), biggest: T.Tensor((1,), "float32")):
        with T.Kernel(T.ceildiv(N, 32), T.ceildiv(M, 16), threads=64) as (bx, by):
            x = T.alloc_fragment((16, 32), "float32")
            s = T.alloc_fragment((32,), "float32")
            r = T.alloc_fragment((16,), "float32")
            T.copy(X[by * 16, bx * 32], x)
            T.reduce_sum(x, s, dim=0)
            T.atomic_add(cols[bx * 32], s)          # tile atomic
            T.reduce_absmax(x, r, dim=-1)
            for i in T.Parallel(16):
                T.atomic_add(total[0], r[i])          # scalar atomics
                T.atomic_max(biggest[0], r[i])

    x = np.random.uniform(-1, 1, (50, 70)).astype(np.float32)
    total, cols, biggest = (np.zeros(1, np.float32), np.zeros(70, np.float32),
                            np.zeros(1, np.float32))
    k(x, total, cols, biggest)
    np.testing.assert_allclose(cols, x.sum(axis=0), rtol=1e-5, atol=1e-5)
    # per block: the sum over its rows of the row's max |x| in the block's
    # columns (padding reads zeros, which a max of |x| ignores)
    ref = sum(np.abs(x[:, c:c + 32]).max(axis=1).sum() for c in range(0, 70, 32))
    np.testing.assert_allclose(total[0], ref, rtol=1e-5)
    np.testing.assert_allclose(biggest[0], np.abs(x).max(), rtol=1e-6)


def test_const_dims_specialize_per_shape(jit_cpu):
    n, d = T.const("n, d")

    @jit_cpu(out_idx=-1)
    def k(A: T.Tensor((n, d)), B: T.Tensor((n, d))):
        with T.Kernel(n, threads=32) as bx:
            a = T.alloc_fragment((1, d), A.dtype)
            T.copy(A[bx, 0], a)
            for i, j in T.Parallel(1, d):
                a[i, j] = a[i, j] * d + bx
            T.copy(a, B[bx, 0])

    for shape in ((3, 5), (4, 8), (3, 5)):
        x = np.random.rand(*shape).astype(np.float32)
        np.testing.assert_allclose(k(x), x * shape[1] + np.arange(shape[0])[:, None],
                                   rtol=1e-6)
    assert len(k.kernels) == 2
    assert "memref<4x8xf32>" in k.get_ir(np.zeros((4, 8), np.float32))


# ---- docs/python.md, "Runtime scalars and reductions" -----------------------------

def test_norm_with_a_runtime_eps_and_column_reductions(jit_cpu):
    """The docs' kernels: eps as a runtime scalar (one kernel for every
    value), reductions accumulated across a loop with clear=False, over
    dim 1 and dim 0, and a row-split column sum combined with atomics."""
    M, N = T.symbolic("M, N")

    @jit_cpu(out_idx=1)
    def rms_norm(A: T.Tensor((M, N)), B: T.Tensor((M, N)), eps: T.float32,
                 block_M=4, block_N=512):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            a = T.alloc_fragment((block_M, block_N), T.float32)
            b = T.alloc_fragment((block_M, block_N), T.float32)
            rms = T.alloc_fragment((block_M,), T.float32)
            T.clear(rms)
            for k in T.Pipelined(T.ceildiv(N, block_N), num_stages=2):
                T.copy(A[bx * block_M, k * block_N], a)
                for i, j in T.Parallel(block_M, block_N):
                    a[i, j] = a[i, j] * a[i, j]
                T.reduce_sum(a, rms, dim=1, clear=False)
            for i in T.Parallel(block_M):
                rms[i] = T.rsqrt(rms[i] / N + eps)
            for k in T.Pipelined(T.ceildiv(N, block_N), num_stages=2):
                T.copy(A[bx * block_M, k * block_N], b)
                for i, j in T.Parallel(block_M, block_N):
                    b[i, j] *= rms[i]
                T.copy(b, B[bx * block_M, k * block_N])

    a = np.random.uniform(-1, 1, (100, 1300)).astype(np.float32)
    for eps in (1e-6, 0.5):
        ref = a / np.sqrt((a.astype(np.float64) ** 2).mean(axis=1, keepdims=True) + eps)
        np.testing.assert_allclose(rms_norm(a, eps), ref, rtol=1e-4, atol=1e-5)
    assert len(rms_norm.kernels) == 1

    @jit_cpu(out_idx=-1)
    def col_sum(X: T.Tensor((M, N)), Y: T.Tensor((N,)), block_M=64, block_N=128):
        with T.Kernel(T.ceildiv(N, block_N), threads=128) as bx:
            x = T.alloc_fragment((block_M, block_N), T.float32)
            acc = T.alloc_fragment((block_N,), T.float32)
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(M, block_M), num_stages=2):
                T.copy(X[k * block_M, bx * block_N], x)
                T.reduce_sum(x, acc, dim=0, clear=False)
            T.copy(acc, Y[bx * block_N])

    x = np.random.uniform(-1, 1, (1000, 300)).astype(np.float32)
    np.testing.assert_allclose(col_sum(x), x.sum(axis=0), rtol=1e-4, atol=1e-4)

    @jit_cpu()
    def col_sum_split(X: T.Tensor((M, N)), Y: T.Tensor((N,)), block_M=64,
                      block_N=128, splits=8):
        with T.Kernel(T.ceildiv(N, block_N), splits, threads=128) as (bx, by):
            x = T.alloc_fragment((block_M, block_N), T.float32)
            acc = T.alloc_fragment((block_N,), T.float32)
            T.clear(acc)
            for k in T.serial(T.ceildiv(T.ceildiv(M, block_M), splits)):
                T.copy(X[(k * splits + by) * block_M, bx * block_N], x)
                T.reduce_sum(x, acc, dim=0, clear=False)
            T.atomic_add(Y[bx * block_N], acc)

    x = np.random.uniform(-1, 1, (5000, 100)).astype(np.float32)
    y = np.zeros(100, np.float32)
    col_sum_split(x, y)
    np.testing.assert_allclose(y, x.sum(axis=0), rtol=1e-4, atol=1e-3)


# ---- the sweep's user-written kernels (utils/bench/sweep_kernels/user_kernels.py) ----

@pytest.fixture(scope="module")
def user_kernels(tile):
    spec = importlib.util.spec_from_file_location(
        "tile_sweep_user_kernels",
        REPO / "utils" / "bench" / "sweep_kernels" / "user_kernels.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return {name: tile.compile(text, target="cpu")
            for name, text in mod.sources().items()}


@pytest.mark.parametrize("m,n", [(9, 1300), (5, 512), (3, 37)])
def test_user_norms(user_kernels, m, n):
    """Two-pass bf16 LayerNorm and residual add + RMSNorm at odd sizes (a
    partial last column tile, a block of fewer than 4 rows)."""
    ml = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(0)
    bf = lambda *s: rng.uniform(-2, 2, s).astype(ml.bfloat16)
    x, r, w, b = bf(m, n), bf(m, n), bf(n), bf(n)
    f = lambda a: a.astype(np.float64)
    y = np.zeros((m, n), ml.bfloat16)
    user_kernels["user_layer_norm"](x, w, b, y, 1e-5)
    mean = f(x).mean(1, keepdims=True)
    var = (f(x) ** 2).mean(1, keepdims=True) - mean ** 2
    ref = (f(x) - mean) / np.sqrt(var + 1e-5) * f(w) + f(b)
    np.testing.assert_allclose(f(y), ref, rtol=2e-2, atol=5e-2)
    h, y = np.zeros((m, n), ml.bfloat16), np.zeros((m, n), ml.bfloat16)
    user_kernels["user_add_rms_norm"](x, r, w, h, y, 1e-6)
    hs = (f(x) + f(r)).astype(np.float32).astype(ml.bfloat16)
    np.testing.assert_array_equal(h, hs)
    ref = f(h) / np.sqrt((f(h) ** 2).mean(1, keepdims=True) + 1e-6) * f(w)
    np.testing.assert_allclose(f(y), ref, rtol=2e-2, atol=5e-2)


@pytest.mark.parametrize("m,n", [(9, 1300), (6, 512), (2, 3)])
def test_user_row_argmax(user_kernels, m, n):
    """First index of the row maximum, ties included (values from a small
    set repeat within a row)."""
    rng = np.random.default_rng(1)
    x = rng.integers(-5, 6, (m, n)).astype(np.float32)
    i = np.zeros(m, np.int32)
    user_kernels["user_row_argmax"](x, i)
    np.testing.assert_array_equal(i, x.argmax(1))


@pytest.mark.parametrize("m,n", [(9, 1300), (6, 512), (2, 3)])
def test_user_cross_entropy(user_kernels, m, n):
    ml = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(2)
    x = rng.uniform(-8, 8, (m, n)).astype(ml.bfloat16)
    lab = rng.integers(0, n, m).astype(np.int32)
    loss = np.zeros(m, np.float32)
    user_kernels["user_cross_entropy"](x, lab, loss)
    f = x.astype(np.float64)
    mx = f.max(1)
    ref = np.log(np.exp(f - mx[:, None]).sum(1)) + mx - f[np.arange(m), lab]
    np.testing.assert_allclose(loss, ref, rtol=1e-4, atol=1e-4)


def test_copy_converts_between_integers_and_floats(jit_cpu):
    """T.copy of int32 labels into a float fragment (a signed value) and of
    floats into an int32 tensor (toward zero), as TileLang's copy does."""
    @jit_cpu(out_idx=1)
    def k(L: T.Tensor((N,), "int32"), Y: T.Tensor((N,), "int32")):
        with T.Kernel(T.ceildiv(N, 64), threads=32) as bx:
            f = T.alloc_fragment((64,), "float32")
            T.copy(L[bx * 64], f)
            for i in T.Parallel(64):
                f[i] = f[i] * 0.75
            T.copy(f, Y[bx * 64])

    x = np.arange(-100, 101, dtype=np.int32)
    np.testing.assert_array_equal(k(x), np.trunc(x * 0.75).astype(np.int32))


# ---- docs/python.md, "Indices read from tensors" ------------------------------

def test_embedding_gather_from_the_docs(jit_cpu):
    Tn, V = T.symbolic("Tn, V")
    E = T.const("E")

    @jit_cpu(out_idx=-1)
    def embedding(Ids: T.Tensor((Tn,), T.int32), Table: T.Tensor((V, E)),
                  Out: T.Tensor((Tn, E))):
        with T.Kernel(Tn, threads=128) as t:
            row = T.alloc_fragment((1, E), Table.dtype)
            T.copy(Table[Ids[t], 0], row)
            T.copy(row, Out[t, 0])

    table = np.random.default_rng(5).standard_normal((50, 768)).astype(np.float32)
    ids = np.array([3, -1, 50, 49, 0, 7], np.int32)
    out = embedding(ids, table)
    want = np.zeros((6, 768), np.float32)
    ok = (ids >= 0) & (ids < 50)
    want[ok] = table[ids[ok]]
    np.testing.assert_array_equal(out, want)

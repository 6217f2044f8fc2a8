"""End to end: fused kernels of issue 14 (FlashAttention forward, GEMM with
a bias + ReLU epilogue, RMSNorm), their examples and template variants,
through both runtime backends, against float64 references. Odd sizes
exercise the predicated tails."""

import numpy as np
import pytest

from e2e_util import EXAMPLES, KERNELS, TARGET_BACKENDS, rel_error

try:
    import ml_dtypes
    BF16 = ml_dtypes.bfloat16
except ImportError:  # pragma: no cover - the venv pins ml_dtypes
    BF16 = None

BACKENDS = TARGET_BACKENDS or ["ffi", "native"]
NP_TYPE = {"f16": np.float16, "bf16": BF16}


def rng(seed):
    return np.random.default_rng(seed)


def as_dtype(x, dtype):
    """x rounded to `dtype`; bf16 data travels as float32 (tile-run converts
    it to the parameter's element type)."""
    if dtype == "bf16":
        if BF16 is None:
            pytest.skip("ml_dtypes missing")
        return x.astype(BF16).astype(np.float32)
    return x.astype(NP_TYPE[dtype])


def body(text):
    """The text from the first line that is not a // comment."""
    lines = text.splitlines()
    first = next(i for i, l in enumerate(lines) if not l.startswith("//"))
    return "\n".join(lines[first:])


# --------------------------------------------------------------------------
# FlashAttention forward.
# --------------------------------------------------------------------------

FA_EXAMPLE = dict(DT="f16", D=64, BM=64, BN=64, THREADS=128, STAGES=2)


def fa_source(**params):
    return (KERNELS / "flash_attention.mlir.in").read_text().format(
        **dict(FA_EXAMPLE, **params))


def ref_attention(q, k, v, scale, causal):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = np.einsum("bhqd,bhkd->bhqk", q, k) * scale
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), dtype=bool)), s, -np.inf)
    s = s - s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(axis=-1, keepdims=True)
    return np.einsum("bhqk,bhkd->bhqd", p, v)


def run_attention(bundle, tmp_path, backend, b, h, s, d, dtype, causal,
                  seed, scale=None):
    r = rng(seed)
    q, k, v = (as_dtype(r.standard_normal((b, h, s, d)), dtype)
               for _ in range(3))
    scale = 1.0 / np.sqrt(d) if scale is None else scale
    out = bundle.run(tmp_path, {"Q": q, "K": k, "V": v}, backend,
                     scalars={"scale": scale, "causal": int(causal)})["O"]
    return out, ref_attention(q, k, v, scale, causal)


def test_example_flash_attention_is_template_instance():
    example = (EXAMPLES / "flash_attention.mlir").read_text()
    assert body(example) == body(fa_source()).rstrip("\n")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("b,h,s", [(1, 2, 100), (2, 1, 64), (1, 1, 1)])
def test_example_flash_attention(compile_kernel, tmp_path, backend, causal, b,
                                 h, s):
    bundle = compile_kernel((EXAMPLES / "flash_attention.mlir").read_text())
    out, ref = run_attention(bundle, tmp_path, backend, b, h, s, 64, "f16",
                             causal, seed=20)
    assert rel_error(out, ref) < 5e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("scale", [-0.3, 0.0])
def test_example_flash_attention_any_scale(compile_kernel, tmp_path, backend,
                                           causal, scale):
    # The row maximum is taken before scaling: a negative scale takes the
    # minimum and hides masked keys as +inf; 0 gives the mean of V.
    bundle = compile_kernel((EXAMPLES / "flash_attention.mlir").read_text())
    out, ref = run_attention(bundle, tmp_path, backend, 1, 2, 100, 64, "f16",
                             causal, seed=25, scale=scale)
    assert rel_error(out, ref) < 5e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype,d,causal", [("bf16", 64, False),
                                            ("bf16", 128, True),
                                            ("f16", 128, False),
                                            ("f16", 128, True)])
def test_flash_attention_variants(compile_kernel, tmp_path, backend, dtype, d,
                                  causal):
    bundle = compile_kernel(fa_source(DT=dtype, D=d))
    out, ref = run_attention(bundle, tmp_path, backend, 2, 2, 77, d, dtype,
                             causal, seed=21)
    assert rel_error(out, ref) < (2e-2 if dtype == "bf16" else 5e-3)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("d,causal", [(64, True), (128, False)])
def test_flash_attention_one_stage(compile_kernel, tmp_path, backend, d,
                                   causal):
    # stages(1), the default of examples/python/flash_attention.py: the plain
    # kernel runs the loop serially, sm_90a's warp-specialized variants give
    # it two stages (and two or three blocks per multiprocessor).
    bundle = compile_kernel(fa_source(D=d, STAGES=1))
    out, ref = run_attention(bundle, tmp_path, backend, 2, 2, 201, d, "f16",
                             causal, seed=26)
    assert rel_error(out, ref) < 5e-3


@pytest.mark.parametrize("backend", BACKENDS)
def test_flash_attention_large_tiles(compile_kernel, tmp_path, backend):
    # 128-row query tiles over 4 warps (two m16 tiles per warp), 5 key tiles,
    # a 3-stage pipeline.
    bundle = compile_kernel(fa_source(BM=128, BN=64, THREADS=128, STAGES=3))
    out, ref = run_attention(bundle, tmp_path, backend, 1, 2, 300, 64, "f16",
                             True, seed=22)
    assert rel_error(out, ref) < 5e-3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype,d,causal", [("bf16", 128, True),
                                            ("f16", 64, False)])
def test_flash_attention_two_warpgroups(compile_kernel, tmp_path, backend,
                                        dtype, d, causal):
    # 128x128 tiles over two warpgroups (sm_90a: both gemms on wgmma; the
    # rows of 256 bytes at d = 128 in 128-byte panels), odd S.
    bundle = compile_kernel(fa_source(DT=dtype, D=d, BM=128, BN=128,
                                      THREADS=256, STAGES=2))
    out, ref = run_attention(bundle, tmp_path, backend, 1, 3, 333, d, dtype,
                             causal, seed=24)
    assert rel_error(out, ref) < (2e-2 if dtype == "bf16" else 5e-3)


# --------------------------------------------------------------------------
# GEMM + bias + ReLU.
# --------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("m,n,k", [(200, 300, 100), (128, 128, 32),
                                   (1, 129, 7)])
def test_example_gemm_epilogue(compile_kernel, tmp_path, backend, m, n, k):
    bundle = compile_kernel((EXAMPLES / "gemm_epilogue.mlir").read_text())
    r = rng(23)
    a = as_dtype(r.standard_normal((m, k)), "f16")
    b = as_dtype(r.standard_normal((k, n)), "f16")
    bias = as_dtype(r.standard_normal(n), "f16")
    out = bundle.run(tmp_path, {"A": a, "B": b, "bias": bias}, backend)["C"]
    ref = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0)
    assert rel_error(out, ref) < 2e-3


# --------------------------------------------------------------------------
# RMSNorm.
# --------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("m", [1, 37, 64])
def test_example_rmsnorm(compile_kernel, tmp_path, backend, m):
    bundle = compile_kernel((EXAMPLES / "rmsnorm.mlir").read_text())
    r = rng(24)
    x = as_dtype(r.standard_normal((m, 1024)) * 2, "f16")
    w = as_dtype(r.standard_normal(1024), "f16")
    eps = 1e-6
    out = bundle.run(tmp_path, {"X": x, "W": w}, backend,
                     scalars={"eps": eps})["Y"]
    x64 = x.astype(np.float64)
    ref = x64 / np.sqrt((x64 ** 2).mean(axis=1, keepdims=True) + eps) * w
    assert rel_error(out, ref) < 2e-3


# --------------------------------------------------------------------------
# Row and column statistics of a GEMM accumulator (slice layouts, shuffle
# reductions within and across warps on the GPU).
# --------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("m,n,k", [(100, 70, 40), (64, 64, 32), (1, 130, 5)])
def test_gemm_row_col_stats(compile_kernel, tmp_path, backend, m, n, k):
    bundle = compile_kernel(
        (KERNELS / "gemm_row_col_stats.mlir").read_text())
    r = rng(25)
    a = as_dtype(r.standard_normal((m, k)), "f16")
    b = as_dtype(r.standard_normal((k, n)), "f16")
    tiles = -(-m // 64)
    outs = bundle.run(tmp_path, {"A": a, "B": b,
                                 "R": np.zeros(m, np.float32),
                                 "X": np.zeros((tiles, n), np.float32)},
                      backend)
    c = a.astype(np.float64) @ b.astype(np.float64)
    assert rel_error(outs["R"], c.sum(axis=1)) < 1e-5
    x = np.stack([c[64 * t:64 * t + 64].max(axis=0) for t in range(tiles)])
    if m % 64:  # the last tile's rows past M are zeros
        x[-1] = np.maximum(x[-1], 0)
    assert rel_error(outs["X"], x) < 1e-6

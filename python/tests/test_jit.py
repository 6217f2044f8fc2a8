"""@tile.jit: specialization, dispatch without re-tracing, the factory form,
get_ir / get_source, TILE_DUMP_IR, the disk cache, and the generated IR of
every Python example round-tripping through tile-opt."""

import importlib.util
import json
import pathlib
import subprocess

import numpy as np
import pytest

from tile_testutil import REPO

T = pytest.importorskip("tile.language")
N = T.symbolic("N")


def make_scale(tile, **kw):
    @tile.jit(out_idx=-1, target="cpu", **kw)
    def scale(A: T.Tensor((N,)), B: T.Tensor((N,)), factor=2.0, block=256):
        with T.Kernel(T.ceildiv(N, block), threads=32) as bx:
            a = T.alloc_fragment((block,), A.dtype)
            T.copy(A[bx * block], a)
            for i in T.Parallel(block):
                a[i] = a[i] * factor
            T.copy(a, B[bx * block])
    return scale


@pytest.fixture
def traces(monkeypatch):
    """Counts the traces @tile.jit runs."""
    import tile.jit_decorator as jit_mod
    calls = []
    real = jit_mod.trace

    def counting(*a, **kw):
        calls.append(kw.get("dtypes"))
        return real(*a, **kw)
    monkeypatch.setattr(jit_mod, "trace", counting)
    return calls


def test_specializes_on_dtype_and_config(tile, fresh_cache, traces):
    scale = make_scale(tile)
    x32 = np.arange(300, dtype=np.float32)
    for _ in range(3):
        np.testing.assert_array_equal(scale(x32), x32 * 2)
    assert len(traces) == 1  # compiled once, then the one-entry cache
    x16 = np.arange(300).astype(np.float16)
    y16 = scale(x16)
    assert y16.dtype == np.float16  # the output follows the input's dtype
    np.testing.assert_array_equal(y16, x16 * 2)
    np.testing.assert_array_equal(scale(x32, factor=3.0), x32 * 3)
    np.testing.assert_array_equal(scale(x32, factor=3.0, block=64), x32 * 3)
    assert len(traces) == 4
    scale(x32), scale(x16), scale(x32, factor=3.0)  # all cached by key
    assert len(traces) == 4
    assert len(scale.kernels) == 4
    out = np.empty_like(x32)
    assert scale(x32, out) is out  # outputs may be passed
    np.testing.assert_array_equal(out, x32 * 2)


def test_call_errors(tile, fresh_cache):
    scale = make_scale(tile)
    x = np.zeros(8, np.float32)
    with pytest.raises(TypeError, match="unexpected keyword argument.*blocks"):
        scale(x, blocks=3)
    with pytest.raises(TypeError, match=r"expected 2 arguments \(or 1 without"):
        scale(x, x, x)
    with pytest.raises(tile.ArgumentError):
        scale(x, np.zeros(8, np.float16))  # the runtime checks the output dtype


def test_static_kernel_dispatch_is_direct(tile, fresh_cache, traces):
    @tile.jit(out_idx=-1, target="cpu")
    def add1(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 128), threads=32) as bx:
            a = T.alloc_fragment((128,), "float32")
            T.copy(A[bx * 128], a)
            for i in T.Parallel(128):
                a[i] += 1
            T.copy(a, B[bx * 128])
    x = np.zeros(5, np.float32)
    for _ in range(3):
        np.testing.assert_array_equal(add1(x), x + 1)
    assert len(traces) == 1 and list(add1.kernels) == [()]


def test_auto_target_follows_the_arguments(tile, fresh_cache):
    @tile.jit(out_idx=-1)
    def neg(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 64), threads=32) as bx:
            a = T.alloc_fragment((64,), "float32")
            T.copy(A[bx * 64], a)
            for i in T.Parallel(64):
                a[i] = -a[i]
            T.copy(a, B[bx * 64])
    x = np.ones(3, np.float32)
    np.testing.assert_array_equal(neg(x), -x)
    assert [k.target_kind for k in neg.kernels.values()] == ["cpu"]
    assert list(neg.kernels) == [("cpu",)]


def test_factory_form(tile, fresh_cache):
    calls = []

    @tile.jit(out_idx=[-1], target="cpu")
    def axpy(block, alpha):
        calls.append(block)

        @T.prim_func
        def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32"),
                 Z: T.Tensor((N,), "float32")):
            with T.Kernel(T.ceildiv(N, block), threads=32) as bx:
                x = T.alloc_fragment((block,), "float32")
                y = T.alloc_fragment((block,), "float32")
                T.copy(X[bx * block], x)
                T.copy(Y[bx * block], y)
                for i in T.Parallel(block):
                    x[i] = x[i] * alpha + y[i]
                T.copy(x, Z[bx * block])
        return main

    k = axpy(64, 3.0)
    assert isinstance(k, tile.Kernel) and k.out_idx == [2]
    assert axpy(64, 3.0) is k and axpy(block=64, alpha=3.0) is not None
    assert calls == [64, 64]  # the keyword form is another key, same kernel
    assert axpy(64, alpha=3.0) is axpy(64, alpha=3.0)
    x, y = np.arange(100, dtype=np.float32), np.ones(100, np.float32)
    np.testing.assert_array_equal(k(x, y), 3 * x + 1)
    assert "func.func @main" in k.get_source("mlir")
    assert "tile.parallel" in axpy.get_ir(32, 1.0)
    with pytest.raises(T.TileLangError, match="must return a T.prim_func"):
        tile.jit(lambda n: n)(3)


def test_get_ir_get_source_and_dump(tile, fresh_cache, tmp_path, monkeypatch):
    scale = make_scale(tile)
    x = np.zeros(10, np.float32)
    text = scale.get_ir(x, block=128)
    assert text.startswith("func.func @scale(")
    assert "memref<128xf32, #tile.scope<fragment>>" in text
    assert scale.get_source(x, block=128, kind="mlir")
    with pytest.raises(T.TileLangError, match="cannot specialize without A"):
        scale.get_ir()
    dump = tmp_path / "dump"
    monkeypatch.setenv("TILE_DUMP_IR", str(dump))
    scale(x, block=128)
    dirs = list(dump.iterdir())
    assert len(dirs) == 1 and dirs[0].name.startswith("scale-")
    assert (dirs[0] / "source.mlir").read_text() == text
    assert len(list(dirs[0].rglob("*.mlir"))) > 2  # IR after the passes


def test_disk_cache_hit_in_a_new_jit(tile, fresh_cache, capfd):
    x = np.zeros(10, np.float32)
    make_scale(tile, verbose=True)(x)
    assert "disk cache miss" in capfd.readouterr().err
    tile.clear_cache(disk=False)
    make_scale(tile, verbose=True)(x)
    assert "disk cache hit" in capfd.readouterr().err


def test_python_locations_optional(tile, fresh_cache):
    with_loc = make_scale(tile).get_ir(np.zeros(1, np.float32))
    without = make_scale(tile, locations=False).get_ir(np.zeros(1, np.float32))
    assert "loc(" in with_loc and "loc(" not in without


# ---- the IR carries out_idx; compiling for another machine; remarks --------------

def test_get_ir_text_alone_compiles_to_the_same_kernel(tile, fresh_cache, tmp_path):
    """get_ir marks the out_idx outputs tile.output (as tilec --out-idx
    does), so tilec / tile.compile on the text alone give the jit's kernel;
    out_idx again is harmless, another one an error."""
    scale = make_scale(tile)
    x = np.arange(10, dtype=np.float32)
    ir = scale.get_ir(x)
    assert '%B: memref<?xf32> {tile.name = "B", tile.dims = ["N"], tile.output}' in ir
    k = tile.compile(ir, target="cpu")
    assert k.out_idx == [1]
    np.testing.assert_array_equal(k(x), 2 * x)    # B omitted
    assert tile.compile(ir, target="cpu", out_idx=-1) is k
    assert tile.compile(ir, target="cpu", out_idx=[1]) is k
    assert scale.compile(x) is k                  # one kernel, one cache entry
    with pytest.raises(ValueError, match=r"out_idx \[0\] names parameter\(s\) "
                       r"0 \(A\).*already marks 1 \(B\) as outputs"):
        tile.compile(ir, target="cpu", out_idx=0)
    src = tmp_path / "scale.mlir"
    src.write_text(ir)
    for extra in ([], ["--out-idx=-1"]):
        meta = subprocess.run([tile.find_tilec(), str(src), "--emit=metadata",
                               "-o", "-", *extra], capture_output=True, text=True)
        assert meta.returncode == 0, meta.stderr
        assert json.loads(meta.stdout)["out_idx"] == [1]

    factory = copy_factory(tile)
    ir = factory.get_ir(64)
    assert ir.count("tile.output") == 1
    assert tile.compile(ir, target="cpu") is factory(64)


def copy_factory(tile):
    """A @tile.jit factory (a function returning a T.prim_func): Y = X in
    blocks of `block`."""
    @tile.jit(out_idx=-1, target="cpu")
    def factory(block):
        @T.prim_func
        def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
            with T.Kernel(T.ceildiv(N, block), threads=32) as bx:
                a = T.alloc_fragment((block,), "float32")
                T.copy(X[bx * block], a)
                T.copy(a, Y[bx * block])
        return main
    return factory


def _cuda_toolchain(tile):
    try:
        tile.toolchain.tilec_env(["--target=cuda"])
    except tile.toolchain.ToolchainError as e:
        pytest.skip(str(e))


def test_compile_and_export_for_a_gpu_this_host_lacks(tile, fresh_cache,
                                                     tmp_path, monkeypatch):
    """f.export(path, ..., target=) / f.compile(..., inspect_only=True):
    sm_90a bundles on a host without a CUDA driver (TILE_CUDA_DRIVER names
    nothing). Loading one here fails naming the way out, and leaves the
    cache entry alone."""
    _cuda_toolchain(tile)
    monkeypatch.setenv("TILE_CUDA_DRIVER", str(tmp_path / "no-libcuda.so"))
    scale = make_scale(tile)
    x = np.zeros(10, np.float32)
    path = scale.export(tmp_path / "scale.tileb", x, target="cuda:sm_90a",
                        block=128)
    k = tile.load(path, device=None)
    assert (k.name, k.target_kind, k.target_chip) == ("scale", "cuda", "sm_90a")
    assert k.out_idx == [1] and "ptx" in k.sections
    assert "memref<128xf32" in k.get_source("mlir")
    k2 = scale.compile(x, target="cuda:sm_90a", inspect_only=True, block=128)
    assert k2.inspect_only and k2.bundle == k.bundle
    assert ".entry scale_kernel(" in scale.get_source(
        x, kind="ptx", target="cuda:sm_90a", inspect_only=True, block=128)
    with pytest.raises(tile.TileError, match=r"no CUDA driver.*inspect_only=True"
                       r".*f\.export\(path.*device=None") as e:
        scale.compile(x, target="cuda:sm_90a", block=128)
    assert e.value.status == "NO_DEVICE"
    with pytest.raises(tile.TileError, match="inspect_only"):
        tile.load(path)
    entries = list((fresh_cache / "kernels").iterdir())
    assert len(entries) == 1  # the failed load kept the entry
    # the factory form takes the same keywords
    factory = copy_factory(tile)
    k3 = tile.load(factory.export(tmp_path / "f.tileb", 64, target="cuda:sm_90a"),
                   device=None)
    assert (k3.target_chip, k3.out_idx) == ("sm_90a", [1])


def _small_tile_gemm(tile, **kw):
    M, N, K = T.symbolic("M, N, K")

    @tile.jit(out_idx=-1, target="cuda:sm_90a", **kw)
    def matmul(A: T.Tensor((M, K)), B: T.Tensor((K, N)), C: T.Tensor((M, N))):
        with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 32), threads=128) as (bx, by):
            A_s = T.alloc_shared((32, 32), A.dtype)
            B_s = T.alloc_shared((32, 64), B.dtype)
            C_l = T.alloc_fragment((32, 64), T.float32)
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, 32), num_stages=2):  # remark
                T.copy(A[by * 32, k * 32], A_s)
                T.copy(B[k * 32, bx * 32], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * 32, bx * 64])
    return matmul


def test_remarks_on_a_cache_hit_and_without_locations(tile, fresh_cache, capfd):
    """verbose prints tilec's remarks on a miss and again on a hit (kept
    with the entry; also kernel.remarks); with locations=False they name the
    Python line and the kernel's MLIR line, not tilec's temporary file."""
    _cuda_toolchain(tile)
    h = np.zeros((4, 4), np.float16)
    line = next(i for i, t in enumerate(open(__file__), 1) if "# remark" in t
                and "T.Pipelined" in t)
    want = f"{__file__}:{line}:"
    for hit in (False, True):
        tile.clear_cache(disk=False)
        f = _small_tile_gemm(tile, verbose=True, locations=False)
        k = f.compile(h, h, inspect_only=True)
        err = capfd.readouterr().err
        assert f"disk cache {'hit' if hit else 'miss'}" in err
        assert f"{want}" in err and "remark: no sm90 GEMM kernels" in err, err
        remarks = [t for t in err.splitlines() if "remark:" in t]
        assert all("(<kernel matmul>:" in t and "tile-compile-" not in t
                   for t in remarks), remarks
        assert "loc(" not in f.get_ir(h, h)
        assert "no sm90 GEMM kernels" in k.remarks
    quiet = _small_tile_gemm(tile, locations=False).compile(h, h, inspect_only=True)
    assert capfd.readouterr().err == "" and "no sm90 GEMM kernels" in quiet.remarks


def test_compile_errors_name_the_python_line_without_locations(tile, fresh_cache):
    """What only tilec rejects, in a kernel traced with locations=False: the
    error names the Python line and the kernel's MLIR line."""
    @tile.jit(target="cpu", locations=False)
    def k(A: T.Tensor((N,), "float32")):
        with T.Kernel(4) as bx:
            a = T.alloc_shared((16, 16), "int16")
            c = T.alloc_fragment((16, 16), "int16")
            T.gemm(a, a, c)  # gemm
    line = next(i for i, t in enumerate(open(__file__), 1) if "# gemm" in t
                and "T.gemm" in t)
    with pytest.raises(tile.CompileError) as e:
        k.compile()
    assert f"{__file__}:{line}:" in str(e.value) and "(<kernel k>:" in str(e.value)
    assert "tile-compile-" not in str(e.value)


# ---- the examples' IR round-trips through tile-opt ---------------------------------

def _example(name):
    spec = importlib.util.spec_from_file_location(
        f"tile_example_{name}", REPO / "examples" / "python" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _example_irs():
    h, f = np.zeros((4, 4), np.float16), np.zeros((4, 4), np.float32)
    g, e = _example("gemm"), _example("gemm_epilogue")
    fa = _example("flash_attention")
    q = np.zeros((1, 4, 2, 64), np.float16)  # [B, S, H, D]
    return {
        "gemm": g.matmul.get_ir(h, h),
        "gemm_epilogue": e.matmul_bias_relu.get_ir(h, h, np.zeros(4, np.float16)),
        "softmax": _example("softmax").softmax.get_ir(f),
        "rms_norm": _example("rms_norm").rms_norm.get_ir(f),
        "flash_attention": fa.flash_attention.get_ir(q, q, q),
        "flash_attention_causal": fa.flash_attention.get_ir(q, q, q, is_causal=True),
    }


def test_example_ir_roundtrips_through_tile_opt(tile, tmp_path):
    tile_opt = pathlib.Path(tile.find_tilec()).with_name("tile-opt")
    if not tile_opt.exists():
        pytest.skip("tile-opt not built")
    for name, text in _example_irs().items():
        src = tmp_path / f"{name}.mlir"
        src.write_text(text)
        r = subprocess.run([str(tile_opt), str(src), "--mlir-print-debuginfo"],
                           capture_output=True, text=True)
        assert r.returncode == 0, f"{name}: {r.stderr}"
        again = tmp_path / f"{name}.2.mlir"
        again.write_text(r.stdout)
        r2 = subprocess.run([str(tile_opt), str(again), "--mlir-print-debuginfo"],
                            capture_output=True, text=True)
        assert r2.returncode == 0 and r2.stdout == r.stdout, name


def test_dims_computed_from_consts(tile, fresh_cache, traces):
    # T.Tensor dims may be expressions of T.const dims: a const no input has
    # alone is bound from an input dim a * C + b (X: (M, 2 * H) binds H for
    # the out_idx output), one that is bound gives static extents the
    # runtime checks (C: (S, D // 2)); T.symbolic dims cannot be combined.
    M = T.symbolic("M")
    H, D = T.const("H, D")

    @tile.jit(out_idx=-1, target="cpu")
    def silu_and_mul(X: T.Tensor((M, 2 * H), "float32"), Out: T.Tensor((M, H), "float32")):
        with T.Kernel(M, threads=32) as bx:
            g = T.alloc_fragment((1, H), "float32")
            u = T.alloc_fragment((1, H), "float32")
            T.copy(X[bx, 0], g)
            T.copy(X[bx, H], u)
            for i, j in T.Parallel(1, H):
                g[i, j] = g[i, j] / (1 + T.exp(-g[i, j])) * u[i, j]
            T.copy(g, Out[bx, 0])

    x = np.random.default_rng(0).standard_normal((5, 200)).astype(np.float32)
    g, u = x[:, :100], x[:, 100:]
    np.testing.assert_allclose(silu_and_mul(x), g / (1 + np.exp(-g)) * u, rtol=1e-5, atol=1e-6)
    assert len(traces) == 1
    from tile.language.errors import TileLangError
    with pytest.raises(TileLangError, match=r"dim 1 of 'X' is 199, which is not 2 \* T.const\('H'\)"):
        silu_and_mul(np.zeros((5, 199), np.float32))

    @tile.jit(out_idx=-1, target="cpu")
    def shifted(X: T.Tensor((M, H + 3), "float32"), Out: T.Tensor((M, H), "float32")):
        with T.Kernel(M, threads=32) as bx:
            g = T.alloc_fragment((1, H), "float32")
            T.copy(X[bx, 0], g)
            T.copy(g, Out[bx, 0])
    with pytest.raises(TileLangError, match=r"which is not .* for any H >= 0"):
        shifted(np.zeros((2, 2), np.float32))

    @tile.jit(out_idx=-1, target="cpu")
    def halves(X: T.Tensor((M, D), "float32"), C: T.Tensor((M, D // 2), "float32"),
               Y: T.Tensor((M, D // 2 + 1), "float32")):
        with T.Kernel(M, threads=32) as bx:
            a = T.alloc_fragment((1, D // 2 + 1), "float32")
            T.clear(a)
            c = T.alloc_fragment((1, D // 2), "float32")
            h = T.alloc_fragment((1, D // 2), "float32")
            T.copy(X[bx, 0], h)
            T.copy(C[bx, 0], c)
            for i, j in T.Parallel(1, D // 2):
                a[i, j] = h[i, j] * c[i, j]
            T.copy(a, Y[bx, 0])

    x = np.random.default_rng(1).standard_normal((3, 64)).astype(np.float32)
    c = np.random.default_rng(2).standard_normal((3, 32)).astype(np.float32)
    y = halves(x, c)
    assert y.shape == (3, 33)
    np.testing.assert_allclose(y[:, :32], x[:, :32] * c, rtol=1e-6)
    with pytest.raises(tile.ArgumentError, match="dim 1 is 31 but must be 32"):
        halves(x, c[:, :31].copy())

    S = T.symbolic("S")
    with pytest.raises(TileLangError, match="computed from T.symbolic dims"):
        @tile.jit(target="cpu")
        def bad(X: T.Tensor((S * 2,), "float32")):
            pass


def test_inplace_parameter(tile, fresh_cache):
    # T.Tensor(..., inplace=True) is tile.inplace: the same memory may be
    # passed for it and another argument (Y = Y + a * X with X is Y); without
    # it the runtime refuses the overlap; on a parameter the kernel never
    # writes the compiler refuses it.
    def make(inplace):
        @tile.jit(target="cpu")
        def axpy(X: T.Tensor((N,), "float32"),
                 Y: T.Tensor((N,), "float32", inplace=inplace), a: T.float32):
            with T.Kernel(T.ceildiv(N, 128), threads=32) as bx:
                x = T.alloc_fragment((128,), "float32")
                y = T.alloc_fragment((128,), "float32")
                T.copy(X[bx * 128], x)
                T.copy(Y[bx * 128], y)
                for i in T.Parallel(128):
                    y[i] = y[i] + a * x[i]
                T.copy(y, Y[bx * 128])
        return axpy

    axpy = make(True)
    assert "tile.inplace" in axpy.get_ir(np.zeros(3, np.float32), np.zeros(3, np.float32), 1.0)
    y = np.arange(300, dtype=np.float32)
    axpy(y, y, 2.0)
    np.testing.assert_array_equal(y, np.arange(300, dtype=np.float32) * 3)
    with pytest.raises(tile.ArgumentError, match="overlaps"):
        make(False)(y, y, 2.0)

    @tile.jit(target="cpu")
    def read_only(X: T.Tensor((N,), "float32", inplace=True), Y: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 128), threads=32) as bx:
            x = T.alloc_fragment((128,), "float32")
            T.copy(X[bx * 128], x)
            T.copy(x, Y[bx * 128])
    with pytest.raises(tile.CompileError, match="inplace"):
        read_only(np.zeros(5, np.float32), np.zeros(5, np.float32))

"""tile.language: the IR the builder prints (verified by tile-opt, and
round-tripped through it), constant folding, hoisting, the AST rewrite, and
errors located at the user's line. No compile here (test_language_kernels.py
runs kernels)."""

import inspect
import os
import pathlib
import re
import subprocess

import pytest

T = pytest.importorskip("tile.language")

N = T.symbolic("N")
M, K = T.symbolic("M, K")
THIS = os.path.abspath(__file__)


def lineno(fn, marker):
    """The line of `marker` in fn's source (errors must point at it)."""
    lines, first = inspect.getsourcelines(fn)
    for i, text in enumerate(lines):
        if marker in text:
            return first + i
    raise AssertionError(marker)


@pytest.fixture(scope="module")
def tile_opt(tile):
    path = pathlib.Path(tile.find_tilec()).with_name("tile-opt")
    if not path.exists():
        pytest.skip("tile-opt not built")
    return str(path)


def opt(tile_opt, text, tmp_path, *args):
    src = tmp_path / "k.mlir"
    src.write_text(text)
    return subprocess.run([tile_opt, str(src), *args], capture_output=True, text=True)


def roundtrip(tile_opt, text, tmp_path):
    """tile-opt verifies the text, and its output parses again to itself."""
    r = opt(tile_opt, text, tmp_path, "--mlir-print-debuginfo")
    assert r.returncode == 0, r.stderr + text
    r2 = opt(tile_opt, r.stdout, tmp_path, "--mlir-print-debuginfo")
    assert r2.returncode == 0, r2.stderr
    assert r2.stdout == r.stdout
    return r.stdout


def body(text):
    """The ops without locations."""
    return "\n".join(line.split(" loc(")[0] for line in text.splitlines())


# ---- kernels used below ----------------------------------------------------

@T.prim_func
def add(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"),
        C: T.Tensor((N,), "float32")):
    with T.Kernel(T.ceildiv(N, 1024), threads=128) as bx:
        a = T.alloc_fragment((1024,), "float32")
        b = T.alloc_fragment((1024,), "float32")
        T.copy(A[bx * 1024], a)
        T.copy(B[bx * 1024:(bx + 1) * 1024], b)
        for i in T.Parallel(1024):
            a[i] += b[i]
        T.copy(a, C[bx * 1024])


@T.prim_func
def gemm(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
         C: T.Tensor((M, N), "float16")):
    with T.Kernel(T.ceildiv(N, 128), T.ceildiv(M, 128), threads=128) as (bx, by):
        A_s = T.alloc_shared((128, 32), "float16")
        B_s = T.alloc_shared((32, 128), "float16")
        C_f = T.alloc_fragment((128, 128), "float32")
        T.use_swizzle(panel_size=8, order="column")
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, 32), num_stages=3):
            T.copy(A[by * 128, k * 32], A_s)
            T.copy(B[k * 32, bx * 128], B_s)
            T.gemm(A_s, B_s, C_f)
        T.copy(C_f, C[by * 128, bx * 128])


@T.prim_func
def control(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"),
            alpha: T.float32, n: T.int32):
    with T.Kernel(T.ceildiv(N, 256), threads=128) as bx:
        a = T.alloc_fragment((256,), "float32")
        acc = T.alloc_local((1,), "float32")
        T.copy(A[bx * 256], a)
        acc[0] = 0.0
        for t in range(n):
            acc[0] += alpha * t
        for i in T.Parallel(256):
            g = bx * 256 + i
            if g < N and not (i == 3):
                a[i] = a[i] * alpha if i % 2 == 0 else T.exp(a[i])
            elif 0 <= i < 5:
                a[i] = A[g] if g < N else 0.0
            else:
                a[i] = T.cast(g // 3 - i % 7, "float32") + acc[0]
        T.copy(a, B[bx * 256])
        T.atomic_add(B[0], 1.0)


@T.prim_func
def pipelined_order(A: T.Tensor((M, K), "float16"), C: T.Tensor((M,), "float32")):
    with T.Kernel(T.ceildiv(M, 64), threads=128) as bx:
        A_s = T.alloc_shared((64, 64), "float16")
        A_f = T.alloc_fragment((64, 64), "float32")
        acc = T.alloc_fragment((64,), "float32")
        T.clear(acc)
        for k in T.Pipelined(T.ceildiv(K, 64), num_stages=2, order=[0, 2, 1], stage=[0, 1, 1]):
            T.copy(A[bx * 64, k * 64], A_s)
            T.copy(A_s, A_f)
            T.reduce_sum(A_f, acc, dim=1, clear=False)
        T.atomic_add(C[bx * 64], acc)


# ---- IR ------------------------------------------------------------------------

@pytest.mark.parametrize("kernel", [add, gemm, control, pipelined_order],
                         ids=lambda k: k.name)
def test_roundtrips_through_tile_opt(tile_opt, tmp_path, kernel):
    out = roundtrip(tile_opt, kernel.script(), tmp_path)
    assert "tile.launch" in out
    assert THIS in out  # the Python locations survive


def test_add_ir():
    text = body(add.script())
    assert 'func.func @add(%A: memref<?xf32> {tile.name = "A", tile.dims = ["N"]}' in text
    assert "attributes {tile.kernel}" in text
    assert "%N = memref.dim %A, %c0 : memref<?xf32>" in text
    # grid: ceildiv of a dim by a constant, the form host-side grids support
    assert "arith.ceildivui %N, %c1024 : index" in text
    # TileLang-style start point and the equal slice give the same copy;
    # bx * 1024 is computed once (CSE), the dead element loads are dropped
    assert text.count("arith.muli %bx, %c1024") == 1
    assert "memref.load %A" not in text and "memref.load %B" not in text
    assert "tile.parallel (%i) in [1024]" in text
    assert "arith.addf" in text


def test_locations_point_at_user_lines():
    text = add.script()
    line = lineno(add.fn, "T.copy(A[bx * 1024], a)")
    assert re.search(r'tile.copy %A\[%\d+\] to %a : memref<\?xf32> to '
                     r'memref<1024xf32, #tile.scope<fragment>> loc\("'
                     + re.escape(THIS) + f'":{line}:', text)
    assert "loc(" not in T.prim_func(add.fn, locations=False).script()


def test_gemm_ir():
    text = body(gemm.script())
    assert "attributes {raster = #tile.raster<panel = 8, order = column>}" in text
    # by * 128 and bx * 128 are loop-invariant: computed before the loop, and
    # the trip count ceildiv(K, 32) in the function prelude (the SM90 matcher
    # needs both)
    pre, loop = text.split("tile.pipelined")
    assert "arith.muli %by, %c128" in pre and "arith.muli %bx, %c128" in pre
    assert pre.index("arith.ceildivui %K, %c32") < pre.index("tile.launch")
    assert "stages(3)" in loop and "arith.muli %k, %c32" in loop
    assert "tile.gemm %A_s, %B_s, %C_f : memref<128x32xf16, #tile.scope<shared>>" in loop


def test_control_flow_ir():
    text = body(control.script())
    assert "scf.for %t = %c0 to %1 step %c1" in text
    assert "arith.index_cast %n : i32 to index" in text
    assert text.count("scf.if") == 4
    # `a if c else b` reading memory: only the taken arm runs (scf.if results)
    assert text.count("-> (f32)") == 2
    assert "arith.xori" in text  # not (...)
    assert "arith.andi" in text  # and / chained comparison
    assert "arith.divui" in text and "arith.remui" in text  # non-negative // %
    assert "tile.atomic add %cst_0, %B[%c0] : f32, memref<?xf32>" in text


def test_pipelined_order_and_stage():
    text = body(pipelined_order.script())
    # one entry per op of the body: muli (stmt 0), copy (0), copy (1), reduce (2)
    assert "stages(2) attributes {stage = array<i64: 0, 0, 1, 1>, order = array<i64: 0, 1, 3, 2>}" in text
    assert re.search(r"tile.atomic_tile add %acc to %C\[%\d+\] : memref<64xf32, "
                     r"#tile.scope<fragment>> to memref<\?xf32>", text)


def test_constant_folding_and_select():
    @T.prim_func
    def k(A: T.Tensor((64,), "float16")):
        with T.Kernel(T.ceildiv(1000, 128), threads=32) as bx:
            a = T.alloc_fragment((64,), "float16")
            T.copy(A[0], a)
            for i in T.Parallel(64):
                x = a[i]
                a[i * 1 + (3 * 4 - 12)] = T.max(x * 2, 0.5) if i < 32 else -x
    text = body(k.script())
    assert "in (%c8)" in text  # ceildiv(1000, 128) folded
    assert "arith.muli" not in text and "arith.addi" not in text  # i * 1 + 0
    # arms without loads are computed both and selected
    assert "arith.select" in text and "scf.if" not in text
    assert "arith.maximumf" in text and "arith.negf" in text
    assert "arith.constant 0.5 : f16" in text


def test_scalar_types_promote():
    @T.prim_func
    def k(A: T.Tensor((64,), "float16"), B: T.Tensor((64,), "int32"), s: T.int64):
        with T.Kernel(1, threads=32) as bx:
            a = T.alloc_fragment((64,), "float16")
            b = T.alloc_fragment((64,), "int32")
            T.copy(A[0], a)
            T.copy(B[0], b)
            for i in T.Parallel(64):
                a[i] = a[i] * b[i] + i / 4 + s
                b[i] = b[i] // 2 - b[i] % 3 + T.cast(a[i], "int32")
    text = body(k.script())
    assert "arith.sitofp" in text and "arith.fptosi" in text
    assert "arith.floordivsi" in text  # signed operands: floor semantics
    assert "arith.extf" in text or "arith.truncf" in text


def test_symbols_and_const_dims():
    n, d = T.const("n, d")
    @T.prim_func
    def k(A: T.Tensor((n, d), "float32")):
        with T.Kernel(1) as bx:
            a = T.alloc_fragment((d,), "float32")
            T.copy(A[0, 0:d], a) if False else None
    assert k.needs_binding()
    text = k.script(const_bindings={n: 100, d: 64})
    assert 'memref<100x64xf32> {tile.name = "A", tile.dims = ["n", "d"]}' in text


def test_static_dims_named_by_param():
    @T.prim_func
    def k(A: T.Tensor((N, 64), "float32"), B: T.Tensor((8,), "float32")):
        with T.Kernel(N) as bx:
            a = T.alloc_fragment((8,), "float32")
            T.copy(B[0], a)
    text = k.script()
    assert 'tile.dims = ["N", "A.1"]' in text
    assert '%B: memref<8xf32> {tile.name = "B"}' in text


def test_helper_macro():
    @T.macro
    def relu_if(x):
        if x > 0:
            return x
        return x * 0
    @T.prim_func
    def k(A: T.Tensor((64,), "float32")):
        with T.Kernel(1) as bx:
            a = T.alloc_fragment((64,), "float32")
            for i in T.Parallel(64):
                a[i] = T.max(a[i], 0)
    assert "arith.maximumf" in k.script()
    assert relu_if(3) == 3  # static Python values keep Python semantics


# ---- errors --------------------------------------------------------------------

def _raises(fn, marker, match):
    with pytest.raises(T.TileLangError, match=match) as e:
        fn()
    assert e.value.filename == THIS
    assert e.value.lineno == lineno(fn, marker), str(e.value)
    assert str(e.value).startswith(f"{THIS}:{e.value.lineno}: ")


def test_error_copy_extent():
    def f():
        @T.prim_func
        def k(A: T.Tensor((N,), "float32")):
            with T.Kernel(4) as bx:
                a = T.alloc_fragment((128,), "float32")
                T.copy(A[bx * 64:(bx + 1) * 64], a)  # mark
    _raises(f, "# mark", "extent 64 in dim 0 differs from the on-chip buffer's 128")


def test_error_value_escapes_region():
    def f():
        @T.prim_func
        def k(A: T.Tensor((N,), "float32")):
            with T.Kernel(4) as bx:
                a = T.alloc_fragment((128,), "float32")
                for i in T.Parallel(128):
                    v = a[i] * 2
                a[0] = v  # mark
    _raises(f, "# mark", "computed inside a T.Parallel body")


def test_error_gemm_shapes():
    def f():
        @T.prim_func
        def k(A: T.Tensor((N,), "float16")):
            with T.Kernel(4) as bx:
                a = T.alloc_shared((64, 32), "float16")
                c = T.alloc_fragment((64, 64), "float32")
                T.gemm(a, a, c)  # mark
    _raises(f, "# mark", r"K of A \(32\) and of B \(64\) differ")


def test_rank_reducing_copy():
    @T.prim_func
    def k(A: T.Tensor((N, 64, N, 32), "float16")):
        with T.Kernel(4) as bx:
            a = T.alloc_shared((64, 32), "float16")
            T.copy(A[bx, :, 2, 0:32], a)
            T.copy(a, A[1, 0:64, bx, :])
    text = k.script()
    assert "drop_dims [0, 2]" in text
    assert text.count("drop_dims") == 2


def test_error_open_slice_of_a_dynamic_dim():
    # X[bx, :] over a dynamic dim would copy the fragment's width from
    # column 0 and cut a longer row silently: an error naming the tensor,
    # the dim and the forms to write instead.
    def f():
        @T.prim_func
        def k(X: T.Tensor((M, N), "float32")):
            with T.Kernel(4) as bx:
                a = T.alloc_fragment((512,), "float32")
                T.copy(X[bx, :], a)  # mark
    _raises(f, "# mark", r"X\[\.\.\., :\] slices dim 1 of 'X' \(memref<\?x\?xf32>\)"
            r".*dynamic \(N\).*X\[bx, 0:512\].*X\[bx, k \* 512\].*"
            r"T\.ceildiv\(N, 512\)")

    def g():  # an open-ended slice too, and the other way round
        @T.prim_func
        def k(X: T.Tensor((N,), "float32")):
            with T.Kernel(4) as bx:
                a = T.alloc_fragment((64,), "float32")
                T.copy(a, X[bx * 64:])  # mark
    _raises(g, "# mark", r"slices dim 0 of 'X'.*X\[0:64\]")

    def h():  # the tile of an atomic as well
        @T.prim_func
        def k(X: T.Tensor((N, 8), "float32")):
            with T.Kernel(4) as bx:
                a = T.alloc_fragment((64, 8), "float32")
                T.atomic_add(X[:, 0:8], a)  # mark
    _raises(h, "# mark", r"T\.atomic_add: X\[:, \.\.\.\] slices dim 0")


def test_slices_with_a_known_extent():
    # Legal: `:` over a static dim equal to the buffer's extent, and static
    # slices / tile starts over a dynamic one.
    @T.prim_func
    def k(X: T.Tensor((N, 512), "float32"), Y: T.Tensor((M, N), "float32")):
        with T.Kernel(4) as bx:
            a = T.alloc_fragment((512,), "float32")
            T.copy(X[bx, :], a)
            T.copy(a, Y[bx, 0:512])
            T.copy(a, Y[bx, 2 * 512])
    assert k.script().count("tile.copy") == 3


def test_script_marks_out_idx_outputs():
    @T.prim_func
    def k(A: T.Tensor((N,), "float32"), s: T.float32, B: T.Tensor((N,), "float32")):
        with T.Kernel(4) as bx:
            a = T.alloc_fragment((64,), "float32")
            T.copy(A[bx * 64], a)
            T.copy(a, B[bx * 64])
    assert "tile.output" not in k.script()
    head = k.script(out_idx=-1).split("attributes")[0]
    assert head.count("tile.output") == 1
    assert '%B: memref<?xf32> {tile.name = "B", tile.dims = ["N"], tile.output}' in head
    with pytest.raises(T.TileLangError, match="names the scalar parameter 's'"):
        k.script(out_idx=1)
    with pytest.raises(T.TileLangError, match="out_idx 3 out of range"):
        k.script(out_idx=3)


def test_tile_start_of_a_batch():
    # A[bz, i, j] into a 2-D buffer: the batch dim is dropped (TileLang's
    # batched GEMM), both ways.
    @T.prim_func
    def k(A: T.Tensor((N, N, 32), "float16")):
        with T.Kernel(4, 2) as (bx, bz):
            a = T.alloc_shared((64, 32), "float16")
            T.copy(A[bz, bx * 64, 0], a)
            T.copy(a, A[bz, bx * 64, 0])
    text = k.script()
    assert text.count("drop_dims [0]") == 2


def test_error_rank_reducing_copy():
    def f():
        @T.prim_func
        def k(A: T.Tensor((N, 4, N), "float16")):
            with T.Kernel(4) as bx:
                a = T.alloc_shared((64, 32), "float16")
                T.copy(A[bx, 0:64, 0], a)  # mark
    _raises(f, "# mark", r"the region keeps 1 of the global tensor's 3 dims "
            r"\(dims \[0, 2\] are indexed by a scalar and dropped\)")

    def g():
        @T.prim_func
        def k(A: T.Tensor((N, 4, N), "float16")):
            with T.Kernel(4) as bx:
                a = T.alloc_shared((64, 32), "float16")
                T.copy(A[bx, 0:64, 0:16], a)  # mark
    _raises(g, "# mark", r"extent 16 in dim 2 differs from the on-chip "
            r"buffer's 32 in dim 1")


def test_error_break_out_of_parallel():
    def f():
        @T.prim_func
        def k(A: T.Tensor((N,), "float16")):
            with T.Kernel(4) as bx:
                a = T.alloc_shared((64,), "float16")
                for i in T.Parallel(64):
                    break  # mark
                T.clear(a)
    _raises(f, "# mark", "leaving a T.Parallel loop early")


def test_error_dynamic_shape_alloc():
    def f():
        @T.prim_func
        def k(A: T.Tensor((N,), "float16")):
            with T.Kernel(4) as bx:
                T.alloc_shared((N,), "float16")  # mark
    _raises(f, "# mark", "static shapes")


def test_error_dynamic_condition_in_plain_helper():
    def helper(x):
        if x > 0:  # mark
            return x
        return -x

    def f():
        @T.prim_func
        def k(A: T.Tensor((N,), "float32")):
            with T.Kernel(4) as bx:
                a = T.alloc_fragment((64,), "float32")
                for i in T.Parallel(64):
                    a[i] = helper(a[i])
    with pytest.raises(T.TileLangError, match="@T.macro") as e:
        f()
    assert e.value.lineno == lineno(helper, "# mark")


def test_error_return_in_dynamic_if():
    def f():
        @T.prim_func
        def k(A: T.Tensor((N,), "float32")):
            with T.Kernel(4) as bx:
                a = T.alloc_fragment((64,), "float32")
                for i in T.Parallel(64):
                    if a[i] > 0:
                        return  # mark
    _raises(f, "# mark", "return inside an `if` on a tile value")


def test_error_static_index_out_of_range():
    def f():
        @T.prim_func
        def k(A: T.Tensor((N,), "float32")):
            with T.Kernel(4) as bx:
                a = T.alloc_fragment((64,), "float32")
                a[64] = 1  # mark
    _raises(f, "# mark", "index 64 out of range")


def test_error_outside_kernel_and_bad_types():
    def f():
        @T.prim_func
        def k(A: T.Tensor((N,), "float32")):
            T.alloc_fragment((64,), "float32")  # mark
    _raises(f, "# mark", r"inside `with T.Kernel")
    with pytest.raises(T.TileLangError, match="unknown dtype 'floaty'"):
        T.Tensor((N,), "floaty")
    with pytest.raises(T.TileLangError, match="needs a type"):
        T.prim_func(lambda A: None)
    with pytest.raises(T.TileLangError, match="scalars must be one of"):
        @T.prim_func
        def k(x: T.int8):
            pass


def test_verifier_errors_name_the_python_line(tile_opt, tmp_path):
    """What only the dialect's verifier checks is reported at the Python
    line too (the IR carries the locations)."""
    @T.prim_func
    def k(A: T.Tensor((N,), "float32")):
        with T.Kernel(4) as bx:
            a = T.alloc_shared((16, 16), "int16")
            c = T.alloc_fragment((16, 16), "int16")
            T.gemm(a, a, c)  # mark
    r = opt(tile_opt, k.script(), tmp_path)
    assert r.returncode != 0
    assert f"{THIS}:{lineno(k.fn, '# mark')}:" in r.stderr


def test_error_copy_into_part_of_an_onchip_buffer():
    def f():
        @T.prim_func
        def k(A: T.Tensor((N, 64), "float32")):
            with T.Kernel(4) as bx:
                a = T.alloc_fragment((8, 64), "float32")
                T.copy(A[bx * 8, 0], a[bx, 0])  # mark
    _raises(f, "# mark", "the on-chip side must be a whole buffer")

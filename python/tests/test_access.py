"""What a kernel does to its tensors (metadata "access", from the compiler)
and the launch checks that rest on it: read-only memory for a written param
and overlapping memory between a written param and another param are refused
with ArgumentError before anything runs (issue 10); tile.inplace allows the
exact aliasing an elementwise update is written for. Also: the parsed view of
the metadata comes from the runtime (no JSON parsing, no tilec run for it)."""

import numpy as np
import pytest

from tile_testutil import EXAMPLES, elementwise_source


def update_source(inplace=False):
    """Y[i] = Y[i] + X[i] in place (Y read and written, not an output)."""
    attr = ", tile.inplace" if inplace else ""
    return f"""
func.func @update(%X: memref<?xf32> {{tile.name = "X", tile.dims = ["N"]}},
                  %Y: memref<?xf32> {{tile.name = "Y", tile.dims = ["N"]{attr}}})
    attributes {{tile.kernel}} {{
  %c0 = arith.constant 0 : index
  %c255 = arith.constant 255 : index
  %c256 = arith.constant 256 : index
  %N = memref.dim %X, %c0 : memref<?xf32>
  %Np = arith.addi %N, %c255 : index
  %blocks = arith.divui %Np, %c256 : index
  tile.launch blocks(%bx) in (%blocks) threads(128) {{
    %x = tile.alloc : memref<256xf32, #tile.scope<fragment>>
    %y = tile.alloc : memref<256xf32, #tile.scope<fragment>>
    %start = arith.muli %bx, %c256 : index
    tile.copy %X[%start] to %x : memref<?xf32> to memref<256xf32, #tile.scope<fragment>>
    tile.copy %Y[%start] to %y : memref<?xf32> to memref<256xf32, #tile.scope<fragment>>
    tile.parallel (%i) in [256] {{
      %a = memref.load %x[%i] : memref<256xf32, #tile.scope<fragment>>
      %b = memref.load %y[%i] : memref<256xf32, #tile.scope<fragment>>
      %s = arith.addf %a, %b : f32
      memref.store %s, %y[%i] : memref<256xf32, #tile.scope<fragment>>
    }}
    tile.copy %y to %Y[%start] : memref<256xf32, #tile.scope<fragment>> to memref<?xf32>
  }}
  return
}}
"""


@pytest.fixture(scope="module")
def update(tile):
    return tile.compile(update_source(), target="cpu")


@pytest.fixture(scope="module")
def add(tile):
    return tile.compile(EXAMPLES / "elementwise_add.mlir", target="cpu")


# ---- the parsed view -----------------------------------------------------------

def test_params_carry_access(add, update):
    assert [(p["name"], p["access"], p["written"], p["inplace"])
            for p in add.params] == [("A", "read", False, False),
                                     ("B", "read", False, False),
                                     ("C", "write", True, False)]
    x, y = update.params
    assert (x["access"], y["access"]) == ("read", "readwrite")
    assert not y["is_output"] and y["written"]


def test_info_from_the_runtime(add):
    info = add.info
    assert info["symbols"] == ["N"] == add.symbols
    assert info["grid"] == ('divu(add("N", 1023), 1024)', "1", "1") == add.grid
    assert info["block"] == (128, 1, 1) == add.block
    assert info["shared_bytes"] == 0 == add.shared_bytes
    assert info["variants"] == [] and info["compiler"].startswith("tile ")
    assert "metadata" not in info
    assert '"access": "write"' in add.metadata  # the raw text is still there


def test_no_tilec_run_for_metadata(tile, fresh_cache, monkeypatch):
    import tile.compiler as compiler
    seen = []
    real = compiler.subprocess.run

    def run(cmd, *args, **kwargs):
        seen.append(list(cmd))
        return real(cmd, *args, **kwargs)

    monkeypatch.setattr(compiler.subprocess, "run", run)
    src = elementwise_source(name="neg").replace(", tile.output}", "}")
    k = tile.compile(src, out_idx=-1, target="cpu")
    assert k.out_idx == [2]
    compiles = [c for c in seen if "--version" not in c]
    assert len(compiles) == 1 and "--out-idx=-1" in compiles[0]
    assert not any("--emit=metadata" in " ".join(c) for c in seen)
    with pytest.raises(tile.CompileError, match="--out-idx -4 is out of range"):
        tile.compile(src, out_idx=-4, target="cpu")


# ---- read-only memory for a written param ---------------------------------------

def test_read_only_numpy_array(tile, add, update):
    a = np.ones(8, np.float32)
    ro = np.ones(8, np.float32)
    ro.flags.writeable = False
    np.testing.assert_array_equal(add(ro, ro), 2 * a)  # read params: fine
    with pytest.raises(tile.ArgumentError,
                       match=r"argument 'Y' \(#1\): the kernel writes it, but "
                             "the array is read-only"):
        update(a, ro)
    np.testing.assert_array_equal(ro, a)
    update(ro, a)  # X is only read
    np.testing.assert_array_equal(a, 2 * ro)


def test_array_over_immutable_bytes(tile, update):
    data = np.arange(16, dtype=np.float32).tobytes()
    y = np.frombuffer(data, dtype=np.float32)
    with pytest.raises(tile.ArgumentError, match="read-only"):
        update(np.ones(16, np.float32), y)
    assert data == np.arange(16, dtype=np.float32).tobytes()
    with pytest.raises(tile.ArgumentError,
                       match="the kernel writes it, but a 'bytes' object is "
                             "read-only"):
        update(np.ones(4, np.float32), b"\0" * 16)


def test_read_only_memmap(tile, update, tmp_path):
    path = tmp_path / "y.f32"
    np.arange(1000, dtype=np.float32).tofile(path)
    y = np.memmap(path, dtype=np.float32, mode="r")
    # Used to kill the interpreter (SIGSEGV writing a read-only mapping).
    with pytest.raises(tile.ArgumentError, match="read-only"):
        update(np.ones(1000, np.float32), y)
    np.testing.assert_array_equal(np.fromfile(path, np.float32),
                                  np.arange(1000, dtype=np.float32))
    x = np.memmap(path, dtype=np.float32, mode="r")
    out = np.zeros(1000, np.float32)
    update(x, out)  # a read-only map for a read param is fine
    np.testing.assert_array_equal(out, np.arange(1000, dtype=np.float32))


def test_read_only_dlpack_capsule(tile, update):
    class Versioned:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None, max_version=None, **kw):
            return self.a.__dlpack__(max_version=max_version)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    ro = np.zeros(8, np.float32)
    ro.flags.writeable = False
    with pytest.raises(tile.ArgumentError, match="read-only"):
        update(np.ones(8, np.float32), Versioned(ro))


# ---- overlapping memory --------------------------------------------------------

def test_gemm_output_aliasing_an_input(tile):
    k = tile.compile(EXAMPLES / "gemm.mlir", target="cpu")
    a = np.ones((64, 64), np.float16)
    b = np.ones((64, 64), np.float16)
    with pytest.raises(tile.ArgumentError,
                       match=r"argument 'C' \(#2\), which the kernel writes, "
                             r"overlaps argument 'A' \(#0\)"):
        k(a, b, a)
    assert (a == 1).all()
    c = k(a, a)  # inputs may alias each other
    assert (c == 64).all()


def test_partial_and_exact_overlap(tile, add, update):
    buf = np.arange(100, dtype=np.float32)
    with pytest.raises(tile.ArgumentError, match="overlaps argument 'A'"):
        add(buf, buf, buf)  # C is A (and B); add does not declare inplace
    with pytest.raises(tile.ArgumentError,
                       match="a partial overlap is never allowed"):
        update(buf[:50], buf[25:75])
    np.testing.assert_array_equal(buf, np.arange(100, dtype=np.float32))
    # Disjoint parts of one buffer are fine.
    update(buf[:50], buf[50:])
    np.testing.assert_array_equal(buf[50:], np.arange(50, 100) + np.arange(50))


def test_inplace_declared(tile):
    k = tile.compile(update_source(inplace=True), target="cpu")
    assert k.params[1]["inplace"]
    y = np.arange(300, dtype=np.float32)
    k(y, y)  # Y = Y + Y: the same memory, declared safe
    np.testing.assert_array_equal(y, 2 * np.arange(300, dtype=np.float32))
    with pytest.raises(tile.ArgumentError, match="partial overlap"):
        k(y[1:], y[:-1])
    # tile.inplace on a parameter the kernel only reads is a compile error.
    bad = update_source().replace('{tile.name = "X", tile.dims = ["N"]}',
                                  '{tile.name = "X", tile.dims = ["N"], tile.inplace}')
    with pytest.raises(tile.CompileError, match="declared inplace, but the "
                                                "kernel never writes it"):
        tile.compile(bad, target="cpu")

"""Tile operations: T.alloc_*, T.copy, T.gemm, T.clear, T.fill,
T.reduce_*, T.atomic_*, T.use_swizzle.

Each checks what it can see (scopes, ranks, static shapes) and raises a
TileLangError at the user's line; the dialect's verifiers (run by tilec /
tile-opt on the printed IR, whose locations are the same lines) remain the
authority."""

from . import dtypes as _dt
from .buffer import ConstDim, Region, TileBuffer, as_region
from .errors import user_error
from .expr import Scalar, index_value, operand, to_value
from .ir import MemRefType, current


def _no_options(what, kw):
    if kw:
        raise user_error(f"{what}: unsupported option(s) "
                         f"{', '.join(sorted(kw))}")


def _in_launch(what):
    fb = current(what)
    if fb.launch is None:
        raise user_error(f"{what} must be inside `with T.Kernel(...)`")
    return fb


def _static_dim(d, what):
    if isinstance(d, ConstDim):
        d = d.value()
    if isinstance(d, Scalar) and d.const is not None and d.type.is_int:
        d = int(d.const)
    if isinstance(d, bool) or not isinstance(d, int):
        raise user_error(f"{what}: on-chip buffers have static shapes; dim "
                         f"{d!r} is not a Python int")
    if d <= 0:
        raise user_error(f"{what}: dims must be positive, got {d}")
    return d


def _alloc(shape, dtype, scope, what):
    fb = _in_launch(what)
    if not isinstance(shape, (tuple, list)):
        shape = (shape,)
    dims = tuple(_static_dim(d, what) for d in shape)
    dt = _dt.dtype(dtype)
    if dt.kind == "index":
        raise user_error(f"{what}: index buffers are not supported; use int32 "
                         "or int64")
    t = MemRefType(dims, dt, scope)
    op = fb.emit("tile.alloc", [f"tile.alloc : {t}"], (t,), pure=True,
                 hints=(scope,))
    return op.results[0]


def alloc_shared(shape, dtype, scope="shared"):
    """A block's shared-memory buffer (TileLang's scope='shared.dyn' is the
    same thing here)."""
    if scope not in ("shared", "shared.dyn"):
        raise user_error(f"T.alloc_shared: unknown scope {scope!r}")
    return _alloc(shape, dtype, "shared", "T.alloc_shared")


def alloc_fragment(shape, dtype):
    """A tile distributed over the block's threads' registers."""
    return _alloc(shape, dtype, "fragment", "T.alloc_fragment")


def alloc_local(shape, dtype):
    """A per-thread buffer holding the whole tile (all copies equal)."""
    return _alloc(shape, dtype, "local", "T.alloc_local")


def _idx_parts(starts, what):
    out = []
    for i, s in enumerate(starts):
        if i:
            out.append(", ")
        out.append(index_value(s, what))
    return out


def _side(region, what):
    """(buffer, index parts or None) of a copy side."""
    buf = region.buffer
    if buf.type.scope is None:
        return buf, ["["] + _idx_parts(region.starts, what) + ["]"]
    if not region.whole:
        raise user_error(
            f"{what}: the on-chip side must be a whole buffer (tile.copy "
            f"copies whole tiles); {buf._desc()} is given only in part")
    return buf, []


def copy(src, dst, **kw):
    """Copies a tile. One side is on-chip (shared, fragment, local) and is
    copied whole; the other is a global tensor addressed TileLang-style by
    the start of the tile (A[by * 64, k * 32]) or by a region with static
    extents (A[by * 64:(by + 1) * 64, :]). Out-of-bounds global elements
    read as zero and are not written. Element types may differ (the copy
    converts: an integer to a float as a signed value, a float to an
    integer toward zero)."""
    _no_options("T.copy", kw)
    fb = _in_launch("T.copy")
    s = as_region(src, "T.copy source")
    d = as_region(dst, "T.copy destination")
    sg, dg = s.buffer.type.scope is None, d.buffer.type.scope is None
    if sg and dg:
        raise user_error("T.copy: global to global copies are not supported: "
                         "stage through a shared or fragment buffer")
    drop = []
    if sg or dg:
        g, o = (s, d) if sg else (d, s)
        # Rank-reducing (Q[b, s0:s1, h, :]): the dims indexed by a scalar
        # are dropped (tile.copy's drop_dims); the sliced ones map in order
        # to the on-chip dims.
        drop = [i for i, k in enumerate(g.keep) if not k]
        kept = [i for i, k in enumerate(g.keep) if k]
        orank, grank = o.buffer.type.rank, g.buffer.type.rank
        if (not drop and grank > orank and
                all(e is None for e in g.extents)):
            # A tile start of a higher-rank tensor (A[bz, by * 128, k * 32]
            # into a 2-D buffer, as TileLang writes a batched GEMM): the
            # leading dims are single elements (dropped), the trailing ones
            # take the on-chip buffer's shape.
            drop = list(range(grank - orank))
            kept = list(range(grank - orank, grank))
        if len(kept) != orank:
            if drop:
                raise user_error(
                    f"T.copy: the region keeps {len(kept)} of the global "
                    f"tensor's {grank} dims (dims {drop} are indexed by a "
                    f"scalar and dropped), the on-chip buffer "
                    f"{o.buffer._desc()} has rank {orank}")
            raise user_error(f"T.copy: rank mismatch: the global side has rank "
                             f"{grank}, the on-chip buffer {o.buffer._desc()} "
                             f"rank {orank}")
        for j, i in enumerate(kept):
            e, n = g.extents[i], o.buffer.type.shape[j]
            g.check_open(i, n, "T.copy")
            if e is not None and e != n:
                raise user_error(
                    f"T.copy: the region's extent {e} in dim {i} differs from "
                    f"the on-chip buffer's {n} in dim {j} ({o.buffer._desc()}); "
                    "tile.copy copies the on-chip buffer's shape")
    else:
        if s.buffer.type.shape != d.buffer.type.shape:
            raise user_error(
                f"T.copy: on-chip shapes differ: {s.buffer.type.shape} vs "
                f"{d.buffer.type.shape}")
    sb, sidx = _side(s, "T.copy source")
    db, didx = _side(d, "T.copy destination")
    drop_attr = [f" drop_dims [{', '.join(map(str, drop))}]"] if drop else []
    fb.emit("tile.copy", ["tile.copy ", sb] + sidx + [" to ", db] + didx +
            drop_attr + [f" : {sb.type} to {db.type}"])


def _whole(x, what):
    if isinstance(x, TileBuffer):
        return x
    if isinstance(x, Region) and x.whole:
        return x.buffer
    raise user_error(f"{what}: expected a whole on-chip buffer, got "
                     f"{type(x).__name__}")


def _onchip(x, what, scopes=("shared", "fragment", "local")):
    b = _whole(x, what)
    if b.type.scope not in scopes:
        raise user_error(f"{what}: {b._desc()} must be a "
                         f"{' or '.join(scopes)} buffer")
    return b


def gemm(A, B, C, transpose_A=False, transpose_B=False, clear_accum=False,
         **kw):
    """C += op(A) @ op(B) (op transposes when transpose_A / transpose_B);
    clear_accum zeroes C first. A: shared or fragment, B: shared, C: a
    fragment accumulator (f16/bf16 -> f32, f32 as tf32, f8 -> f32, i8 -> i32;
    f16 may also accumulate in f16)."""
    _no_options("T.gemm", kw)
    fb = _in_launch("T.gemm")
    a = _onchip(A, "T.gemm A", ("shared", "fragment"))
    b = _onchip(B, "T.gemm B", ("shared",))
    c = _onchip(C, "T.gemm C", ("fragment",))
    for name, x in (("A", a), ("B", b), ("C", c)):
        if x.type.rank != 2:
            raise user_error(f"T.gemm: {name} {x._desc()} must be 2-D")
    m, k = a.type.shape[::-1] if transpose_A else a.type.shape
    k2, n = b.type.shape[::-1] if transpose_B else b.type.shape
    if k != k2:
        raise user_error(f"T.gemm: K of A ({k}) and of B ({k2}) differ "
                         f"(A {a.type.shape}{' transposed' if transpose_A else ''}, "
                         f"B {b.type.shape}{' transposed' if transpose_B else ''})")
    if c.type.shape != (m, n):
        raise user_error(f"T.gemm: C is {c.type.shape}, expected ({m}, {n})")
    flags = [f for f, on in (("transpose_a", transpose_A), ("transpose_b", transpose_B),
                             ("clear", clear_accum)) if on]
    attrs = " {" + ", ".join(flags) + "}" if flags else ""
    fb.emit("tile.gemm", ["tile.gemm ", a, ", ", b, ", ", c,
                          f"{attrs} : {a.type}, {b.type}, {c.type}"])


def clear(buffer):
    """Sets every element of an on-chip buffer to zero."""
    fb = _in_launch("T.clear")
    b = _onchip(buffer, "T.clear")
    fb.emit("tile.clear", ["tile.clear ", b, f" : {b.type}"])


def fill(buffer, value):
    """Sets every element of an on-chip buffer to value."""
    fb = _in_launch("T.fill")
    b = _onchip(buffer, "T.fill")
    v = to_value(value, b.type.dtype, "T.fill")
    fb.emit("tile.fill", ["tile.fill ", b, ", ", v,
                          f" : {b.type}, {b.type.dtype.mlir}"])


def reduce(kind, src, dst, dim=-1, clear=True):
    """dst = reduce(src, dim): the kind is sum, max, min, abssum or absmax.
    With clear=False the reduction continues from dst's values."""
    what = f"T.reduce_{kind}"
    fb = _in_launch(what)
    s = _onchip(src, f"{what} source")
    d = _onchip(dst, f"{what} target")
    rank = s.type.rank
    if not isinstance(dim, int) or not -rank <= dim < rank:
        raise user_error(f"{what}: dim {dim!r} out of range for a rank-{rank} "
                         "source")
    dim %= rank
    want = s.type.shape[:dim] + s.type.shape[dim + 1:]
    if d.type.shape != want:
        raise user_error(f"{what}: the target is {d.type.shape}, expected "
                         f"{want} (the source {s.type.shape} without dim {dim})")
    if s.type.dtype != d.type.dtype:
        raise user_error(f"{what}: source and target element types differ "
                         f"({s.type.dtype.name} vs {d.type.dtype.name})")
    attrs = f"dim = {dim} : i64" + (", clear" if clear else "")
    fb.emit("tile.reduce", [f"tile.reduce {kind} ", s, " into ", d,
                            f" {{{attrs}}} : {s.type} into {d.type}"])


def reduce_sum(src, dst, dim=-1, clear=True):
    reduce("sum", src, dst, dim, clear)


def reduce_max(src, dst, dim=-1, clear=True):
    reduce("max", src, dst, dim, clear)


def reduce_min(src, dst, dim=-1, clear=True):
    reduce("min", src, dst, dim, clear)


def reduce_abssum(src, dst, dim=-1, clear=True):
    reduce("abssum", src, dst, dim, clear)


def reduce_absmax(src, dst, dim=-1, clear=True):
    reduce("absmax", src, dst, dim, clear)


def atomic(kind, dst, value):
    """Atomic add/max/min. dst an element (C[i, j]) and value a scalar:
    one tile.atomic; value an on-chip buffer and dst a global tile start or
    region: an element-wise tile.atomic_tile (out-of-bounds dropped)."""
    what = f"T.atomic_{kind}"
    fb = _in_launch(what)
    if isinstance(value, (TileBuffer, Region)):
        v = _onchip(value, f"{what} value")
        r = as_region(dst, f"{what} destination")
        if r.buffer.type.scope is not None:
            raise user_error(f"{what}: a tile can only be combined into a "
                             "global tensor")
        if not all(r.keep) or r.buffer.type.rank != v.type.rank:
            raise user_error(f"{what}: the destination region must have the "
                             f"rank of {v._desc()}")
        for i, (e, n) in enumerate(zip(r.extents, v.type.shape)):
            r.check_open(i, n, what)
            if e is not None and e != n:
                raise user_error(f"{what}: region extent {e} in dim {i} differs "
                                 f"from the tile's {n}")
        fb.emit("tile.atomic_tile", [f"tile.atomic_tile {kind} ", v, " to ",
                                     r.buffer, "["] + _idx_parts(r.starts, what)
                + [f"] : {v.type} to {r.buffer.type}"])
        return
    if not (isinstance(dst, Scalar) and dst.ref is not None):
        raise user_error(f"{what}: the destination must be a buffer element "
                         "(C[i, j]) or, with a tile value, a global tile start")
    buf, idx = dst.ref
    v = to_value(operand(value, what), buf.type.dtype, what)
    fb.emit("tile.atomic", [f"tile.atomic {kind} ", v, ", ", buf, "["]
            + _idx_parts(idx, what) + [f"] : {buf.type.dtype.mlir}, {buf.type}"])


def atomic_add(dst, value):
    atomic("add", dst, value)


def atomic_max(dst, value):
    atomic("max", dst, value)


def atomic_min(dst, value):
    atomic("min", dst, value)


def use_swizzle(panel_size=8, order="row", enable=True):
    """Rasterizes the blocks of the enclosing 2-D T.Kernel in panels of
    panel_size block rows (order='row') or columns ('column') for L2 reuse
    (#tile.raster). Never changes results."""
    fb = _in_launch("T.use_swizzle")
    launch = fb.launch
    if not enable:
        launch.raster.text = ""
        return
    if launch.rank != 2:
        raise user_error(f"T.use_swizzle needs a 2-D grid, this T.Kernel has "
                         f"{launch.rank} dim(s)")
    if not isinstance(panel_size, int) or panel_size <= 0:
        raise user_error(f"T.use_swizzle: panel_size must be a positive int, "
                         f"got {panel_size!r}")
    if order not in ("row", "column"):
        raise user_error(f"T.use_swizzle: order must be 'row' or 'column', got "
                         f"{order!r}")
    extra = ", order = column" if order == "column" else ""
    launch.raster.text = (f" attributes {{raster = #tile.raster<panel = "
                          f"{panel_size}{extra}>}}")


__all__ = ["alloc_shared", "alloc_fragment", "alloc_local", "copy", "gemm",
           "clear", "fill", "reduce", "reduce_sum", "reduce_max", "reduce_min",
           "reduce_abssum", "reduce_absmax", "atomic_add", "atomic_max",
           "atomic_min", "use_swizzle"]

"""Control flow: T.Kernel (tile.launch), T.Parallel (tile.parallel),
T.Pipelined (tile.pipelined), T.serial / range (scf.for), T.unroll (a
trace-time Python loop), and the runtime side of the AST rewrite: dynamic
`if` / `else` (scf.if), `x if c else y` (arith.select or scf.if), `and` /
`or` / `not`.

Loops are generators: `for i, j in T.Parallel(8, 64):` opens the op's
region, yields its induction variables once (the body is traced once), and
closes the region when the loop ends. Leaving such a loop with `break` or
`return` cannot be expressed and is reported at the next op."""

from . import dtypes as _dt
from .buffer import ConstDim
from .errors import user_error, user_loc
from .expr import Scalar, cast, index_value, operand, to_value
from .ir import Block, Slot, current


def _static_extent(e, what):
    if isinstance(e, ConstDim):
        e = e.value()
    e = operand(e, what)
    if isinstance(e, Scalar):
        if e.const is None:
            raise user_error(f"{what}: extents must be static (Python ints); "
                             "loop over a dynamic range with T.serial")
        e = int(e.const)
    if isinstance(e, bool) or not isinstance(e, int) or e <= 0:
        raise user_error(f"{what}: extents must be positive ints, got {e!r}")
    return e


def _join(values):
    out = []
    for i, v in enumerate(values):
        if i:
            out.append(", ")
        out.append(v)
    return out


class _Loop:
    """Base of region loops: subclasses build the op in _open()."""

    kind = None
    _names = None

    def __iter__(self):
        fb = current(self.what)
        blk, value = self._open(fb)
        fb.push(blk)
        done = False
        try:
            yield value
            done = True
        finally:
            if done:
                fb.pop(blk)
                self._close(fb, blk)
            elif fb.stack[-1] is blk:
                fb.stack.pop()
                fb.fail_later(f"leaving a {self.what} loop early (break, "
                              "return or an exception) is not supported")

    def _close(self, fb, blk):
        pass

    def _hint(self, i, default):
        if self._names and i < len(self._names):
            return self._names[i]
        return default


class Parallel(_Loop):
    """for i, j in T.Parallel(M, N): the body runs once for every index of
    the static extents, iterations independent and distributed over the
    block's threads (tile.parallel)."""

    what = "T.Parallel"

    def __init__(self, *extents, **kw):
        if kw:
            raise user_error(f"T.Parallel: unsupported option(s) {', '.join(sorted(kw))}")
        if not extents:
            raise user_error("T.Parallel needs at least one extent")
        self.extents = [_static_extent(e, "T.Parallel") for e in extents]

    def _open(self, fb):
        if fb.launch is None:
            raise user_error("T.Parallel must be inside `with T.Kernel(...)`")
        blk = Block(fb.block, None, "parallel", user_loc())
        ivs = []
        for i in range(len(self.extents)):
            v = fb.block_arg(blk, _dt.index, self._hint(i, "ijklmn"[i % 6]))
            v.nonneg = True
            ivs.append(v)
        ext = ", ".join(str(e) for e in self.extents)
        fb.emit("tile.parallel", ["tile.parallel ("] + _join(ivs) +
                [f") in [{ext}] ", blk])
        return blk, ivs[0] if len(ivs) == 1 else tuple(ivs)


def _bounds(start, stop, step, what):
    if stop is None:
        start, stop = 0, start
    lb = index_value(start, what)
    ub = index_value(stop, what)
    st = index_value(step, what)
    if st.const is not None and st.const <= 0:
        raise user_error(f"{what}: step must be positive, got {st.const}")
    return lb, ub, st


class Pipelined(_Loop):
    """for k in T.Pipelined(n, num_stages=3): a serial loop whose copies the
    compiler may overlap with the compute of earlier iterations
    (tile.pipelined); results are those of the serial loop. order / stage:
    one entry per statement of the loop body (TileLang's meaning)."""

    what = "T.Pipelined"

    def __init__(self, start, stop=None, num_stages=0, order=None, stage=None,
                 **kw):
        if kw:
            raise user_error(f"T.Pipelined: unsupported option(s) {', '.join(sorted(kw))}")
        if not isinstance(num_stages, int) or num_stages < 0:
            raise user_error(f"T.Pipelined: num_stages must be an int >= 0, got "
                             f"{num_stages!r}")
        for name, arr in (("order", order), ("stage", stage)):
            if arr is not None and (not isinstance(arr, (list, tuple)) or
                                    any(not isinstance(x, int) or x < 0 for x in arr)):
                raise user_error(f"T.Pipelined: {name} must be a list of ints >= 0 "
                                 "(one per statement of the loop body)")
        if stage is not None and any(s >= max(num_stages, 1) for s in stage):
            raise user_error(f"T.Pipelined: stage values must be < num_stages "
                             f"({num_stages})")
        self.range = (start, stop)
        self.stages = max(num_stages, 1)
        self.order = list(order) if order is not None else None
        self.stage = list(stage) if stage is not None else None

    def _open(self, fb):
        if fb.launch is None:
            raise user_error("T.Pipelined must be inside `with T.Kernel(...)`")
        lb, ub, st = _bounds(*self.range, 1, "T.Pipelined")
        blk = Block(fb.block, None, "pipelined", user_loc())
        iv = fb.block_arg(blk, _dt.index, self._hint(0, "k"))
        iv.nonneg = lb.nonneg
        self.attrs = _PipelineAttrs(blk, self.stage, self.order, blk.loc)
        fb.emit("tile.pipelined", ["tile.pipelined ", iv, " = ", lb, " to ", ub,
                                   " step ", st, f" stages({self.stages})",
                                   self.attrs, " ", blk])
        if self.order is not None or self.stage is not None:
            fb.stmt_index[id(blk)] = -1
        return blk, iv

    def _close(self, fb, blk):
        n = fb.stmt_index.pop(id(blk), None)
        if n is not None:
            for name, arr in (("order", self.order), ("stage", self.stage)):
                if arr is not None and len(arr) != n + 1:
                    raise user_error(
                        f"T.Pipelined: {name} has {len(arr)} entries but the "
                        f"loop body has {n + 1} statements", blk.loc)
            if n < 0:
                raise user_error("T.Pipelined: order/stage need the loop body "
                                 "to be rewritten (a T.prim_func / @tile.jit "
                                 "body)", blk.loc)


class _PipelineAttrs(Slot):
    """stage/order per op of the body, from TileLang's per-statement lists;
    computed at print time, after dead ops were dropped."""

    def __init__(self, block, stage, order, loc):
        super().__init__()
        self.block, self.stage, self.order, self.loc = block, stage, order, loc

    def __str__(self):
        if self.stage is None and self.order is None:
            return ""
        ops = self.block.ops
        items = []
        if self.stage is not None:
            st = [self.stage[max(op.stmt, 0)] for op in ops]
            items.append("stage = array<i64: " + ", ".join(map(str, st)) + ">")
        if self.order is not None:
            keys = sorted(range(len(ops)),
                          key=lambda i: (self.order[max(ops[i].stmt, 0)], i))
            rank = [0] * len(ops)
            for r, i in enumerate(keys):
                rank[i] = r
            items.append("order = array<i64: " + ", ".join(map(str, rank)) + ">")
        return " attributes {" + ", ".join(items) + "}"


class serial(_Loop):
    """for k in T.serial(n) / T.serial(start, stop, step): a serial loop
    (scf.for); `range(...)` in a kernel body means the same."""

    what = "T.serial"

    def __init__(self, start, stop=None, step=1):
        self.range = (start, stop, step)

    def _open(self, fb):
        lb, ub, st = _bounds(*self.range, "T.serial")
        blk = Block(fb.block, None, "for", user_loc())
        iv = fb.block_arg(blk, _dt.index, self._hint(0, "k"))
        iv.nonneg = lb.nonneg
        fb.emit("scf.for", ["scf.for ", iv, " = ", lb, " to ", ub, " step ", st,
                            " ", blk])
        return blk, iv


Serial = serial


def unroll(start, stop=None, step=1):
    """A loop unrolled while the kernel is built: the index is a Python int.
    Bounds must be static."""
    if stop is None:
        start, stop = 0, start
    vals = []
    for v in (start, stop, step):
        v = operand(v, "T.unroll")
        if isinstance(v, Scalar):
            if v.const is None:
                raise user_error("T.unroll needs static bounds; use T.serial "
                                 "for a dynamic loop")
            v = int(v.const)
        vals.append(v)
    return range(*vals)


def kernel_range(*args):
    """`range(...)` inside a kernel body: a serial loop (as in TileLang)."""
    return serial(*args)


class Kernel:
    """with T.Kernel(gx, gy, threads=128) as (bx, by): a grid of 1-3 dims of
    blocks (tile.launch); the body runs once per block, bx/by/bz its
    indices. Extents may be dynamic (computed from tensor dims)."""

    def __init__(self, *grid, threads=128, **kw):
        if kw:
            raise user_error(f"T.Kernel: unsupported option(s) {', '.join(sorted(kw))}")
        if len(grid) == 1 and isinstance(grid[0], (list, tuple)):
            grid = tuple(grid[0])
        if not 1 <= len(grid) <= 3:
            raise user_error(f"T.Kernel: the grid has 1 to 3 dims, got {len(grid)}")
        if isinstance(threads, (list, tuple)):
            if len(threads) != 1:
                raise user_error("T.Kernel: threads is one number here (the "
                                 "block is 1-D)")
            threads = threads[0]
        if isinstance(threads, ConstDim):
            threads = threads.value()
        if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= 1024:
            raise user_error(f"T.Kernel: threads must be an int in [1, 1024], "
                             f"got {threads!r}")
        self.grid = grid
        self.threads = threads
        self.names = None

    def __enter__(self):
        fb = current("T.Kernel")
        if fb.launch is not None:
            raise user_error("T.Kernel cannot be nested in another T.Kernel")
        if fb.block is not fb.entry:
            raise user_error("T.Kernel must be at the top level of the kernel "
                             "function (not in a loop or an if)")
        ext = []
        for g in self.grid:
            v = index_value(g, "T.Kernel grid")
            if v.const is not None and v.const < 0:
                raise user_error(f"T.Kernel: negative grid extent {v.const}")
            ext.append(v)
        blk = Block(fb.block, None, "launch", user_loc())
        names = self.names or ("bx", "by", "bz")
        ids = []
        for i in range(len(ext)):
            v = fb.block_arg(blk, _dt.index, names[i] if i < len(names) else None)
            v.nonneg = True
            ids.append(v)
        self.raster = Slot()
        self.rank = len(ext)
        fb.emit("tile.launch", ["tile.launch blocks("] + _join(ids) + [") in ("]
                + _join(ext) + [f") threads({self.threads})", self.raster, " ", blk])
        fb.push(blk)
        fb.launch = self
        self.blk = blk
        return ids[0] if len(ids) == 1 else tuple(ids)

    def __exit__(self, et, ev, tb):
        fb = current("T.Kernel")
        fb.launch = None
        if et is None:
            fb.pop(self.blk)
        elif self.blk in fb.stack:
            del fb.stack[fb.stack.index(self.blk):]
        return False


# ---- dynamic if / select / boolean operators (targets of the AST rewrite) ----

def cond(x):
    """A condition: a Python bool when static, else an i1 value."""
    if isinstance(x, Scalar):
        if x.const is not None:
            return bool(x.const)
        return cast(x, _dt.boolean)
    if hasattr(x, "__tile_value__"):
        return cond(operand(x))
    return bool(x)


class then:
    """with then(c): the then-region of an scf.if on c."""

    def __init__(self, c):
        self.c = c

    def __enter__(self):
        fb = current("if")
        self.fb = fb
        self.blk = Block(fb.block, None, "if", user_loc())
        self.op = fb.emit("scf.if", ["scf.if ", self.c, " ", self.blk])
        fb.push(self.blk)

    def __exit__(self, et, ev, tb):
        if et is None:
            self.fb.pop(self.blk)
            self.fb.last_if = self.op
        elif self.blk in self.fb.stack:
            del self.fb.stack[self.fb.stack.index(self.blk):]
        return False


class otherwise:
    """with otherwise(): the else-region of the scf.if just built."""

    def __enter__(self):
        fb = current("else")
        op = fb.last_if
        if op is None or op.block is not fb.block or fb.block.ops[-1] is not op:
            raise user_error("internal: else without its if")
        self.fb = fb
        self.blk = Block(fb.block, op, "if", user_loc())
        op.parts += [" else ", self.blk]
        fb.push(self.blk)

    def __exit__(self, et, ev, tb):
        if et is None:
            self.fb.pop(self.blk)
        elif self.blk in self.fb.stack:
            del self.fb.stack[self.fb.stack.index(self.blk):]
        self.fb.last_if = None
        return False


_CHEAP = ("arith.", "math.")


def select(c, if_true, if_false):
    """`a if c else b`: Python when c is static; with a dynamic c, both arms
    are built in their own regions: if they only compute (arith/math), they
    are moved out and combined with arith.select, otherwise (loads, ...)
    the result is an scf.if that evaluates only the taken arm."""
    c = cond(c)
    if not isinstance(c, Scalar):
        return if_true() if c else if_false()
    fb = current("if-expression")
    blocks, vals = [], []
    for arm in (if_true, if_false):
        blk = Block(fb.block, None, "if", user_loc())
        fb.push(blk)
        try:
            vals.append(operand(arm(), "if-expression"))
        finally:
            if fb.stack[-1] is blk:
                fb.stack.pop()
        blocks.append(blk)
    a, b = vals
    if isinstance(a, Scalar) or isinstance(b, Scalar):
        from .expr import _types_for
        t = _types_for(a, b, "select")
    else:
        t = _dt.float32 if isinstance(a, float) or isinstance(b, float) else _dt.index
    out = []
    for blk, v in zip(blocks, vals):
        fb.push(blk)
        out.append(to_value(v, t, "if-expression"))
        fb.stack.pop()
    cheap = all(op.name.startswith(_CHEAP) and not op.regions()
                for blk in blocks for op in blk.ops)
    if cheap:
        for blk in blocks:
            for op in blk.ops:
                op.block = fb.block
                for r in op.results:
                    r.block = fb.block
                fb.block.ops.append(op)
        return fb.emit("arith.select", ["arith.select ", c, ", ", out[0], ", ",
                                        out[1], f" : {t.mlir}"], (t,),
                       pure=True).results[0]
    for blk, v in zip(blocks, out):
        fb.push(blk)
        fb.emit("scf.yield", ["scf.yield ", v, f" : {t.mlir}"])
        fb.stack.pop()
    op = fb.emit("scf.if", ["scf.if ", c, f" -> ({t.mlir}) ", blocks[0], " else ",
                            blocks[1]], (t,))
    return op.results[0]


def and_(a, b_thunk):
    """`a and b` (b only evaluated when needed, as in Python)."""
    a = _bool_operand(a)
    if not isinstance(a, Scalar):
        return b_thunk() if a else a
    b = cond(b_thunk())
    if not isinstance(b, Scalar):
        return a if b else False
    from .expr import binary
    return binary("and", a, b)


def or_(a, b_thunk):
    """`a or b`."""
    a = _bool_operand(a)
    if not isinstance(a, Scalar):
        return a if a else b_thunk()
    b = cond(b_thunk())
    if not isinstance(b, Scalar):
        return True if b else a
    from .expr import binary
    return binary("or", a, b)


def not_(a):
    a = _bool_operand(a)
    if not isinstance(a, Scalar):
        return not a
    from .expr import binary
    return binary("xor", a, True)


def _bool_operand(a):
    if isinstance(a, Scalar) or hasattr(a, "__tile_value__"):
        return cond(a)
    return a


def stmt():
    """Marks the start of a statement of a T.Pipelined body (order/stage)."""
    fb = current("T.Pipelined")
    key = id(fb.block)
    if key in fb.stmt_index:
        fb.stmt_index[key] += 1


def unsupported(what):
    raise user_error(f"{what} inside an `if` on a tile value is not supported "
                     "(the branch becomes an scf.if region)")

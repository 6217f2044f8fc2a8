"""The builder's IR: values, ops, single-block regions, one function, and
the printer that writes it as tile-dialect MLIR text.

This is deliberately small: the builder only ever creates the ops it knows
(func, arith, math, memref load/store/dim, scf for/if, tile.*), so an op is
its printed form — a list of parts (text, operand values, regions) in the
op's custom assembly syntax — plus its results, its user location and
whether it is pure (pure ops nobody uses are dropped before printing).

Scoping: every value remembers the block it was defined in. Using a value
outside the region that defines it (a scalar computed in a T.Parallel body,
an if branch or a loop body and used after it) is an error at the user's
line, so the printed IR always satisfies dominance. Constants and tensor
dims are hoisted to the function entry and shared.
"""

import collections
import re
import threading

from . import dtypes as _dt
from .errors import TileLangError, user_error, user_loc


class MemRefType:
    """memref<shape x dtype[, #tile.scope<scope>]>; None in shape = '?'."""

    __slots__ = ("shape", "dtype", "scope")

    def __init__(self, shape, dtype, scope=None):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.scope = scope

    @property
    def rank(self):
        return len(self.shape)

    def __str__(self):
        dims = "".join(("?" if d is None else str(d)) + "x" for d in self.shape)
        space = f", #tile.scope<{self.scope}>" if self.scope else ""
        return f"memref<{dims}{self.dtype.mlir}{space}>"


def type_str(t):
    return str(t) if isinstance(t, MemRefType) else t.mlir


class Value:
    """An SSA value. `block` is the block defining it, `owner` the op (None
    for block and function arguments), `hint` a name for the printer,
    `const` the Python value of a constant."""

    __slots__ = ("type", "block", "owner", "hint", "const", "lin", "nonneg",
                 "ref", "__weakref__", "__dict__")

    def __init__(self, type_, block, owner=None, hint=None):
        self.type = type_
        self.block = block
        self.owner = owner
        self.hint = hint
        self.const = None
        self.lin = None
        self.nonneg = False
        self.ref = None

    __hash__ = object.__hash__


# Value classes per kind (set by expr.py / buffer.py, which add operators).
VALUE_CLASSES = {"scalar": Value, "buffer": Value}


def new_value(type_, block, owner=None, hint=None):
    cls = VALUE_CLASSES["buffer" if isinstance(type_, MemRefType) else "scalar"]
    return cls(type_, block, owner, hint)


class Block:
    """The single block of a region. `parent` is the enclosing block."""

    __slots__ = ("ops", "args", "parent", "owner", "kind", "loc")

    def __init__(self, parent, owner, kind, loc=None):
        self.ops = []
        self.args = []
        self.parent = parent
        self.owner = owner
        self.kind = kind  # "func", "launch", "parallel", "pipelined", "for", "if"
        self.loc = loc


class Op:
    __slots__ = ("name", "parts", "results", "loc", "block", "pure", "stmt")

    def __init__(self, name, parts, loc, block, pure):
        self.name = name
        self.parts = parts
        self.results = []
        self.loc = loc
        self.block = block
        self.pure = pure
        self.stmt = None  # statement index in a T.Pipelined body

    def regions(self):
        return [p for p in self.parts if isinstance(p, Block)]


# Pure ops a second identical one can reuse (never loads: a store may be
# in between; never allocs: two buffers are two buffers).
_CSE_PREFIXES = ("arith.", "math.", "memref.dim")

# Ops that may be computed where they were not written (no trap, no side
# effect); integer divisions only by a non-zero constant.
_SPECULATABLE = {
    "arith.addi", "arith.subi", "arith.muli", "arith.andi", "arith.ori",
    "arith.xori", "arith.cmpi", "arith.cmpf", "arith.select", "arith.addf",
    "arith.subf", "arith.mulf", "arith.divf", "arith.negf", "arith.maximumf",
    "arith.minimumf", "arith.maxsi", "arith.minsi", "arith.maxui",
    "arith.minui", "arith.index_cast", "arith.index_castui", "arith.extsi",
    "arith.extui", "arith.trunci", "arith.extf", "arith.truncf",
    "arith.sitofp", "arith.uitofp", "memref.dim",
}
_DIVISIONS = {"arith.divui", "arith.floordivsi", "arith.remui",
              "arith.ceildivui", "arith.ceildivsi"}


def _hoistable(name, parts):
    if name in _SPECULATABLE or name.startswith("math."):
        return True
    if name in _DIVISIONS:
        vals = [p for p in parts if isinstance(p, Value)]
        return len(vals) == 2 and vals[1].const not in (None, 0)
    return False


_KIND_NAMES = {"parallel": "a T.Parallel body", "pipelined": "a T.Pipelined body",
               "for": "a loop body", "if": "an if branch", "launch": "a T.Kernel body"}


class FuncBuilder:
    """Builds one kernel function. Ops are appended to the innermost open
    block; constants and memref.dim ops go to the function prelude."""

    def __init__(self, name, locations=True):
        self.name = name
        self.locations = locations
        self.entry = Block(None, None, "func")
        self.stack = [self.entry]
        self.args = []  # (Value, {"tile.name": ..., "tile.dims": [...]})
        self.consts = {}
        self.prelude = []
        self.dim_values = {}
        self.pending = None
        self.launch = None
        self.symbols = {}         # T.symbolic dim -> (tensor, dim index)
        self.const_bindings = {}  # T.const dim -> int
        self.stmt_index = {}      # id(pipelined block) -> current statement
        self.last_if = None       # the scf.if an `else` attaches to
        self.cse = {}             # (id(block), op key) -> op (pure index math)
        self.alive = []

    # ---- blocks ----------------------------------------------------------
    @property
    def block(self):
        return self.stack[-1]

    def push(self, block):
        self.stack.append(block)
        self.alive.append(block)  # keeps ids (CSE keys) unique

    def pop(self, block):
        if self.stack[-1] is not block:
            raise user_error("internal: regions closed out of order (a loop "
                             "body was left with break or an exception)")
        self.stack.pop()

    def fail_later(self, message):
        """Records an error found where raising is impossible (a generator
        being closed); raised by the next emit and at the end of the trace."""
        if self.pending is None:
            self.pending = user_error(message)

    def check_pending(self):
        if self.pending is not None:
            err, self.pending = self.pending, None
            raise err

    # ---- values ----------------------------------------------------------
    def add_arg(self, type_, name, attrs):
        v = new_value(type_, self.entry, None, name)
        self.args.append((v, attrs))
        return v

    def block_arg(self, block, type_, hint):
        v = new_value(type_, block, None, hint)
        block.args.append(v)
        return v

    def constant(self, value, dt):
        lit = _dt.literal(value, dt)
        key = (lit, dt.mlir)
        v = self.consts.get(key)
        if v is None:
            op = Op("arith.constant", [f"arith.constant {lit}"
                                       + ("" if dt.kind == "bool" else f" : {dt.mlir}")],
                    None, self.entry, True)
            v = new_value(dt, self.entry, op, _const_hint(value, dt))
            v.const = _dt.fold_to_type(value, dt)
            v.nonneg = dt.kind != "float" and v.const >= 0
            op.results.append(v)
            self.prelude.append(op)
            self.consts[key] = v
        return v

    def dim(self, tensor, d):
        """memref.dim of a kernel argument (hoisted, one per (tensor, d))."""
        key = (id(tensor), d)
        v = self.dim_values.get(key)
        if v is None:
            c = self.constant(d, _dt.index)
            op = Op("memref.dim", ["memref.dim ", tensor, ", ", c, " : ",
                                   str(tensor.type)], None, self.entry, True)
            sym = tensor.type_dims[d] if getattr(tensor, "type_dims", None) else None
            v = new_value(_dt.index, self.entry, op, sym)
            v.nonneg = True
            op.results.append(v)
            self.prelude.append(op)
            self.dim_values[key] = v
        return v

    def symbol_value(self, sym):
        hit = self.symbols.get(sym)
        if hit is None:
            raise user_error(f"symbolic dim {sym.name!r} is not a dim of any "
                             "tensor parameter of this kernel")
        return self.dim(*hit)

    def check_use(self, v, what):
        if not isinstance(v, Value):
            return
        b = self.block
        while b is not None:
            if b is v.block:
                return
            b = b.parent
        where = _KIND_NAMES.get(v.block.kind, "a nested region")
        line = ""
        if v.owner is not None and v.owner.loc:
            line = f" (defined at line {v.owner.loc[1]})"
        elif v.block.loc:
            line = f" (region at line {v.block.loc[1]})"
        raise user_error(
            f"{what}: a value computed inside {where}{line} is used outside "
            "it; scalars are SSA values scoped to their region — carry the "
            "value out through a buffer (e.g. T.alloc_local((1,), dtype))")

    # ---- ops -------------------------------------------------------------
    def emit(self, name, parts, result_types=(), pure=False, hints=None,
             loc=None):
        """Appends an op to the current block and returns it. Operand values
        in parts are checked for dominance. Pure index/scalar arithmetic is
        reused when an identical op dominates (CSE) and placed in the
        outermost block inside the launch where its operands are available
        (loop-invariant code motion: `by * 128` written in a T.Pipelined body
        is computed once per block, which the SM90 GEMM matcher needs; math
        on dims only, like the K loop's trip count, goes to the function
        prelude, as in the hand-written examples)."""
        self.check_pending()
        own = [p for p in parts if isinstance(p, Block)]
        for p in parts:
            if isinstance(p, Value) and not any(p.block is b for b in own):
                self.check_use(p, name)
        cse_key = None
        target, before = self.block, None
        if pure and result_types and name.startswith(_CSE_PREFIXES):
            cse_key = (name, tuple(id(p) if isinstance(p, Value) else str(p)
                                   for p in parts))
            b = self.block
            while b is not None:
                hit = self.cse.get((id(b), cse_key))
                if hit is not None:
                    return hit
                b = b.parent
            if _hoistable(name, parts):
                target, before = self._hoist_target(parts)
        if loc is None:
            # also without printed locations: print_function remembers
            # them per line, for diagnostics on the text (python_locations)
            loc = user_loc()
        op = Op(name, parts, loc, target, pure)
        op.stmt = self.stmt_index.get(id(target))
        for b in own:
            b.owner = op
        for i, t in enumerate(result_types):
            hint = hints[i] if hints else None
            op.results.append(new_value(t, target, op, hint))
        if before is None:
            target.ops.append(op)
        else:
            target.ops.insert(target.ops.index(before), op)
        if cse_key is not None:
            self.cse[(id(target), cse_key)] = op
        return op

    def _hoist_target(self, parts):
        """(block, op to insert before) for a speculatable pure op: the
        innermost enclosing block that defines one of its operands;
        (current block, None) when nothing moves."""
        defs = {id(p.block) for p in parts if isinstance(p, Value)}
        b, child = self.block, None
        while True:
            if id(b) in defs or b.parent is None or b.kind == "if":
                break  # (never out of an if: that would compute it always)
            if b.owner is None or b.owner.block is not b.parent:
                break  # a region still being built (an if-expression arm)
            b, child = b.parent, b.owner
        return b, child


class Slot:
    """Op text filled in after the op was created (e.g. a launch's raster
    attribute, set by T.use_swizzle inside the launch body)."""

    __slots__ = ("text",)

    def __init__(self, text=""):
        self.text = text

    def __str__(self):
        return self.text


def _const_hint(value, dt):
    if dt.kind == "bool":
        return "true" if value else "false"
    if dt.kind in ("int", "index"):
        v = int(value)
        s = f"c{v}" if v >= 0 else f"c_neg{-v}"
        return s if dt.kind == "index" else f"{s}_{dt.mlir}"
    return "cst"


# ---- the current builder ---------------------------------------------------

_state = threading.local()


def current(what="this"):
    b = getattr(_state, "builder", None)
    if b is None:
        raise user_error(f"{what} can only be used while a kernel is being "
                         "built (inside a T.prim_func or @tile.jit function)")
    return b


def active():
    return getattr(_state, "builder", None)


class building:
    """with building(fb): makes fb the current builder of this thread."""

    def __init__(self, fb):
        self.fb = fb

    def __enter__(self):
        self.prev = getattr(_state, "builder", None)
        _state.builder = self.fb
        return self.fb

    def __exit__(self, *exc):
        _state.builder = self.prev
        return False


# ---- dead code -------------------------------------------------------------

def _walk(block):
    for op in block.ops:
        yield op
        for r in op.regions():
            yield from _walk(r)


def eliminate_dead_code(fb):
    """Drops pure ops whose results are unused (index arithmetic of a
    TileLang-style start point `A[by * BM, k]` whose element load T.copy did
    not need, constants of folded expressions, ...)."""
    while True:
        used = set()
        all_ops = list(fb.prelude) + list(_walk(fb.entry))
        for op in all_ops:
            for p in op.parts:
                if isinstance(p, Value):
                    used.add(id(p))
        removed = False
        for blk in [fb.entry] + [r for op in _walk(fb.entry) for r in op.regions()]:
            keep = [op for op in blk.ops
                    if not (op.pure and all(id(r) not in used for r in op.results))]
            removed |= len(keep) != len(blk.ops)
            blk.ops[:] = keep
        keep = [op for op in fb.prelude if any(id(r) in used for r in op.results)]
        removed |= len(keep) != len(fb.prelude)
        fb.prelude[:] = keep
        if not removed:
            return


# ---- printing --------------------------------------------------------------

class _Namer:
    def __init__(self):
        self.names = {}
        self.used = set()
        self.counter = 0

    def define(self, v):
        hint = v.hint
        if hint:
            base = "".join(c if c.isalnum() or c in "_$." else "_" for c in str(hint))
            if not base or base[0].isdigit():
                base = "v" + base
            name, i = base, 0
            while name in self.used:
                name = f"{base}_{i}"
                i += 1
        else:
            name = str(self.counter)
            self.counter += 1
            while name in self.used:
                name = str(self.counter)
                self.counter += 1
        self.used.add(name)
        self.names[id(v)] = "%" + name
        return self.names[id(v)]

    def __call__(self, v):
        n = self.names.get(id(v))
        if n is None:
            raise TileLangError("internal: value used before its definition "
                                "in the printed IR")
        return n


def _loc_text(loc):
    if not loc:
        return ""
    fn = loc[0].replace("\\", "\\\\").replace('"', '\\"')
    return f' loc("{fn}":{loc[1]}:{loc[2]})'


def _print_ops(ops, namer, depth, out, locations, marks=None):
    """Appends the ops' text to out. marks (a list; without printed
    locations): each op's loc is appended to it and its first line tagged
    with the index, for print_function to number."""
    pad = "  " * depth
    for op in ops:
        for blk in op.regions():
            for a in blk.args:
                namer.define(a)
        text = []
        for p in op.parts:
            if isinstance(p, Value):
                text.append(namer(p))
            elif isinstance(p, Block):
                inner = []
                _print_ops(p.ops, namer, depth + 1, inner, locations, marks)
                text.append("{\n" + "".join(inner) + pad + "}")
            else:
                text.append(str(p))
        if op.results:
            res = ", ".join(namer.define(r) for r in op.results)
            head = f"{res} = "
        else:
            head = ""
        line = f"{pad}{head}{''.join(text)}"
        if marks is not None and op.loc:
            marks.append(op.loc)
            tag = f"\x00{len(marks) - 1}\x00"
            nl = line.find("\n")
            line = line + tag if nl < 0 else line[:nl] + tag + line[nl:]
        out.append(f"{line}{_loc_text(op.loc) if locations else ''}\n")


_MARK = re.compile(r"\x00(\d+)\x00")
_line_locs = collections.OrderedDict()  # text -> {line: (file, line, col)}
_line_locs_lock = threading.Lock()


def python_locations(text):
    """{MLIR line: (file, line, column)} of a kernel text printed here
    without locations (T.prim_func / @tile.jit locations=False) in this
    process, or None: tile.compile names the Python line of a diagnostic
    on such a text. The last 128 texts are kept."""
    with _line_locs_lock:
        return _line_locs.get(text)


def _remember_locations(text, locs):
    with _line_locs_lock:
        _line_locs[text] = locs
        _line_locs.move_to_end(text)
        while len(_line_locs) > 128:
            _line_locs.popitem(last=False)


def print_function(fb):
    """The kernel as MLIR text (a func.func marked tile.kernel)."""
    eliminate_dead_code(fb)
    namer = _Namer()
    params = []
    for v, attrs in fb.args:
        items = []
        for k in ("tile.name", "tile.dims"):
            if k in attrs:
                val = attrs[k]
                if isinstance(val, (list, tuple)):
                    val = "[" + ", ".join(f'"{x}"' for x in val) + "]"
                else:
                    val = f'"{val}"'
                items.append(f"{k} = {val}")
        for unit in ("tile.output", "tile.inplace"):  # unit attributes
            if attrs.get(unit):
                items.append(unit)
        extra = " {" + ", ".join(items) + "}" if items else ""
        params.append(f"{namer.define(v)}: {type_str(v.type)}{extra}")
    sep = ",\n" + " " * (len(fb.name) + 12)
    out = [f"func.func @{fb.name}({sep.join(params)})\n"
           "    attributes {tile.kernel} {\n"]
    _print_ops(fb.prelude, namer, 1, out, False)
    marks = None if fb.locations else []
    _print_ops(fb.entry.ops, namer, 1, out, fb.locations, marks)
    out.append("  return\n}\n")
    text = "".join(out)
    if marks:
        lines, locs = text.split("\n"), {}
        for n, line in enumerate(lines):
            m = _MARK.search(line)
            if m:
                locs[n + 1] = marks[int(m.group(1))]
                lines[n] = _MARK.sub("", line)
        text = "\n".join(lines)
        _remember_locations(text, locs)
    return text

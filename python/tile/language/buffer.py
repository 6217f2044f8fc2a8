"""Tensors and buffers: kernel parameter types (T.Tensor), symbolic dims
(T.symbolic / T.const), and buffer indexing.

    M = T.symbolic("M")                      # a dynamic dim: '?' in the IR
    def kernel(A: T.Tensor((M, 64), "float16"), ...)
    A[i, j]                                  # an element (memref.load)
    A[i, j] = v                              # memref.store (v converted)
    A[by * 64, k * 32]                       # as a T.copy operand: a tile start
    A[by * 64:(by + 1) * 64, :]              # a region (static extents)
"""

import re

from . import dtypes as _dt
from .errors import user_error
from .expr import Scalar, as_index, binary, cast, compare, index_value, operand, static_difference
from .ir import VALUE_CLASSES, Value, active, current


# ---- dims ------------------------------------------------------------------

_CONST_OPS = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y,
              "mul": lambda x, y: x * y, "floordiv": lambda x, y: x // y,
              "mod": lambda x, y: x % y}


def _dim_binary(op, sym, a, b):
    """Arithmetic on a dim resolves it first (a Value, or an int). Outside a
    kernel body (a parameter annotation such as T.Tensor((S, D // 2))), T.const
    dims and ints make a ConstExpr, evaluated when the consts are bound; a
    T.symbolic dim there has nothing to resolve to."""
    if active() is None:
        if (op in _CONST_OPS and
                all(isinstance(x, (ConstDim, ConstExpr)) or _is_int(x) for x in (a, b))):
            return ConstExpr(op, sym, a, b)
        raise user_error(
            f"{a!r} {sym} {b!r}: a dim computed from T.symbolic dims is only "
            "possible inside a kernel body; each dim of a T.Tensor "
            "annotation is an int, a T.symbolic, a T.const or an expression "
            "of T.const dims and ints (declare its own symbol, e.g. N2 = "
            "T.symbolic(\"N2\"), or make the dims T.const)")
    return compare(op, a, b) if op in ("lt", "le", "gt", "ge") else binary(op, a, b)


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


class _DimArith:
    def __add__(self, o): return _dim_binary("add", "+", self, o)
    def __radd__(self, o): return _dim_binary("add", "+", o, self)
    def __sub__(self, o): return _dim_binary("sub", "-", self, o)
    def __rsub__(self, o): return _dim_binary("sub", "-", o, self)
    def __mul__(self, o): return _dim_binary("mul", "*", self, o)
    def __rmul__(self, o): return _dim_binary("mul", "*", o, self)
    def __truediv__(self, o): return _dim_binary("div", "/", self, o)
    def __rtruediv__(self, o): return _dim_binary("div", "/", o, self)
    def __floordiv__(self, o): return _dim_binary("floordiv", "//", self, o)
    def __rfloordiv__(self, o): return _dim_binary("floordiv", "//", o, self)
    def __mod__(self, o): return _dim_binary("mod", "%", self, o)
    def __rmod__(self, o): return _dim_binary("mod", "%", o, self)
    def __neg__(self): return _dim_binary("sub", "-", 0, self)
    def __lt__(self, o): return _dim_binary("lt", "<", self, o)
    def __le__(self, o): return _dim_binary("le", "<=", self, o)
    def __gt__(self, o): return _dim_binary("gt", ">", self, o)
    def __ge__(self, o): return _dim_binary("ge", ">=", self, o)


class _StaticDim(_DimArith):
    """A dim with a static value once bound (value()): an int in a kernel
    body."""

    def __tile_value__(self):
        return self.value()

    def __index__(self):
        return self.value()

    __int__ = __index__


class SymDim(_DimArith):
    """A dynamic dimension: one extent shared by every tensor dim that uses
    it (the runtime binds and checks it). In a kernel body it is the extent's
    value (memref.dim of the first tensor that has it)."""

    def __init__(self, name):
        self.name = name

    def __tile_value__(self):
        return current(f"symbolic dim {self.name}").symbol_value(self)

    def __repr__(self):
        return f"T.symbolic({self.name!r})"

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


class ConstDim(_StaticDim):
    """A dim that @tile.jit binds from the call's arguments to a Python int
    (a static extent: the kernel is specialized per value, TileLang's
    T.const). In a kernel body it behaves like that int."""

    def __init__(self, name):
        self.name = name

    def value(self):
        fb = active()
        v = fb.const_bindings.get(self) if fb is not None else None
        if v is None:
            raise user_error(
                f"T.const dim {self.name!r} is not bound: it gets its value "
                "from the arguments of a @tile.jit call (or jit.compile(...,"
                f" {self.name}=...))")
        return v

    def __repr__(self):
        return f"T.const({self.name!r})"

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


class ConstExpr(_StaticDim):
    """+, -, *, //, % of T.const dims and ints in a parameter annotation
    (T.Tensor((M, 2 * N)), T.Tensor((S, D // 2))): a static extent once the
    consts are bound. @tile.jit binds a const from an input dim of the form
    a * C + b (C one T.const, a and b ints) when no input has C alone."""

    def __init__(self, op, sym, a, b):
        self.op, self.sym, self.a, self.b = op, sym, a, b

    def evaluate(self, bindings):
        """The value with bindings {ConstDim: int}; None if one is unbound."""
        vals = []
        for x in (self.a, self.b):
            v = (bindings.get(x) if isinstance(x, ConstDim) else
                 x.evaluate(bindings) if isinstance(x, ConstExpr) else x)
            if v is None:
                return None
            vals.append(v)
        if self.op in ("floordiv", "mod") and vals[1] == 0:
            raise user_error(f"{self!r}: division by zero")
        return _CONST_OPS[self.op](*vals)

    def consts(self):
        out = []
        for x in (self.a, self.b):
            if isinstance(x, ConstDim):
                out.append(x)
            elif isinstance(x, ConstExpr):
                out += x.consts()
        return out

    def linear(self):
        """(C, a, b) when this is a * C + b for one T.const C, else None."""
        def lin(x):
            if isinstance(x, ConstDim):
                return (x, 1, 0)
            if _is_int(x):
                return (None, 0, x)
            if isinstance(x, ConstExpr) and x.op in ("add", "sub", "mul"):
                l, r = lin(x.a), lin(x.b)
                if l is None or r is None:
                    return None
                if x.op == "mul":
                    if l[0] is not None and r[0] is not None:
                        return None
                    c = l[0] or r[0]
                    return (c, l[1] * r[2] + r[1] * l[2], l[2] * r[2])
                if l[0] is not None and r[0] is not None and l[0] is not r[0]:
                    return None
                sgn = 1 if x.op == "add" else -1
                return (l[0] or r[0], l[1] + sgn * r[1], l[2] + sgn * r[2])
            return None
        r = lin(self)
        return r if r is not None and r[0] is not None and r[1] != 0 else None

    def value(self):
        fb = active()
        v = self.evaluate(fb.const_bindings if fb is not None else {})
        if v is None:
            raise user_error(f"{self!r}: its T.const dims are not bound")
        return v

    def __repr__(self):
        return f"{self.a!r} {self.sym} {self.b!r}"


def _names(spec):
    names = [n for n in re.split(r"[,\s]+", spec.strip()) if n]
    if not names or any(not n.isidentifier() for n in names):
        raise user_error(f"bad dim names {spec!r} (expected identifiers "
                         "separated by commas or spaces)")
    return names


def symbolic(names):
    """T.symbolic("M") -> a dynamic dim; T.symbolic("M, N") -> a tuple."""
    dims = tuple(SymDim(n) for n in _names(names))
    return dims[0] if len(dims) == 1 else dims


dynamic = symbolic


def const(names):
    """T.const("M, N") -> dims bound to ints from the @tile.jit arguments."""
    dims = tuple(ConstDim(n) for n in _names(names))
    return dims[0] if len(dims) == 1 else dims


# ---- parameter types -------------------------------------------------------

class Tensor:
    """Type of a global tensor parameter: T.Tensor((M, K), "float16").
    Dims are ints (static), T.symbolic dims (dynamic) or T.const dims
    (static, bound per call by @tile.jit). dtype=None (jit only) takes the
    argument's dtype. inplace=True (`tile.inplace`): the kernel writes this
    tensor and stays correct when it is the very same memory as another
    argument (each element read before the same thread writes it, as in
    Y = Y + X); the runtime then accepts that aliasing."""

    def __init__(self, shape, dtype=None, inplace=False):
        if not isinstance(shape, (tuple, list)):
            shape = (shape,)
        for d in shape:
            if not (isinstance(d, (SymDim, ConstDim, ConstExpr)) or
                    (isinstance(d, int) and not isinstance(d, bool) and d >= 0)):
                raise user_error(f"T.Tensor: dim {d!r} must be a non-negative "
                                 "int, a T.symbolic or a T.const dim (or an "
                                 "expression of T.const dims and ints)")
        self.shape = tuple(shape)
        self.dtype = None if dtype is None else _dt.dtype(dtype)
        self.inplace = bool(inplace)

    def __class_getitem__(cls, item):
        if isinstance(item, tuple) and len(item) == 2 and not isinstance(item[1], (int, SymDim, ConstDim, ConstExpr)):
            return cls(item[0], item[1])
        return cls(item)

    def __repr__(self):
        extra = ", inplace=True" if self.inplace else ""
        return f"T.Tensor({self.shape!r}, {self.dtype!r}{extra})"


Buffer = Tensor


# ---- buffers ---------------------------------------------------------------

class Region:
    """A rectangular part of a buffer: starts (index values or ints),
    extents (ints; None = 'whatever the other copy side needs'), and keep
    (False for dims indexed by a scalar: a rank-reducing region). open:
    the dims sliced up to their end (`:`, `a:`) that are dynamic: their
    extent is the tensor's, unknown when compiling, so such a region can
    only name a tile when its consumer checks it (check_open)."""

    def __init__(self, buffer, starts, extents, keep, open_dims=()):
        self.buffer = buffer
        self.starts = list(starts)
        self.extents = list(extents)
        self.keep = list(keep)
        self.open = frozenset(open_dims)

    def check_open(self, d, n, what):
        """Raises for dim d when it is an open slice over a dynamic dim: the
        tile is n elements (the on-chip buffer's extent) while the slice
        says the rest of a dim whose extent only the launch knows, so a
        longer dim would be cut silently (TileLang's slices are static
        too)."""
        if d not in self.open:
            return
        buf = self.buffer
        dims = getattr(buf, "type_dims", None)
        extent = dims[d] if dims and dims[d] else None
        sym = f" ({extent})" if extent else ""
        name = buf.hint or "the tensor"
        sliced = ", ".join(":" if i == d else "..." for i in range(buf.type.rank))
        row = ", ".join(f"0:{n}" if i == d else ("bx" if i == 0 else "...")
                        for i in range(buf.type.rank))
        start = ", ".join(f"k * {n}" if i == d else ("bx" if i == 0 else "...")
                          for i in range(buf.type.rank))
        raise user_error(
            f"{what}: {name}[{sliced}] slices dim {d} of {buf._desc()} to its "
            f"end, but that dim is dynamic{sym}: its extent is not known when "
            f"compiling, and the copy moves the on-chip buffer's {n} elements, "
            f"so a longer dim would be cut silently. Give the extent: a static "
            f"slice such as {name}[{row}] (one tile of {n}), or the tile start "
            f"{name}[{start}] in a loop over T.ceildiv("
            f"{extent or f'{name}.shape[{d}]'}, {n}) tiles "
            "(out-of-bounds elements read as zero and are not written)")

    @property
    def whole(self):
        def zero(s):  # a Python 0 or a constant 0 (never an op: Scalar == emits)
            return (s == 0) if isinstance(s, int) else getattr(s, "const", None) == 0
        return (all(self.keep) and all(zero(s) for s in self.starts) and
                all(e is None or e == d for e, d in zip(self.extents, self.buffer.type.shape)))


class TileBuffer(Value):
    """A memref value: a kernel's global tensor or an on-chip buffer."""

    __hash__ = object.__hash__

    @property
    def dtype(self):
        return self.type.dtype

    @property
    def scope(self):
        return self.type.scope or "global"

    @property
    def ndim(self):
        return self.type.rank

    @property
    def shape(self):
        """Static dims as ints, dynamic ones as index values."""
        out = []
        for d, n in enumerate(self.type.shape):
            out.append(n if n is not None else current("shape").dim(self, d))
        return tuple(out)

    @property
    def name(self):
        return self.hint

    def __repr__(self):
        return f"<tile buffer {self.hint or ''} {self.type}>"

    def __bool__(self):
        return True

    def __iter__(self):
        raise user_error("a buffer is not iterable: loop with T.Parallel / "
                         "T.serial over its indices")

    def _key(self, key, what):
        if not isinstance(key, tuple):
            key = (key,)
        if any(k is Ellipsis for k in key):
            if sum(k is Ellipsis for k in key) > 1:
                raise user_error(f"{what}: at most one '...' in an index")
            i = key.index(Ellipsis)
            fill = self.type.rank - (len(key) - 1)
            key = key[:i] + (slice(None),) * max(fill, 0) + key[i + 1:]
        if len(key) != self.type.rank:
            raise user_error(f"{what}: {len(key)} indices for a rank-"
                             f"{self.type.rank} buffer {self._desc()}")
        return key

    def _desc(self):
        return f"'{self.hint}' ({self.type})" if self.hint else f"({self.type})"

    def _check_static(self, d, i, what):
        n = self.type.shape[d]
        if isinstance(i, int) and (i < 0 or (n is not None and i >= n)):
            raise user_error(f"{what}: index {i} out of range for dim {d} "
                             f"(extent {n}) of {self._desc()}")

    def __getitem__(self, key):
        key = self._key(key, "indexing")
        if any(isinstance(k, slice) for k in key):
            return self._region(key)
        idx = []
        for d, k in enumerate(key):
            i = as_index(k, "indexing")
            self._check_static(d, i, "indexing")
            idx.append(i)
        fb = current("indexing a buffer")
        op = fb.emit("memref.load",
                     ["memref.load ", self, "["] + _join([index_value(i, "indexing") for i in idx])
                     + [f"] : {self.type}"], (self.type.dtype,), pure=True)
        r = op.results[0]
        r.ref = (self, idx)
        return r

    def __setitem__(self, key, value):
        key = self._key(key, "assignment")
        if any(isinstance(k, slice) for k in key):
            raise user_error("assigning to a slice is not supported: use "
                             "T.fill / T.copy, or a T.Parallel loop")
        idx = []
        for d, k in enumerate(key):
            i = as_index(k, "assignment")
            self._check_static(d, i, "assignment")
            idx.append(index_value(i, "assignment"))
        v = operand(value, "assignment")
        v = cast(v, self.type.dtype)
        current().emit("memref.store", ["memref.store ", v, ", ", self, "["]
                       + _join(idx) + [f"] : {self.type}"])

    def _region(self, key):
        starts, extents, keep, open_dims = [], [], [], []
        for d, k in enumerate(key):
            n = self.type.shape[d]
            if isinstance(k, slice):
                if k.step not in (None, 1):
                    raise user_error(f"slice step {k.step!r}: only unit-stride "
                                     "regions are supported")
                start = 0 if k.start is None else as_index(k.start, "slice")
                if k.stop is None:
                    ext = None if n is None else static_difference(n, start)
                    if n is None:
                        open_dims.append(d)
                    if n is not None and ext is None:
                        raise user_error(f"slice of dim {d} of {self._desc()}: "
                                         "the extent must be static")
                else:
                    stop = as_index(k.stop, "slice")
                    ext = static_difference(stop, start)
                    if ext is None:
                        raise user_error(
                            f"slice of dim {d} of {self._desc()}: the extent "
                            "(stop - start) must be known statically, e.g. "
                            "A[bx * 64:(bx + 1) * 64]")
                if ext is not None and ext <= 0:
                    raise user_error(f"slice of dim {d} of {self._desc()}: "
                                     f"empty extent {ext}")
                starts.append(start)
                extents.append(ext)
                keep.append(True)
            else:
                i = as_index(k, "indexing")
                self._check_static(d, i, "indexing")
                starts.append(i)
                extents.append(1)
                keep.append(False)
        return Region(self, starts, extents, keep, open_dims)


VALUE_CLASSES["buffer"] = TileBuffer


def _join(values):
    out = []
    for i, v in enumerate(values):
        if i:
            out.append(", ")
        out.append(v)
    return out


def as_region(x, what):
    """A Region for a T.copy / atomic operand: a buffer (whole), a sliced
    region, or an element reference `A[i, j]` (the start of a tile whose
    extent the other side decides)."""
    if isinstance(x, Region):
        return x
    if isinstance(x, TileBuffer):
        return Region(x, [0] * x.type.rank, list(x.type.shape), [True] * x.type.rank)
    if isinstance(x, Scalar) and x.ref is not None:
        buf, idx = x.ref
        return Region(buf, idx, [None] * len(idx), [True] * len(idx))
    raise user_error(f"{what}: expected a buffer, a region (A[a:b, :]) or a "
                     f"tile start (A[i, j]), got {_describe(x)}")


def _describe(x):
    if isinstance(x, Scalar):
        return f"a computed {x.type.name} scalar"
    return type(x).__name__

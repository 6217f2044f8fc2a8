"""Scalar expressions: Python operators on tile values become arith/math
ops, with constant folding and implicit conversions.

Rules (what a TileLang user expects, spelled out):
* Python numbers fold: `block_M * 2`, `T.ceildiv(1000, 128)` never reach
  the IR; a number meeting a typed value takes its type (an int with an f16
  value is an f16 constant). A float with an integer value makes both f32.
* Mixed typed operands promote (dtypes.promote): float beats integer, the
  wider float wins, index beats fixed-width integers.
* `/` is true division (floats); `//` and `%` are floor division and floor
  modulo (Python's), emitted as unsigned ops when both sides are known to be
  non-negative (dims, block and loop indices, positive constants) — the form
  the host-side grid computation and the SM90 matcher understand.
* Comparisons give bool (i1); `and`/`or`/`not`, chained comparisons, `if`
  and `x if c else y` on them are rewritten by the AST pass (ast_rewrite.py).
* Index arithmetic keeps a linear form (constant + sum of coef * leaf) so
  that slice extents like `(bx + 1) * 64 - bx * 64` are known statically.
"""

import math
import numbers

from . import dtypes as _dt
from .dtypes import promote
from .errors import user_error
from .ir import VALUE_CLASSES, Value, current


class Scalar(Value):
    """A scalar tile value (index, integer, float or bool)."""

    __hash__ = object.__hash__

    @property
    def dtype(self):
        return self.type

    def astype(self, dt):
        return cast(self, dt)

    def __bool__(self):
        raise user_error(
            "a tile value has no Python truth value: use it in an `if`, "
            "`and`/`or`/`not` or `x if cond else y` of a T.prim_func / "
            "@tile.jit kernel body (rewritten to scf.if / arith ops; a helper "
            "function called from a kernel needs @T.macro for that), or "
            "T.if_then_else(cond, a, b)")

    def __index__(self):
        raise user_error(
            "a tile value is not a Python int (e.g. for range() outside a "
            "kernel body or a shape): loop with T.serial(n), shapes must be "
            "static")

    __int__ = __index__

    def __float__(self):
        raise user_error("a tile value is not a Python float")

    def __iter__(self):
        raise user_error("a scalar tile value is not iterable")

    def __repr__(self):
        if self.const is not None:
            return f"<tile {self.type.name} const {self.const}>"
        return f"<tile {self.type.name} value>"

    # arithmetic
    def __add__(self, o): return binary("add", self, o)
    def __radd__(self, o): return binary("add", o, self)
    def __sub__(self, o): return binary("sub", self, o)
    def __rsub__(self, o): return binary("sub", o, self)
    def __mul__(self, o): return binary("mul", self, o)
    def __rmul__(self, o): return binary("mul", o, self)
    def __truediv__(self, o): return binary("div", self, o)
    def __rtruediv__(self, o): return binary("div", o, self)
    def __floordiv__(self, o): return binary("floordiv", self, o)
    def __rfloordiv__(self, o): return binary("floordiv", o, self)
    def __mod__(self, o): return binary("mod", self, o)
    def __rmod__(self, o): return binary("mod", o, self)
    def __pow__(self, o): return power(self, o)
    def __rpow__(self, o): return power(o, self)
    def __and__(self, o): return binary("and", self, o)
    def __rand__(self, o): return binary("and", o, self)
    def __or__(self, o): return binary("or", self, o)
    def __ror__(self, o): return binary("or", o, self)
    def __xor__(self, o): return binary("xor", self, o)
    def __rxor__(self, o): return binary("xor", o, self)
    def __lshift__(self, o): return binary("shl", self, o)
    def __rlshift__(self, o): return binary("shl", o, self)
    def __rshift__(self, o): return binary("shr", self, o)
    def __rrshift__(self, o): return binary("shr", o, self)
    def __neg__(self): return negate(self)
    def __pos__(self): return self
    def __abs__(self): return absolute(self)
    def __invert__(self): return invert(self)
    def __lt__(self, o): return compare("lt", self, o)
    def __le__(self, o): return compare("le", self, o)
    def __gt__(self, o): return compare("gt", self, o)
    def __ge__(self, o): return compare("ge", self, o)
    def __eq__(self, o): return compare("eq", self, o)
    def __ne__(self, o): return compare("ne", self, o)


VALUE_CLASSES["scalar"] = Scalar

_PY_NUM = (bool, int, float)


def operand(x, what="expression"):
    """A Scalar or a Python number for x (symbolic dims resolve to their
    value, numpy scalars to Python numbers)."""
    if isinstance(x, Scalar) or type(x) in _PY_NUM:
        return x
    resolve = getattr(x, "__tile_value__", None)
    if resolve is not None:
        return resolve()
    if isinstance(x, numbers.Number) and hasattr(x, "item"):
        return x.item()
    if isinstance(x, numbers.Integral):
        return int(x)
    if isinstance(x, numbers.Real):
        return float(x)
    if isinstance(x, Value):
        raise user_error(f"{what}: a buffer is not a scalar; index it "
                         "(buf[i, j]) to read an element")
    raise user_error(f"{what}: expected a tile scalar or a number, got "
                     f"{type(x).__name__}")


def constant(value, dt):
    return current().constant(value, _dt.dtype(dt))


def to_value(x, dt, what="expression"):
    """x (a Scalar or a number) as a Scalar of type dt (converting)."""
    x = operand(x, what)
    if isinstance(x, Scalar):
        return cast(x, dt)
    return constant(x, dt)


def _emit(name, text, dt, *, hint=None, nonneg=False):
    """Emits a pure one-result op: text is the op's parts without results."""
    op = current().emit(name, text, (dt,), pure=True,
                        hints=(hint,) if hint else None)
    r = op.results[0]
    r.nonneg = nonneg
    return r


# ---- linear forms of integer values ----------------------------------------

def _lin(v):
    if isinstance(v, int):
        return (v, {})
    if v.const is not None:
        return (int(v.const), {})
    if v.lin is not None:
        return v.lin
    return (0, {id(v): (v, 1)})


def _lin_combine(a, b, sign):
    ca, ta = _lin(a)
    cb, tb = _lin(b)
    terms = dict(ta)
    for k, (v, c) in tb.items():
        old = terms.get(k, (v, 0))[1] + sign * c
        if old:
            terms[k] = (v, old)
        else:
            terms.pop(k, None)
    return (ca + sign * cb, terms)


def _lin_scale(a, k):
    c, t = _lin(a)
    if k == 0:
        return (0, {})
    return (c * k, {key: (v, coef * k) for key, (v, coef) in t.items()})


def static_difference(a, b):
    """a - b as a Python int when it is known statically, else None."""
    a, b = operand(a), operand(b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a - b
    for x in (a, b):
        if isinstance(x, Scalar) and not x.type.is_int:
            return None
    c, terms = _lin_combine(a, b, -1)
    return c if not terms else None


# ---- binary ops ------------------------------------------------------------

_PY_OPS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b,
    "and": lambda a, b: a & b, "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b, "shl": lambda a, b: a << b,
    "shr": lambda a, b: a >> b,
}
_INT_OPS = {"add": "addi", "sub": "subi", "mul": "muli", "and": "andi",
            "or": "ori", "xor": "xori", "shl": "shli", "shr": "shrsi"}
_FLOAT_OPS = {"add": "addf", "sub": "subf", "mul": "mulf", "div": "divf"}


def _types_for(a, b, op):
    """(common type, result type) of a binary op on two operands, at least
    one of them a Scalar."""
    ta = a.type if isinstance(a, Scalar) else None
    tb = b.type if isinstance(b, Scalar) else None
    if ta is None:
        ta = _dt.float32 if isinstance(a, float) and not tb.is_float else tb
    if tb is None:
        tb = _dt.float32 if isinstance(b, float) and not ta.is_float else ta
    t = promote(ta, tb)
    if op == "div" and not t.is_float:
        t = _dt.float32
    if t.kind == "bool" and op in ("add", "sub", "mul", "floordiv", "mod"):
        t = _dt.int32
    return t


def binary(op, a, b):
    a = operand(a, _OP_NAMES.get(op, op))
    b = operand(b, _OP_NAMES.get(op, op))
    if not isinstance(a, Scalar) and not isinstance(b, Scalar):
        try:
            return _PY_OPS[op](a, b)
        except ZeroDivisionError:
            raise user_error(f"division by zero in {_OP_NAMES[op]}") from None
    t = _types_for(a, b, op)
    if op in ("and", "or", "xor", "shl", "shr") and t.is_float:
        raise user_error(f"'{_OP_NAMES[op]}' needs integer operands, got {t.name}")
    a, b = to_value(a, t), to_value(b, t)
    if a.const is not None and b.const is not None:
        try:
            return constant(_PY_OPS[op](a.const, b.const), t)
        except ZeroDivisionError:
            raise user_error(f"division by zero in {_OP_NAMES[op]}") from None
    if t.is_float:
        return _float_binary(op, a, b, t)
    return _int_binary(op, a, b, t)


_OP_NAMES = {"add": "+", "sub": "-", "mul": "*", "div": "/", "floordiv": "//",
             "mod": "%", "and": "&", "or": "|", "xor": "^", "shl": "<<",
             "shr": ">>"}


def _float_binary(op, a, b, t):
    if op in _FLOAT_OPS:
        return _emit("arith." + _FLOAT_OPS[op],
                     [f"arith.{_FLOAT_OPS[op]} ", a, ", ", b, f" : {t.mlir}"], t)
    q = _emit("arith.divf", ["arith.divf ", a, ", ", b, f" : {t.mlir}"], t)
    fl = _emit("math.floor", ["math.floor ", q, f" : {t.mlir}"], t)
    if op == "floordiv":
        return fl
    m = _emit("arith.mulf", ["arith.mulf ", fl, ", ", b, f" : {t.mlir}"], t)
    return _emit("arith.subf", ["arith.subf ", a, ", ", m, f" : {t.mlir}"], t)


def _int_binary(op, a, b, t):
    ca, cb = a.const, b.const
    # identities (exact for integers)
    if op in ("add", "or", "xor") and cb == 0:
        return a
    if op in ("add", "or", "xor") and ca == 0:
        return b
    if op == "sub" and cb == 0:
        return a
    if op == "mul" and (ca == 0 or cb == 0):
        return constant(0, t)
    if op == "mul" and cb == 1:
        return a
    if op == "mul" and ca == 1:
        return b
    if op in ("floordiv",) and cb == 1:
        return a
    if op in ("floordiv", "mod") and cb == 0:
        raise user_error(f"division by zero in {_OP_NAMES[op]}")
    nonneg = a.nonneg and b.nonneg
    lin = None
    if op == "add":
        lin = _lin_combine(a, b, 1)
    elif op == "sub":
        lin = _lin_combine(a, b, -1)
        nonneg = False
    elif op == "mul" and (ca is not None or cb is not None):
        lin = _lin_scale(b if ca is not None else a, ca if ca is not None else cb)
    if op in _INT_OPS:
        if op in ("shr",):
            nonneg = a.nonneg
        r = _emit("arith." + _INT_OPS[op],
                  [f"arith.{_INT_OPS[op]} ", a, ", ", b, f" : {t.mlir}"], t,
                  nonneg=nonneg)
        r.lin = lin
        return r
    if op == "floordiv":
        name = "divui" if nonneg else "floordivsi"
        return _emit("arith." + name, [f"arith.{name} ", a, ", ", b, f" : {t.mlir}"],
                     t, nonneg=nonneg)
    # mod
    if nonneg:
        return _emit("arith.remui", ["arith.remui ", a, ", ", b, f" : {t.mlir}"],
                     t, nonneg=True)
    q = _emit("arith.floordivsi", ["arith.floordivsi ", a, ", ", b, f" : {t.mlir}"], t)
    m = _emit("arith.muli", ["arith.muli ", q, ", ", b, f" : {t.mlir}"], t)
    return _emit("arith.subi", ["arith.subi ", a, ", ", m, f" : {t.mlir}"], t)


_CMP = {"lt": ("olt", "slt", "ult"), "le": ("ole", "sle", "ule"),
        "gt": ("ogt", "sgt", "ugt"), "ge": ("oge", "sge", "uge"),
        "eq": ("oeq", "eq", "eq"), "ne": ("une", "ne", "ne")}
_PY_CMP = {"lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
           "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
           "eq": lambda a, b: a == b, "ne": lambda a, b: a != b}


def compare(op, a, b):
    a = operand(a, "comparison")
    b = operand(b, "comparison")
    if not isinstance(a, Scalar) and not isinstance(b, Scalar):
        return _PY_CMP[op](a, b)
    t = _types_for(a, b, op)
    a, b = to_value(a, t), to_value(b, t)
    if a.const is not None and b.const is not None:
        return constant(_PY_CMP[op](a.const, b.const), _dt.boolean)
    if t.is_float:
        pred = _CMP[op][0]
        return _emit("arith.cmpf", [f"arith.cmpf {pred}, ", a, ", ", b,
                                    f" : {t.mlir}"], _dt.boolean)
    pred = _CMP[op][1]
    return _emit("arith.cmpi", [f"arith.cmpi {pred}, ", a, ", ", b,
                                f" : {t.mlir}"], _dt.boolean)


def negate(x):
    x = operand(x, "-")
    if not isinstance(x, Scalar):
        return -x
    if x.const is not None:
        return constant(-x.const, x.type)
    if x.type.is_float:
        return _emit("arith.negf", ["arith.negf ", x, f" : {x.type.mlir}"], x.type)
    return binary("sub", 0, x)


def invert(x):
    x = operand(x, "~")
    if not isinstance(x, Scalar):
        return ~x
    if x.type.is_float:
        raise user_error("'~' needs an integer or bool operand")
    return binary("xor", x, constant(True if x.type.kind == "bool" else -1, x.type))


def absolute(x):
    x = operand(x, "abs")
    if not isinstance(x, Scalar):
        return abs(x)
    if x.nonneg:
        return x
    if x.const is not None:
        return constant(abs(x.const), x.type)
    name = "math.absf" if x.type.is_float else "math.absi"
    return _emit(name, [name + " ", x, f" : {x.type.mlir}"], x.type,
                 nonneg=not x.type.is_float)


def power(a, b):
    a = operand(a, "**")
    b = operand(b, "**")
    if not isinstance(a, Scalar) and not isinstance(b, Scalar):
        return a ** b
    if isinstance(b, int) and not isinstance(b, bool) and 0 <= b <= 4:
        if b == 0:
            return to_value(1, a.type)
        r = a
        for _ in range(b - 1):
            r = binary("mul", r, a)
        return r
    t = _types_for(a, b, "div")
    a, b = to_value(a, t), to_value(b, t)
    return _emit("math.powf", ["math.powf ", a, ", ", b, f" : {t.mlir}"], t)


# ---- conversions -----------------------------------------------------------

# Mantissa bits (with the implicit one) and the largest finite value.
_FLOAT_FORMAT = {"f16": (11, 65504.0), "bf16": (8, 3.3895313892515355e38),
                 "f32": (24, 3.4028234663852886e38), "f64": (53, 1.7976931348623157e308),
                 "f8E4M3FN": (4, 448.0), "f8E5M2": (3, 57344.0)}


def _float_int_bounds(f, i):
    """The floats of type f nearest the range of integer type i toward zero
    (what a saturating float -> integer conversion clamps to)."""
    p, fmax = _FLOAT_FORMAT[f.mlir]
    w = i.bits - 1
    hi = (1 << w) - 1 if w <= p else (1 << w) - (1 << (w - p))
    return max(-(1 << w), -int(fmax)), min(hi, int(fmax))


def cast(x, dt):
    """x converted to dtype dt: float<->float rounds to nearest even (f16 <->
    bf16 through f32), int<->int sign-extends or truncates (bool zero-
    extends), int->float is signed, float->int truncates toward zero and
    saturates (past the integer's range: its min / max; NaN: 0), any ->
    bool is `!= 0`."""
    dt = _dt.dtype(dt)
    x = operand(x, "cast")
    if not isinstance(x, Scalar):
        if dt.is_float:
            return constant(float(x), dt)
        if dt.kind == "bool":
            return constant(bool(x), dt)
        return constant(int(x), dt)
    s = x.type
    if s == dt:
        return x
    if x.const is not None:
        v = x.const
        if dt.kind in ("int", "index") and s.is_float:
            t = _dt.int64 if dt.kind == "index" else dt
            v = 0 if math.isnan(v) else min(max(math.trunc(max(min(v, 1e308), -1e308)),
                                                -(1 << (t.bits - 1))), (1 << (t.bits - 1)) - 1)
        return constant(bool(v) if dt.kind == "bool" else v, dt)
    if dt.kind == "bool":
        return compare("ne", x, 0)
    if s.is_float and dt.is_float:
        if s.bits == dt.bits or (8 in (s.bits, dt.bits) and 32 not in (s.bits, dt.bits)):
            return cast(cast(x, _dt.float32), dt)  # f16 <-> bf16, f8 <-> 16/64-bit
        name = "extf" if dt.bits > s.bits else "truncf"
        return _emit("arith." + name, [f"arith.{name} ", x,
                                       f" : {s.mlir} to {dt.mlir}"], dt)
    if s.is_float:  # float -> integer, saturating (NaN -> 0), as tile.copy
        target = _dt.int64 if dt.kind == "index" else dt
        lo, hi = _float_int_bounds(s, target)
        y = _minmax2("min", _minmax2("max", x, constant(float(lo), s)), constant(float(hi), s))
        y = if_then_else(compare("ne", x, x), constant(0.0, s), y)
        r = _emit("arith.fptosi", ["arith.fptosi ", y, f" : {s.mlir} to {target.mlir}"],
                  target)
        # Past a bound that is not the integer's own (f32 -> i32: 2^31 -
        # 128; f16 -> i32: only infinities): the integer's min / max.
        imax, imin = (1 << (target.bits - 1)) - 1, -(1 << (target.bits - 1))
        if hi != imax:
            r = if_then_else(compare("gt", x, constant(float(hi), s)), constant(imax, target), r)
        if lo != imin:
            r = if_then_else(compare("lt", x, constant(float(lo), s)), constant(imin, target), r)
        return cast(r, dt) if target is not dt else r
    if dt.is_float:  # integer -> float
        if s.kind == "index":
            x = cast(x, _dt.int64)
            s = _dt.int64
        name = "uitofp" if s.kind == "bool" else "sitofp"
        return _emit("arith." + name, [f"arith.{name} ", x, f" : {s.mlir} to {dt.mlir}"], dt)
    if s.kind == "index" or dt.kind == "index":
        if s.kind == "bool":
            x = cast(x, _dt.int64)
            s = _dt.int64
        name = "index_castui" if x.nonneg else "index_cast"
        r = _emit("arith." + name, [f"arith.{name} ", x, f" : {s.mlir} to {dt.mlir}"],
                  dt, nonneg=x.nonneg)
        return r
    if dt.bits > s.bits:
        name = "extui" if s.kind == "bool" else "extsi"
        return _emit("arith." + name, [f"arith.{name} ", x, f" : {s.mlir} to {dt.mlir}"],
                     dt, nonneg=x.nonneg or s.kind == "bool")
    return _emit("arith.trunci", ["arith.trunci ", x, f" : {s.mlir} to {dt.mlir}"], dt)


def as_index(x, what):
    """x as an index value (Python ints stay Python ints)."""
    x = operand(x, what)
    if isinstance(x, bool) or isinstance(x, float):
        raise user_error(f"{what}: an index must be an integer, got {x!r}")
    if isinstance(x, int):
        return x
    if not x.type.is_int or x.type.kind == "bool":
        raise user_error(f"{what}: an index must be an integer, got a "
                         f"{x.type.name} value")
    return cast(x, _dt.index)


def index_value(x, what):
    """x as an index Scalar (materializing Python ints)."""
    x = as_index(x, what)
    return constant(x, _dt.index) if isinstance(x, int) else x


# ---- functions -------------------------------------------------------------

def ceildiv(a, b):
    """ceil(a / b) for integers (unsigned form when both are known to be
    non-negative, e.g. dims and block sizes)."""
    a = operand(a, "T.ceildiv")
    b = operand(b, "T.ceildiv")
    if not isinstance(a, Scalar) and not isinstance(b, Scalar):
        if b == 0:
            raise user_error("T.ceildiv: division by zero")
        return -(-a // b)
    t = _types_for(a, b, "floordiv")
    if t.is_float:
        raise user_error("T.ceildiv needs integer operands")
    a, b = to_value(a, t), to_value(b, t)
    if b.const == 0:
        raise user_error("T.ceildiv: division by zero")
    if a.const is not None and b.const is not None:
        return constant(-(-a.const // b.const), t)
    if b.const == 1:
        return a
    nonneg = a.nonneg and b.nonneg
    name = "ceildivui" if nonneg else "ceildivsi"
    return _emit("arith." + name, [f"arith.{name} ", a, ", ", b, f" : {t.mlir}"],
                 t, nonneg=nonneg)


def _minmax(kind, args):
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    if len(args) < 2:
        raise user_error(f"T.{kind} needs at least two operands")
    r = operand(args[0], f"T.{kind}")
    for b in args[1:]:
        r = _minmax2(kind, r, operand(b, f"T.{kind}"))
    return r


def _minmax2(kind, a, b):
    if not isinstance(a, Scalar) and not isinstance(b, Scalar):
        return max(a, b) if kind == "max" else min(a, b)
    t = _types_for(a, b, kind)
    a, b = to_value(a, t), to_value(b, t)
    if a.const is not None and b.const is not None:
        return constant(max(a.const, b.const) if kind == "max"
                        else min(a.const, b.const), t)
    if t.is_float:
        name = "maximumf" if kind == "max" else "minimumf"
    elif a.nonneg and b.nonneg:
        name = "maxui" if kind == "max" else "minui"
    else:
        name = "maxsi" if kind == "max" else "minsi"
    nonneg = (a.nonneg or b.nonneg) if kind == "max" else (a.nonneg and b.nonneg)
    return _emit("arith." + name, [f"arith.{name} ", a, ", ", b, f" : {t.mlir}"],
                 t, nonneg=nonneg and not t.is_float)


def max_(*args):
    """Maximum of scalars (floats: NaN propagates, like tile.reduce max)."""
    return _minmax("max", args)


def min_(*args):
    """Minimum of scalars (floats: NaN propagates)."""
    return _minmax("min", args)


def if_then_else(cond, a, b):
    """arith.select: both a and b are computed (use `a if cond else b` in a
    kernel body to compute only the taken one, e.g. a guarded load)."""
    cond = operand(cond, "T.if_then_else")
    a = operand(a, "T.if_then_else")
    b = operand(b, "T.if_then_else")
    if not isinstance(cond, Scalar):
        return a if cond else b
    cond = cast(cond, _dt.boolean)
    if not isinstance(a, Scalar) and not isinstance(b, Scalar):
        t = _dt.float32 if isinstance(a, float) or isinstance(b, float) else _dt.int32
    else:
        t = _types_for(a, b, "select")
    a, b = to_value(a, t), to_value(b, t)
    if cond.const is not None:
        return a if cond.const else b
    return _emit("arith.select", ["arith.select ", cond, ", ", a, ", ", b,
                                  f" : {t.mlir}"], t)


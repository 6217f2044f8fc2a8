"""Math on scalars: T.exp, T.rsqrt, ... (math dialect ops, folded for
Python numbers; integer operands become float32), T.sigmoid, T.fma, and the
constants T.infinity / T.max_value / T.min_value."""

import math

from . import dtypes as _dt
from .dtypes import promote
from .errors import user_error
from .expr import Scalar, _emit, binary, cast, constant, negate, operand, to_value


_UNARY_MATH = {
    "exp": ("math.exp", math.exp), "exp2": ("math.exp2", lambda v: 2.0 ** v),
    "log": ("math.log", math.log), "log2": ("math.log2", math.log2),
    "log10": ("math.log10", math.log10), "log1p": ("math.log1p", math.log1p),
    "sqrt": ("math.sqrt", math.sqrt), "rsqrt": ("math.rsqrt", lambda v: 1 / math.sqrt(v)),
    "sin": ("math.sin", math.sin), "cos": ("math.cos", math.cos),
    "tan": ("math.tan", math.tan), "tanh": ("math.tanh", math.tanh),
    "erf": ("math.erf", math.erf), "floor": ("math.floor", math.floor),
    "ceil": ("math.ceil", math.ceil), "trunc": ("math.trunc", math.trunc),
    "round": ("math.roundeven", round),
}


def unary_math(fname, x):
    name, py = _UNARY_MATH[fname]
    x = operand(x, f"T.{fname}")
    if not isinstance(x, Scalar):
        try:
            return float(py(x))
        except (ValueError, ZeroDivisionError, OverflowError) as e:
            raise user_error(f"T.{fname}({x!r}): {e}") from None
    if not x.type.is_float:
        x = cast(x, _dt.float32)
    return _emit(name, [name + " ", x, f" : {x.type.mlir}"], x.type)


def sigmoid(x):
    """1 / (1 + exp(-x))."""
    x = operand(x, "T.sigmoid")
    if not isinstance(x, Scalar):
        return 1.0 / (1.0 + math.exp(-x))
    return binary("div", 1.0, binary("add", 1.0, unary_math("exp", negate(x))))


def fma(a, b, c):
    """a * b + c in one rounding (math.fma)."""
    a, b, c = (operand(v, "T.fma") for v in (a, b, c))
    if not any(isinstance(v, Scalar) for v in (a, b, c)):
        return a * b + c
    t = None
    for v in (a, b, c):
        if isinstance(v, Scalar):
            t = v.type if t is None else promote(t, v.type)
    if not t.is_float:
        t = _dt.float32
    a, b, c = (to_value(v, t) for v in (a, b, c))
    return _emit("math.fma", ["math.fma ", a, ", ", b, ", ", c, f" : {t.mlir}"], t)


def infinity(dt):
    """+inf of a float dtype (-T.infinity(dt) is -inf)."""
    dt = _dt.dtype(dt)
    if not dt.is_float:
        raise user_error(f"T.infinity: {dt.name} is not a float type")
    return constant(math.inf, dt)


def max_value(dt):
    """The largest finite value of dtype dt."""
    dt = _dt.dtype(dt)
    if dt.is_float:
        top = {"f16": 65504.0, "bf16": 3.3895313892515355e38,
               "f32": 3.4028234663852886e38, "f64": 1.7976931348623157e308,
               "f8E4M3FN": 448.0, "f8E5M2": 57344.0}[dt.mlir]
        return constant(top, dt)
    if dt.kind == "bool":
        return constant(True, dt)
    return constant((1 << (dt.bits - 1)) - 1, dt)


def min_value(dt):
    """The most negative finite value of dtype dt."""
    dt = _dt.dtype(dt)
    if dt.is_float:
        return negate(max_value(dt))
    if dt.kind == "bool":
        return constant(False, dt)
    return constant(-(1 << (dt.bits - 1)), dt)


def _math(name):
    def f(x):
        return unary_math(name, x)
    f.__name__ = name
    f.__qualname__ = name
    f.__doc__ = (f"T.{name}(x): element-wise {name} ({_UNARY_MATH[name][0]}); "
                 "integers become float32, Python numbers fold.")
    return f


exp, exp2, log, log2, log10, log1p = (_math(n) for n in
                                      ("exp", "exp2", "log", "log2", "log10", "log1p"))
sqrt, rsqrt, sin, cos, tan, tanh, erf = (_math(n) for n in
                                         ("sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "erf"))
floor, ceil, trunc = (_math(n) for n in ("floor", "ceil", "trunc"))
round_even = _math("round")

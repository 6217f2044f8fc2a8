"""Scalar types of tile.language: T.float16, T.int32, ... and their MLIR
spellings, promotion rules and constant literals.

A dtype is a `str` subclass (T.float16 == "float16"), so it can be used
wherever TileLang code passes dtype strings, and it is callable:
T.float32(x) converts x (a Python number becomes a typed constant)."""

import math
import struct

from .errors import user_error


class DType(str):
    """A scalar type. kind: 'float', 'int', 'bool' or 'index'."""

    def __new__(cls, name, mlir, kind, bits):
        self = super().__new__(cls, name)
        self.mlir = mlir
        self.kind = kind
        self.bits = bits
        return self

    @property
    def name(self):
        return str.__str__(self)

    @property
    def is_float(self):
        return self.kind == "float"

    @property
    def is_int(self):
        """Integer-like: int, index or bool."""
        return self.kind in ("int", "index", "bool")

    def __call__(self, value):
        from .expr import cast
        return cast(value, self)

    def __repr__(self):
        return f"T.{self.name}"

    def __reduce__(self):
        return (dtype, (self.name,))

    __hash__ = str.__hash__


_TABLE = [
    ("float16", "f16", "float", 16),
    ("bfloat16", "bf16", "float", 16),
    ("float32", "f32", "float", 32),
    ("float64", "f64", "float", 64),
    ("float8_e4m3fn", "f8E4M3FN", "float", 8),
    ("float8_e5m2", "f8E5M2", "float", 8),
    ("int8", "i8", "int", 8),
    ("int16", "i16", "int", 16),
    ("int32", "i32", "int", 32),
    ("int64", "i64", "int", 64),
    ("bool", "i1", "bool", 1),
    ("index", "index", "index", 64),
]
DTYPES = {name: DType(name, mlir, kind, bits) for name, mlir, kind, bits in _TABLE}

ALIASES = {
    "float": "float32", "half": "float16", "double": "float64",
    "fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64",
    "float8_e4m3": "float8_e4m3fn", "e4m3_float8": "float8_e4m3fn",
    "e5m2_float8": "float8_e5m2", "int": "int32", "long": "int64",
    "bool_": "bool", "f16": "float16", "f32": "float32", "f64": "float64",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
}

float16 = DTYPES["float16"]
bfloat16 = DTYPES["bfloat16"]
float32 = DTYPES["float32"]
float64 = DTYPES["float64"]
float8_e4m3fn = DTYPES["float8_e4m3fn"]
float8_e5m2 = DTYPES["float8_e5m2"]
int8 = DTYPES["int8"]
int16 = DTYPES["int16"]
int32 = DTYPES["int32"]
int64 = DTYPES["int64"]
boolean = DTYPES["bool"]
index = DTYPES["index"]

_cache = {}


def dtype(x):
    """The DType for a DType, a name ("float16", "float", "bf16", ...), a
    numpy dtype or a torch dtype. Raises TileLangError for anything else."""
    if isinstance(x, DType):
        return x
    try:
        hit = _cache.get(x)
    except TypeError:
        hit = None
    if hit is not None:
        return hit
    name = getattr(x, "name", None) if not isinstance(x, str) else x
    if not isinstance(name, str):
        name = str(x)
    name = name.strip()
    for prefix in ("torch.", "numpy.", "np.", "jnp."):
        if name.startswith(prefix):
            name = name[len(prefix):]
    name = ALIASES.get(name, name)
    d = DTYPES.get(name)
    if d is None:
        raise user_error(f"unknown dtype {x!r} (expected one of: "
                         f"{', '.join(n for n in DTYPES if n != 'index')})")
    try:
        _cache[x] = d
    except TypeError:
        pass
    return d


def promote(a, b):
    """Common type of two typed operands (Python-like: float beats integer,
    the wider float wins, f16 with bf16 gives f32; index beats fixed-width
    integers; bool gives way to anything)."""
    if a == b:
        return a
    if a.kind == "bool":
        return b
    if b.kind == "bool":
        return a
    if a.is_float and b.is_float:
        if a.bits == b.bits:  # f16 vs bf16, or the two f8 kinds
            return float32
        return a if a.bits > b.bits else b
    if a.is_float:
        return a
    if b.is_float:
        return b
    if a.kind == "index" or b.kind == "index":
        return index
    return a if a.bits >= b.bits else b


_FLOAT_SPECIAL = {
    # (inf, -inf, nan) bit patterns
    "f16": (0x7C00, 0xFC00, 0x7E00),
    "bf16": (0x7F80, 0xFF80, 0x7FC0),
    "f32": (0x7F800000, 0xFF800000, 0x7FC00000),
    "f64": (0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000),
    "f8E5M2": (0x7C, 0xFC, 0x7E),
    "f8E4M3FN": (None, None, 0x7F),
}


def literal(value, dt):
    """The arith.constant literal of a Python value for type dt."""
    if dt.kind == "bool":
        return "true" if value else "false"
    if dt.kind in ("int", "index"):
        v = int(value)
        lo, hi = -(1 << (dt.bits - 1)), (1 << (dt.bits - 1)) - 1
        if dt.kind == "int" and not lo <= v <= hi:
            raise user_error(f"constant {v} does not fit in {dt.name}")
        return str(v)
    v = float(value)
    if math.isfinite(v):
        r = repr(v)  # shortest round-trip form; MLIR wants a '.' in it
        mant, e, exp = r.partition("e")
        if "." not in mant:
            mant += ".0"
        return mant + e + exp
    inf, ninf, nan = _FLOAT_SPECIAL[dt.mlir]
    bits = nan if math.isnan(v) else (inf if v > 0 else ninf)
    if bits is None:
        raise user_error(f"{dt.name} has no infinity")
    return hex(bits)


def fold_to_type(value, dt):
    """A Python constant as the given type would hold it (ints wrap to the
    width, floats round through the format where Python can)."""
    if dt.kind == "bool":
        return bool(value)
    if dt.kind in ("int", "index"):
        v = int(value)
        if dt.kind == "int":
            v &= (1 << dt.bits) - 1
            if v >= 1 << (dt.bits - 1):
                v -= 1 << dt.bits
        return v
    v = float(value)
    if dt.mlir == "f32" and math.isfinite(v):
        try:
            v = struct.unpack("f", struct.pack("f", v))[0]
        except OverflowError:
            v = math.copysign(math.inf, v)
    return v


__all__ = ["DType", "DTYPES", "dtype", "promote", "literal"]

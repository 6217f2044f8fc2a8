"""T.prim_func and T.macro: kernel functions traced to tile-dialect MLIR.

    @T.prim_func
    def add(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"),
            C: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 1024), threads=128) as bx:
            ...
    print(add.script())          # the MLIR text (func.func @add ... tile.kernel)

Parameters annotated T.Tensor(shape, dtype) are global tensors, those
annotated with a scalar dtype (T.int32, T.float32, ...) runtime scalars.
The body runs once, after the AST rewrite (ast_rewrite.py), with builder
values for the parameters; every T.* call appends ops. The printed function
has one argument per parameter: `tile.name` = the Python name, `tile.dims`
= the dim symbols (static int dims are named "<param>.<d>"), `tile.output`
on the out_idx outputs when script() / @tile.jit are given out_idx (so the
text alone compiles to the same kernel: tilec and tile.compile read it).
"""

import inspect

from . import dtypes as _dt
from .ast_rewrite import rewrite
from .buffer import ConstDim, ConstExpr, SymDim, Tensor
from .errors import user_error
from .ir import FuncBuilder, MemRefType, building, print_function

SCALAR_PARAM_TYPES = ("int32", "int64", "float32", "float64")


class Param:
    """A kernel function parameter: kind 'tensor' (spec: a T.Tensor),
    'scalar' (spec: a DType) or 'config' (a Python value: jit only)."""

    def __init__(self, name, kind, spec, default=inspect.Parameter.empty,
                 keyword_only=False):
        self.name = name
        self.kind = kind
        self.spec = spec
        self.default = default
        self.keyword_only = keyword_only

    def __repr__(self):
        return f"Param({self.name!r}, {self.kind}, {self.spec!r})"


def _annotations(fn):
    """fn's annotations; plain strings (`from __future__ import annotations`)
    are evaluated in fn's globals and closure. (T.float32 is a str subclass
    and stays as it is.)"""
    anns = dict(getattr(fn, "__annotations__", {}) or {})
    scope = None
    for k, a in anns.items():
        if type(a) is not str or a in _dt.DTYPES or a in _dt.ALIASES:
            continue
        if scope is None:
            scope = dict(fn.__globals__)
            code = fn.__code__
            for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
                try:
                    scope[name] = cell.cell_contents
                except ValueError:
                    pass
        try:
            anns[k] = eval(a, scope)  # noqa: S307 - the user's own annotation
        except Exception as e:  # noqa: BLE001 - report which annotation failed
            raise user_error(f"cannot evaluate the annotation {a!r} of "
                             f"parameter {k!r} of {fn.__name__}: {e}") from None
    return anns


def parse_params(fn, allow_config):
    """The Params of fn from its signature and annotations."""
    anns = _annotations(fn)
    out = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise user_error(f"{fn.__name__}: *args / **kwargs parameters are "
                             "not supported in a kernel function")
        ann = anns.get(p.name, inspect.Parameter.empty)
        kw_only = p.kind == p.KEYWORD_ONLY
        if isinstance(ann, Tensor):
            out.append(Param(p.name, "tensor", ann, keyword_only=kw_only))
        elif isinstance(ann, _dt.DType) or (isinstance(ann, str) and ann in _dt.DTYPES):
            dt = _dt.dtype(ann)
            if dt.name not in SCALAR_PARAM_TYPES:
                raise user_error(f"{fn.__name__}: scalar parameter {p.name!r} has "
                                 f"type {dt.name}; scalars must be one of "
                                 f"{', '.join(SCALAR_PARAM_TYPES)}")
            out.append(Param(p.name, "scalar", dt, keyword_only=kw_only))
        elif allow_config:
            out.append(Param(p.name, "config", None, p.default, kw_only))
        else:
            raise user_error(
                f"{fn.__name__}: parameter {p.name!r} needs a type: "
                "T.Tensor((dims...), dtype) or a scalar dtype such as T.int32")
    return out


def output_names(params, out_idx, name):
    """The names of the kernel parameters (config ones excluded) that out_idx
    (an index or a list; negative ones count from the end) names; a scalar
    or an index out of range is a TileLangError."""
    if out_idx is None:
        return frozenset()
    kparams = [p for p in params if p.kind != "config"]
    n = len(kparams)
    out = set()
    for i in ([out_idx] if isinstance(out_idx, int) else list(out_idx)):
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise user_error(f"{name}: out_idx {i} out of range for a kernel "
                             f"with {n} parameters")
        if kparams[j].kind != "tensor":
            raise user_error(f"{name}: out_idx {i} names the scalar parameter "
                             f"{kparams[j].name!r}")
        out.add(kparams[j].name)
    return frozenset(out)


def trace(body, name, params, *, config=None, const_bindings=None,
          dtypes=None, locations=True, outputs=()):
    """Runs the (rewritten) body with builder values and returns the MLIR
    text. config: values of 'config' params; const_bindings: T.const dim ->
    int; dtypes: param name -> dtype for tensors declared without one;
    outputs: names of the tensor params marked `tile.output` (out_idx)."""
    config = config or {}
    dtypes = dtypes or {}
    fb = FuncBuilder(name, locations)
    fb.const_bindings = dict(const_bindings or {})
    pos, kw = [], {}
    with building(fb):
        for p in params:
            if p.kind == "tensor":
                v = _tensor_arg(fb, p, dtypes.get(p.name), p.name in outputs)
            elif p.kind == "scalar":
                v = fb.add_arg(p.spec, p.name, {"tile.name": p.name})
            else:
                if p.name in config:
                    v = config[p.name]
                elif p.default is not inspect.Parameter.empty:
                    v = p.default
                else:
                    raise user_error(f"{name}: no value for parameter {p.name!r}")
            if p.keyword_only:
                kw[p.name] = v
            else:
                pos.append(v)
        result = body(*pos, **kw)
        if result is not None:
            raise user_error(f"{name}: a kernel function returns nothing (outputs "
                             "are parameters; out_idx makes the runtime "
                             "allocate them)")
        fb.check_pending()
        if len(fb.stack) != 1:
            raise user_error(f"{name}: a region was left open (a loop left by "
                             "break / return?)")
        if not any(op.name == "tile.launch" for op in fb.entry.ops):
            raise user_error(f"{name}: a kernel needs a `with T.Kernel(...)` "
                             "block")
    return print_function(fb)


def _tensor_arg(fb, p, dtype_override, output=False):
    spec = p.spec
    dt = spec.dtype or (_dt.dtype(dtype_override) if dtype_override else None)
    if dt is None:
        raise user_error(f"tensor parameter {p.name!r} has no dtype: give one in "
                         "T.Tensor(shape, dtype) (only @tile.jit takes it from "
                         "the argument)")
    if dt.kind == "index":
        raise user_error(f"tensor parameter {p.name!r}: index tensors are not "
                         "supported")
    shape, names, syms, named = [], [], [], False
    for d, dim in enumerate(spec.shape):
        if isinstance(dim, SymDim):
            shape.append(None)
            names.append(dim.name)
            syms.append((dim, d))
            named = True
        elif isinstance(dim, ConstDim):
            v = fb.const_bindings.get(dim)
            if v is None:
                raise user_error(f"T.const dim {dim.name!r} of {p.name!r} is not "
                                 "bound (T.const dims get their values from "
                                 "@tile.jit arguments)")
            shape.append(v)
            names.append(dim.name)
            named = True
        elif isinstance(dim, ConstExpr):
            v = dim.evaluate(fb.const_bindings)
            if v is None:
                raise user_error(f"dim {d} of {p.name!r} ({dim!r}) uses T.const "
                                 "dims that are not bound (T.const dims get "
                                 "their values from @tile.jit arguments)")
            if v < 0:
                raise user_error(f"dim {d} of {p.name!r} ({dim!r}) is {v}: "
                                 "extents are not negative")
            shape.append(v)
            names.append(f"{p.name}.{d}")
        else:
            shape.append(dim)
            names.append(f"{p.name}.{d}")
    attrs = {"tile.name": p.name}
    if named:
        attrs["tile.dims"] = names
    if output:
        attrs["tile.output"] = True
    if spec.inplace:
        attrs["tile.inplace"] = True
    v = fb.add_arg(MemRefType(shape, dt), p.name, attrs)
    v.type_dims = names
    for dim, d in syms:
        fb.symbols.setdefault(dim, (v, d))
    return v


class PrimFunc:
    """A kernel function (T.prim_func). script() is its MLIR text; it is
    traced when created (errors surface at the definition, as in TileLang)
    unless it has T.const dims, which only @tile.jit can bind."""

    def __init__(self, fn, name=None, locations=True):
        self.fn = fn
        self.name = name or fn.__name__
        self.locations = locations
        self.params = parse_params(fn, allow_config=False)
        self.body = rewrite(fn)
        self._text = None
        if not self.needs_binding():
            self._text = trace(self.body, self.name, self.params,
                               locations=locations)

    def needs_binding(self):
        return any(p.spec.dtype is None or
                   any(isinstance(d, (ConstDim, ConstExpr)) for d in p.spec.shape)
                   for p in self.params if p.kind == "tensor")

    def script(self, const_bindings=None, dtypes=None, out_idx=None):
        """The kernel as MLIR text; out_idx (an index or a list, negative
        from the end) marks those parameters `tile.output`, as tilec
        --out-idx does, so the text alone compiles to the kernel with them."""
        outputs = output_names(self.params, out_idx, self.name)
        if (self._text is not None and not const_bindings and not dtypes
                and not outputs):
            return self._text
        return trace(self.body, self.name, self.params,
                     const_bindings=const_bindings, dtypes=dtypes,
                     locations=self.locations, outputs=outputs)

    def __str__(self):
        return self.script()

    def __repr__(self):
        return f"<T.prim_func {self.name}>"

    def __call__(self, *args, **kwargs):
        raise TypeError(f"T.prim_func {self.name!r} is a kernel definition: "
                        "compile it (tile.compile(f.script()) or @tile.jit) "
                        "and call the kernel")


def prim_func(fn=None, *, name=None, locations=True):
    """Decorator: fn becomes a PrimFunc (see the module docstring).
    locations=False leaves the Python locations out of the IR (then the
    text, and the cache key, do not change when lines move)."""
    if fn is None:
        return lambda f: PrimFunc(f, name, locations)
    return PrimFunc(fn, name, locations)


def macro(fn):
    """Decorator for helper functions called from kernel bodies: applies the
    same AST rewrite (dynamic if / select / and / or) to fn."""
    return rewrite(fn)

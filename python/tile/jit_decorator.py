"""@tile.jit: compile tile.language kernels on first use.

Two forms, as in TileLang:

* Kernel form: the decorated function is the kernel; its T.Tensor / scalar
  parameters are the kernel's, the others are configuration (keyword
  arguments with defaults). Calling it with tensors compiles once per
  specialization and launches:

      @tile.jit(out_idx=-1)
      def add(A: T.Tensor((N,), None), B: T.Tensor((N,), None),
              C: T.Tensor((N,), None), block=1024): ...
      c = add(a, b)                 # dtype from a/b, block=1024
      c = add(a, b, block=256)      # another specialization

  The specialization key holds only what changes the generated code: the
  dtypes of tensors declared without one (T.Tensor(shape) or dtype=None;
  an out_idx output declared so gets the dtype of the first such input),
  the extents of T.const dims, and the configuration values. Symbolic
  (T.symbolic) dims are dynamic and do not specialize. With target="auto"
  the first argument's device picks the target (numpy -> cpu, CUDA tensors
  -> cuda, as TileLang infers it) and is part of the key. Dispatch: a
  one-entry cache of the last key, so a repeated call costs building the key
  (only the parts above that the kernel has) and one tuple compare on top
  of the kernel call; no re-tracing.

* Factory form (TileLang's classic style): the function takes the
  configuration and returns a T.prim_func; calling it returns the compiled
  tile.Kernel (memoized per arguments):

      @tile.jit(out_idx=[-1])
      def matmul(M, N, K, block_M, block_N, block_K):
          @T.prim_func
          def main(A: T.Tensor((M, K), "float16"), ...): ...
          return main
      kernel = matmul(1024, 1024, 1024, 128, 128, 32)
      c = kernel(a, b)

Compilation is tile.compile (the memory + disk cache, TILE_DUMP_IR, ...) on
the generated MLIR text, so a new process re-traces (cheap) and then hits
the disk cache. The text marks the out_idx outputs itself (`tile.output`),
so f.get_ir(...) compiled alone (tilec, tile.compile) is the same kernel.

Compiling for a device this host does not have (a bundle for another
machine): f.compile(..., target="cuda:sm_90a", inspect_only=True) or
f.export(path, ..., target="cuda:sm_90a"); `target` and `inspect_only` are
keywords of compile / export / get_source, not configuration.
"""

import functools
import threading

from . import _runtime, compiler
from .language import dtypes as _dt
from .language.ast_rewrite import rewrite
from .language.buffer import ConstDim, ConstExpr
from .language.errors import TileLangError
from .language.prim_func import PrimFunc, parse_params, trace

_MISS = object()


def jit(func=None, *, out_idx=None, target="auto", execution_backend="auto",
        pass_options=None, compile_flags=None, verbose=False, locations=True):
    """Decorator (see the module docstring). out_idx, target,
    execution_backend, pass_options, compile_flags and verbose are passed to
    tile.compile; out_idx indexes the kernel's parameters (negative ones
    count from the end). locations=False keeps Python line locations out of
    the IR (its cache key then survives edits that only move lines); tilec's
    diagnostics on it still name the Python lines (tile.compile maps the
    MLIR lines back, in the process that traced it)."""
    opts = dict(target=target, execution_backend=execution_backend,
                pass_options=pass_options, compile_flags=compile_flags,
                verbose=verbose)

    def wrap(fn):
        if isinstance(fn, PrimFunc):
            return KernelJIT(fn.fn, out_idx, opts, locations, prim=fn)
        params = parse_params(fn, allow_config=True)
        if any(p.kind != "config" for p in params):
            return KernelJIT(fn, out_idx, opts, locations)
        return FactoryJIT(fn, out_idx, opts, locations)

    return wrap if func is None else wrap(func)


def _norm_out_idx(out_idx, n, name):
    if out_idx is None:
        return []
    idx = [out_idx] if isinstance(out_idx, int) else list(out_idx)
    out = []
    for i in idx:
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise TileLangError(f"{name}: out_idx {i} out of range for a kernel "
                                f"with {n} parameters")
        out.append(j)
    return sorted(set(out))


def _freeze(x):
    if isinstance(x, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in x.items()))
    if isinstance(x, (list, tuple)):
        return tuple(_freeze(v) for v in x)
    try:
        hash(x)
        return x
    except TypeError:
        return ("<id>", id(x))


_dtype_names = {}
_device_probes = {}
_cpu_types = {}  # types whose objects are always on the host (numpy arrays)


def _device_kind(obj):
    """'cpu', 'cuda' or 'hip': where a tensor argument lives (decided per
    Python type once; per call a cheap attribute read)."""
    probe = _device_probes.get(type(obj))
    if probe is None:
        mod = type(obj).__module__.split(".")[0]
        if mod == "numpy":
            _cpu_types[type(obj)] = "cpu"

            def probe(a):
                return "cpu"
        elif mod == "torch":
            def probe(a):
                return "cuda" if a.is_cuda else "cpu"
        elif hasattr(obj, "__dlpack_device__"):
            def probe(a):
                return {2: "cuda", 10: "hip"}.get(a.__dlpack_device__()[0], "cpu")
        else:
            def probe(a):
                return None
        _device_probes[type(obj)] = probe
    return probe(obj)


def _dtype_name(obj, what):
    dt = getattr(obj, "dtype", None)
    if dt is None:
        raise TypeError(f"{what}: expected a tensor, got {type(obj).__name__}")
    try:
        return _dtype_names[dt]
    except (KeyError, TypeError):
        pass
    name = _dt.dtype(dt).name
    try:
        _dtype_names[dt] = name
    except TypeError:
        pass
    return name


class _JITBase:
    def __init__(self, fn, out_idx, opts, locations):
        self.fn = fn
        self.out_idx_spec = out_idx
        self.opts = opts
        self.locations = locations
        self._lock = threading.RLock()
        self._kernels = {}
        self._last_key = _MISS
        self._last_kernel = None
        functools.update_wrapper(self, fn)

    def _compile_text(self, text, target=None, inspect_only=False):
        # No out_idx: the text marks the outputs (tile.output), so this is
        # the compile, and the cache entry, of tile.compile(get_ir's text).
        opts = dict(self.opts)
        if target is not None:
            opts["target"] = target
        return compiler.compile(text, inspect_only=inspect_only, **opts)

    def export(self, path, *args, target=None, **config):
        """Compiles the kernel for these arguments (as compile) for `target`
        without loading its device code (inspect_only: e.g. "cuda:sm_90a"
        on a host without that GPU) and writes its bundle to path, for
        tile.load(path) where it runs. Returns the path."""
        return self.compile(*args, target=target, inspect_only=True,
                            **config).export(path)

    @property
    def kernels(self):
        """The compiled kernels by specialization key."""
        return dict(self._kernels)


class FactoryJIT(_JITBase):
    """@tile.jit on a function returning a T.prim_func: call -> tile.Kernel."""

    def _prim(self, args, kwargs):
        pf = self.fn(*args, **kwargs)
        if not isinstance(pf, PrimFunc):
            raise TileLangError(f"@tile.jit {self.fn.__name__}: the function must "
                                "return a T.prim_func (or be a kernel itself, "
                                f"with T.Tensor parameters); it returned "
                                f"{type(pf).__name__}")
        if pf.needs_binding():
            raise TileLangError(f"{pf.name}: T.const dims and dtype-less tensors "
                                "need the kernel form of @tile.jit")
        return pf

    def __call__(self, *args, **kwargs):
        key = (args, tuple(sorted(kwargs.items())) if kwargs else ())
        try:
            hash(key)
        except TypeError:
            key = _freeze(key)
        if key == self._last_key:
            return self._last_kernel
        with self._lock:
            kernel = self._kernels.get(key)
            if kernel is None:
                kernel = self._compile_text(self.get_ir(*args, **kwargs))
                self._kernels[key] = kernel
            self._last_key, self._last_kernel = key, kernel
        return kernel

    def compile(self, *args, target=None, inspect_only=False, **kwargs):
        """The tile.Kernel for these arguments (as a call); target /
        inspect_only as for tile.compile (then not memoized: tile.compile's
        caches apply)."""
        if target is None and not inspect_only:
            return self(*args, **kwargs)
        with self._lock:
            return self._compile_text(self.get_ir(*args, **kwargs), target,
                                      inspect_only)

    def get_ir(self, *args, **kwargs):
        """The generated MLIR text for these arguments (no compile), the
        out_idx outputs marked tile.output."""
        return self._prim(args, kwargs).script(out_idx=self.out_idx_spec)

    def get_source(self, *args, kind="mlir", target=None, inspect_only=False,
                   **kwargs):
        """kernel.get_source(kind) of the kernel for these arguments."""
        return self.compile(*args, target=target, inspect_only=inspect_only,
                            **kwargs).get_source(kind)


# Guard kinds of _runtime.JitDispatch (python/src/jit_dispatch.cpp).
G_DTYPE, G_DIM, G_SHAPE, G_VALUE, G_DEVICE = range(5)


class KernelJIT(_JITBase, _runtime.JitDispatch):
    """@tile.jit on a kernel function: call with tensors -> launch.

    Calls go through _runtime.JitDispatch's tp_call: when the arguments
    specialize like the last call's (checked in C++: the same dtype objects,
    T.const extents, device) the last kernel is called directly; otherwise
    _dispatch (Python) finds or compiles the kernel and re-arms the guard."""

    def __init__(self, fn, out_idx, opts, locations, prim=None):
        _JITBase.__init__(self, fn, out_idx, opts, locations)
        if prim is not None:
            self.params, self.body, self.name = prim.params, prim.body, prim.name
        else:
            self.params = parse_params(fn, allow_config=True)
            self.body = rewrite(fn)
            self.name = fn.__name__
        kparams = [p for p in self.params if p.kind != "config"]
        self.config_params = [p for p in self.params if p.kind == "config"]
        self._config_names = frozenset(p.name for p in self.config_params)
        self._config_defaults = [(p.name, p.default) for p in self.config_params]
        self.n = len(kparams)
        self.out_idx = _norm_out_idx(out_idx, self.n, self.name)
        for i in self.out_idx:
            if kparams[i].kind != "tensor":
                raise TileLangError(f"{self.name}: out_idx {i} names the scalar "
                                    f"parameter {kparams[i].name!r}")
        self._outputs = frozenset(kparams[i].name for i in self.out_idx)
        inputs = [i for i in range(self.n) if i not in self.out_idx]
        self.n_in = len(inputs)
        self._pos_full = list(range(self.n))
        self._pos_in = {i: k for k, i in enumerate(inputs)}
        # what specializes: dtype-less tensors and T.const dims (bound from the
        # first input that has them)
        self._spec = []
        self._const_src = {}
        self._const_solve = {}  # const -> (a, b, param, dim, expr): extent = a * C + b
        self._dtype_follow = {}  # dtype-less output -> the input it copies
        for i, p in enumerate(kparams):
            if p.kind != "tensor":
                continue
            need_dt = p.spec.dtype is None
            dims = [(d, c) for d, c in enumerate(p.spec.shape) if isinstance(c, ConstDim)]
            if i in self.out_idx:
                if need_dt:
                    self._dtype_follow[p.name] = None
                continue
            new_dims = [(d, c) for d, c in dims if c not in self._const_src]
            for d, c in new_dims:
                self._const_src[c] = (i, d)
            if need_dt or new_dims:
                self._spec.append((i, p.name if need_dt else None, new_dims))
        # A const no input has alone, bound from an input dim a * C + b
        # (T.Tensor((M, 2 * N)) binds N from X's dim 1 / 2).
        for i, p in enumerate(kparams):
            if p.kind != "tensor" or i in self.out_idx:
                continue
            for d, e in enumerate(p.spec.shape):
                lin = e.linear() if isinstance(e, ConstExpr) else None
                if lin is None or lin[0] in self._const_src:
                    continue
                c, a, b = lin
                self._const_src[c] = (i, d)
                self._const_solve[c] = (a, b, p.name, d, e)
                for k, (j, dt_name, dl) in enumerate(self._spec):
                    if j == i:
                        self._spec[k] = (j, dt_name, dl + [(d, c)])
                        break
                else:
                    self._spec.append((i, None, [(d, c)]))
        first = next((name for _, name, _ in self._spec if name), None)
        for out in self._dtype_follow:
            if first is None:
                raise TileLangError(f"{self.name}: output {out!r} (out_idx) has no "
                                    "dtype and no input tensor gives one: declare "
                                    "it in its T.Tensor")
            self._dtype_follow[out] = first
        for i in self.out_idx:
            for e in kparams[i].spec.shape:
                for c in (e.consts() if isinstance(e, ConstExpr) else [e]):
                    if isinstance(c, ConstDim) and c not in self._const_src:
                        raise TileLangError(f"{self.name}: T.const dim {c.name!r} of "
                                            f"output {kparams[i].name!r} appears in no "
                                            "input tensor")
        # target="auto": the device of the first argument decides (numpy ->
        # cpu, CUDA tensors -> cuda), as TileLang infers it from the inputs
        self._auto_target = opts.get("target") in (None, "auto")
        self._key_full = self._make_keyfn(self._pos_full)
        self._key_in = self._make_keyfn(self._pos_in)
        _runtime.JitDispatch.__init__(
            self, type(self)._dispatch, self._guards(self._pos_full),
            self._guards(self._pos_in), self.n, self.n_in)

    def _guards(self, pos):
        """What the C++ guard compares with the last call: the parts of the
        specialization key (see _make_keyfn)."""
        out = []
        for i, dt_name, dims in self._spec:
            if dt_name is not None:
                out.append((pos[i], G_DTYPE, 0))
            out += [(pos[i], G_DIM, d) for d, _ in dims]
        if self._auto_target:
            out.append((0, G_DEVICE, 0))
        return out

    # ---- specialization ---------------------------------------------------
    def _signature(self, args):
        if len(args) == self.n:
            pos = self._pos_full
        elif len(args) == self.n_in:
            pos = self._pos_in
        else:
            raise TypeError(f"{self.name}: expected {self.n} arguments"
                            + (f" (or {self.n_in} without the out_idx outputs)"
                               if self.out_idx else "") + f", got {len(args)}")
        key = []
        for i, dt_name, dims in self._spec:
            a = args[pos[i]]
            if dt_name is not None:
                key.append(_dtype_name(a, f"{self.name}: argument {dt_name!r}"))
            if dims:
                shape = a.shape
                for d, _ in dims:
                    key.append(int(shape[d]))
        return tuple(key)

    def _config_key(self, config):
        if not config:
            return ()
        if not config.keys() <= self._config_names:
            bad = set(config) - self._config_names
            raise TypeError(f"{self.name}: unexpected keyword argument(s) "
                            f"{', '.join(sorted(bad))} (configuration parameters: "
                            f"{', '.join(sorted(self._config_names)) or 'none'})")
        key = tuple([config.get(name, default) for name, default in self._config_defaults])
        try:
            hash(key)
            return key
        except TypeError:
            return _freeze(key)

    def _make_keyfn(self, pos):
        """args -> the specialization key, generated for this kernel (one
        attribute read per part, no loop, no per-call allocation beyond the
        tuple); None when nothing specializes."""
        parts = []
        for i, dt_name, dims in self._spec:
            a = f"args[{pos[i]}]"
            if dt_name is not None:
                parts.append(f"_names[{a}.dtype]")
            parts += [f"{a}.shape[{d}]" for d, _ in dims]
        if self._auto_target:
            parts.append("(_cpu_types.get(type(args[0])) or _device(args[0]))")
        if not parts:
            return None
        ns = {"_names": _dtype_names, "_device": _device_kind,
              "_cpu_types": _cpu_types}
        exec("def key(args):\n    return (" + ", ".join(parts) + ",)\n", ns)  # noqa: S102
        return ns["key"]

    def _slow_key(self, args):
        """The key with full checks and messages (new dtype objects, wrong
        argument counts)."""
        key = self._signature(args)
        if self._auto_target:
            key += (_device_kind(args[0]),)
        return key

    def _dispatch(self, *args, **kw):
        """The call when the C++ guard did not match the last call's."""
        if kw:
            return self._call_kw(args, kw)
        keyfn = self._key_full if len(args) == self.n else self._key_in
        if keyfn is None:  # nothing specializes: one kernel (without config)
            kernel = self._kernels.get(())
            if kernel is None:
                kernel = self._get((), args, {})
        else:
            try:
                key = keyfn(args)
            except (KeyError, AttributeError, IndexError, TypeError):
                key = self._slow_key(args)
            if key == self._last_key:
                kernel = self._last_kernel
            else:
                kernel = self._get(key, args, {})
        self._arm(args, kernel)
        return kernel(*args)

    def _call_kw(self, args, kw):
        stream = kw.pop("stream", None)
        keyfn = self._key_full if len(args) == self.n else self._key_in
        try:
            key = keyfn(args) if keyfn is not None else ()
        except (KeyError, AttributeError, IndexError, TypeError):
            key = self._slow_key(args)
        if kw:
            key = (key, self._config_key(kw))
        if key == self._last_key:
            kernel = self._last_kernel
        else:
            kernel = self._get(key, args, kw)
        if not kw:  # stream= only: the guard can take the next one
            self._arm(args, kernel)
        if stream is None:
            return kernel(*args)
        return kernel(*args, stream=stream)

    def _solve(self, c, extent):
        """The value of const c from the extent of the input dim it is bound
        from (a * C + b: C = (extent - b) / a)."""
        if c not in self._const_solve:
            return extent
        a, b, name, d, e = self._const_solve[c]
        if (extent - b) % a or (extent - b) // a < 0:
            raise TileLangError(f"{self.name}: dim {d} of {name!r} is {extent}, "
                                f"which is not {e!r} for any {c.name} >= 0")
        return (extent - b) // a

    def _bindings(self, args, config):
        dtypes, consts = {}, {}
        for c, v in config.items():
            if isinstance(c, ConstDim):
                consts[c] = int(v)
        if args:
            pos = self._pos_full if len(args) == self.n else self._pos_in
            for i, dt_name, dims in self._spec:
                a = args[pos[i]]
                if dt_name is not None:
                    dtypes[dt_name] = _dtype_name(a, f"{self.name}: {dt_name!r}")
                for d, c in dims:
                    consts[c] = self._solve(c, int(a.shape[d]))
            for out, src in self._dtype_follow.items():
                dtypes[out] = dtypes[src]
        return dtypes, consts

    def _trace(self, args, config):
        if args:
            self._signature(args)  # arity check
        const_kw = {c: config.pop(c.name) for c in list(self._const_src)
                    if c.name in config}
        self._config_key(config)
        dtypes, consts = self._bindings(args, const_kw)
        missing = [c.name for c in self._const_src if c not in consts]
        missing += [name for _, name, _ in self._spec if name and name not in dtypes]
        if missing:
            raise TileLangError(f"{self.name}: cannot specialize without "
                                f"{', '.join(missing)}: pass example tensors "
                                "(or T.const values by name)")
        return trace(self.body, self.name, self.params, config=config,
                     const_bindings=consts, dtypes=dtypes,
                     locations=self.locations, outputs=self._outputs)

    def _target_for(self, args):
        if self._auto_target and args:
            kind = _device_kind(args[0])
            if kind is not None:
                return kind
        return self.opts.get("target")

    def _get(self, key, args, config):
        with self._lock:
            kernel = self._kernels.get(key)
            if kernel is None:
                text = self._trace(args, dict(config))
                kernel = self._compile_text(text, self._target_for(args))
                self._kernels[key] = kernel
            self._last_key, self._last_kernel = key, kernel
        return kernel

    def compile(self, *args, target=None, inspect_only=False, **config):
        """The tile.Kernel for a specialization: example tensors (for dtypes
        and T.const dims) and/or T.const values and configuration by name.
        target overrides the jit's (e.g. "cuda:sm_90a"); inspect_only=True
        compiles without loading device code (for a device this host does
        not have: export it, tile.load it there)."""
        with self._lock:
            text = self._trace(args, dict(config))
            return self._compile_text(text, target or self._target_for(args),
                                      inspect_only)

    def get_ir(self, *args, **config):
        """The generated MLIR text for a specialization (no compile); the
        out_idx outputs are marked tile.output, so the text alone compiles
        (tilec, tile.compile) to the same kernel."""
        return self._trace(args, dict(config))

    def get_source(self, *args, kind="mlir", target=None, inspect_only=False,
                   **config):
        """kernel.get_source(kind) of the kernel for a specialization."""
        return self.compile(*args, target=target, inspect_only=inspect_only,
                            **config).get_source(kind)


__all__ = ["jit", "KernelJIT", "FactoryJIT"]

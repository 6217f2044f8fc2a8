"""@tile.autotune over @tile.jit kernels (TileLang style).

    @tile.autotune(configs=[{"block_M": 128, "block_N": 128}, ...],
                   key=["A", "B"])
    @tile.jit(out_idx=-1)
    def matmul(A: T.Tensor((M, K)), B: T.Tensor((K, N)), C: T.Tensor((M, N)),
               block_M=128, block_N=128): ...

    c = matmul(a, b)      # first call for these shapes/dtypes: tunes, launches
    c = matmul(a, b)      # later calls: the winner, dispatched like @tile.jit

configs: a list of dicts (configuration parameters of the jit function by
name) or a callable returning one (called with the call's arguments when it
takes them, else with none). key: the kernel parameters whose shapes and
dtypes (tensors) or values (scalars) select a tuning entry (default: every
input tensor). The jit's own specialization (dtype-less tensors, T.const
dims, the device with target="auto") is always part of it. A call that
passes configuration by keyword runs that configuration (no tuning).

Tuning is tile.autotune: all configs traced and compiled in parallel, then
checked (reference=) and timed on the call's own inputs, on every visible GPU
(one worker each); the result is cached in memory and in autotune/<key>.json
(the key: the kernel's code, the config space, the generated IR, target,
chip and device names, the key arguments' shapes and dtypes). A new process
re-tunes nothing: it reads the winner and compiles (a cache hit) only it.

On the factory form (the jit function returns a T.prim_func) calling the
tuned function returns the best tile.Kernel for those arguments; inputs are
generated from its parameters (static shapes).

Compile here, tune there: f.export_bundles(dir, *example_args,
target="cuda:sm_90a") compiles every config and writes a bundle directory
(tile.export_bundles); on the GPU host tile.import_bundles(dir) and then the
first call tunes without tilec (docs/python.md, "Tuning without the
compiler").
"""

import inspect
import threading

from . import _runtime, autotuner
from .jit_decorator import (G_DEVICE, G_DIM, G_DTYPE, G_SHAPE, G_VALUE,
                            FactoryJIT, KernelJIT, _cpu_types, _device_kind,
                            _dtype_name, _dtype_names, _freeze, _norm_out_idx,
                            jit)
from .language.prim_func import PrimFunc

_MISS = object()


def autotune_decorator(configs=None, key=None, reference=None, warmup=5,
                       rep=20, rtol=1e-2, atol=1e-2, num_workers=None,
                       use_cache=True, progress=None, verbose=False,
                       devices=None):
    if configs is None:
        raise ValueError("@tile.autotune: configs= is required (a list of "
                         "dicts, or a callable returning one)")
    if not callable(configs):
        configs = _check_configs(list(configs), "@tile.autotune")
    if key is not None:
        key = [key] if isinstance(key, str) else list(key)
        if not all(isinstance(k, str) for k in key):
            raise TypeError(f"@tile.autotune: key must name parameters, got "
                            f"{key!r}")
    opts = dict(reference=reference, warmup=warmup, rep=rep, rtol=rtol,
                atol=atol, num_workers=num_workers, use_cache=use_cache,
                progress=progress, verbose=verbose, devices=devices)

    def wrap(fn):
        if isinstance(fn, (PrimFunc,)) or (callable(fn) and not isinstance(
                fn, (KernelJIT, FactoryJIT))):
            fn = jit(fn)
        if isinstance(fn, KernelJIT):
            return AutotunedKernel(fn, configs, key, opts)
        if isinstance(fn, FactoryJIT):
            return AutotunedFactory(fn, configs, key, opts)
        raise TypeError(f"@tile.autotune: expected a @tile.jit function, got "
                        f"{type(fn).__name__}")
    return wrap


def _check_configs(configs, what):
    if not configs:
        raise ValueError(f"{what}: configs is empty")
    for i, c in enumerate(configs):
        if not isinstance(c, dict):
            raise TypeError(f"{what}: config #{i} is a {type(c).__name__}, "
                            "expected a dict of configuration parameters")
        if not all(isinstance(k, str) for k in c):
            raise TypeError(f"{what}: config #{i} has non-string keys")
    return configs


def _call_configs(fn, args, kw, what):
    try:
        inspect.signature(fn).bind(*args, **kw)
        takes_args = True
    except TypeError:
        takes_args = False
    except ValueError:  # no signature (a builtin)
        takes_args = False
    return _check_configs(list(fn(*args, **kw) if takes_args else fn()), what)


class _Autotuned:
    def __init__(self, jitfn, configs, key, opts):
        self.jit = jitfn
        self.configs_spec = configs
        self.key_names = key
        self.opts = opts
        self._lock = threading.RLock()
        self._best = {}             # tuning key -> tile.Kernel
        self.results = {}           # tuning key -> AutotuneResult
        self._last_sig = _MISS
        self._last_kernel = None
        self.__wrapped__ = jitfn
        self.__name__ = getattr(jitfn, "__name__", "kernel")
        self.__doc__ = getattr(jitfn, "__doc__", None)

    def _fingerprint(self):
        j = self.jit
        return [autotuner._code_fingerprint(j.fn), repr(sorted(
            (k, repr(v)) for k, v in j.opts.items() if k != "verbose")),
            j.locations, repr(j.out_idx_spec)]

    def _tune_opts(self):
        o = dict(self.opts)
        return o

    @property
    def kernels(self):
        """The tuned kernels by tuning key."""
        return dict(self._best)


class AutotunedKernel(_Autotuned, _runtime.JitDispatch):
    """@tile.autotune on a kernel-form @tile.jit: f(*tensors) launches the
    best configuration for the key arguments (tuned on the first call).
    Repeated calls take @tile.jit's C++ fast path (the guard also compares
    the key tensors' shapes and the key scalars' values)."""

    def __init__(self, jitfn, configs, key, opts):
        _Autotuned.__init__(self, jitfn, configs, key, opts)
        j = jitfn
        kparams = [p for p in j.params if p.kind != "config"]
        names = {p.name: i for i, p in enumerate(kparams)}
        if key is None:
            key_idx = [i for i, p in enumerate(kparams)
                       if p.kind == "tensor" and i not in j.out_idx]
        else:
            bad = [k for k in key if k not in names]
            if bad:
                raise TypeError(f"@tile.autotune {j.name}: key names "
                                f"{', '.join(map(repr, bad))}, not a kernel "
                                f"parameter (parameters: {', '.join(names)})")
            key_idx = [names[k] for k in key]
            outs = [kparams[i].name for i in key_idx if i in j.out_idx]
            if outs:
                raise TypeError(f"@tile.autotune {j.name}: key names the "
                                f"out_idx output(s) {', '.join(outs)}; name inputs")
        self._key_idx = key_idx
        self._kparams = kparams
        allowed = set(j._config_names) | {c.name for c in j._const_src}
        if not callable(configs):
            self._check_keys(configs, allowed)
        self._allowed = allowed
        self._keyfn_full = self._make_keyfn(j._pos_full)
        self._keyfn_in = self._make_keyfn(j._pos_in)
        _runtime.JitDispatch.__init__(
            self, type(self)._dispatch, self._guards(j._pos_full),
            self._guards(j._pos_in), j.n, j.n_in)

    def _guards(self, pos):
        """The parts of _make_keyfn's key, for the C++ guard."""
        j = self.jit
        out, seen = [], set()
        for i in self._key_idx:
            if self._kparams[i].kind == "tensor":
                out += [(pos[i], G_SHAPE, 0), (pos[i], G_DTYPE, 0)]
                seen.add(i)
            else:
                out.append((pos[i], G_VALUE, 0))
        for i, dt_name, dims in j._spec:
            if i in seen or i not in pos:
                continue
            if dt_name is not None:
                out.append((pos[i], G_DTYPE, 0))
            out += [(pos[i], G_DIM, d) for d, _ in dims]
        if j._auto_target:
            out.append((0, G_DEVICE, 0))
        return out

    def _check_keys(self, configs, allowed):
        for i, c in enumerate(configs):
            bad = sorted(set(c) - allowed)
            if bad:
                raise TypeError(f"@tile.autotune {self.jit.name}: config #{i} sets "
                                f"{', '.join(bad)}, not a configuration parameter "
                                f"(configuration parameters: "
                                f"{', '.join(sorted(allowed)) or 'none'})")

    def _make_keyfn(self, pos):
        """args -> the tuning key: for each key parameter its shape and dtype
        (tensors) or value (scalars), the jit's own specialization parts, the
        device with target="auto". Generated per kernel, as @tile.jit's."""
        j = self.jit
        parts, seen = [], set()
        for i in self._key_idx:
            a = f"args[{pos[i]}]"
            if self._kparams[i].kind == "tensor":
                parts += [f"{a}.shape", f"_names[{a}.dtype]"]
                seen.add(i)
            else:
                parts.append(a)
        for i, dt_name, dims in j._spec:
            if i in seen or i not in pos:
                continue
            a = f"args[{pos[i]}]"
            if dt_name is not None:
                parts.append(f"_names[{a}.dtype]")
            parts += [f"{a}.shape[{d}]" for d, _ in dims]
        if j._auto_target:
            parts.append("(_cpu_types.get(type(args[0])) or _device(args[0]))")
        ns = {"_names": _dtype_names, "_device": _device_kind,
              "_cpu_types": _cpu_types}
        exec("def key(args):\n    return (" + ", ".join(parts) + ",)\n", ns)  # noqa: S102
        return ns["key"]

    def _slow_sig(self, args):
        """The key with the jit's checks and messages (argument count, a
        non-tensor, a dtype object seen for the first time)."""
        j = self.jit
        j._signature(args)
        pos = j._pos_full if len(args) == j.n else j._pos_in
        for i in self._key_idx:
            if self._kparams[i].kind == "tensor":
                _dtype_name(args[pos[i]], f"{j.name}: argument "
                                          f"{self._kparams[i].name!r}")
        return (self._keyfn_full if len(args) == j.n else self._keyfn_in)(args)

    def _dispatch(self, *args, **kw):
        """The call when the C++ guard did not match the last call's."""
        stream = kw.pop("stream", None) if kw else None
        if kw:  # explicit configuration: run it, no tuning
            if stream is not None:
                kw["stream"] = stream
            return self.jit(*args, **kw)
        keyfn = self._keyfn_full if len(args) == self.jit.n else self._keyfn_in
        try:
            sig = keyfn(args)
        except (KeyError, AttributeError, IndexError, TypeError):
            sig = self._slow_sig(args)
        if sig == self._last_sig:
            kernel = self._last_kernel
        else:
            kernel = self._get(sig, args)
        self._arm(args, kernel)
        if stream is None:
            return kernel(*args)
        return kernel(*args, stream=stream)

    def _get(self, sig, args):
        with self._lock:
            kernel = self._best.get(sig)
            if kernel is None:
                res = self.tune(*args)
                kernel = res.kernel
                self._best[sig] = kernel
                self.results[sig] = res
            self._last_sig, self._last_kernel = sig, kernel
        return kernel

    def _configs(self, args):
        spec = self.configs_spec
        if not callable(spec):
            return spec
        configs = _call_configs(spec, args, {}, f"@tile.autotune {self.jit.name}")
        self._check_keys(configs, self._allowed)
        return configs

    def _problem(self, args):
        j = self.jit
        pos = j._pos_full if len(args) == j.n else j._pos_in
        out = []
        for i in self._key_idx:
            out.append([self._kparams[i].name,
                        autotuner._input_signature(args[pos[i]])])
        return out + [["jit", repr(j._slow_key(args))]]

    def tune(self, *args):
        """Tunes for these arguments (always; the caches still apply) and
        returns the AutotuneResult."""
        j = self.jit
        j._signature(args)
        inputs = (list(args) if len(args) == j.n_in else
                  [a for i, a in enumerate(args) if i not in j.out_idx])
        target = j._target_for(args)
        o = self.opts
        return autotuner.autotune(
            lambda c: j.get_ir(*args, **c), self._configs(args),
            inputs=inputs, target=target, out_idx=j.out_idx or None,
            execution_backend=j.opts["execution_backend"],
            pass_options=j.opts["pass_options"],
            compile_flags=j.opts["compile_flags"],
            problem=self._problem(args), fingerprint=self._fingerprint(),
            **o)

    def export_bundles(self, directory, *example_args, target=None, **consts):
        """Compile here, tune there: compiles every config for the example
        arguments (dtypes and T.const dims; or T.const values by name) for
        `target` (e.g. "cuda:sm_90a"; default the jit's) and writes them to
        a bundle directory (tile.export_bundles, the configs recorded).
        Returns {"written": [paths], "failed": {config index: error}}."""
        from .bundles import export_bundles
        from .parallel import par_compile
        j = self.jit
        configs = self._configs(example_args)
        texts, failed = [], {}
        for i, c in enumerate(configs):
            try:
                texts.append(j.get_ir(*example_args, **consts, **c))
            except Exception as e:  # noqa: BLE001 - reported per config
                texts.append(None)
                failed[i] = f"{type(e).__name__}: {e}"
        ok = [i for i, t in enumerate(texts) if t is not None]
        errors = []
        kernels = par_compile(
            [texts[i] for i in ok], out_idx=j.out_idx or None,
            target=target or j._target_for(example_args),
            execution_backend=j.opts["execution_backend"],
            pass_options=j.opts["pass_options"],
            compile_flags=j.opts["compile_flags"],
            num_workers=self.opts["num_workers"], ignore_error=True,
            progress=self.opts["progress"], errors=errors, inspect_only=True)
        for k, i in enumerate(ok):
            if kernels[k] is None:
                failed[i] = str(errors[k])
        written = export_bundles([k for k in kernels if k is not None],
                                 directory,
                                 [configs[i] for k, i in enumerate(ok)
                                  if kernels[k] is not None])
        return {"written": written, "failed": failed}

    def get_ir(self, *args, **config):
        return self.jit.get_ir(*args, **config)


class AutotunedFactory(_Autotuned):
    """@tile.autotune on a factory-form @tile.jit: f(*args) returns the best
    tile.Kernel for these arguments (configs complete them)."""

    def __init__(self, jitfn, configs, key, opts):
        super().__init__(jitfn, configs, key, opts)
        self._sig = inspect.signature(jitfn.fn)
        if not callable(configs):
            self._check_keys(configs)
        if key is not None:
            bad = [k for k in key if k not in self._sig.parameters]
            if bad:
                raise TypeError(f"@tile.autotune {jitfn.fn.__name__}: key names "
                                f"{', '.join(map(repr, bad))}, not a parameter")

    def _check_keys(self, configs):
        params = self._sig.parameters
        var_kw = any(p.kind is p.VAR_KEYWORD for p in params.values())
        for i, c in enumerate(configs):
            bad = sorted(k for k in c if k not in params)
            if bad and not var_kw:
                raise TypeError(f"@tile.autotune {self.jit.fn.__name__}: config "
                                f"#{i} sets {', '.join(bad)}, not a parameter of "
                                "the function")

    def __call__(self, *args, **kw):
        sig = (args, tuple(sorted(kw.items())))
        try:
            hash(sig)
        except TypeError:
            sig = _freeze(sig)
        if sig == self._last_sig:
            return self._last_kernel
        with self._lock:
            kernel = self._best.get(sig)
            if kernel is None:
                res = self.tune(*args, **kw)
                kernel = self._best[sig] = res.kernel
                self.results[sig] = res
            self._last_sig, self._last_kernel = sig, kernel
        return kernel

    def tune(self, *args, **kw):
        j = self.jit
        spec = self.configs_spec
        if callable(spec):
            configs = _call_configs(spec, args, kw,
                                    f"@tile.autotune {j.fn.__name__}")
            self._check_keys(configs)
        else:
            configs = spec
        bound = self._sig.bind_partial(*args, **kw)
        if self.key_names is not None:
            problem = [[k, repr(bound.arguments.get(k))] for k in self.key_names]
        else:
            problem = [repr(args), repr(sorted(kw.items()))]
        prims = {}

        def build(c):
            pf = j._prim(args, {**kw, **c})
            prims.setdefault("n", len(pf.params))
            # the jit's text (outputs marked), so the winner is f(...)'s kernel
            return pf.script(out_idx=j.out_idx_spec)
        build_cache = {}

        def builder(c):
            r = build_cache.get(id(c))
            if r is None:
                r = build_cache[id(c)] = build(c)
            return r
        # out_idx depends on the parameter count: trace the first that builds
        for c in configs:
            try:
                builder(c)
                break
            except Exception:  # noqa: BLE001 - reported by autotune
                continue
        out_idx = (_norm_out_idx(j.out_idx_spec, prims["n"], j.fn.__name__)
                   if "n" in prims else None)
        o = self.opts
        return autotuner.autotune(
            builder, configs, out_idx=out_idx or None,
            target=j.opts["target"],
            execution_backend=j.opts["execution_backend"],
            pass_options=j.opts["pass_options"],
            compile_flags=j.opts["compile_flags"],
            problem=problem, fingerprint=self._fingerprint(), **o)


__all__ = ["autotune_decorator", "AutotunedKernel", "AutotunedFactory"]

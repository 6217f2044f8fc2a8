"""tile.autotune: compile configs in parallel, check, time, pick the best."""

import dataclasses
import hashlib
import inspect
import json
import sys
import threading

import numpy as np

from . import _frameworks
from .cache import DiskCache, cache_disabled


@dataclasses.dataclass
class AutotuneResult:
    kernel: object            # the best tile.Kernel
    config: object            # its config
    latency_ms: float
    results: list             # [{"config", "latency_ms", "status", "error"}]
    cached: bool = False

    def __iter__(self):       # kernel, config = tile.autotune(...)
        return iter((self.kernel, self.config))


def _to_host(x):
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "detach"):  # torch
        x = x.detach()
        if getattr(x, "is_cuda", False):
            x = x.cpu()
        if str(x.dtype) in ("torch.bfloat16",) or "float8" in str(x.dtype):
            x = x.float()
        return x.numpy()
    if hasattr(x, "get"):     # cupy
        return x.get()
    return np.asarray(x)


def _as_list(x):
    if x is None:
        return []
    if isinstance(x, (tuple, list)):
        return list(x)
    return [x]


def _check(outputs, expected, rtol, atol):
    outs, refs = _as_list(outputs), _as_list(expected)
    if len(outs) != len(refs):
        return f"{len(outs)} outputs but the reference gave {len(refs)}"
    for j, (o, r) in enumerate(zip(outs, refs)):
        o = _to_host(o).astype(np.float64)
        r = _to_host(r).astype(np.float64)
        if o.shape != r.shape:
            return f"output {j}: shape {o.shape}, reference {r.shape}"
        if not np.allclose(o, r, rtol=rtol, atol=atol, equal_nan=False):
            err = np.nanmax(np.abs(o - r)) if o.size else 0.0
            return f"output {j}: max abs error {err:.3g} (rtol={rtol}, atol={atol})"
    return None


def _devices(kind, devices=None):
    """The workers of the timing phase: the given devices, else every
    visible GPU for cuda/hip, else one (the host)."""
    if devices is not None:
        devices = list(devices)
        if not devices:
            raise ValueError("autotune: devices is empty")
        if len(set(map(repr, devices))) != len(devices):
            raise ValueError(f"autotune: devices {devices!r} repeat a device")
        if kind in ("cuda", "hip") and not all(
                type(d) is int and d >= 0 for d in devices):
            raise ValueError(f"autotune: devices {devices!r}: {kind} devices "
                             "are ordinals (0, 1, ...)")
        return devices
    if kind in ("cuda", "hip"):
        n = _frameworks.cuda_device_count()
        return list(range(max(n, 1)))
    return [None]


def device_identity(kind, devices):
    """What the timings depend on besides the kernel: the devices' names
    (cuda; the chip is in the target) or the host CPU."""
    if kind == "cpu":
        from .compiler import host_cpu_id
        return [f"host:{host_cpu_id()}"]
    names = []
    for d in devices:
        name = None
        try:
            import torch
            if torch.cuda.is_available():
                name = torch.cuda.get_device_name(d or 0)
        except Exception:  # noqa: BLE001 - the name only refines the key
            pass
        names.append(name or f"{kind}:{d}")
    return sorted(set(names))


def schedule(indices, devices, work):
    """Runs work(i, device) for every index: one worker per device (a thread
    each, the first device in the calling thread when there is one), each
    taking the next index from a shared queue, so a slower device or a
    slower config only delays its own worker. The CUDA runtime launches on
    the device of the tensors (each launch makes that device's primary
    context current, docs/runtime.md), torch's current device is per thread,
    so the workers share nothing but the queue. Returns {device: [indices it
    ran]}. An exception escaping work stops every worker and is re-raised."""
    indices = list(indices)
    ran = {repr(d): [] for d in devices}
    lock = threading.Lock()
    pending = iter(indices)
    failed = []

    def worker(d):
        try:
            while not failed:
                with lock:
                    i = next(pending, None)
                if i is None:
                    return
                ran[repr(d)].append(i)
                work(i, d)
        except BaseException as e:  # noqa: BLE001 - re-raised below
            failed.append(e)

    threads = [threading.Thread(target=worker, args=(d,), daemon=True,
                                name=f"tile-autotune-{d}") for d in devices[1:]]
    for t in threads:
        t.start()
    worker(devices[0])
    for t in threads:
        t.join()
    if failed:
        raise failed[0]
    return {d: ran[repr(d)] for d in devices}


def _builder_fingerprint(builder):
    try:
        return inspect.getsource(builder)
    except (OSError, TypeError):
        return getattr(builder, "__qualname__", repr(builder))


def _code_fingerprint(func):
    """What a function computes, independent of where it is written: its
    bytecode, constants and names (inspect.getsource of a lambda would be
    the whole statement around it)."""
    code = getattr(func, "__code__", None)
    if code is None:
        return _builder_fingerprint(func)

    def walk(c):
        consts = [walk(k) if hasattr(k, "co_code") else repr(k)
                  for k in c.co_consts]
        return [c.co_code.hex(), consts, list(c.co_names), list(c.co_varnames)]
    return hashlib.sha256(json.dumps(walk(code)).encode()).hexdigest()


def _input_signature(x):
    """What of an input the winner depends on: shape and dtype of a tensor
    (numpy, torch, cupy, jax, ... anything with .shape and .dtype), type and
    value of a scalar. Never the data."""
    shape = getattr(x, "shape", None)
    dtype = getattr(x, "dtype", None)
    if shape is not None and dtype is not None and not isinstance(x, np.generic):
        try:
            return ["tensor", type(x).__module__.split(".")[0],
                    [int(d) for d in shape], str(dtype)]
        except (TypeError, ValueError):
            pass
    if isinstance(x, (bool, int, float, np.generic)):
        return ["scalar", type(x).__name__, repr(x)]
    return ["object", type(x).__qualname__]


def _valid_cached(doc, nconfigs):
    """The cached document's best index, or None when the document does not
    have the shape autotune writes (hand-edited, truncated, foreign)."""
    if not isinstance(doc, dict):
        return None
    best, results = doc.get("best"), doc.get("results")
    if (type(best) is not int or not 0 <= best < nconfigs
            or not isinstance(results, list) or len(results) != nconfigs
            or not all(isinstance(r, dict) for r in results)
            or not isinstance(results[best].get("latency_ms"), (int, float))):
        return None
    return best


_memory = {}                  # autotune key -> AutotuneResult (this process)
_memory_lock = threading.Lock()


def clear_memory():
    with _memory_lock:
        _memory.clear()


def autotune(builder=None, configs=None, reference=None, inputs=None,
             shapes=None, out_idx=None, target="auto", execution_backend="auto",
             pass_options=None, compile_flags=None, warmup=5, rep=20,
             rtol=1e-2, atol=1e-2, num_workers=None, use_cache=True,
             progress=None, verbose=False, kernels=None, devices=None,
             key=None, problem=None, fingerprint=None):
    """Picks the fastest valid config.

    Three forms:

    * tile.autotune(builder, configs, ...): builder(config) -> kernel MLIR
      text. Every config is compiled (par_compile; failures are skipped and
      recorded), run on the same inputs (`inputs`, a list of arguments
      without the out_idx outputs, or generated from the first kernel's
      params with `shapes` = {symbol: extent}), checked against
      reference(*inputs) (expected out_idx outputs) when given, and timed
      with the profiler (do_bench).
    * tile.autotune(kernels=[...], configs=None, ...): no compiler needed:
      tile.Kernel objects or bundle paths (tile.load), or a directory
      written by tile.export_bundles (its configs come from its index).
    * @tile.autotune(configs=..., key=[...]) over a @tile.jit function (the
      decorator form, tile.autotune_decorator): tunes on the first call per
      problem.

    devices: the workers of the timing phase: GPU ordinals (default: every
    visible GPU), one thread each, sharing the configs through a queue; on
    the CPU any distinct labels (workers sharing the host).
    The result is cached in memory and on disk (autotune/<key>.json), keyed
    by the builder's code (`fingerprint` overrides), the config space, the
    generated kernels (or the bundles), target, chip and the devices' names,
    the problem (the shape and dtype of every tensor in `inputs` and the
    value of every scalar, or `shapes`; `problem` overrides), the
    reference's code and the settings; a cache hit compiles only the best
    config (a compile-cache hit too). A cached winner that no longer
    compiles or loads tunes again. Returns an AutotuneResult (unpacks as
    kernel, config).
    """
    if builder is None and kernels is None:
        from .autotune_decorator import autotune_decorator
        return autotune_decorator(configs=configs, key=key, reference=reference,
                                  warmup=warmup, rep=rep, rtol=rtol, atol=atol,
                                  num_workers=num_workers, use_cache=use_cache,
                                  progress=progress, verbose=verbose,
                                  devices=devices)
    from .jit_decorator import FactoryJIT, KernelJIT
    if isinstance(builder, (KernelJIT, FactoryJIT)):
        from .autotune_decorator import autotune_decorator
        return autotune_decorator(configs=configs, key=key, reference=reference,
                                  warmup=warmup, rep=rep, rtol=rtol, atol=atol,
                                  num_workers=num_workers, use_cache=use_cache,
                                  progress=progress, verbose=verbose,
                                  devices=devices)(builder)
    from .compiler import resolve_target
    opts = dict(reference=reference, inputs=inputs, shapes=dict(shapes or {}),
                warmup=warmup, rep=rep, rtol=rtol, atol=atol,
                use_cache=use_cache, progress=progress, verbose=verbose,
                devices=devices)
    if kernels is not None:
        if builder is not None:
            raise ValueError("autotune: pass a builder or kernels, not both")
        return _tune_kernels(kernels, configs, execution_backend, problem, opts)
    if configs is None:
        raise ValueError("autotune: no configs")
    configs = list(configs)
    if not configs:
        raise ValueError("autotune: no configs")
    sources, build_errors = [], {}
    for i, c in enumerate(configs):
        try:
            sources.append(builder(c))
        except Exception as e:  # noqa: BLE001 - a config the builder rejects
            sources.append(None)
            build_errors[i] = f"{type(e).__name__}: {e}"
    kind, chip = resolve_target(target)
    target_str = f"{kind}:{chip}" if chip else kind
    copts = dict(out_idx=out_idx, target=target_str,
                 execution_backend=execution_backend,
                 pass_options=pass_options, compile_flags=compile_flags)
    key_doc = {"builder": (fingerprint if fingerprint is not None
                           else _builder_fingerprint(builder)),
               "configs": [repr(c) for c in configs],
               "sources": [None if s is None else
                           hashlib.sha256(s.encode()).hexdigest() for s in sources],
               "target": target_str, "backend": execution_backend,
               "out_idx": repr(out_idx),
               "pass_options": repr(pass_options),
               "compile_flags": repr(compile_flags)}

    def compile_all(bar):
        from .parallel import par_compile
        ok = [i for i, s in enumerate(sources) if s is not None]
        errors = []
        built = par_compile([sources[i] for i in ok], num_workers=num_workers,
                            ignore_error=True, progress=False, verbose=verbose,
                            errors=errors, bar=bar, **copts)
        kernels_, errs = [None] * len(configs), dict(build_errors)
        for j, i in enumerate(ok):
            kernels_[i] = built[j]
            if built[j] is None:
                errs[i] = str(errors[j])
        for _ in build_errors:
            bar.update()
        return kernels_, errs

    def compile_best(i):
        from .compiler import compile as compile_one
        if sources[i] is None:
            raise RuntimeError(build_errors[i])
        return compile_one(sources[i], **copts)

    return _search(configs, key_doc, kind, compile_all, compile_best,
                   problem, opts)


def _load_kernels(kernels, configs, backend):
    """(kernels, configs, key part) for the kernels= form."""
    import os
    import pathlib

    from .bundles import read_bundle_dir
    from .compiler import load
    from .kernel import Kernel
    if isinstance(kernels, (str, os.PathLike)) and pathlib.Path(kernels).is_dir():
        items = read_bundle_dir(kernels)
        if not items:
            raise ValueError(f"autotune: {kernels} holds no bundles")
        loaded = [Kernel(data, backend) for _, _, data in items]
        if configs is None:
            configs = [e.get("config") if e.get("config") is not None
                       else e["file"] for _, e, _ in items]
    else:
        loaded = []
        for k in _as_list(kernels):
            if isinstance(k, Kernel):
                loaded.append(k)
            elif isinstance(k, (str, os.PathLike)):
                if not pathlib.Path(k).is_file():
                    raise FileNotFoundError(f"autotune: no bundle {str(k)!r}")
                loaded.append(load(k, execution_backend=backend))
            else:
                raise TypeError("autotune: kernels must be tile.Kernel objects, "
                                "bundle paths or a bundle directory, got "
                                f"{type(k).__name__}")
        if not loaded:
            raise ValueError("autotune: no kernels")
        if configs is None:
            configs = [str(k) if not isinstance(k, Kernel) else i
                       for i, k in enumerate(_as_list(kernels))]
    configs = list(configs)
    if len(configs) != len(loaded):
        raise ValueError(f"autotune: {len(loaded)} kernels but {len(configs)} "
                         "configs")
    targets = {(k.target_kind, k.target_chip) for k in loaded}
    if len(targets) != 1:
        raise ValueError(f"autotune: the kernels target different devices "
                         f"{sorted(targets)}")
    return loaded, configs


def _tune_kernels(kernels, configs, backend, problem, opts):
    loaded, configs = _load_kernels(kernels, configs, backend)
    kind, chip = loaded[0].target_kind, loaded[0].target_chip
    key_doc = {"bundles": [hashlib.sha256(k.bundle).hexdigest() for k in loaded],
               "configs": [repr(c) for c in configs],
               "target": f"{kind}:{chip}" if chip else kind,
               "backend": backend}
    def compile_all(bar):  # nothing to compile: the first half of the bar
        for _ in loaded:
            bar.update()
        return list(loaded), {}
    return _search(configs, key_doc, kind, compile_all, lambda i: loaded[i],
                   problem, opts)


def _search(configs, key_doc, kind, compile_all, compile_best, problem, opts):
    """The shared part: cache lookup, compile (compile_all(bar) ->
    (kernels, {index: error})), check and time on the devices, store."""
    inputs, shapes = opts["inputs"], opts["shapes"]
    reference, verbose = opts["reference"], opts["verbose"]
    devices = _devices(kind, opts["devices"])
    key_doc = dict(key_doc)
    key_doc.update({
        "shapes": shapes,
        "inputs": (problem if problem is not None else
                   None if inputs is None else [_input_signature(x) for x in inputs]),
        "reference": None if reference is None else _code_fingerprint(reference),
        "devices": device_identity(kind, devices),
        "rtol": opts["rtol"], "atol": opts["atol"]})
    key = hashlib.sha256(json.dumps(key_doc, sort_keys=True,
                                    default=repr).encode()).hexdigest()
    caching = opts["use_cache"] and not cache_disabled()
    disk = DiskCache()
    if caching:
        with _memory_lock:
            hit = _memory.get(key)
        if hit is not None:
            return dataclasses.replace(hit, cached=True)
        doc = disk.load_json("autotune", key)
        best = _valid_cached(doc, len(configs))
        if best is not None:
            try:
                kernel = compile_best(best)
            except Exception as e:  # noqa: BLE001 - stale: tune again
                if verbose:
                    print(f"[tile] autotune: cached best config #{best} is "
                          f"unusable ({e}); tuning again", file=sys.stderr)
            else:
                results = doc["results"]
                for r, c in zip(results, configs):
                    r["config"] = c
                if verbose:
                    print(f"[tile] autotune: cache hit, best config #{best}",
                          file=sys.stderr)
                res = AutotuneResult(kernel, configs[best],
                                     results[best]["latency_ms"], results, True)
                with _memory_lock:
                    _memory[key] = res
                return res

    from .parallel import _Bar
    progress = opts["progress"]
    if progress is None:
        progress = sys.stderr.isatty()
    bar = _Bar(2 * len(configs), "tile: autotune (compile)", progress)
    try:
        kernels, errs = compile_all(bar)
        results = [{"config": c, "latency_ms": None, "status": "ok",
                    "error": None, "device": None} for c in configs]
        valid = []
        for i, k in enumerate(kernels):
            if k is None:
                results[i].update(status="compile_error",
                                  error=errs.get(i, "compilation failed"))
                bar.update()
            else:
                valid.append(i)
        if not valid:
            details = "; ".join(f"#{i}: {r['error']}" for i, r in enumerate(results))
            raise RuntimeError(f"autotune: no config compiled ({details})")
        bar.set_description(f"tile: autotune (time, {len(devices)} "
                            f"device{'s' if len(devices) > 1 else ''})")
        _time_configs(kernels, valid, results, devices, kind, opts, bar)
    finally:
        bar.close()

    timed = [i for i in valid if results[i]["latency_ms"] is not None]
    if not timed:
        details = "; ".join(f"#{i}: {results[i]['error']}" for i in valid)
        raise RuntimeError(f"autotune: no config passed ({details})")
    best = min(timed, key=lambda i: results[i]["latency_ms"])
    if verbose:
        for i, r in enumerate(results):
            print(f"[tile] autotune #{i} {r['config']!r}: {r['status']} "
                  f"{r['latency_ms']} (device {r['device']})", file=sys.stderr)
    res = AutotuneResult(kernels[best], configs[best],
                         results[best]["latency_ms"], results)
    if caching:
        disk.store_json("autotune", key, {
            "best": best, "key": key_doc,
            "results": [{k: v for k, v in r.items() if k != "config"} |
                        {"config_repr": repr(r["config"])} for r in results]})
        with _memory_lock:
            _memory[key] = res
    return res


def _time_configs(kernels, valid, results, devices, kind, opts, bar):
    """Checks and times every valid config, spread over the devices
    (schedule); fills results in place."""
    from .profiler import Profiler
    inputs, shapes, reference = opts["inputs"], opts["shapes"], opts["reference"]
    gpu = kind in ("cuda", "hip")
    base_inputs = (list(inputs) if inputs is not None else
                   Profiler(kernels[valid[0]], **shapes).make_inputs())
    expected = reference(*base_inputs) if reference is not None else None
    per_device = {}
    per_device_lock = threading.Lock()

    def device_inputs(device):
        if not gpu or device in (None, 0):
            return base_inputs
        with per_device_lock:
            if repr(device) not in per_device:
                per_device[repr(device)] = [_move(a, device) for a in base_inputs]
            return per_device[repr(device)]

    def bench(i, device):
        kernel = kernels[i]
        results[i]["device"] = device
        try:
            args = device_inputs(device)
            prof = Profiler(kernel, device=device if gpu and device is not None
                            else 0, **shapes)
            out = kernel(*args)
            if expected is not None:
                err = _check(out, expected, opts["rtol"], opts["atol"])
                if err:
                    results[i].update(status="mismatch", error=err)
                    return
            results[i]["latency_ms"] = prof.do_bench(
                warmup=opts["warmup"], rep=opts["rep"], inputs=args)
        except Exception as e:  # noqa: BLE001 - recorded per config
            results[i].update(status="run_error", error=str(e))
        finally:
            bar.update()

    schedule(valid, devices, bench)


def _move(a, device):
    try:
        import torch
        if isinstance(a, torch.Tensor):
            return a.to(f"cuda:{device}")
    except ImportError:
        pass
    try:
        import cupy
        if isinstance(a, cupy.ndarray):
            with cupy.cuda.Device(device):
                return cupy.asarray(a)
    except ImportError:
        pass
    return a

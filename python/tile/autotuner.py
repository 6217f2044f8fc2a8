"""tile.autotune: compile configs in parallel, check, time, pick the best."""

import concurrent.futures
import dataclasses
import hashlib
import inspect
import json
import sys

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


def _devices(kind):
    if kind in ("cuda", "hip"):
        n = _frameworks.cuda_device_count()
        return list(range(max(n, 1)))
    return [None]


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


def autotune(builder, configs, reference=None, inputs=None, shapes=None,
             out_idx=None, target="auto", execution_backend="auto",
             pass_options=None, compile_flags=None, warmup=5, rep=20,
             rtol=1e-2, atol=1e-2, num_workers=None, use_cache=True,
             progress=None, verbose=False):
    """Picks the fastest valid config.

    builder(config) -> kernel MLIR text. Every config is compiled
    (par_compile; failures are skipped), run on the same inputs (`inputs`, a
    list of arguments without the out_idx outputs, or generated from the
    first kernel's params with `shapes` = {symbol: extent}), checked against
    reference(*inputs) (expected out_idx outputs) when given, and timed with
    the profiler (do_bench). On a host with several GPUs each device
    benchmarks a share of the configs (one worker per device).

    The result (best config index) is cached on disk, keyed by the builder's
    source, the config space, the generated kernels, the problem (the shape
    and dtype of every tensor in `inputs`, the value of every scalar, or
    `shapes`), the reference's source and the settings; a cache hit compiles
    only the best config (a compile-cache hit too). Returns an
    AutotuneResult (unpacks as kernel, config).
    """
    from .compiler import resolve_target
    from .parallel import par_compile

    configs = list(configs)
    if not configs:
        raise ValueError("autotune: no configs")
    sources = [builder(c) for c in configs]
    kind, chip = resolve_target(target)
    target_str = f"{kind}:{chip}" if chip else kind
    shapes = dict(shapes or {})
    key_doc = {"builder": _builder_fingerprint(builder),
               "configs": [repr(c) for c in configs],
               "sources": [hashlib.sha256(s.encode()).hexdigest() for s in sources],
               "target": target_str, "backend": execution_backend,
               "out_idx": repr(out_idx), "shapes": shapes,
               "pass_options": repr(pass_options),
               "compile_flags": repr(compile_flags),
               "inputs": (None if inputs is None
                          else [_input_signature(x) for x in inputs]),
               "reference": (None if reference is None
                             else _code_fingerprint(reference)),
               "rtol": rtol, "atol": atol}
    key = hashlib.sha256(json.dumps(key_doc, sort_keys=True,
                                    default=repr).encode()).hexdigest()
    disk = DiskCache()
    caching = use_cache and not cache_disabled()
    if caching:
        doc = disk.load_json("autotune", key)
        best = _valid_cached(doc, len(configs))
        if best is not None:
            from .compiler import compile as compile_one
            kernel = compile_one(sources[best], out_idx=out_idx, target=target_str,
                                 execution_backend=execution_backend,
                                 pass_options=pass_options,
                                 compile_flags=compile_flags)
            results = doc["results"]
            for r, c in zip(results, configs):
                r["config"] = c
            if verbose:
                print(f"[tile] autotune: cache hit, best config #{best}",
                      file=sys.stderr)
            return AutotuneResult(kernel, configs[best],
                                  results[best]["latency_ms"], results, True)

    kernels = par_compile(sources, out_idx=out_idx, target=target_str,
                          execution_backend=execution_backend,
                          pass_options=pass_options, compile_flags=compile_flags,
                          num_workers=num_workers, ignore_error=True,
                          progress=progress, verbose=verbose)
    results = [{"config": c, "latency_ms": None, "status": "ok", "error": None}
               for c in configs]
    valid = []
    for i, k in enumerate(kernels):
        if k is None:
            results[i].update(status="compile_error",
                              error="compilation failed")
        else:
            valid.append(i)
    if not valid:
        raise RuntimeError("autotune: no config compiled")

    devices = _devices(kind)
    first = kernels[valid[0]]

    def host_inputs():
        if inputs is not None:
            return list(inputs)
        from .profiler import Profiler
        return Profiler(first, **shapes).make_inputs()

    base_inputs = host_inputs()
    expected = None
    if reference is not None:
        expected = reference(*base_inputs)

    def bench(i, device):
        kernel = kernels[i]
        from .profiler import Profiler
        prof = Profiler(kernel, device=device if device is not None else 0,
                        **shapes)
        args = base_inputs
        if device not in (None, 0) and prof.gpu:
            args = [_move(a, device) for a in base_inputs]
        try:
            out = kernel(*args)
            if expected is not None:
                err = _check(out, expected, rtol, atol)
                if err:
                    results[i].update(status="mismatch", error=err)
                    return
            results[i]["latency_ms"] = prof.do_bench(warmup=warmup, rep=rep,
                                                     inputs=args)
        except Exception as e:  # noqa: BLE001 - recorded per config
            results[i].update(status="run_error", error=str(e))

    if len(devices) > 1:
        shares = {d: valid[j::len(devices)] for j, d in enumerate(devices)}

        def worker(d):
            for i in shares[d]:
                bench(i, d)
        with concurrent.futures.ThreadPoolExecutor(len(devices)) as pool:
            list(pool.map(worker, devices))
    else:
        for i in valid:
            bench(i, devices[0])

    timed = [i for i in valid if results[i]["latency_ms"] is not None]
    if not timed:
        details = "; ".join(f"#{i}: {results[i]['error']}" for i in valid)
        raise RuntimeError(f"autotune: no config passed ({details})")
    best = min(timed, key=lambda i: results[i]["latency_ms"])
    if verbose:
        for i, r in enumerate(results):
            print(f"[tile] autotune #{i} {r['config']!r}: {r['status']} "
                  f"{r['latency_ms']}", file=sys.stderr)
    if caching:
        disk.store_json("autotune", key, {
            "best": best,
            "results": [{k: v for k, v in r.items() if k != "config"} |
                        {"config_repr": repr(r["config"])} for r in results]})
    return AutotuneResult(kernels[best], configs[best],
                          results[best]["latency_ms"], results)


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

#!/usr/bin/env python3
"""Launch overhead of a no-op 4-tensor kernel (utils/bench/noop.mlir).

    PYTHONPATH=build/python_packages python utils/bench/launch.py [-n N]
        [--target auto|cpu|cuda] [--json out.json]

Measured in one run, each as the mean time per launch over N back-to-back
launches (GPU: enqueue rate, one synchronize at the end):
  * our Kernel from Python, per execution backend (numpy / torch / DLPack-only
    arguments);
  * our kernel from C++ through the runtime's C API (tile-bench-launch, which
    on a CUDA bundle also times raw cuLaunchKernel of a PTX no-op);
  * GPU only, where installed: cupy RawKernel, a Triton no-op, a torch op;
  * CPU: numpy's np.add(out=) on 16 elements and a torch CPU op, for scale;
  * the same no-op written in tile.language through @tile.jit (dtypes and
    target fixed: nothing to specialize; dtype-less tensors with
    target="auto": the generated key) and @tile.autotune (one config), each
    next to the plain Kernel call on the same arguments. On the CPU these
    rows run twice: with numpy arrays and with tile_exchange_tensor's
    ExchangeTensor (python/tests/exchange_tensor.cpp, built into
    build/python): a C tensor type with torch's DLPack exchange API and
    .dtype/.shape/.device getters, so a host without a GPU measures the
    dispatch the way torch tensors reach it (only the launch differs).

Without tilec (a GPU host that only has bundles), `--jit-bundles DIR`
imports the jit kernels' bundles written on the build host by
`launch.py --export-jit DIR --target cuda:sm_90a`.
"""

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
NOOP = HERE / "noop.mlir"


def per_launch(fn, n, sync=None, warmup=1000):
    for _ in range(min(warmup, n)):
        fn()
    if sync:
        sync()
    best = float("inf")
    for _ in range(3):  # best of 3 batches: the machine may be shared
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        if sync:
            sync()
        best = min(best, (time.perf_counter() - t0) / n)
    return best * 1e6


class DLPackOnly:
    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None, max_version=None):
        if max_version is None:
            return self.a.__dlpack__()
        return self.a.__dlpack__(max_version=max_version)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def jit_kernels(target):
    """The no-op as @tile.jit / @tile.autotune functions: (label, fn)."""
    import tile
    import tile.language as T
    N = T.symbolic("N")

    def body(A, B, C, D):
        with T.Kernel(1, threads=128):
            pass

    @tile.jit(target=target, locations=False)
    def noop_fixed(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"),
                   C: T.Tensor((N,), "float32"), D: T.Tensor((N,), "float32")):
        body(A, B, C, D)

    @tile.jit(locations=False)
    def noop_auto(A: T.Tensor((N,)), B: T.Tensor((N,)), C: T.Tensor((N,)),
                  D: T.Tensor((N,))):
        body(A, B, C, D)

    @tile.autotune(configs=[{"threads": 128}], warmup=1, rep=1,
                   progress=False)
    @tile.jit(locations=False)
    def noop_tuned(A: T.Tensor((N,)), B: T.Tensor((N,)), C: T.Tensor((N,)),
                   D: T.Tensor((N,)), threads=64):
        with T.Kernel(1, threads=threads):
            pass
    return [("@tile.jit, nothing to specialize", noop_fixed),
            ("@tile.jit, dtype-less tensors, target=auto", noop_auto),
            ("@tile.autotune over @tile.jit", noop_tuned)]


def export_jit(directory, target, np):
    import tile
    xs = [np.zeros(16, np.float32) for _ in range(4)]
    for label, fn in jit_kernels(target):
        if hasattr(fn, "export_bundles"):
            fn.export_bundles(directory, *xs, target=target)
        else:
            tile.export_bundles([tile.compile(fn.get_ir(*xs), target=target,
                                              inspect_only=True)], directory)
    print(f"jit no-op bundles for {target} in {directory}")


def bench_jit(add, target, args_, n, sync, plain, suffix=""):
    """The jit rows, each after the plain Kernel call on the same arguments
    (the difference is the dispatch)."""
    import tile
    add("tile Kernel from Python (plain call, for the jit rows)" + suffix,
        per_launch(lambda: plain(*args_), n, sync))
    for label, fn in jit_kernels(target):
        try:
            fn(*args_)
        except (tile.CompileError, RuntimeError) as e:
            print(f"# {label}: skipped ({str(e).splitlines()[0][:120]})")
            continue
        add(label + suffix, per_launch(lambda fn=fn: fn(*args_), n, sync))


def exchange_tensors(arrays):
    """The arrays as tile_exchange_tensor.ExchangeTensor (see the module
    docstring), or None when that test module is not built."""
    import tile
    try:
        import tile_exchange_tensor as xt
    except ImportError:
        build = pathlib.Path(tile.__file__).resolve().parent.parent.parent
        sys.path.append(str(build / "python"))
        try:
            import tile_exchange_tensor as xt
        except ImportError:
            return None
    from tile._frameworks import numpy_dlpack_dtype
    out = []
    for a in arrays:
        code, bits, _ = numpy_dlpack_dtype(a.dtype)
        out.append(xt.ExchangeTensor(a, code, bits))
    return out


def find_bench_binary():
    env = os.environ.get("TILE_BENCH_LAUNCH")
    if env:
        return env
    import tile
    cands = [pathlib.Path(tile.__file__).resolve().parent.parent.parent / "bin"
             / "tile-bench-launch"]
    for c in cands:
        if c.exists():
            return str(c)
    return shutil.which("tile-bench-launch")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=100000)
    ap.add_argument("--target", default="auto")
    ap.add_argument("--json", help="write the results to this file")
    ap.add_argument("--bundle", help="use this compiled noop bundle (e.g. "
                    "built elsewhere with tilec --target=cuda) instead of "
                    "compiling utils/bench/noop.mlir")
    ap.add_argument("--export-jit", metavar="DIR",
                    help="compile the @tile.jit no-ops for --target into a "
                    "bundle directory and exit")
    ap.add_argument("--jit-bundles", metavar="DIR",
                    help="tile.import_bundles(DIR) first (no tilec needed "
                    "for the jit rows)")
    args = ap.parse_args()

    import numpy as np
    import tile
    if args.export_jit:
        export_jit(args.export_jit, args.target, np)
        return 0
    if args.jit_bundles:
        tile.import_bundles(args.jit_bundles)

    results = []

    def add(what, us):
        results.append({"what": what, "us": us})
        print(f"{what:58s} {us:9.3f} us/launch", flush=True)

    if args.bundle:
        target = tile.load(args.bundle).target_kind
    else:
        target = tile.detect_target() if args.target == "auto" else args.target
    gpu = target == "cuda"
    print(f"# no-op 4-argument kernel, target {target}, n={args.n}")
    try:
        import torch
    except ImportError:
        torch = None

    if args.bundle:
        kernels = {b: tile.load(args.bundle, execution_backend=b)
                   for b in ("ffi", "native")}
    else:
        kernels = {b: tile.compile(NOOP, target=target, execution_backend=b)
                   for b in ("ffi", "native")}
    if gpu:
        sync = torch.cuda.synchronize if torch else None
        if torch is not None:
            ts = [torch.zeros(16, device="cuda") for _ in range(4)]
            from tile import _runtime
            conv = getattr(_runtime, "conversion", None)
            print(f"# torch {torch.__version__}; torch tensors passed via "
                  f"{conv(ts[0]) if conv else 'export'} (exchange API on "
                  f"the type: {hasattr(torch.Tensor, '__dlpack_c_exchange_api__')})")
            for b, k in kernels.items():
                add(f"tile Kernel from Python, {k.backend}, torch tensors",
                    per_launch(lambda k=k: k(*ts), args.n, sync))
        try:
            import cupy
            cs = [cupy.zeros(16, dtype=cupy.float32) for _ in range(4)]
            k = kernels["native"]
            add("tile Kernel from Python, native, cupy arrays",
                per_launch(lambda: k(*cs), args.n,
                           cupy.cuda.Device().synchronize))
            raw = cupy.RawKernel(
                r'extern "C" __global__ void noop4(float*, float*, float*, '
                r'float*) {}', "noop4")
            add("cupy RawKernel no-op (4 pointers)",
                per_launch(lambda: raw((1,), (128,), tuple(cs)), args.n,
                           cupy.cuda.Device().synchronize))
        except ImportError:
            print("# cupy not installed: skipped")
        try:
            import triton
            import triton.language as tl

            @triton.jit
            def noop4(a, b, c, d):
                pass
            if torch is not None:
                noop4[(1,)](*ts)
                add("Triton no-op (4 pointers)",
                    per_launch(lambda: noop4[(1,)](*ts), args.n, sync))
            del tl
        except ImportError:
            print("# triton not installed: skipped")
        if torch is not None:
            a = ts[0]
            add("torch op (a.add_(1), 16 elements)",
                per_launch(lambda: a.add_(1), args.n, sync))
            bench_jit(add, "cuda", ts, args.n, sync, kernels["native"])
    else:
        xs = [np.zeros(16, np.float32) for _ in range(4)]
        ws = [DLPackOnly(x) for x in xs]
        for b, k in kernels.items():
            add(f"tile Kernel from Python, {k.backend}, numpy arrays",
                per_launch(lambda k=k: k(*xs), args.n))
        k = kernels["native"]
        add("tile Kernel from Python, native, DLPack-only objects",
            per_launch(lambda: k(*ws), args.n // 4))
        a, b, c = xs[:3]
        add("numpy np.add(a, b, out=c), 16 elements",
            per_launch(lambda: np.add(a, b, out=c), args.n))
        bench_jit(add, "cpu", xs, args.n, None, kernels["native"],
                  ", numpy")
        es = exchange_tensors(xs)
        if es is None:
            print("# tile_exchange_tensor not built (build/python): "
                  "exchange-API rows skipped")
        else:
            bench_jit(add, "cpu", es, args.n, None, kernels["native"],
                      ", exchange-API tensors")
        if torch is not None:
            t = [torch.zeros(16) for _ in range(4)]
            add("tile Kernel from Python, native, torch CPU tensors",
                per_launch(lambda: k(*t), args.n))
            add("torch CPU op (a.add_(1), 16 elements)",
                per_launch(lambda: t[0].add_(1), args.n))

    binary = find_bench_binary()
    if binary:
        with tempfile.TemporaryDirectory() as tmp:
            path = kernels["native"].export(pathlib.Path(tmp) / "noop.tileb")
            proc = subprocess.run([binary, path, "-n", str(args.n * 5), "--json"],
                                  capture_output=True, text=True)
            if proc.returncode == 0:
                for r in json.loads(proc.stdout):
                    add(r["what"] + " [C++]", r["us"])
            else:
                print(f"# tile-bench-launch failed: {proc.stderr.strip()}")
    else:
        print("# tile-bench-launch not found (set TILE_BENCH_LAUNCH): C++ part skipped")

    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(
            {"target": target, "n": args.n, "results": results}, indent=1))


if __name__ == "__main__":
    sys.exit(main())

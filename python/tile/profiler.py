"""Kernel.get_profiler(): inputs from the param info, and do_bench.

do_bench returns the median time of one launch in milliseconds:
  * CUDA: CUDA events around each launch (torch, else cupy), the L2 cache
    flushed (a 256 MiB buffer zeroed) before every timed launch;
  * CPU: wall clock (perf_counter) around each launch.
"""

import statistics
import time

import numpy as np

from . import _frameworks

L2_FLUSH_BYTES = 256 << 20


def _rng(seed):
    return np.random.default_rng(seed)


def _host_random(shape, dtype, rng):
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.startswith("int"):
        return rng.integers(-8, 8, size=shape).astype(dtype)
    if dtype.startswith("uint"):
        return rng.integers(0, 16, size=shape).astype(dtype)
    data = rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)
    return data.astype(_frameworks.numpy_dtype(dtype))


class Profiler:
    def __init__(self, kernel, seed=0, device=None, framework=None, **shapes):
        self.kernel = kernel
        self.shapes = dict(shapes)
        self.seed = seed
        self.gpu = kernel.target_kind in ("cuda", "hip")
        self.device = device if device is not None else 0
        self.framework = framework or ("torch" if self.gpu and
                                       _frameworks._importable("torch")
                                       else ("cupy" if self.gpu else "numpy"))
        self._inputs = None
        self._flush = None

    # ---- inputs ----------------------------------------------------------
    def _shape(self, p):
        shape = []
        for extent, sym in zip(p["shape"], p["dims"]):
            if extent is not None:
                shape.append(extent)
            elif sym in self.shapes:
                shape.append(int(self.shapes[sym]))
            else:
                raise ValueError(
                    f"profiler: dim of '{p['name']}' uses symbol '{sym}': pass "
                    f"it, e.g. kernel.get_profiler({sym}=1024)")
        return tuple(shape)

    def _to_device(self, arr):
        if not self.gpu:
            return arr
        if self.framework == "torch":
            import torch
            if arr.dtype.name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
                t = torch.from_numpy(arr.view(np.uint16 if arr.itemsize == 2
                                              else np.uint8).copy())
                t = t.view(_frameworks.torch_dtype(arr.dtype.name))
            else:
                t = torch.from_numpy(arr.copy())
            return t.to(f"cuda:{self.device}")
        import cupy
        with cupy.cuda.Device(self.device):
            return cupy.asarray(arr)

    def make_inputs(self, include_outputs=False):
        """Arguments for the kernel: random tensors (omitting out_idx outputs
        unless include_outputs) and scalars (from the shape kwargs, else 1)."""
        rng = _rng(self.seed)
        args = []
        for p in self.kernel.params:
            if p["kind"] == "scalar":
                v = self.shapes.get(p["name"], 1)
                args.append(float(v) if p["dtype"].startswith("float") else int(v))
                continue
            if p["in_out_idx"] and not include_outputs:
                continue
            args.append(self._to_device(_host_random(self._shape(p), p["dtype"], rng)))
        return args

    def run(self, *inputs):
        """One launch with the given (or generated) inputs; returns outputs."""
        args = list(inputs) if inputs else self._get_inputs()
        return self.kernel(*args)

    def _get_inputs(self):
        if self._inputs is None:
            self._inputs = self.make_inputs()
        return self._inputs

    # ---- timing ----------------------------------------------------------
    def do_bench(self, func=None, warmup=25, rep=100, inputs=None,
                 return_mode="median", input_tensors=None):
        """Median (or 'mean'/'min') milliseconds per call over rep timed
        calls after warmup calls.

        As in TileLang, the function timed is `func` (default: the kernel)
        called with the arguments: `inputs` (TileLang's name
        `input_tensors` also works), else inputs generated from the kernel's
        params (make_inputs: the out_idx outputs omitted). So
        do_bench(kernel), do_bench(func=reference_program) and do_bench()
        all time a call on the same arguments."""
        if input_tensors is not None:
            if inputs is not None:
                raise ValueError("do_bench: pass inputs or input_tensors, "
                                 "not both")
            inputs = input_tensors
        if func is not None and not callable(func):
            raise TypeError(f"do_bench: func must be callable, got "
                            f"{type(func).__name__}")
        args = list(inputs) if inputs is not None else self._get_inputs()
        target = self.kernel if func is None else func

        def call():
            return target(*args)
        times = (self._bench_gpu(call, warmup, rep) if self.gpu
                 else self._bench_cpu(call, warmup, rep))
        if return_mode == "mean":
            return statistics.fmean(times)
        if return_mode == "min":
            return min(times)
        return statistics.median(times)

    @staticmethod
    def _bench_cpu(func, warmup, rep):
        for _ in range(warmup):
            func()
        times = []
        clock = time.perf_counter_ns
        for _ in range(rep):
            t0 = clock()
            func()
            times.append((clock() - t0) / 1e6)
        return times

    def _bench_gpu(self, func, warmup, rep):
        if self.framework == "torch":
            import torch
            with torch.cuda.device(self.device):
                if self._flush is None:
                    self._flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.uint8,
                                              device="cuda")
                for _ in range(warmup):
                    func()
                torch.cuda.synchronize()
                starts = [torch.cuda.Event(enable_timing=True) for _ in range(rep)]
                ends = [torch.cuda.Event(enable_timing=True) for _ in range(rep)]
                for i in range(rep):
                    self._flush.zero_()
                    starts[i].record()
                    func()
                    ends[i].record()
                torch.cuda.synchronize()
                return [s.elapsed_time(e) for s, e in zip(starts, ends)]
        import cupy
        with cupy.cuda.Device(self.device):
            if self._flush is None:
                self._flush = cupy.empty(L2_FLUSH_BYTES, dtype=cupy.uint8)
            for _ in range(warmup):
                func()
            cupy.cuda.Device().synchronize()
            starts = [cupy.cuda.Event() for _ in range(rep)]
            ends = [cupy.cuda.Event() for _ in range(rep)]
            stream = cupy.cuda.get_current_stream()
            for i in range(rep):
                self._flush.fill(0)
                starts[i].record(stream)
                func()
                ends[i].record(stream)
            cupy.cuda.Device().synchronize()
            return [cupy.cuda.get_elapsed_time(s, e) for s, e in zip(starts, ends)]

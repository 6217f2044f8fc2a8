"""Shared by the fused-kernel benchmarks (attention.py, gemm_epilogue.py):
which bundles they use, how make_kernels.py --fused compiles them, and how
they are launched through OUR runtime on the GPU host.

Build host (tilec):   utils/bench/make_kernels.py --fused
                      -> .hopper/fused/NAME.tileb + fused.json
GPU host (runtime):   TILE_HOPPER_BENCH=attention bash utils/bench/hopper.sh
                      TILE_HOPPER_BENCH=gemm_epilogue bash utils/bench/hopper.sh

Launching: the `tile` package (tile.load(bundle) -> kernel(*args)) when it
imports, else the runtime's C API through ctypes ($TILE_RUNTIME_LIB), with
tensors (torch CUDA tensors as DLPack tensors), ints and floats.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
FA_TEMPLATE = "test/E2E/kernels/flash_attention.mlir.in"

# FlashAttention tiles: (query rows BM, key rows BN, threads, pipeline
# stages). Every warp owns BM / (threads / 32) whole query rows (the P.V A
# operand stays in registers). Not tuned for one shape: the benchmark
# reports all of them.
FA_TILES = [(64, 64, 128, 2), (64, 64, 128, 3), (128, 64, 256, 2),
            (128, 32, 256, 2), (128, 64, 256, 3), (128, 128, 256, 2),
            (192, 128, 384, 2)]
FA_HEAD_DIMS = [64, 128]
DTYPES = ["f16", "bf16"]


def fa_name(dt, d, bm, bn, threads, stages):
    return f"fa_{dt}_d{d}_{bm}x{bn}_t{threads}_s{stages}"


def epilogue_128x256(text):
    """examples/gemm_epilogue.mlir with 128x256 output tiles, K tile 64 and
    256 threads (two consumer warpgroups on sm_90a): the tile shape the
    plain GEMM benchmarks best with."""
    edits = [("%c32 = arith.constant 32 : index",
              "%c32 = arith.constant 64 : index"),
             ("%c128 = arith.constant 128 : index\n",
              "%c128 = arith.constant 128 : index\n"
              "  %c256 = arith.constant 256 : index\n"),
             ("%gx = arith.ceildivui %N, %c128", "%gx = arith.ceildivui %N, %c256"),
             ("%n0 = arith.muli %bx, %c128", "%n0 = arith.muli %bx, %c256"),
             ("threads(128)", "threads(256)"),
             ("128x32x", "128x64x"), ("32x128x", "64x256x"),
             ("128x128x", "128x256x"), ("in [128, 128]", "in [128, 256]")]
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return text


def compile_fused(tilec, out, chip="sm_90a", only="", extra=()):
    """Compiles the attention variants and examples/gemm_epilogue.mlir (f16,
    bf16) for `chip` into OUT, with OUT/fused.json describing them; `extra`:
    more tilec arguments (e.g. a --pass-pipeline to compare options)."""
    os.makedirs(out, exist_ok=True)
    template = open(os.path.join(ROOT, FA_TEMPLATE)).read()
    epilogue = open(os.path.join(ROOT, "examples/gemm_epilogue.mlir")).read()
    jobs = []
    for dt in DTYPES:
        for d in FA_HEAD_DIMS:
            for bm, bn, threads, stages in FA_TILES:
                jobs.append((fa_name(dt, d, bm, bn, threads, stages),
                             dict(kind="attention", dtype=dt, head_dim=d,
                                  bm=bm, bn=bn, threads=threads,
                                  stages=stages),
                             template.format(DT=dt, D=d, BM=bm, BN=bn,
                                             THREADS=threads,
                                             STAGES=stages)))
        text = (epilogue if dt == "f16"
                else epilogue.replace("xf16", "xbf16")
                             .replace("f16 to f32", "bf16 to f32"))
        jobs.append((f"gemm_epilogue_{dt}",
                     dict(kind="gemm_epilogue", dtype=dt), text))
        jobs.append((f"gemm_epilogue_128x256_{dt}",
                     dict(kind="gemm_epilogue", dtype=dt),
                     epilogue_128x256(text)))
    manifest = []
    for name, info, text in jobs:
        if only and only not in name:
            continue
        src = os.path.join(out, name + ".mlir")
        with open(src, "w") as f:
            f.write(text)
        bundle = os.path.join(out, name + ".tileb")
        r = subprocess.run([tilec, src, "--target=cuda", f"--chip={chip}",
                            *extra, "-o", bundle], capture_output=True,
                           text=True)
        if r.returncode != 0:
            print(f"{name}: tilec failed:\n{r.stderr}", file=sys.stderr)
            continue
        # Resource usage of the generic kernel (ptxas -v on its PTX).
        ptx = os.path.join(out, name + ".ptx")
        subprocess.run([tilec, src, "--target=cuda", f"--chip={chip}",
                        *extra, "--emit=ptx", "-o", ptx], check=True)
        ptxas = os.environ.get("PTXAS", "/usr/local/cuda/bin/ptxas")
        v = subprocess.run([ptxas, f"-arch={chip}", "-v", ptx, "-o",
                            os.devnull], capture_output=True, text=True)
        info = dict(info, name=name, chip=chip,
                    ptxas=[l.strip() for l in v.stderr.splitlines()
                           if "registers" in l or "spill" in l])
        manifest.append(info)
        print(f"{name}: {'; '.join(info['ptxas'])}", flush=True)
    with open(os.path.join(out, "fused.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest


# --------------------------------------------------------------------------
# Launching through our runtime
# --------------------------------------------------------------------------

class CApiKernel:
    """A bundle through the runtime's C API (ctypes): tensors (torch),
    Python ints and floats, in parameter order."""

    def __init__(self, bundle, lib):
        import ctypes as C
        self.C = C

        class DLDevice(C.Structure):
            _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]

        class DLDataType(C.Structure):
            _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8),
                        ("lanes", C.c_uint16)]

        class DLTensor(C.Structure):
            _fields_ = [("data", C.c_void_p), ("device", DLDevice),
                        ("ndim", C.c_int32), ("dtype", DLDataType),
                        ("shape", C.POINTER(C.c_int64)),
                        ("strides", C.POINTER(C.c_int64)),
                        ("byte_offset", C.c_uint64)]

        class Value(C.Union):
            _fields_ = [("tensor", C.c_void_p), ("i", C.c_int64),
                        ("f", C.c_double)]

        class Arg(C.Structure):
            _fields_ = [("kind", C.c_int32), ("reserved", C.c_int32),
                        ("v", Value)]

        self.DLTensor, self.Arg, self.Value = DLTensor, Arg, Value
        self.lib = C.CDLL(lib)
        self.lib.tile_kernel_load_file.argtypes = [C.c_char_p, C.c_char_p,
                                                   C.POINTER(C.c_void_p)]
        self.lib.tile_kernel_launch.argtypes = [C.c_void_p, C.c_void_p,
                                                C.c_int32, C.c_void_p,
                                                C.c_void_p]
        self.lib.tile_last_error.restype = C.c_char_p
        self.k = C.c_void_p()
        if self.lib.tile_kernel_load_file(bundle.encode(), b"auto",
                                          C.byref(self.k)):
            raise RuntimeError(self.lib.tile_last_error().decode())
        self.cache = {}

    def _tensor(self, t, keep):
        import torch
        C = self.C
        shape = (C.c_int64 * t.dim())(*t.shape)
        strides = (C.c_int64 * t.dim())(*t.stride())
        keep += [shape, strides]
        code = {torch.bfloat16: 4, torch.float16: 2, torch.float32: 2}[t.dtype]
        bits = 32 if t.dtype == torch.float32 else 16
        return self.DLTensor(t.data_ptr(), (2, t.device.index or 0), t.dim(),
                             (code, bits, 1), shape, strides, 0)

    def __call__(self, *args):
        import torch
        key = tuple((a.data_ptr(), tuple(a.shape)) if hasattr(a, "data_ptr")
                    else a for a in args)
        entry = self.cache.get(key)
        if entry is None:
            keep, out = [], []
            for a in args:
                if hasattr(a, "data_ptr"):
                    d = self._tensor(a, keep)
                    keep.append(d)
                    v = self.Value()
                    v.tensor = self.C.addressof(d)
                    out.append(self.Arg(1, 0, v))
                elif isinstance(a, int):
                    v = self.Value()
                    v.i = a
                    out.append(self.Arg(2, 0, v))
                else:
                    v = self.Value()
                    v.f = float(a)
                    out.append(self.Arg(3, 0, v))
            arr = (self.Arg * len(out))(*out)
            entry = (arr, keep)
            self.cache[key] = entry
        if self.lib.tile_kernel_launch(
                self.k, self.C.addressof(entry[0]), len(args),
                torch.cuda.current_stream().cuda_stream, None):
            raise RuntimeError(self.lib.tile_last_error().decode())


def load_ours(bundle):
    """(launcher name, fn(*args)) over our runtime."""
    try:
        import tile
        k = tile.load(bundle)
        return "tile", (lambda *a: k(*a))
    except Exception as e:  # noqa
        lib = os.environ.get("TILE_RUNTIME_LIB")
        if not lib:
            raise RuntimeError(f"tile package unavailable ({e}) and no "
                               "TILE_RUNTIME_LIB")
        return "capi", CApiKernel(bundle, lib)

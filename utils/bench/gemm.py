#!/usr/bin/env python3
"""GEMM benchmark: tile (mma.sync path) vs torch.matmul (cuBLAS) vs Triton.

Runs on the GPU machine (python3 + torch + triton; cupy for the fallback
launcher). The kernels are compiled beforehand, on a machine with tilec:

    utils/bench/make_kernels.py            # -> .bench/*.tileb, *.cubin, manifest.json
    python3 utils/bench/gemm.py [--bench .bench] [--out DIR] [--quick]

For each dtype (bf16, fp16): a correctness check of every compiled variant
against torch.matmul (tails and the unaligned scalar-copy path included),
then TFLOP/s of every variant at 4096^3, then the best variants on every
shape next to cuBLAS and Triton (ratio to cuBLAS). Shapes are M x N x K
(A is MxK, B is KxN, row-major).

Launching our kernel: `import tile` (tile.load(bundle) -> kernel(A, B, C))
when the Python package and its CUDA runtime are importable and pass the
correctness check; otherwise cupy.RawModule on the cubin with the kernel
ABI of docs/bundle.md (every memref expanded to allocated ptr, aligned ptr,
offset, sizes, strides; dynamic shared memory = metadata shared_bytes).

`gemm.py --print-metadata BUNDLE` prints a bundle's metadata JSON (no GPU
needed; used by make_kernels.py).

Hopper mode (sm_90a bundles: generic kernel + TMA/wgmma variant):

    utils/bench/make_kernels.py --hopper          # -> .hopper/bench/*.tileb, hopper.json
    python3 utils/bench/gemm.py --hopper .hopper/bench [--out DIR] [--quick]

runs OUR kernels through OUR runtime (the `tile` package, else the runtime's
C API through ctypes: libtile_runtime.so from $TILE_RUNTIME_LIB), so the
runtime picks the variant (docs/bundle.md "Kernel variants"), next to
torch.matmul (cuBLAS) and Triton, bf16 and fp16: every kernel is checked
against torch.matmul in float32 (max |err| / max |ref|) on tail shapes and
on every timed shape before timing; the table gives TFLOP/s and the ratios
to cuBLAS and Triton. TILE_DISABLE_VARIANTS=1 at a kernel's first launch
gives the generic (mma.sync) kernel of the same bundle, timed at 4096^3
for reference.
"""
import argparse, json, os, struct, sys, time, traceback, zlib


# --------------------------------------------------------------------------
# Bundle container (docs/bundle.md)
# --------------------------------------------------------------------------

def read_bundle(path):
    data = open(path, "rb").read()
    if len(data) < 24 or data[:8] != b"TILEBNDL":
        raise ValueError(f"{path}: not a tile bundle")
    version, count, size = struct.unpack_from("<IIQ", data, 8)
    if version != 1 or size != len(data):
        raise ValueError(f"{path}: bad version or size")
    table_end = 24 + 48 * count
    (crc,) = struct.unpack_from("<I", data, table_end)
    if crc != zlib.crc32(data[:table_end]) & 0xFFFFFFFF:
        raise ValueError(f"{path}: header checksum mismatch")
    sections = {}
    for i in range(count):
        raw = data[24 + 48 * i: 24 + 48 * (i + 1)]
        name = raw[:24].split(b"\0", 1)[0].decode()
        off, sz, scrc, _ = struct.unpack_from("<QQII", raw, 24)
        payload = data[off:off + sz]
        if zlib.crc32(payload) & 0xFFFFFFFF != scrc:
            raise ValueError(f"{path}: section {name} is corrupt")
        sections[name] = payload
    return sections


def bundle_metadata(path):
    return json.loads(read_bundle(path)["metadata"].decode())


def eval_grid(expr, symbols):
    if "const" in expr:
        return expr["const"]
    if "sym" in expr:
        return symbols[expr["sym"]]
    a, b = (eval_grid(e, symbols) for e in expr["args"])
    op = expr["op"]
    if op == "add": return a + b
    if op == "sub": return a - b
    if op == "mul": return a * b
    if op in ("divu", "divs"): return a // b
    if op in ("ceildivu", "ceildivs"): return -(-a // b)
    if op in ("remu", "rems"): return a % b
    if op in ("minu", "mins"): return min(a, b)
    if op in ("maxu", "maxs"): return max(a, b)
    raise ValueError(f"grid op {op}")


# --------------------------------------------------------------------------
# Launchers
# --------------------------------------------------------------------------

class CupyKernel:
    """Our kernel through cupy.RawModule and the CUDA kernel ABI."""

    def __init__(self, cubin, meta):
        import cupy
        import numpy as np
        self.np = np
        self.meta = meta
        self.mod = cupy.RawModule(path=cubin)
        self.fn = self.mod.get_function(meta["entry"]["kernel"])
        self.smem = meta["shared_bytes"]
        # Always raise the limit: the NVPTX backend demotes the dynamic
        # shared memory symbol to a 1-byte static .shared variable, so
        # exactly 48 KiB of dynamic shared memory already needs the opt-in.
        self.fn.max_dynamic_shared_size_bytes = self.smem
        self.block = tuple(meta["block"])
        self.cache = {}

    def __call__(self, A, B, C):
        np = self.np
        key = (A.data_ptr(), B.data_ptr(), C.data_ptr(), A.shape, B.shape)
        launch = self.cache.get(key)
        if launch is None:
            M, K = A.shape
            N = B.shape[1]
            grid = tuple(int(eval_grid(e, {"M": M, "K": K, "N": N}))
                         for e in self.meta["grid"])
            args = []
            for t in (A, B, C):
                p = np.uint64(t.data_ptr())
                args += [p, p, np.int64(0), np.int64(t.shape[0]),
                         np.int64(t.shape[1]), np.int64(t.stride(0)),
                         np.int64(t.stride(1))]
            launch = (grid, tuple(args))
            self.cache[key] = launch
        grid, args = launch
        if 0 in grid:
            return
        self.fn(grid, self.block, args, shared_mem=self.smem)


def tile_package_kernel(bundle):
    import tile  # the Python package (python/tile), when built
    k = tile.load(bundle)
    return lambda A, B, C: k(A, B, C)


# --------------------------------------------------------------------------
# Triton (standard tutorial matmul, autotuned)
# --------------------------------------------------------------------------

def make_triton():
    import triton
    import triton.language as tl

    configs = [
        triton.Config({"BM": 128, "BN": 256, "BK": 64, "G": 8}, num_stages=3, num_warps=8),
        triton.Config({"BM": 256, "BN": 128, "BK": 64, "G": 8}, num_stages=3, num_warps=8),
        triton.Config({"BM": 128, "BN": 128, "BK": 64, "G": 8}, num_stages=4, num_warps=4),
        triton.Config({"BM": 128, "BN": 128, "BK": 32, "G": 8}, num_stages=4, num_warps=4),
        triton.Config({"BM": 64, "BN": 128, "BK": 64, "G": 8}, num_stages=4, num_warps=4),
        triton.Config({"BM": 64, "BN": 64, "BK": 64, "G": 8}, num_stages=4, num_warps=4),
    ]

    @triton.autotune(configs=configs, key=["M", "N", "K"])
    @triton.jit
    def matmul_kernel(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
                      BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                      G: tl.constexpr):
        pid = tl.program_id(0)
        npm = tl.cdiv(M, BM)
        npn = tl.cdiv(N, BN)
        group = G * npn
        gid = pid // group
        first = gid * G
        gsize = min(npm - first, G)
        pm = first + ((pid % group) % gsize)
        pn = (pid % group) // gsize
        rm = (pm * BM + tl.arange(0, BM)) % M
        rn = (pn * BN + tl.arange(0, BN)) % N
        rk = tl.arange(0, BK)
        ap = a + rm[:, None] * sam + rk[None, :] * sak
        bp = b + rk[:, None] * sbk + rn[None, :] * sbn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            av = tl.load(ap, mask=rk[None, :] < K - k * BK, other=0.0)
            bv = tl.load(bp, mask=rk[:, None] < K - k * BK, other=0.0)
            acc = tl.dot(av, bv, acc)
            ap += BK * sak
            bp += BK * sbk
        cm = pm * BM + tl.arange(0, BM)
        cn = pn * BN + tl.arange(0, BN)
        cp = c + cm[:, None] * scm + cn[None, :] * scn
        tl.store(cp, acc.to(c.dtype.element_ty),
                 mask=(cm[:, None] < M) & (cn[None, :] < N))

    def run(A, B, C):
        M, K = A.shape
        N = B.shape[1]
        grid = lambda META: (triton.cdiv(M, META["BM"]) * triton.cdiv(N, META["BN"]),)
        matmul_kernel[grid](A, B, C, M, N, K, A.stride(0), A.stride(1),
                            B.stride(0), B.stride(1), C.stride(0), C.stride(1))
    return run


# --------------------------------------------------------------------------
# Benchmark
# --------------------------------------------------------------------------

SHAPES = [  # (M, N, K)
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (4096, 14336, 4096),
    (4096, 4096, 14336),
    (16, 4096, 4096),
    (128, 4096, 4096),
]
CHECK_SHAPES = [(1000, 1000, 1000), (1001, 999, 1003), (256, 384, 4096),
                (1, 1, 1), (4096, 4096, 4096)]


# --------------------------------------------------------------------------
# Hopper mode: our runtime (variant dispatch) vs cuBLAS vs Triton
# --------------------------------------------------------------------------

class CApiKernel:
    """Our kernel through the runtime's C API (ctypes), when the Python
    package cannot be built or imported on the GPU host."""

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

        class Arg(C.Structure):
            _fields_ = [("kind", C.c_int32), ("reserved", C.c_int32),
                        ("v", C.c_void_p)]

        self.DLTensor, self.Arg = DLTensor, Arg
        self.lib = C.CDLL(lib)
        self.lib.tile_kernel_load_file.argtypes = [C.c_char_p, C.c_char_p,
                                                   C.POINTER(C.c_void_p)]
        self.lib.tile_kernel_launch.argtypes = [C.c_void_p, C.c_void_p,
                                                C.c_int32, C.c_void_p,
                                                C.c_void_p]
        self.lib.tile_last_error.restype = C.c_char_p
        self.k = C.c_void_p()
        st = self.lib.tile_kernel_load_file(bundle.encode(), b"auto",
                                            C.byref(self.k))
        if st:
            raise RuntimeError(self.lib.tile_last_error().decode())
        self.cache = {}

    def _tensor(self, t, keep):
        import torch
        C = self.C
        shape = (C.c_int64 * t.dim())(*t.shape)
        strides = (C.c_int64 * t.dim())(*t.stride())
        keep += [shape, strides]
        code = 4 if t.dtype == torch.bfloat16 else 2
        return self.DLTensor(t.data_ptr(), (2, t.device.index or 0), t.dim(),
                             (code, 16, 1), shape, strides, 0)

    def __call__(self, A, B, C_):
        import torch
        key = tuple((t.data_ptr(), tuple(t.shape)) for t in (A, B, C_))
        entry = self.cache.get(key)
        if entry is None:
            keep = []
            dl = [self._tensor(t, keep) for t in (A, B, C_)]
            args = (self.Arg * 3)(*[self.Arg(1, 0, self.C.addressof(d))
                                    for d in dl])
            entry = (args, dl, keep)
            self.cache[key] = entry
        st = self.lib.tile_kernel_launch(
            self.k, self.C.addressof(entry[0]), 3,
            torch.cuda.current_stream().cuda_stream, None)
        if st:
            raise RuntimeError(self.lib.tile_last_error().decode())


def load_ours(bundle):
    """(launcher name, fn(A, B, C)) over our runtime: the tile package, else
    the C API through ctypes."""
    try:
        import tile
        k = tile.load(bundle)
        return "tile", (lambda A, B, C: k(A, B, C))
    except Exception as e:  # noqa
        lib = os.environ.get("TILE_RUNTIME_LIB")
        if not lib:
            raise RuntimeError(f"tile package unavailable ({e}) and no "
                               "TILE_RUNTIME_LIB")
        return "capi", CApiKernel(bundle, lib)


def main_hopper(args):
    import torch
    from triton.testing import do_bench
    t_start = time.time()
    log_lines = []

    def log(s=""):
        print(s, flush=True)
        log_lines.append(s)

    manifest = json.load(open(os.path.join(args.hopper, "hopper.json")))
    dev = torch.device("cuda")
    log(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}")
    triton_run = None
    if not args.no_triton:
        try:
            triton_run = make_triton()
        except Exception as e:  # noqa
            log(f"triton unavailable: {e}")

    def bench(fn):
        return do_bench(fn, warmup=10, rep=60)  # ms

    def rel_err(C, A, B, ref=None):
        if ref is None:
            ref = A.float() @ B.float()
        err = ((C.float() - ref).abs().max() /
               ref.abs().max().clamp_min(1e-6)).item()
        return err if err == err else float("inf")

    shapes = [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 4096, 14336),
              (16, 4096, 4096)]
    if args.quick:
        shapes = shapes[:1]
    if args.shapes:
        shapes = [tuple(int(x) for x in sh.split("x"))
                  for sh in args.shapes.split(",")]
    # (1999, 3000, 520): 192 tiles of 128x256 (more than one per SM for a
    # persistent variant) with M, N and K tails; (3001, 6000, 136): 576
    # tiles of 128x256, above the default's max_tiles 528 (the second
    # variant), with tails.
    check_shapes = [(1000, 1000, 1000), (1001, 999, 1003), (256, 384, 4096),
                    (1, 8, 8), (300, 264, 200), (1999, 3000, 520),
                    (3001, 6000, 136)]
    results = {"shapes": [], "kernels": []}
    for dt in ("bf16", "f16"):
        tdt = torch.bfloat16 if dt == "bf16" else torch.float16
        kernels = []
        for v in [m for m in manifest if m["dtype"] == dt and
                  (not args.kernels or
                   m["name"].rsplit("_", 1)[0] in args.kernels.split(","))]:
            bundle = os.path.join(args.hopper, v["name"] + ".tileb")
            try:
                lname, fn = load_ours(bundle)
                # The generic kernel of the same bundle: first launch with
                # variants disabled (the choice is made at module load).
                _, gfn = load_ours(bundle)
                os.environ["TILE_DISABLE_VARIANTS"] = "1"
                try:
                    A = torch.randn(64, 64, device=dev).to(tdt)
                    B = torch.randn(64, 64, device=dev).to(tdt)
                    C = torch.empty(64, 64, device=dev, dtype=tdt)
                    gfn(A, B, C)
                    torch.cuda.synchronize()
                finally:
                    del os.environ["TILE_DISABLE_VARIANTS"]
                worst, gworst = 0.0, 0.0
                for (M, N, K) in check_shapes:
                    A = torch.randn(M, K, device=dev).to(tdt)
                    B = torch.randn(K, N, device=dev).to(tdt)
                    for f, which in ((fn, "v"), (gfn, "g")):
                        C = torch.full((M, N), float("nan"), device=dev,
                                       dtype=tdt)
                        f(A, B, C)
                        torch.cuda.synchronize()
                        e = rel_err(C, A, B)
                        if which == "v":
                            worst = max(worst, e)
                        else:
                            gworst = max(gworst, e)
                ok = worst < 2e-2
                log(f"{v['name']}: launcher {lname}, tail-shape check "
                    f"max rel err {worst:.2e}{'' if ok else '  FAILED'} "
                    f"(generic kernel {gworst:.2e}"
                    f"{'' if gworst < 2e-2 else '  FAILED'})")
                if ok:
                    kernels.append((v, fn, gfn if gworst < 2e-2 else None))
            except Exception as e:  # noqa
                log(f"{v['name']}: FAILED to load/run: {type(e).__name__}: {e}")
        names = [v["name"].rsplit("_", 1)[0] for v, _, _ in kernels]
        log(f"\n[{dt}] TFLOP/s (MxNxK); tile kernels through the runtime "
            f"(sm_90a variant active): {', '.join(names)}")
        hdr = (f"{'shape':18s} {'cuBLAS':>7s} {'Triton':>7s} " +
               " ".join(f"{n[:16]:>16s}" for n in names) +
               f" {'best/cuBLAS':>11s} {'best/Triton':>11s}")
        log(hdr)
        for (M, N, K) in shapes:
            A = torch.randn(M, K, device=dev).to(tdt)
            B = torch.randn(K, N, device=dev).to(tdt)
            C = torch.empty(M, N, device=dev, dtype=tdt)
            f = 2.0 * M * N * K
            cub = f / bench(lambda: torch.matmul(A, B, out=C)) / 1e9
            tri = float("nan")
            if triton_run:
                try:
                    C2 = torch.empty_like(C)
                    triton_run(A, B, C2)
                    tri = f / bench(lambda: triton_run(A, B, C2)) / 1e9
                except Exception as e:  # noqa
                    log(f"triton failed: {e}")
            row, best = [], 0.0
            ref = A.float() @ B.float()
            for v, fn, _ in kernels:
                C.fill_(float("nan"))
                fn(A, B, C)
                torch.cuda.synchronize()
                e = rel_err(C, A, B, ref)
                if e >= 2e-2:
                    row.append(f"{'BAD ' + format(e, '.1e'):>16s}")
                    continue
                tf = f / bench(lambda: fn(A, B, C)) / 1e9
                best = max(best, tf)
                row.append(f"{tf:16.1f}")
                results["kernels"].append(dict(dtype=dt, kernel=v["name"],
                                               M=M, N=N, K=K, tflops=tf,
                                               rel_err=e))
            results["shapes"].append(dict(dtype=dt, M=M, N=N, K=K, cublas=cub,
                                          triton=tri, best=best))
            log(f"{f'{M}x{N}x{K}':18s} {cub:7.1f} {tri:7.1f} " + " ".join(row)
                + f" {best / cub:10.2f}x {best / tri:10.2f}x")
        # The generic (mma.sync) kernel of the same bundles, for reference.
        M = N = K = 4096
        A = torch.randn(M, K, device=dev).to(tdt)
        B = torch.randn(K, N, device=dev).to(tdt)
        C = torch.empty(M, N, device=dev, dtype=tdt)
        for v, _, gfn in kernels:
            if gfn is None or args.no_generic:
                continue
            tf = 2.0 * M * N * K / bench(lambda: gfn(A, B, C)) / 1e9
            log(f"  generic kernel (TILE_DISABLE_VARIANTS=1) {v['name']}: "
                f"{tf:.1f} TFLOP/s at 4096^3")
            results["kernels"].append(dict(dtype=dt, kernel=v["name"] +
                                           ":generic", M=M, N=N, K=K,
                                           tflops=tf))
    log(f"\nwall {time.time() - t_start:.0f} s")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "hopper_results.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(args.out, "hopper_log.txt"), "w") as f:
        f.write("\n".join(log_lines) + "\n")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default=os.path.join(os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), ".bench"))
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--print-metadata", metavar="BUNDLE")
    ap.add_argument("--quick", action="store_true", help="4096^3 only")
    ap.add_argument("--top", type=int, default=3,
                    help="variants timed per shape (best at 4096^3)")
    ap.add_argument("--no-triton", action="store_true")
    ap.add_argument("--shapes", metavar="MxNxK,...",
                    help="--hopper: the timed shapes (default: 4 shapes)")
    ap.add_argument("--kernels", metavar="NAME,...",
                    help="--hopper: only these manifest kernels (names "
                         "without the dtype suffix)")
    ap.add_argument("--no-generic", action="store_true",
                    help="--hopper: skip timing the generic kernels")
    ap.add_argument("--hopper", metavar="DIR",
                    help="sm_90a bundles + hopper.json (make_kernels.py "
                         "--hopper): our runtime vs cuBLAS vs Triton")
    args = ap.parse_args()
    if args.print_metadata:
        print(json.dumps(bundle_metadata(args.print_metadata)))
        return 0
    if args.hopper:
        return main_hopper(args)

    import torch
    from triton.testing import do_bench
    t_start = time.time()
    log_lines = []

    def log(s=""):
        print(s, flush=True)
        log_lines.append(s)

    manifest = json.load(open(os.path.join(args.bench, "manifest.json")))
    dev = torch.device("cuda")
    log(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}")
    triton_run = None
    if not args.no_triton:
        try:
            triton_run = make_triton()
        except Exception as e:  # noqa
            log(f"triton unavailable: {e}")

    def flops(M, N, K):
        return 2.0 * M * N * K

    def bench(fn):
        return do_bench(fn, warmup=10, rep=60)  # ms

    results = {"variants": [], "shapes": []}
    shapes = SHAPES[:1] if args.quick else SHAPES
    for dt in ("bf16", "f16"):
        tdt = torch.bfloat16 if dt == "bf16" else torch.float16
        # ---- load + correctness of every variant
        kernels = {}
        for v in [m for m in manifest if m["dtype"] == dt and
                  (not args.kernels or
                   m["name"].rsplit("_", 1)[0] in args.kernels.split(","))]:
            bundle = os.path.join(args.bench, v["name"] + ".tileb")
            cubin = os.path.join(args.bench, v["name"] + ".cubin")
            meta = bundle_metadata(bundle)
            launchers = []
            try:
                launchers.append(("tile", tile_package_kernel(bundle)))
            except Exception:
                pass
            launchers.append(("cupy", CupyKernel(cubin, meta)))
            chosen, errors = None, []
            for lname, fn in launchers:
                try:
                    worst = 0.0
                    for (M, N, K) in CHECK_SHAPES:
                        A = torch.randn(M, K, device=dev).to(tdt)
                        B = torch.randn(K, N, device=dev).to(tdt)
                        C = torch.full((M, N), float("nan"), device=dev, dtype=tdt)
                        fn(A, B, C)
                        torch.cuda.synchronize()
                        ref = A.float() @ B.float()
                        err = ((C.float() - ref).abs().max() /
                               ref.abs().max().clamp_min(1e-6)).item()
                        worst = max(worst, err if err == err else float("inf"))
                    if worst < 2e-2:
                        chosen = (lname, fn)
                        break
                    errors.append(f"{lname}: max rel err {worst:.3g}")
                except Exception as e:  # noqa
                    errors.append(f"{lname}: {type(e).__name__}: {e}")
            if not chosen:
                log(f"{v['name']}: FAILED correctness ({'; '.join(errors)})")
                continue
            kernels[v["name"]] = (v, chosen)
        # ---- variants at 4096^3
        M = N = K = 4096
        A = torch.randn(M, K, device=dev).to(tdt)
        B = torch.randn(K, N, device=dev).to(tdt)
        C = torch.empty(M, N, device=dev, dtype=tdt)
        t_cublas = bench(lambda: torch.matmul(A, B, out=C))
        cub = flops(M, N, K) / t_cublas / 1e9
        log(f"\n[{dt}] variants at 4096^3 (cuBLAS {cub:.0f} TFLOP/s)")
        log(f"{'variant':40s} {'launch':6s} {'regs':>4s} {'smem':>6s} {'TFLOP/s':>8s} {'%cuBLAS':>8s}")
        scored = []
        for name, (v, (lname, fn)) in kernels.items():
            try:
                t = bench(lambda: fn(A, B, C))
            except Exception as e:  # noqa
                log(f"{name}: {e}")
                continue
            tf = flops(M, N, K) / t / 1e9
            scored.append((tf, name))
            results["variants"].append(dict(name=name, dtype=dt, launcher=lname,
                                            tflops=tf, cublas=cub,
                                            registers=v["registers"],
                                            shared_bytes=v["shared_bytes"]))
            log(f"{name:40s} {lname:6s} {v['registers']:4d} {v['shared_bytes']:6d} {tf:8.1f} {100 * tf / cub:7.1f}%")
        scored.sort(reverse=True)
        top = [n for _, n in scored[:args.top]]
        # ---- shapes: best of the top variants vs cuBLAS vs Triton
        log(f"\n[{dt}] shapes (MxNxK): tile = best of {top}")
        log(f"{'shape':20s} {'cuBLAS':>8s} {'Triton':>8s} {'tile':>8s} {'tile/cuBLAS':>12s} {'tile/Triton':>12s}  best variant")
        for (M, N, K) in shapes:
            A = torch.randn(M, K, device=dev).to(tdt)
            B = torch.randn(K, N, device=dev).to(tdt)
            C = torch.empty(M, N, device=dev, dtype=tdt)
            f = flops(M, N, K)
            cub = f / bench(lambda: torch.matmul(A, B, out=C)) / 1e9
            tri = float("nan")
            if triton_run:
                try:
                    C2 = torch.empty_like(C)
                    triton_run(A, B, C2)
                    tri = f / bench(lambda: triton_run(A, B, C2)) / 1e9
                except Exception as e:  # noqa
                    log(f"triton failed: {e}")
            best, best_name = 0.0, "-"
            for name in top:
                fn = kernels[name][1][1]
                tf = f / bench(lambda: fn(A, B, C)) / 1e9
                if tf > best:
                    best, best_name = tf, name
            results["shapes"].append(dict(dtype=dt, M=M, N=N, K=K, cublas=cub,
                                          triton=tri, tile=best,
                                          variant=best_name))
            log(f"{f'{M}x{N}x{K}':20s} {cub:8.1f} {tri:8.1f} {best:8.1f} {100 * best / cub:11.1f}% {100 * best / tri:11.1f}%  {best_name}")
    log(f"\nwall {time.time() - t_start:.0f} s")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "gemm_results.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(args.out, "gemm_log.txt"), "w") as f:
        f.write("\n".join(log_lines) + "\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:
        traceback.print_exc()
        sys.exit(1)

#!/usr/bin/env python3
"""Shape sweep: tile vs cuBLAS / torch over many GEMM shapes and memory-bound
kernels, each result checked before it is timed (issue "no performance
cliffs"; figures in docs/performance.md).

Two steps, on two machines (docs/gpu-testing.md):

    utils/bench/sweep.py compile [--tilec build/bin/tilec] [--out .sweep]
                                 [--only mem|gemm|RE]
        here (tilec): writes OUT/NAME.mlir, OUT/NAME.tileb (--target=cuda
        --chip=sm_90a) and OUT/manifest.json;
    python3 utils/bench/sweep.py run [--dir .sweep] [--quick] [--only mem|gemm|RE]
        on the GPU host with the `tile` package built (utils/bench/sweep.sh
        builds it from .gpu and runs this).

--only mem: the memory-bound kernels only (softmax, rmsnorm, reduce_rows,
transpose, elementwise_add); --only gemm: the GEMMs only; anything else is
a regular expression searched in the kernel names.

Kernels, all the programs a user writes once (no per-shape tuning):
  gemm_f16 / gemm_bf16   examples/gemm.mlir (128x128x32 tiles, 3 stages)
                         and its bf16 twin: the runtime picks the variant;
  linear_f16 / _bf16     examples/linear.mlir, Y = X W^T + bias with W
                         stored N x K (torch's nn.Linear layout);
  bmm_nn / bmm_nt /      test/E2E/kernels/bmm.mlir.in: batched 128x128 tiles,
  bmm_bf16_nn            C[b] = 0.5 A[b] B[b] with B stored BxKxN (nn) or
                         BxNxK (nt, attention's Q K^T);
  batched_gemm           examples/batched_gemm.mlir (128x128 tiles, f16);
  gemm_tMxN_f16 / _bf16  utils/bench/sweep_kernels/gemm_tile.mlir.in: the
                         GEMM with the user's tile MxN other than 128x128
                         (64x64, 64x128, 128x64, 256x128; K steps of 32), group
                         "tiles" (TILE_SHAPES), against torch.matmul;
  softmax_N, rmsnorm_N   utils/bench/sweep_kernels/*.mlir.in, f32, one
                         program per static row length N;
  reduce_rows            examples/reduce_rows.mlir (f32, any M, N; 4 rows
                         per block, 4x1024 column chunks);
  transpose              examples/transpose.mlir (f32, any M, N; 64x64
                         tiles staged in shared memory);
  elementwise_add        examples/elementwise_add.mlir (f32, any N);
  user_layer_norm /      utils/bench/sweep_kernels/user_kernels.py: kernels
  user_add_rms_norm /    written in Python as a user writes them from
  user_row_argmax /      docs/python.md (two-pass bf16 norms, an argmax,
  user_cross_entropy     a cross-entropy with an online max), compiled
                         through the `tile` package of tilec's build,
                         groups u_layernorm, u_addrms, u_argmax, u_xent.
References: torch.matmul (cuBLAS), F.linear (cuBLAS), torch.baddbmm with
alpha 0.5 / torch.bmm (cuBLAS), torch.softmax, torch.nn.functional
.rms_norm, X.sum(1), X.t().contiguous(), A + B, F.layer_norm, rms_norm(X + R),
X.argmax(1), F.cross_entropy(reduction="none"). Memory-bound rows also give
GB/s and the fraction of the device-to-device copy bandwidth measured in the
same run (torch copy_ of 1 GiB), and of a copy moving the case's own bytes
(same timing; at tens of MiB the launch and the L2 flush cost a copy too).

Output: one line per case (ms, ratio = reference time / tile time, so > 1
means tile is faster), then per group the geometric mean and the worst
ratio. A case whose result is wrong prints FAIL and counts as ratio 0.

Timing: each case is timed in --rounds rounds (default 3; tile first in
even rounds, the reference first in odd ones) and reports the median time
of each side and the median of the rounds' ratios (so the printed ratio
need not equal the printed times' quotient). The H200's clock drifts
under sustained tensor-core load (power), by up to 10% between two
timings a second apart: ratios of neighbouring timings cancel most of
that, one timing of each does not.
"""
import argparse, json, math, os, re, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KDIR = os.path.join(ROOT, "utils", "bench", "sweep_kernels")

# (M, N, K) GEMM shapes: aligned, odd pitches, primes, skinny, tall, small,
# K-heavy, wide; each run in f16 and bf16.
GEMM_SHAPES = [
    (4096, 4096, 4096), (8192, 8192, 8192), (2048, 2048, 2048),
    (1024, 1024, 1024), (1000, 1000, 1000), (512, 512, 512), (256, 256, 256),
    (128, 128, 128),
    (4097, 4095, 4100), (333, 777, 1111), (1001, 999, 1003),
    (2049, 2047, 2051), (3000, 3001, 2999), (1009, 2003, 3001),
    (127, 131, 137), (4093, 4091, 4099),
    (1, 4096, 4096), (16, 4096, 4096), (64, 4096, 4096), (128, 4096, 4096),
    (4096, 64, 4096), (4096, 16, 4096),
    (16384, 1024, 1024), (65536, 256, 256), (32768, 512, 128),
    (512, 512, 16384), (1024, 1024, 32768), (256, 256, 65536),
    (1024, 16384, 1024), (8192, 3072, 768), (8192, 768, 3072),
    (4096, 11008, 4096), (4096, 4096, 11008),
]
# Linear layers (examples/linear.mlir: Y = X W^T + bias, W stored N x K as
# torch's nn.Linear keeps it), (M, N, K) = (tokens, out, in): LLM-like
# projections at several token counts, odd and small shapes.
LINEAR_SHAPES = [
    (4096, 4096, 4096), (8192, 11008, 4096), (8192, 4096, 11008),
    (2048, 14336, 4096), (1, 4096, 4096), (16, 11008, 4096),
    (64, 4096, 4096), (128, 4096, 4096), (1000, 1000, 1000),
    (4097, 4095, 4100), (333, 777, 1111), (127, 131, 137),
    (512, 512, 16384), (16384, 1024, 1024), (8192, 768, 3072),
]
# Batched GEMMs (batch, M, N, K): attention-like score and value products
# (small K or N per head), LLM-like batches of projections, odd shapes.
BMM_SHAPES = [
    (32, 1024, 1024, 64), (32, 1024, 64, 1024), (64, 512, 512, 128),
    (16, 1024, 1024, 1024), (8, 2048, 2048, 2048), (4, 4096, 4096, 512),
    (128, 256, 256, 256), (12, 1000, 1000, 100), (3, 1000, 999, 1001),
    (2, 4096, 4096, 4096),
]
# User tile shapes other than examples/gemm.mlir's (TM, TN), and the GEMM
# shapes they run on (aligned, odd, skinny, small).
USER_TILES = [(64, 64), (64, 128), (128, 64), (256, 128)]
TILE_SHAPES = [
    (4096, 4096, 4096), (8192, 8192, 8192), (2048, 2048, 2048),
    (1024, 1024, 1024), (1000, 1000, 1000), (512, 512, 512),
    (4097, 4095, 4100), (333, 777, 1111), (3000, 3001, 2999),
    (16, 4096, 4096), (128, 4096, 4096), (16384, 1024, 1024),
    (8192, 3072, 768), (4096, 11008, 4096),
]
QUICK_GEMM = [(4096, 4096, 4096), (4097, 4095, 4100), (333, 777, 1111),
              (1000, 1000, 1000), (16, 4096, 4096), (512, 512, 16384)]

# Memory-bound programs: name -> (template or example, parameters).
SOFTMAX_N = (1024, 4096, 8192)
RMSNORM_N = (4096, 8192)


def softmax_params(n):
    # examples/softmax.mlir's rule: about 32 elements per thread (2 rows of
    # 1024 over 64 threads), so that registers leave room for many blocks.
    t = 64 if n <= 1024 else 128
    r = max(1, 32 * t // n)
    return {"N": n, "R": r, "R1": r - 1, "T": t}


def rmsnorm_params(n):
    r = max(1, 8192 // n)
    return {"N": n, "R": r, "R1": r - 1, "T": 256, "INV_N": repr(1.0 / n)}


def kernel_sources(tilec):
    """name -> MLIR text."""
    src = {}
    gemm = open(os.path.join(ROOT, "examples", "gemm.mlir")).read()
    src["gemm_f16"] = gemm
    src["gemm_bf16"] = gemm.replace("xf16", "xbf16")
    linear = open(os.path.join(ROOT, "examples", "linear.mlir")).read()
    src["linear_f16"] = linear
    src["linear_bf16"] = linear.replace("xf16", "xbf16").replace(
        "f16 to f32", "bf16 to f32")
    tmpl = lambda n: open(os.path.join(KDIR, n + ".mlir.in")).read()
    for n in SOFTMAX_N:
        src[f"softmax_{n}"] = tmpl("softmax").format(**softmax_params(n))
    for n in RMSNORM_N:
        src[f"rmsnorm_{n}"] = tmpl("rmsnorm").format(**rmsnorm_params(n))
    bmm = open(os.path.join(ROOT, "test", "E2E", "kernels", "bmm.mlir.in")).read()
    for name, dtype, tb in (("bmm_nn", "f16", False), ("bmm_nt", "f16", True),
                            ("bmm_bf16_nn", "bf16", False)):
        src[name] = bmm.format(
            IN=dtype, BDYN="?x?x?",
            BDIMS='"B", "N", "K"' if tb else '"B", "K", "N"',
            BSHAPE="128x16" if tb else "16x128",
            BIDX="%bz, %n0, %k0" if tb else "%bz, %k0, %n0",
            BDROP=" drop_dims [0]", GEMM_ATTRS="transpose_b" if tb else "",
            EXTRA_Z=0)
    gt = tmpl("gemm_tile")
    for (tm, tn) in USER_TILES:
        for dtype in ("f16", "bf16"):
            src[f"gemm_t{tm}x{tn}_{dtype}"] = gt.format(TM=tm, TN=tn, KT=32,
                                                        IN=dtype)
    src["batched_gemm"] = open(os.path.join(ROOT, "examples", "batched_gemm.mlir")).read()
    src["transpose"] = open(os.path.join(ROOT, "examples", "transpose.mlir")).read()
    src["reduce_rows"] = open(os.path.join(ROOT, "examples", "reduce_rows.mlir")).read()
    src["elementwise_add"] = open(os.path.join(ROOT, "examples", "elementwise_add.mlir")).read()
    src.update(user_kernel_sources(tilec))
    return src


def user_kernel_sources(tilec):
    """sweep_kernels/user_kernels.py through the Python front end (the
    `tile` package of tilec's build, else the installed one); none when it
    cannot be imported (a message says so)."""
    pkg = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(tilec))),
                       "python_packages")
    sys.path[:0] = [p for p in (pkg, KDIR) if p not in sys.path]
    try:
        import user_kernels
    except ImportError as e:
        print(f"user kernels skipped: the tile package cannot be imported ({e})",
              file=sys.stderr)
        return {}
    return user_kernels.sources()


def selected(name, only):
    """Whether kernel `name` is in the --only selection."""
    if not only:
        return True
    gemm = name.startswith(("gemm_", "linear_", "bmm_", "batched_gemm"))
    if only == "mem":
        return not gemm
    if only == "gemm":
        return gemm
    return re.search(only, name) is not None


def cmd_compile(args):
    os.makedirs(args.out, exist_ok=True)
    manifest = {"chip": args.chip, "kernels": {}}
    for name, text in kernel_sources(args.tilec).items():
        if not selected(name, args.only):
            continue
        mlir = os.path.join(args.out, name + ".mlir")
        with open(mlir, "w") as f:
            f.write(text)
        bundle = os.path.join(args.out, name + ".tileb")
        t0 = time.time()
        r = subprocess.run([args.tilec, mlir, "--target=cuda", f"--chip={args.chip}",
                            "-o", bundle], capture_output=True, text=True)
        dt = time.time() - t0
        if r.returncode != 0:
            print(f"{name}: tilec failed:\n{r.stderr}", file=sys.stderr)
            return 1
        manifest["kernels"][name] = {"bundle": name + ".tileb", "compile_s": round(dt, 3)}
        print(f"{name:16s} compiled in {dt:.2f} s")
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return 0


# ---------------------------------------------------------------------------
# GPU side
# ---------------------------------------------------------------------------

def geomean(xs):
    xs = [x for x in xs]
    if not xs or min(xs) <= 0:
        return 0.0
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def cmd_run(args):
    import torch
    import tile
    try:
        from triton.testing import do_bench
    except ImportError:  # events, L2 not flushed
        def do_bench(fn, warmup=10, rep=50):
            for _ in range(5):
                fn()
            torch.cuda.synchronize()
            s, e = torch.cuda.Event(True), torch.cuda.Event(True)
            s.record()
            for _ in range(20):
                fn()
            e.record()
            torch.cuda.synchronize()
            return s.elapsed_time(e) / 20

    def bench(fn):
        return do_bench(fn, warmup=10, rep=args.rep)

    def paired(fn_tile, fn_ref):
        """(median tile ms, median reference ms, median ratio ref / tile)
        over args.rounds rounds, tile first in even rounds and the
        reference first in odd ones (a steady drift then tilts the rounds'
        ratios both ways). A timing that is not a positive number raises."""
        tt, tr = [], []
        for r in range(max(1, args.rounds)):
            if r % 2 == 0:
                tt.append(bench(fn_tile))
                tr.append(bench(fn_ref))
            else:
                tr.append(bench(fn_ref))
                tt.append(bench(fn_tile))
        for t in tt + tr:
            if not (math.isfinite(t) and t > 0):
                raise RuntimeError(f"timing returned {t} ms")
        return (statistics.median(tt), statistics.median(tr),
                statistics.median([r / t for t, r in zip(tt, tr)]))

    manifest = json.load(open(os.path.join(args.dir, "manifest.json")))
    kernels = {}
    for name, k in manifest["kernels"].items():
        if not selected(name, args.only):
            continue
        kernels[name] = tile.load(os.path.join(args.dir, k["bundle"]))
    dev = torch.device("cuda")
    torch.manual_seed(0)
    props = torch.cuda.get_device_properties(0)
    print(f"# {props.name}, {props.multi_processor_count} SMs, torch {torch.__version__}, "
          f"tile {tile.__version__}")
    rows = {}  # group -> [(label, ratio)]

    def report(group, label, t_tile, t_ref, ok, extra, ratio):
        ratio = ratio if ok else 0.0
        rows.setdefault(group, []).append((label, ratio))
        status = "" if ok else "  FAIL"
        print(f"{group:10s} {label:34s} tile {t_tile:9.4f} ms  ref {t_ref:9.4f} ms  "
              f"ratio {ratio:5.2f}{extra}{status}", flush=True)

    # -- copy bandwidth (the memory-bound roofline of this run) --
    big = torch.empty(1 << 28, dtype=torch.float32, device=dev)
    big2 = torch.empty_like(big)
    t = bench(lambda: big2.copy_(big))
    copy_gbs = 2 * big.numel() * 4 / t / 1e6
    print(f"# device-to-device copy of 1 GiB: {copy_gbs:.0f} GB/s")
    del big, big2

    def gemm_case(group, label, k, M, N, K, dt):
        """C = A B of random (M, K) and (K, N) `dt` tensors with kernel `k`
        against torch.matmul (cuBLAS), checked first."""
        A = torch.randn(M, K, dtype=dt, device=dev)
        B = torch.randn(K, N, dtype=dt, device=dev)
        C = torch.empty(M, N, dtype=dt, device=dev)
        try:
            k(A, B, C)
            ref = A.float() @ B.float()
            err = (C.float() - ref).abs().max().item() / max(ref.abs().max().item(), 1e-6)
            ok = err < 2e-2
        except Exception as e:  # noqa
            print(f"{group} {label}: {e}")
            ok = False
        ref_fn = lambda: torch.matmul(A, B, out=C)
        if ok:
            t_tile, t_ref, ratio = paired(lambda: k(A, B, C), ref_fn)
        else:
            t_tile, t_ref, ratio = float("nan"), bench(ref_fn), 0.0
        tf = 2 * M * N * K / (t_tile * 1e9) if ok else 0
        tr = 2 * M * N * K / (t_ref * 1e9)
        report(group, label, t_tile, t_ref, ok, f"  ({tf:6.1f} vs {tr:6.1f} TFLOP/s)",
               ratio)

    # -- GEMM --
    shapes = QUICK_GEMM if args.quick else GEMM_SHAPES
    for dt_name, dt in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        k = kernels.get(f"gemm_{dt_name}")
        if k is None:
            continue
        for (M, N, K) in shapes:
            gemm_case("gemm", f"{dt_name} {M}x{N}x{K}", k, M, N, K, dt)

    # -- the GEMM with other user tile shapes, against torch.matmul --
    tile_shapes = QUICK_GEMM if args.quick else TILE_SHAPES
    for (tm, tn) in USER_TILES:
        for dt_name, dt in (("f16", torch.float16), ("bf16", torch.bfloat16)):
            k = kernels.get(f"gemm_t{tm}x{tn}_{dt_name}")
            if k is None:
                continue
            for (M, N, K) in tile_shapes:
                gemm_case("tiles", f"{tm}x{tn} {dt_name} {M}x{N}x{K}", k, M, N,
                          K, dt)

    # -- linear layers: Y = X W^T + bias against torch's F.linear (cuBLAS) --
    lin_shapes = QUICK_GEMM if args.quick else LINEAR_SHAPES
    for dt_name, dt in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        k = kernels.get(f"linear_{dt_name}")
        if k is None:
            continue
        for (M, N, K) in lin_shapes:
            X = torch.randn(M, K, dtype=dt, device=dev)
            W = torch.randn(N, K, dtype=dt, device=dev)
            bias = torch.randn(N, dtype=dt, device=dev)
            Y = torch.empty(M, N, dtype=dt, device=dev)
            label = f"{dt_name} {M}x{N}x{K}"
            try:
                k(X, W, bias, Y)
                ref = X.float() @ W.float().t() + bias.float()
                err = (Y.float() - ref).abs().max().item() / max(ref.abs().max().item(), 1e-6)
                ok = err < 2e-2
            except Exception as e:  # noqa
                print(f"linear {label}: {e}")
                ok = False
            ref_fn = lambda: torch.nn.functional.linear(X, W, bias)
            if ok:
                t_tile, t_ref, ratio = paired(lambda: k(X, W, bias, Y), ref_fn)
            else:
                t_tile, t_ref, ratio = float("nan"), bench(ref_fn), 0.0
            tf = 2 * M * N * K / (t_tile * 1e9) if ok else 0
            tr = 2 * M * N * K / (t_ref * 1e9)
            report("linear", label, t_tile, t_ref, ok,
                   f"  ({tf:6.1f} vs {tr:6.1f} TFLOP/s)", ratio)

    # -- batched GEMMs against torch.baddbmm (alpha 0.5, one cuBLAS call)
    # and, for the example (no scale), torch.bmm --
    bmm_shapes = BMM_SHAPES[:4] if args.quick else BMM_SHAPES
    for name in ("bmm_nn", "bmm_nt", "bmm_bf16_nn", "batched_gemm"):
        k = kernels.get(name)
        if k is None:
            continue
        dt = torch.bfloat16 if "bf16" in name else torch.float16
        tb = name == "bmm_nt"
        alpha = 1.0 if name == "batched_gemm" else 0.5
        for (Bt, M, N, K) in bmm_shapes:
            A = torch.randn(Bt, M, K, dtype=dt, device=dev)
            B = torch.randn(Bt, N, K, dtype=dt, device=dev) if tb else \
                torch.randn(Bt, K, N, dtype=dt, device=dev)
            C = torch.empty(Bt, M, N, dtype=dt, device=dev)
            Bop = B.transpose(1, 2) if tb else B
            label = f"{name} {Bt}x{M}x{N}x{K}"
            try:
                k(A, B, C)
                ref = alpha * (A.float() @ Bop.float())
                err = (C.float() - ref).abs().max().item() / max(ref.abs().max().item(), 1e-6)
                ok = err < 2e-2
            except Exception as e:  # noqa
                print(f"bmm {label}: {e}")
                ok = False
            if alpha == 1.0:
                ref_fn = lambda: torch.bmm(A, Bop, out=C)
            else:
                ref_fn = lambda: torch.baddbmm(C, A, Bop, beta=0, alpha=alpha, out=C)
            if ok:
                t_tile, t_ref, ratio = paired(lambda: k(A, B, C), ref_fn)
            else:
                t_tile, t_ref, ratio = float("nan"), bench(ref_fn), 0.0
            fl = 2 * Bt * M * N * K
            tf = fl / (t_tile * 1e9) if ok else 0
            tr = fl / (t_ref * 1e9)
            report("bmm", label, t_tile, t_ref, ok,
                   f"  ({tf:6.1f} vs {tr:6.1f} TFLOP/s)", ratio)

    # -- memory-bound --
    def mem(group, label, fn_tile, fn_ref, check, nbytes):
        try:
            fn_tile()
            ok = check()
        except Exception as e:  # noqa
            print(f"{group} {label}: {e}")
            ok = False
        if ok:
            t_tile, t_ref, ratio = paired(fn_tile, fn_ref)
        else:
            t_tile, t_ref, ratio = float("nan"), bench(fn_ref), 0.0
        gbs = nbytes / t_tile / 1e6 if ok else 0
        report(group, label, t_tile, t_ref, ok,
               f"  ({gbs:6.0f} GB/s, {100 * gbs / copy_gbs:4.0f}% of copy, "
               f"{100 * gbs / same_size_copy_gbs(nbytes):4.0f}% of a copy this size)",
               ratio)
        return gbs

    # A copy moving the case's bytes (half read, half written), timed the
    # same way (do_bench flushes L2 by zeroing 256 MiB before each call,
    # whose dirty lines the next kernel writes back): the fixed costs of a
    # launch and that flush are a visible share at tens of MiB, so even a
    # copy stays under the 1 GiB copy's rate there (docs/performance.md).
    copy_at = {}

    def same_size_copy_gbs(nbytes):
        n = max(1, nbytes // 8)  # floats per side
        if n not in copy_at:
            a = torch.empty(n, dtype=torch.float32, device=dev)
            b = torch.empty_like(a)
            copy_at[n] = 2 * n * 4 / statistics.median(
                [bench(lambda: b.copy_(a)) for _ in range(3)]) / 1e6
            del a, b
        return copy_at[n]

    close = lambda a, b, tol=1e-4: torch.allclose(a, b, rtol=tol, atol=tol)
    ms = (1000, 4097, 32768) if not args.quick else (1000, 32768)
    for n in SOFTMAX_N:
        k = kernels.get(f"softmax_{n}")
        if k is None:
            continue
        for m in ms:
            X = torch.randn(m, n, device=dev)
            Y = torch.empty_like(X)
            mem("softmax", f"{m}x{n}", lambda: k(X, Y), lambda: torch.softmax(X, 1),
                lambda: close(Y, torch.softmax(X, 1), 1e-5), 2 * m * n * 4)
    for n in RMSNORM_N:
        k = kernels.get(f"rmsnorm_{n}")
        if k is None:
            continue
        for m in ms:
            X = torch.randn(m, n, device=dev)
            W = torch.randn(n, device=dev)
            Y = torch.empty_like(X)
            ref = lambda: torch.nn.functional.rms_norm(X, (n,), W, 1e-6)
            mem("rmsnorm", f"{m}x{n}", lambda: k(X, W, Y), ref,
                lambda: close(Y, ref(), 1e-4), 2 * m * n * 4)
    k = kernels.get("reduce_rows")
    if k is not None:
        for (m, n) in ((1000, 1001), (4096, 4096), (16384, 8192), (65536, 1024), (1024, 65536)):
            X = torch.randn(m, n, device=dev)
            Y = torch.empty(m, device=dev)
            mem("reduce", f"{m}x{n}", lambda: k(X, Y), lambda: X.sum(1),
                lambda: close(Y, X.double().sum(1).float(), 1e-3), m * n * 4)
    k = kernels.get("transpose")
    if k is not None:
        for (m, n) in ((1000, 1001), (4096, 4096), (8192, 8192), (333, 20000)):
            X = torch.randn(m, n, device=dev)
            Y = torch.empty(n, m, device=dev)
            mem("transpose", f"{m}x{n}", lambda: k(X, Y), lambda: X.t().contiguous(),
                lambda: torch.equal(Y, X.t()), 2 * m * n * 4)
    k = kernels.get("elementwise_add")
    if k is not None:
        for n in (100003, 1 << 20, 1 << 24, 1 << 27):
            A = torch.randn(n, device=dev)
            B = torch.randn(n, device=dev)
            C = torch.empty(n, device=dev)
            mem("add", f"{n}", lambda: k(A, B, C), lambda: torch.add(A, B, out=C),
                lambda: torch.equal(C, A + B), 3 * n * 4)

    # Kernels written as a user writes them from docs/python.md
    # (sweep_kernels/user_kernels.py), bf16 norms against torch's.
    norm_shapes = ((1000, 3000), (4096, 4096), (4097, 4095), (16384, 4096),
                   (65536, 1024), (4096, 8192), (32768, 4096))
    if args.quick:
        norm_shapes = ((1000, 3000), (4097, 4095), (32768, 4096))
    bf = torch.bfloat16
    near = lambda a, b: torch.allclose(a.float(), b.float(), rtol=2e-2, atol=5e-2)
    k = kernels.get("user_layer_norm")
    if k is not None:
        for (m, n) in norm_shapes:
            X = torch.randn(m, n, device=dev, dtype=bf)
            W = torch.randn(n, device=dev, dtype=bf)
            B = torch.randn(n, device=dev, dtype=bf)
            Y = torch.empty_like(X)
            ref = lambda: torch.nn.functional.layer_norm(X, (n,), W, B, 1e-5)
            mem("u_layernorm", f"{m}x{n}", lambda: k(X, W, B, Y, 1e-5), ref,
                lambda: near(Y, ref()), 2 * m * n * 2)
    k = kernels.get("user_add_rms_norm")
    if k is not None:
        for (m, n) in norm_shapes:
            X = torch.randn(m, n, device=dev, dtype=bf)
            R = torch.randn(m, n, device=dev, dtype=bf)
            W = torch.randn(n, device=dev, dtype=bf)
            H = torch.empty_like(X)
            Y = torch.empty_like(X)
            ref = lambda: torch.nn.functional.rms_norm(X + R, (n,), W, 1e-6)
            mem("u_addrms", f"{m}x{n}", lambda: k(X, R, W, H, Y, 1e-6), ref,
                lambda: near(Y, ref()) and torch.equal(H, X + R), 4 * m * n * 2)
    k = kernels.get("user_row_argmax")
    if k is not None:
        for (m, n) in ((1000, 3000), (4096, 4096), (16384, 8192), (65536, 1024)):
            X = torch.randn(m, n, device=dev)
            I = torch.empty(m, device=dev, dtype=torch.int32)
            mem("u_argmax", f"{m}x{n}", lambda: k(X, I), lambda: X.argmax(1),
                lambda: torch.equal(I, X.argmax(1).to(torch.int32)), m * n * 4)

    k = kernels.get("user_cross_entropy")
    if k is not None:
        for (m, n) in ((1000, 32000), (4096, 32000), (4096, 50257), (16384, 32000),
                       (1024, 128256)):
            X = torch.randn(m, n, device=dev, dtype=bf) * 4
            L = torch.randint(0, n, (m,), device=dev, dtype=torch.int32)
            Loss = torch.empty(m, device=dev)
            ref = lambda: torch.nn.functional.cross_entropy(X, L.long(), reduction="none")
            # torch's bf16 result is rounded to bf16: check against f32 math.
            want = torch.nn.functional.cross_entropy(X.float(), L.long(), reduction="none")
            mem("u_xent", f"{m}x{n}", lambda: k(X, L, Loss), ref,
                lambda: torch.allclose(Loss, want, rtol=1e-4, atol=1e-3),
                m * n * 2)

    print("\n# summary (ratio = reference time / tile time)")
    allmem = []
    for group, rs in rows.items():
        ratios = [r for _, r in rs]
        worst = min(rs, key=lambda x: x[1])
        print(f"{group:10s} n={len(rs):3d}  geomean {geomean(ratios):5.2f}  "
              f"worst {worst[1]:5.2f} ({worst[0]})")
        if group not in ("gemm", "linear", "bmm", "tiles"):
            allmem += ratios
    if allmem:
        print(f"{'memory':10s} n={len(allmem):3d}  geomean {geomean(allmem):5.2f}  "
              f"worst {min(allmem):5.2f}")
    failed = sum(1 for rs in rows.values() for _, r in rs if r == 0)
    print(f"{failed} cases failed the correctness check")
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compile")
    c.add_argument("--tilec", default=os.path.join(ROOT, "build", "bin", "tilec"))
    c.add_argument("--out", default=os.path.join(ROOT, ".sweep"))
    c.add_argument("--chip", default="sm_90a")
    c.add_argument("--only", default="",
                   help="mem (memory-bound kernels), gemm, or a regex of kernel names")
    r = sub.add_parser("run")
    r.add_argument("--dir", default=os.path.join(ROOT, ".sweep"))
    r.add_argument("--quick", action="store_true")
    r.add_argument("--only", default="",
                   help="mem (memory-bound kernels), gemm, or a regex of kernel names")
    r.add_argument("--rep", type=int, default=40)
    r.add_argument("--rounds", type=int, default=3,
                   help="tile / reference timing rounds per case (median)")
    args = ap.parse_args()
    return cmd_compile(args) if args.cmd == "compile" else cmd_run(args)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The nvrtc backend next to ffi: examples/gemm.mlir and examples/softmax.mlir.

Runs on the GPU host (torch + the `tile` package built there, e.g. by
utils/gpu/run.sh; bundles compiled on the build host by utils/gpu/prepare.sh
into .gpu/examples/NAME.CHIP.tileb):

    python3 utils/bench/nvrtc.py [--examples .gpu/examples] [--chip sm_90a]
                                 [--out DIR] [--quick]

For each kernel, in this order:
  1. first load through nvrtc with an empty cache (TILE_CACHE_DIR is a fresh
     directory): tile.load + the first launch, which compiles the bundle's
     CUDA C++ with NVRTC for this device (the "first-load compile time");
  2. cached reload: a new tile.load of the same bundle + first launch (the
     cubin comes from the disk cache);
  3. ffi first load for reference (the bundle's cubin);
  4. correctness: nvrtc and ffi outputs against torch (float64 reference)
     and against each other;
  5. timing (CUDA events, median of --reps launches after warmup) of nvrtc,
     ffi running the same generic kernel (TILE_DISABLE_VARIANTS=1: the
     mma.sync kernel the CUDA C++ also holds), and ffi as shipped (on sm_90a
     GEMMs: the TMA/wgmma variant, which the CUDA C++ does not have).
The table gives the nvrtc/ffi ratio (the issue's target: within 10%).
Exit status 1 when a correctness check fails.
"""
import argparse
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def median_ms(fn, reps, warmup, torch):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def load_and_first_launch(tile, torch, path, backend, make_args):
    """Seconds for tile.load + the first launch (synchronized)."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    k = tile.load(path, execution_backend=backend)
    args = make_args()
    k(*args)
    torch.cuda.synchronize()
    return k, time.perf_counter() - t0


def cases(torch, quick):
    """(name, make_args(), reference(args), output index, flops or bytes)."""
    m = n = k = 2048 if quick else 4096
    rows = 8192 if quick else 32768

    def gemm_args():
        g = torch.Generator(device="cuda").manual_seed(0)
        a = torch.randn(m, k, device="cuda", dtype=torch.float16, generator=g)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16, generator=g)
        c = torch.empty(m, n, device="cuda", dtype=torch.float16)
        return a, b, c

    def softmax_args():
        g = torch.Generator(device="cuda").manual_seed(1)
        x = torch.randn(rows, 1024, device="cuda", generator=g)
        y = torch.empty_like(x)
        return x, y

    return [
        ("gemm", gemm_args, lambda a: a[0].double() @ a[1].double(), 2,
         f"{m}x{n}x{k} f16", lambda ms: f"{2 * m * n * k / ms / 1e9:.1f} TFLOP/s"),
        ("softmax", softmax_args,
         lambda a: torch.softmax(a[0].double(), dim=1), 1, f"{rows}x1024 f32",
         lambda ms: f"{2 * rows * 1024 * 4 / ms / 1e6:.0f} GB/s"),
    ]


def rel_err(out, ref):
    out = out.double()
    return ((out - ref).norm() / ref.norm()).item()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--examples", default=str(ROOT / ".gpu" / "examples"))
    p.add_argument("--chip", default="sm_90a")
    p.add_argument("--out", default=None)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--reps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=10)
    a = p.parse_args()

    import torch
    if not torch.cuda.is_available():
        print("nvrtc.py: no CUDA device", file=sys.stderr)
        return 2
    cache = tempfile.mkdtemp(prefix="tile-nvrtc-bench-")
    os.environ["TILE_CACHE_DIR"] = cache  # before the first nvrtc load
    import tile

    dev = torch.cuda.get_device_name()
    results, failed = [], False
    for name, make_args, reference, out_i, shape, rate in cases(torch, a.quick):
        path = pathlib.Path(a.examples) / f"{name}.{a.chip}.tileb"
        if not path.exists():
            print(f"skip {name}: {path} missing (utils/gpu/prepare.sh)")
            continue
        row = {"kernel": name, "shape": shape, "chip": a.chip, "device": dev}
        kn, row["nvrtc_first_load_s"] = load_and_first_launch(
            tile, torch, path, "nvrtc", make_args)
        _, row["nvrtc_cached_reload_s"] = load_and_first_launch(
            tile, torch, path, "nvrtc", make_args)
        _, row["ffi_first_load_s"] = load_and_first_launch(
            tile, torch, path, "ffi", make_args)
        row["cubins_cached"] = len(list(pathlib.Path(cache, "nvrtc").glob("*.cubin")))

        # Correctness first.
        args_n, args_f = make_args(), make_args()
        kf_shipped = tile.load(path, execution_backend="ffi")
        kn(*args_n)
        kf_shipped(*args_f)
        torch.cuda.synchronize()
        ref = reference(args_n)
        row["nvrtc_rel_err"] = rel_err(args_n[out_i], ref)
        row["ffi_rel_err"] = rel_err(args_f[out_i], ref)
        tol = 2e-3 if name == "gemm" else 1e-5
        ok = row["nvrtc_rel_err"] < tol and row["ffi_rel_err"] < tol
        row["correct"] = ok
        failed |= not ok

        # The generic kernel through ffi (no sm_90a variant), for the ratio.
        os.environ["TILE_DISABLE_VARIANTS"] = "1"
        kf_generic = tile.load(path, execution_backend="ffi")
        args_g = make_args()
        kf_generic(*args_g)  # the variant choice happens at the first launch
        torch.cuda.synchronize()
        del os.environ["TILE_DISABLE_VARIANTS"]
        row["nvrtc_vs_ffi_generic_equal"] = bool(
            torch.equal(args_g[out_i], args_n[out_i]))

        if ok:
            row["nvrtc_ms"] = median_ms(lambda: kn(*args_n), a.reps, a.warmup, torch)
            row["ffi_generic_ms"] = median_ms(lambda: kf_generic(*args_g), a.reps,
                                              a.warmup, torch)
            row["ffi_shipped_ms"] = median_ms(lambda: kf_shipped(*args_f), a.reps,
                                              a.warmup, torch)
            row["ratio_nvrtc_to_ffi_generic"] = row["nvrtc_ms"] / row["ffi_generic_ms"]
            row["nvrtc_rate"] = rate(row["nvrtc_ms"])
            row["ffi_generic_rate"] = rate(row["ffi_generic_ms"])
            row["ffi_shipped_rate"] = rate(row["ffi_shipped_ms"])
        results.append(row)

    print(f"\nnvrtc vs ffi on {dev} ({a.chip} bundles; NVRTC cache {cache})")
    hdr = (f"{'kernel':8s} {'shape':18s} {'first load':>10s} {'cached':>8s} "
           f"{'ffi load':>8s} {'nvrtc':>16s} {'ffi (generic)':>16s} "
           f"{'ratio':>6s} {'ffi (shipped)':>16s} ok")
    print(hdr)
    for r in results:
        if r["correct"]:
            t = (f"{r['nvrtc_ms']:7.3f} ms {r['nvrtc_rate']:>16s} "
                 f"{r['ffi_generic_ms']:7.3f} ms {r['ratio_nvrtc_to_ffi_generic']:6.3f} "
                 f"{r['ffi_shipped_ms']:7.3f} ms")
        else:
            t = (f"rel err nvrtc {r['nvrtc_rel_err']:.2e}, ffi "
                 f"{r['ffi_rel_err']:.2e}")
        print(f"{r['kernel']:8s} {r['shape']:18s} {r['nvrtc_first_load_s']:9.2f}s "
              f"{r['nvrtc_cached_reload_s']:7.3f}s {r['ffi_first_load_s']:7.3f}s "
              f"{t} {'yes' if r['correct'] else 'NO'}")
    if a.out:
        out = pathlib.Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "nvrtc-bench.json").write_text(json.dumps(results, indent=2))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Multi-GPU autotuning: the same config space tuned on one GPU and on every
visible GPU, from bundles compiled on another host (no tilec here).

    python3 utils/gpu/autotune_multi.py prepare DIR [--target cuda:sm_90a]
        build host (tilec): compiles the 16 GEMM configs of the @tile.autotune
        kernel below into the bundle directory DIR (tile export_bundles).
    python3 utils/gpu/autotune_multi.py run DIR [--size 8192] [--rep 100]
        GPU host: hides tilec, tile.import_bundles(DIR), then tunes the same
        space with devices=[0] and with devices=[0, ..., n-1] (no results
        cache, the kernels' bundles already loaded), checks the winners
        against torch and prints both times and the speed-up.

With --target cpu both steps run on the CPU (numpy; `run` then uses two
fake devices that share the host: a dry run of the scheduling, not a
measurement). docs/python.md, "Tuning on several GPUs".
"""

import argparse
import os
import sys
import time

import numpy as np

import tile
import tile.language as T

M, N, K = T.symbolic("M, N, K")

CONFIGS = [dict(block_M=bm, block_N=bn, block_K=bk, num_stages=s,
                threads=256 if bm * bn >= 128 * 256 else 128)
           for bm in (64, 128) for bn in (128, 256) for bk in (32, 64)
           for s in (2, 3)]


def make(devices=None, rep=100, warmup=10):
    # locations=False: the IR (and so the bundles' source keys) must not name
    # this file's path, which differs between the two hosts.
    @tile.autotune(configs=CONFIGS, key=["A", "B"], devices=devices,
                   warmup=warmup, rep=rep, use_cache=False, progress=False)
    @tile.jit(out_idx=-1, locations=False)
    def matmul(A: T.Tensor((M, K)), B: T.Tensor((K, N)), C: T.Tensor((M, N)),
               block_M=128, block_N=128, block_K=32, num_stages=3,
               threads=128):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M),
                      threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), A.dtype)
            B_shared = T.alloc_shared((block_K, block_N), B.dtype)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.use_swizzle(panel_size=8)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])
    return matmul


def prepare(args):
    a = np.zeros((64, 64), np.float16)
    t0 = time.perf_counter()
    out = make().export_bundles(args.dir, a, a, target=args.target)
    print(f"prepare: {len(out['written'])} of {len(CONFIGS)} configs compiled "
          f"for {args.target} into {args.dir} in {time.perf_counter() - t0:.1f} s")
    for i, err in sorted(out["failed"].items()):
        print(f"  config #{i} {CONFIGS[i]}: {err.splitlines()[0]}")
    return 0 if out["written"] else 1


def hide_tilec():
    os.environ["TILE_TILEC"] = "/nonexistent/tilec"   # searched first
    try:
        tile.find_tilec()
    except RuntimeError:
        return
    raise SystemExit("run: tilec is still found")


def run(args):
    hide_tilec()
    n_imported = tile.import_bundles(args.dir)
    n = args.size
    if args.target == "cpu":
        rng = np.random.default_rng(0)
        a = rng.uniform(-1, 1, (n, n)).astype(np.float16)
        b = rng.uniform(-1, 1, (n, n)).astype(np.float16)
        all_devices = ["host-a", "host-b"]
        ref = (a.astype(np.float32) @ b.astype(np.float32))
    else:
        import torch
        count = torch.cuda.device_count()
        names = [torch.cuda.get_device_name(i) for i in range(count)]
        print(f"devices: {count} ({', '.join(names)})")
        if count < 2:
            print("run: fewer than 2 GPUs visible; timing 1 GPU only")
        a = torch.randn(n, n, device="cuda:0", dtype=torch.float16)
        b = torch.randn(n, n, device="cuda:0", dtype=torch.float16)
        all_devices = list(range(count))
        ref = (a.float() @ b.float()).cpu().numpy()
    print(f"bundles imported: {n_imported}; GEMM {n}^3 f16, {len(CONFIGS)} "
          f"configs, warmup {args.warmup}, rep {args.rep}")
    rows = []
    for devices in ([all_devices[0]], all_devices) if len(all_devices) > 1 \
            else ([all_devices[0]],):
        f = make(devices=devices, rep=args.rep, warmup=args.warmup)
        t0 = time.perf_counter()
        c = f(a, b)
        dt = time.perf_counter() - t0
        (res,) = f.results.values()
        got = c.float().cpu().numpy() if hasattr(c, "cpu") else c.astype(np.float32)
        err = float(np.max(np.abs(got - ref)) / max(1.0, float(np.max(np.abs(ref)))))
        ok = err < 2e-2
        per_dev = {}
        for r in res.results:
            per_dev[r["device"]] = per_dev.get(r["device"], 0) + 1
        status = {}
        for r in res.results:
            status[r["status"]] = status.get(r["status"], 0) + 1
        rows.append((len(devices), dt, res, ok))
        print(f"{len(devices)} device(s): tuned in {dt:.2f} s; configs per device "
              f"{per_dev}; status {status}; best #{CONFIGS.index(res.config)} "
              f"{res.config}: {res.latency_ms:.4f} ms "
              f"({2.0 * n ** 3 / res.latency_ms / 1e9:.0f} TFLOP/s); "
              f"check vs reference: {'ok' if ok else 'FAILED'} (rel err {err:.2e})")
    if len(rows) == 2:
        print(f"speed-up of {rows[1][0]} devices over 1: "
              f"{rows[0][1] / rows[1][1]:.2f}x ({rows[0][1]:.2f} s -> "
              f"{rows[1][1]:.2f} s)")
    return 0 if all(ok for *_, ok in rows) else 1


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=("prepare", "run"))
    p.add_argument("dir")
    p.add_argument("--target", default=None,
                   help="prepare: cuda:sm_90a (default) or cpu; run: cuda "
                        "(default) or cpu")
    p.add_argument("--size", type=int, default=8192)
    p.add_argument("--rep", type=int, default=100)
    p.add_argument("--warmup", type=int, default=10)
    args = p.parse_args()
    if args.target is None:
        args.target = "cuda:sm_90a" if args.mode == "prepare" else "cuda"
    return prepare(args) if args.mode == "prepare" else run(args)


if __name__ == "__main__":
    sys.exit(main())

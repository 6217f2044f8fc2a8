#!/usr/bin/env python3
"""FlashAttention forward benchmark: our kernels (test/E2E/kernels/
flash_attention.mlir.in, the template of examples/flash_attention.mlir)
vs torch SDPA (scaled_dot_product_attention), f16 and bf16, head dim 64 and
128, causal and not, B*H = 32, S = 4k, 8k (16k with --long), in one run.

Build host (tilec), then carry .gpu and .hopper to the GPU host:

    utils/gpu/prepare.sh                      # .gpu (runtime deps)
    utils/bench/make_kernels.py --fused       # .hopper/fused/*.tileb, fused.json
    cp -r $(python3 -c 'import nanobind, os; print(os.path.dirname(nanobind.__file__))') .hopper/nanobind

GPU host (device tool, carry [".gpu", ".hopper"]):

    TILE_HOPPER_BENCH=attention bash utils/bench/hopper.sh 2>&1 | tee $OUT/attention.log

(hopper.sh builds the runtime and the tile package, then runs
`python3 utils/bench/attention.py --bundles .hopper/fused`).

Correctness first: every kernel is checked against SDPA (float32 math) on
odd sizes (S = 1, 77, 1000) and on every timed shape; a kernel that fails
is not timed. Then one table per (dtype, head dim, causal): TFLOP/s of
SDPA and of each tile variant (BMxBN tiles, threads, stages), and
best/SDPA.
FLOPs: 4 * B * H * S^2 * D (halved when causal), as FlashAttention counts.
"""
import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fused  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bundles", default=os.path.join(fused.ROOT,
                                                      ".hopper/fused"))
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--long", action="store_true", help="also S = 16k")
    ap.add_argument("--only", default="", help="substring of kernel names")
    args = ap.parse_args()

    import torch
    import torch.nn.functional as F
    from triton.testing import do_bench

    lines = []

    def log(s=""):
        print(s, flush=True)
        lines.append(s)

    manifest = [m for m in json.load(open(os.path.join(args.bundles,
                                                       "fused.json")))
                if m["kind"] == "attention" and args.only in m["name"]]
    dev = torch.device("cuda")
    log(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}")
    bh = 32
    seqs = [4096, 8192] + ([16384] if args.long else [])
    results = []

    def bench(fn):
        return do_bench(fn, warmup=10, rep=100)  # ms

    def run_ours(fn, q, k, v, causal):
        o = torch.full_like(q, float("nan"))
        fn(q, k, v, o, 1.0 / math.sqrt(q.shape[-1]), int(causal))
        return o

    def err(o, q, k, v, causal):
        ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(),
                                             is_causal=causal)
        e = ((o.float() - ref).abs().max() /
             ref.abs().max().clamp_min(1e-6)).item()
        return e if e == e else float("inf")

    for dt in ("f16", "bf16"):
        tdt = torch.float16 if dt == "f16" else torch.bfloat16
        for d in (64, 128):
            kernels = []
            for m in [m for m in manifest if m["dtype"] == dt and
                      m["head_dim"] == d]:
                try:
                    lname, fn = fused.load_ours(
                        os.path.join(args.bundles, m["name"] + ".tileb"))
                    worst = 0.0
                    for (b, h, s) in ((1, 2, 1), (2, 3, 77), (1, 4, 1000)):
                        q, k, v = (torch.randn(b, h, s, d, device=dev,
                                               dtype=tdt) for _ in range(3))
                        for causal in (False, True):
                            o = run_ours(fn, q, k, v, causal)
                            torch.cuda.synchronize()
                            worst = max(worst, err(o, q, k, v, causal))
                    ok = worst < 2e-2
                    log(f"{m['name']}: launcher {lname}, odd-size check max "
                        f"rel err {worst:.2e}{'' if ok else '  FAILED'}")
                    if ok:
                        kernels.append((m, fn))
                except Exception as e:  # noqa
                    log(f"{m['name']}: FAILED to load/run: "
                        f"{type(e).__name__}: {e}")
            names = [m.get("label") or f"{m['bm']}x{m['bn']}t{m['threads']}s{m['stages']}"
                     for m, _ in kernels]
            for causal in (False, True):
                log(f"\n[{dt} d={d} {'causal' if causal else 'non-causal'}] "
                    f"TFLOP/s, B*H = {bh} (B=4, H=8)")
                log(f"{'S':>6s} {'SDPA':>7s} " +
                    " ".join(f"{n:>12s}" for n in names) +
                    f" {'best/SDPA':>10s}")
                for s in seqs:
                    q, k, v = (torch.randn(4, 8, s, d, device=dev, dtype=tdt)
                               for _ in range(3))
                    flops = 4.0 * bh * s * s * d / (2 if causal else 1)
                    sdpa = flops / bench(lambda: F.scaled_dot_product_attention(
                        q, k, v, is_causal=causal)) / 1e9
                    row, best = [], 0.0
                    for m, fn in kernels:
                        o = run_ours(fn, q, k, v, causal)
                        torch.cuda.synchronize()
                        # Reference on 2 heads only (float32 SDPA of the
                        # whole batch would dominate the run).
                        e = err(o[:1, :2], q[:1, :2], k[:1, :2], v[:1, :2],
                                causal)
                        if e >= 2e-2:
                            row.append(f"{'BAD ' + format(e, '.0e'):>12s}")
                            continue
                        o = torch.empty_like(q)
                        scale = 1.0 / math.sqrt(d)
                        tf = flops / bench(lambda: fn(q, k, v, o, scale,
                                                      int(causal))) / 1e9
                        best = max(best, tf)
                        row.append(f"{tf:12.1f}")
                        results.append(dict(dtype=dt, head_dim=d,
                                            causal=causal, S=s,
                                            kernel=m["name"], tflops=tf,
                                            sdpa=sdpa, rel_err=e))
                    log(f"{s:6d} {sdpa:7.1f} " + " ".join(row) +
                        f" {best / sdpa:9.2f}x")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "attention_results.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(args.out, "attention_log.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""GEMM + bias + ReLU benchmark: examples/gemm_epilogue.mlir (f16, bf16)
vs torch (relu(addmm(bias, A, B))) at 4096^3 and 8192^3, in one run, with
torch.matmul (cuBLAS, no epilogue) for scale.

Build host (tilec), then carry .gpu and .hopper to the GPU host:

    utils/gpu/prepare.sh                      # .gpu (runtime deps)
    utils/bench/make_kernels.py --fused       # .hopper/fused/*.tileb, fused.json
    cp -r $(python3 -c 'import nanobind, os; print(os.path.dirname(nanobind.__file__))') .hopper/nanobind

GPU host (device tool, carry [".gpu", ".hopper"]):

    TILE_HOPPER_BENCH=gemm_epilogue bash utils/bench/hopper.sh 2>&1 | tee $OUT/epilogue.log

Correctness first (odd shapes and every timed shape, against float32
torch); the table gives TFLOP/s and ours/torch. TILE_CUDA_VERBOSE=1 (set by
hopper.sh) logs which kernel variant the runtime launched (the sm_90a
TMA/wgmma variant when tile-warp-specialize matched the kernel).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fused  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bundles", default=os.path.join(fused.ROOT,
                                                      ".hopper/fused"))
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--shapes", default="4096x4096x4096,8192x8192x8192",
                    metavar="MxNxK,...")
    args = ap.parse_args()

    import torch
    from triton.testing import do_bench

    lines = []

    def log(s=""):
        print(s, flush=True)
        lines.append(s)

    manifest = [m for m in json.load(open(os.path.join(args.bundles,
                                                       "fused.json")))
                if m["kind"] == "gemm_epilogue"]
    dev = torch.device("cuda")
    log(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}")
    shapes = [tuple(int(x) for x in s.split("x")) for s in
              args.shapes.split(",")]
    results = []

    def bench(fn):
        return do_bench(fn, warmup=10, rep=100)

    def err(C, A, B, bias):
        ref = torch.relu(A.float() @ B.float() + bias.float())
        e = ((C.float() - ref).abs().max() /
             ref.abs().max().clamp_min(1e-6)).item()
        return e if e == e else float("inf")

    log(f"{'dtype':6s} {'shape':16s} {'matmul':>8s} {'addmm+relu':>11s} "
        f"{'tile':>8s} {'tile/torch':>11s}")
    for m in manifest:
        tdt = torch.float16 if m["dtype"] == "f16" else torch.bfloat16
        try:
            lname, fn = fused.load_ours(
                os.path.join(args.bundles, m["name"] + ".tileb"))
        except Exception as e:  # noqa
            log(f"{m['name']}: FAILED to load: {type(e).__name__}: {e}")
            continue
        worst = 0.0
        for (M, N, K) in [(1, 8, 8), (1000, 1000, 1000), (1001, 999, 1003),
                          (300, 264, 200)] + shapes:
            A = torch.randn(M, K, device=dev).to(tdt)
            B = torch.randn(K, N, device=dev).to(tdt)
            bias = torch.randn(N, device=dev).to(tdt)
            C = torch.full((M, N), float("nan"), device=dev, dtype=tdt)
            fn(A, B, bias, C)
            torch.cuda.synchronize()
            worst = max(worst, err(C, A, B, bias))
        log(f"{m['name']}: launcher {lname}, check max rel err {worst:.2e}"
            f"{'' if worst < 2e-2 else '  FAILED'}")
        if worst >= 2e-2:
            continue
        for (M, N, K) in shapes:
            A = torch.randn(M, K, device=dev).to(tdt)
            B = torch.randn(K, N, device=dev).to(tdt)
            bias = torch.randn(N, device=dev).to(tdt)
            C = torch.empty(M, N, device=dev, dtype=tdt)
            f = 2.0 * M * N * K
            mm = f / bench(lambda: torch.matmul(A, B, out=C)) / 1e9
            ref = f / bench(lambda: torch.relu_(
                torch.addmm(bias, A, B, out=C))) / 1e9
            ours = f / bench(lambda: fn(A, B, bias, C)) / 1e9
            log(f"{m['dtype']:6s} {f'{M}x{N}x{K}':16s} {mm:8.1f} {ref:11.1f} "
                f"{ours:8.1f} {ours / ref:10.2f}x")
            results.append(dict(dtype=m["dtype"], M=M, N=N, K=K, matmul=mm,
                                addmm_relu=ref, tile=ours))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "gemm_epilogue_results.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(args.out, "gemm_epilogue_log.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

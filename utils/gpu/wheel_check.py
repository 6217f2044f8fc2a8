"""utils/gpu/wheel_check.py - the parts of utils/gpu/wheel-check.sh that use
the installed `tile` package (PYTHONPATH = its --target directory):

  python3 wheel_check.py examples  [--target cuda] [--chips sm_90a,sm_80]
      tile.compile every example for each chip with a cold cache (compile
      time printed), run it through both backends on torch tensors and check
      it against torch.
  python3 wheel_check.py autotune  [--target cuda] [--size 2048]
      tile.autotune over a small f16 GEMM config space (tile sizes, K step,
      pipeline stages), checked against torch; prints every config's status
      and latency, and the time to compile the whole space.

--target cpu runs the same on the CPU with numpy (a dry run on the build
host). Exit status 1 when anything failed.
"""

import argparse
import os
import pathlib
import sys
import tempfile
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"

# (example, parameter shapes, reference, tolerance)
CASES = {
    "elementwise_add": ((("A", (5000,)), ("B", (5000,))), lambda a, b: a + b, 0),
    "reduce_rows": ((("X", (130, 300)),), lambda x: x.sum(axis=1), 1e-4),
    "softmax": ((("X", (37, 1024)),), lambda x: np.exp(x - x.max(1, keepdims=True))
                / np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True), 1e-5),
    "gemm": ((("A", (200, 100)), ("B", (100, 136))), lambda a, b: a @ b, 2e-3),
}


def fresh_cache():
    os.environ["TILE_CACHE_DIR"] = tempfile.mkdtemp(prefix="tile-wheel-check-")


def to_device(arrays, target):
    if target == "cpu":
        return arrays
    import torch
    return [torch.from_numpy(a).cuda() for a in arrays]


def to_numpy(x):
    if hasattr(x, "cpu"):
        import torch
        torch.cuda.synchronize()
        return x.cpu().numpy()
    return np.asarray(x)


def examples(args):
    import tile
    fresh_cache()
    rng = np.random.default_rng(0)
    failed = 0
    chips = args.chips.split(",") if args.target == "cuda" else ["host"]
    print(f"tilec: {tile.find_tilec()}")
    if args.target == "cuda":
        from tile import toolchain
        print(f"CUDA toolchain: {toolchain.cuda_toolchain()[1]}")
    for name, (params, ref, tol) in CASES.items():
        dtype = np.float16 if name == "gemm" else np.float32
        host = [rng.standard_normal(shape).astype(dtype) for _, shape in params]
        want = ref(*[h.astype(np.float64) for h in host])
        for chip in chips:
            target = args.target if chip == "host" else f"cuda:{chip}"
            for backend in ("ffi", "native"):
                t0 = time.perf_counter()
                try:
                    k = tile.compile(EXAMPLES / f"{name}.mlir", target=target,
                                     execution_backend=backend)
                    dt = time.perf_counter() - t0
                    got = to_numpy(k(*to_device(host, args.target)))
                    err = (np.linalg.norm(got.astype(np.float64) - want) /
                           max(np.linalg.norm(want), 1e-30))
                    ok = err <= max(tol, 1e-7)
                    print(f"{name:16s} {chip:7s} {backend:6s} compile {dt:6.2f} s"
                          f"  rel.err {err:.1e}  {'ok' if ok else 'MISMATCH'}")
                    failed += not ok
                except Exception as e:  # noqa: BLE001 - report and go on
                    print(f"{name:16s} {chip:7s} {backend:6s} FAILED: {e}")
                    failed += 1
    return failed


GEMM = """
func.func @gemm(%A: memref<?x?xf16> {tile.name = "A", tile.dims = ["M", "K"]},
                %B: memref<?x?xf16> {tile.name = "B", tile.dims = ["K", "N"]},
                %C: memref<?x?xf16> {tile.name = "C", tile.dims = ["M", "N"], tile.output})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cbk = arith.constant BK : index
  %cbm = arith.constant BM : index
  %cbn = arith.constant BN : index
  %cbm1 = arith.constant BM1 : index
  %cbn1 = arith.constant BN1 : index
  %cbk1 = arith.constant BK1 : index
  %M = memref.dim %A, %c0 : memref<?x?xf16>
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %N = memref.dim %B, %c1 : memref<?x?xf16>
  %mp = arith.addi %M, %cbm1 : index
  %gy = arith.divui %mp, %cbm : index
  %np = arith.addi %N, %cbn1 : index
  %gx = arith.divui %np, %cbn : index
  %kp = arith.addi %K, %cbk1 : index
  %nk = arith.divui %kp, %cbk : index
  tile.launch blocks(%bx, %by) in (%gx, %gy) threads(THREADS) attributes {raster = #tile.raster<panel = 8>} {
    %As = tile.alloc : memref<BMxBKxf16, #tile.scope<shared>>
    %Bs = tile.alloc : memref<BKxBNxf16, #tile.scope<shared>>
    %Cf = tile.alloc : memref<BMxBNxf32, #tile.scope<fragment>>
    %m0 = arith.muli %by, %cbm : index
    %n0 = arith.muli %bx, %cbn : index
    tile.clear %Cf : memref<BMxBNxf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages(STAGES) {
      %k0 = arith.muli %k, %cbk : index
      tile.copy %A[%m0, %k0] to %As : memref<?x?xf16> to memref<BMxBKxf16, #tile.scope<shared>>
      tile.copy %B[%k0, %n0] to %Bs : memref<?x?xf16> to memref<BKxBNxf16, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<BMxBKxf16, #tile.scope<shared>>, memref<BKxBNxf16, #tile.scope<shared>>, memref<BMxBNxf32, #tile.scope<fragment>>
    }
    tile.copy %Cf to %C[%m0, %n0] : memref<BMxBNxf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}
"""

GEMM_CONFIGS = [
    {"BM": 128, "BN": 128, "BK": 32, "STAGES": 3, "THREADS": 128},
    {"BM": 128, "BN": 128, "BK": 64, "STAGES": 3, "THREADS": 128},
    {"BM": 128, "BN": 128, "BK": 64, "STAGES": 4, "THREADS": 128},
    {"BM": 64, "BN": 128, "BK": 64, "STAGES": 3, "THREADS": 128},
    {"BM": 128, "BN": 64, "BK": 64, "STAGES": 3, "THREADS": 128},
    {"BM": 128, "BN": 256, "BK": 64, "STAGES": 3, "THREADS": 256},
]


def gemm_source(cfg):
    s = GEMM
    for key in ("BM", "BN", "BK"):
        s = s.replace(f"{key}1 ", f"{cfg[key] - 1} ")
    for key in ("STAGES", "THREADS", "BM", "BN", "BK"):
        s = s.replace(key, str(cfg[key]))
    return s


def autotune(args):
    import tile
    fresh_cache()
    n = args.size
    if args.target == "cuda":
        import torch
        a = torch.randn(n, n, device="cuda", dtype=torch.float16)
        b = torch.randn(n, n, device="cuda", dtype=torch.float16)
        ref = lambda a, b: (a.float() @ b.float()).half()  # noqa: E731
    else:
        rng = np.random.default_rng(0)
        a = rng.standard_normal((n, n)).astype(np.float16)
        b = rng.standard_normal((n, n)).astype(np.float16)
        ref = lambda a, b: (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)  # noqa: E731
    target = "cuda:sm_90a" if args.target == "cuda" else "cpu"
    t0 = time.perf_counter()
    res = tile.autotune(gemm_source, GEMM_CONFIGS, reference=ref, inputs=(a, b),
                        out_idx=-1, target=target, warmup=2, rep=10,
                        rtol=2e-2, atol=2e-1, progress=False)
    dt = time.perf_counter() - t0
    flops = 2.0 * n ** 3
    for cfg, r in zip(GEMM_CONFIGS, res.results):
        lat = r.get("latency_ms")
        perf = f"{lat:8.3f} ms {flops / lat / 1e9:8.1f} TFLOP/s" if lat else " " * 27
        print(f"  {cfg}  {r['status']:14s} {perf} {r.get('error') or ''}"[:220])
    print(f"autotune over {len(GEMM_CONFIGS)} configs ({n}^3, {target}): "
          f"{dt:.1f} s in all; best {res.config} at {res.latency_ms:.3f} ms")
    return 0 if res.kernel is not None else 1


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["examples", "autotune"])
    p.add_argument("--target", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--chips", default="sm_90a,sm_80")
    p.add_argument("--size", type=int, default=2048)
    args = p.parse_args()
    failed = examples(args) if args.what == "examples" else autotune(args)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

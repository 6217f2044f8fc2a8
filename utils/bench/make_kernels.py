#!/usr/bin/env python3
"""Generates the GEMM benchmark kernels (tile dialect) and compiles them.

    utils/bench/make_kernels.py [--tilec build-perf/bin/tilec] [--out .bench]

Writes, for every configuration of CONFIGS and dtype (f16, bf16):
  OUT/NAME.mlir    the kernel (C = A x B, A MxK, B KxN, C MxN row-major,
                   f32 accumulation, output in the input dtype)
  OUT/NAME.tileb   the bundle (tilec --target=cuda --chip=sm_80)
  OUT/NAME.cubin   the sm_80 PTX (mma.sync path) assembled by ptxas for
                   sm_90a (H100/H200), with ptxas -v's resource report
and OUT/manifest.json (configs, shared_bytes, registers, spills), read by
utils/bench/gemm.py on the GPU machine. The sm_80 PTX is used on purpose:
`--chip=sm_90a` may select the separate TMA/wgmma path; this benchmark
measures the mma.sync path.

    utils/bench/make_kernels.py --hopper [--out .hopper/bench]

instead compiles the Hopper benchmark's kernels with --chip=sm_90a (the
generic kernel plus the TMA/wgmma variant, docs/bundle.md "Kernel
variants"): examples/gemm.mlir (128x128 tiles) and
utils/bench/kernels/gemm_128x256.mlir, each in f16 and in bf16 (the same
program with xf16 -> xbf16), plus each with the other setting of the
pipeline option sm90-persistent (default auto: persistent for 128x128
tiles; for 128x256 tiles the default is two variants, the TMA-store one
for launches of <= 528 tiles and the persistent cooperative one above;
example_128x128np forces persistent off, gemm_128x256p on: that one
variant only) and with
sm90-schedule=pingpong (example_128x128pp, gemm_128x256pp) and with the
experimental sm90-epilogue=tma (TMA-store epilogue, persistent:
example_128x128t, gemm_128x256t), into
OUT/NAME.tileb and OUT/hopper.json,
read by `gemm.py --hopper OUT`.

    utils/bench/make_kernels.py --fused [--out .hopper/fused]

compiles the fused-kernel benchmarks' bundles for sm_90a (utils/bench/
fused.py: FlashAttention variants of test/E2E/kernels/flash_attention.mlir.in
and examples/gemm_epilogue.mlir) with OUT/fused.json, read by
utils/bench/attention.py and utils/bench/gemm_epilogue.py.
"""
import argparse, json, os, re, subprocess, sys

TEMPLATE = """\
// C = A x B: {bm}x{bn} output tiles, {threads} threads, a {stages}-stage
// pipelined K loop of {bk} ({dt} in, f32 accumulate, {dt} out); any M, N, K.
func.func @gemm(%A: memref<?x?x{dt}> {{tile.name = "A", tile.dims = ["M", "K"]}},
                %B: memref<?x?x{dt}> {{tile.name = "B", tile.dims = ["K", "N"]}},
                %C: memref<?x?x{dt}> {{tile.name = "C", tile.dims = ["M", "N"], tile.output}})
    attributes {{tile.kernel}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cbk = arith.constant {bk} : index
  %cbm = arith.constant {bm} : index
  %cbn = arith.constant {bn} : index
  %cbm1 = arith.constant {bm1} : index
  %cbn1 = arith.constant {bn1} : index
  %cbk1 = arith.constant {bk1} : index
  %M = memref.dim %A, %c0 : memref<?x?x{dt}>
  %K = memref.dim %A, %c1 : memref<?x?x{dt}>
  %N = memref.dim %B, %c1 : memref<?x?x{dt}>
  %mp = arith.addi %M, %cbm1 : index
  %gy = arith.divui %mp, %cbm : index
  %np = arith.addi %N, %cbn1 : index
  %gx = arith.divui %np, %cbn : index
  %kp = arith.addi %K, %cbk1 : index
  %nk = arith.divui %kp, %cbk : index
  tile.launch blocks(%bx, %by) in (%gx, %gy) threads({threads}) attributes {{raster = #tile.raster<panel = {panel}>}} {{
    %As = tile.alloc : memref<{bm}x{bk}x{dt}, #tile.scope<shared>>
    %Bs = tile.alloc : memref<{bk}x{bn}x{dt}, #tile.scope<shared>>
    %Cf = tile.alloc : memref<{bm}x{bn}xf32, #tile.scope<fragment>>
    %m0 = arith.muli %by, %cbm : index
    %n0 = arith.muli %bx, %cbn : index
    tile.clear %Cf : memref<{bm}x{bn}xf32, #tile.scope<fragment>>
    tile.pipelined %k = %c0 to %nk step %c1 stages({stages}) {{
      %k0 = arith.muli %k, %cbk : index
      tile.copy %A[%m0, %k0] to %As : memref<?x?x{dt}> to memref<{bm}x{bk}x{dt}, #tile.scope<shared>>
      tile.copy %B[%k0, %n0] to %Bs : memref<?x?x{dt}> to memref<{bk}x{bn}x{dt}, #tile.scope<shared>>
      tile.gemm %As, %Bs, %Cf : memref<{bm}x{bk}x{dt}, #tile.scope<shared>>, memref<{bk}x{bn}x{dt}, #tile.scope<shared>>, memref<{bm}x{bn}xf32, #tile.scope<fragment>>
    }}
    tile.copy %Cf to %C[%m0, %n0] : memref<{bm}x{bn}xf32, #tile.scope<fragment>> to memref<?x?x{dt}>
  }}
  return
}}
"""

# (BM, BN, BK, threads, stages, raster panel)
CONFIGS = [
    (128, 128, 32, 128, 3, 8),   # examples/gemm.mlir
    (128, 128, 32, 128, 4, 8),
    (128, 128, 64, 128, 3, 8),
    (128, 256, 32, 256, 3, 8),
    (128, 256, 32, 256, 4, 8),
    (256, 128, 32, 256, 3, 8),
    (256, 128, 32, 256, 4, 8),
    (128, 256, 64, 256, 3, 8),
    (128, 128, 32, 256, 4, 8),
    (64, 128, 32, 128, 4, 8),
]


def kernel_text(cfg, dt):
    bm, bn, bk, threads, stages, panel = cfg
    return TEMPLATE.format(bm=bm, bn=bn, bk=bk, threads=threads, stages=stages,
                           panel=panel, dt=dt, bm1=bm - 1, bn1=bn - 1,
                           bk1=bk - 1)


def name_of(cfg, dt):
    bm, bn, bk, threads, stages, panel = cfg
    return f"gemm_{dt}_{bm}x{bn}x{bk}_t{threads}_s{stages}"


HOPPER_KERNELS = [  # (name, source, tile M, tile N, persistent, schedule
    #                   [, epilogue])
    # persistent: None = the default (pipeline option sm90-persistent=auto:
    # persistent for 128x128 tiles only), True/False = forced, to compare.
    # schedule: None = the default (sm90-schedule=auto: cooperative),
    # "pingpong" = two consumer warpgroups on alternate units (persistent).
    ("example_128x128", "examples/gemm.mlir", 128, 128, None, None),
    ("gemm_128x256", "utils/bench/kernels/gemm_128x256.mlir", 128, 256, None,
     None),
    ("example_128x128np", "examples/gemm.mlir", 128, 128, False, None),
    ("gemm_128x256p", "utils/bench/kernels/gemm_128x256.mlir", 128, 256, True,
     None, "registers"),
    ("example_128x128r", "examples/gemm.mlir", 128, 128, None, None,
     "registers"),
    ("example_128x128pp", "examples/gemm.mlir", 128, 128, None, "pingpong"),
    ("gemm_128x256pp", "utils/bench/kernels/gemm_128x256.mlir", 128, 256,
     None, "pingpong"),
    # epilogue: "tma" = sm90-epilogue=tma (the TMA-store epilogue, the
    # default for a 16-bit C since 2026-12-02; implies persistent),
    # "registers" = the register epilogue (the default before).
    ("example_128x128t", "examples/gemm.mlir", 128, 128, None, None, "tma"),
    ("gemm_128x256t", "utils/bench/kernels/gemm_128x256.mlir", 128, 256,
     None, None, "tma"),
]


def sm90_pipeline(persistent, schedule, epilogue=None):
    opts = "chip=sm_90a features=+ptx80 format=none"
    if epilogue is not None:
        opts += f" sm90-epilogue={epilogue}"
    if persistent is not None:
        opts += f" sm90-persistent={'true' if persistent else 'false'}"
    if schedule is not None:
        opts += f" sm90-schedule={schedule}"
    return f"tile-to-nvvm{{{opts}}}"


def make_hopper(root, tilec, out, only=""):
    os.makedirs(out, exist_ok=True)
    manifest = []
    for name, rel, tm, tn, persistent, schedule, *rest in HOPPER_KERNELS:
        if only and name not in only.split(","):
            continue
        epilogue = rest[0] if rest else None
        text = open(os.path.join(root, rel)).read()
        for dt in ("f16", "bf16"):
            src = os.path.join(out, f"{name}_{dt}.mlir")
            with open(src, "w") as f:
                f.write(text if dt == "f16" else text.replace("xf16", "xbf16"))
            bundle = os.path.join(out, f"{name}_{dt}.tileb")
            extra = ([] if persistent is None and schedule is None and
                     epilogue is None else
                     ["--pass-pipeline="
                      + sm90_pipeline(persistent, schedule, epilogue)])
            subprocess.run([tilec, src, "--target=cuda", "--chip=sm_90a",
                            "-o", bundle] + extra, check=True)
            md = json.loads(subprocess.run(
                [sys.executable, os.path.join(root, "utils/bench/gemm.py"),
                 "--print-metadata", bundle], check=True, capture_output=True,
                text=True).stdout)
            variants = [v for v in md.get("variants", [])
                        if v.get("kind") == "sm90_tma_wgmma"]
            manifest.append(dict(
                name=f"{name}_{dt}", source=rel, dtype=dt, tile_m=tm,
                tile_n=tn, persistent=persistent, schedule=schedule,
                epilogue=epilogue,
                shared_bytes=md["shared_bytes"],
                variant=variants[0] if variants else None,
                variants=variants))
            print(f"{name}_{dt}: generic {md['block'][0]} threads "
                  f"{md['shared_bytes']} B; variants "
                  + ("; ".join(f"{v['kernel']} {v['block'][0]} threads "
                               f"{v['shared_bytes']} B"
                               + (f" max_tiles {v['max_tiles']}"
                                  if "max_tiles" in v else "")
                               for v in variants) or "none"), flush=True)
    with open(os.path.join(out, "hopper.json"), "w") as f:
        json.dump(manifest, f, indent=1)


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    ap = argparse.ArgumentParser()
    ap.add_argument("--tilec", default=os.path.join(root, "build-perf/bin/tilec"))
    ap.add_argument("--ptxas", default="/usr/local/cuda/bin/ptxas")
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default="", help="substring filter on names "
                    "(--hopper: comma-separated kernel names)")
    ap.add_argument("--hopper", action="store_true",
                    help="the sm_90a benchmark kernels (gemm.py --hopper)")
    ap.add_argument("--fused", action="store_true",
                    help="the attention / GEMM-epilogue benchmark kernels")
    ap.add_argument("--tilec-arg", action="append", default=[],
                    help="--fused: one more tilec argument (repeatable), "
                    "e.g. --tilec-arg=--pass-pipeline=...")
    args = ap.parse_args()
    if args.fused:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import fused
        fused.compile_fused(args.tilec,
                            args.out or os.path.join(root, ".hopper/fused"),
                            only=args.only, extra=args.tilec_arg)
        return
    if args.hopper:
        make_hopper(root, args.tilec,
                    args.out or os.path.join(root, ".hopper/bench"),
                    args.only)
        return
    args.out = args.out or os.path.join(root, ".bench")
    os.makedirs(args.out, exist_ok=True)
    manifest = []
    for dt in ("f16", "bf16"):
        for cfg in CONFIGS:
            name = name_of(cfg, dt)
            if args.only and args.only not in name:
                continue
            src = os.path.join(args.out, name + ".mlir")
            with open(src, "w") as f:
                f.write(kernel_text(cfg, dt))
            ptx = os.path.join(args.out, name + ".ptx")
            cubin = os.path.join(args.out, name + ".cubin")
            bundle = os.path.join(args.out, name + ".tileb")
            subprocess.run([args.tilec, src, "--target=cuda", "--chip=sm_80",
                            "-o", bundle], check=True)
            subprocess.run([args.tilec, src, "--target=cuda", "--chip=sm_80",
                            "--emit=ptx", "-o", ptx], check=True)
            r = subprocess.run([args.ptxas, "-arch=sm_90a", "-O3", "-v", ptx,
                                "-o", cubin], check=True, capture_output=True,
                               text=True)
            regs = int(re.search(r"Used (\d+) registers", r.stderr).group(1))
            spill = re.search(r"(\d+) bytes spill stores", r.stderr)
            md = json.loads(subprocess.run(
                [sys.executable, os.path.join(root, "utils/bench/gemm.py"),
                 "--print-metadata", bundle], check=True, capture_output=True,
                text=True).stdout)
            bm, bn, bk, threads, stages, panel = cfg
            manifest.append(dict(name=name, dtype=dt, bm=bm, bn=bn, bk=bk,
                                 threads=threads, stages=stages, panel=panel,
                                 registers=regs,
                                 spill_bytes=int(spill.group(1)) if spill else 0,
                                 shared_bytes=md["shared_bytes"],
                                 kernel=md["entry"]["kernel"]))
            print(f"{name}: {regs} regs, spills {manifest[-1]['spill_bytes']} B,"
                  f" shared {md['shared_bytes']} B", flush=True)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()

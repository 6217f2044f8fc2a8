#!/usr/bin/env python3
"""utils/lib/fuzz-seeds.py - seed corpora of the tile-fuzz-* targets.

    fuzz-seeds.py NAME OUT_DIR [--tilec PATH] [--fixtures DIR]

Writes seeds for fuzzer NAME into OUT_DIR (created). Binary seeds are made
here, at CI time, from the repository's examples and tests:

  bundle         bundles of examples/*.mlir compiled by tilec (cpu; cuda
                 sm_90a and sm_80 when ptxas works) without their large
                 'mlir'/'llvm' sections and with stub cubin / ptx, their
                 host.so / native.so alone
                 (ELF inputs), and bundles of the runtime tests' fixtures
                 (--fixtures: build-asan/test/Runtime) with the tests'
                 metadata; a metadata-only bundle
  npy            numpy-written arrays of every dtype tile-run reads (C and
                 Fortran order, .npy 1.0 / 2.0 / 3.0, 0-d, empty) and a few
                 malformed headers
  mlir-pipeline  examples/*.mlir, test/E2E/kernels/*.mlir and every
                 -split-input-file case of test/Dialect and test/Conversion

tools/fuzz/NAME/seeds/ (checked-in seeds), when present, is used by
utils/check.sh in addition. Unknown NAME: no seeds (the fuzzer starts
empty). Exit status 0 unless OUT_DIR cannot be written.
"""

import argparse
import json
import pathlib
import struct
import subprocess
import sys
import tempfile
import zlib

REPO = pathlib.Path(__file__).resolve().parents[2]


# ---- the bundle container (docs/bundle.md) ---------------------------------------

def read_bundle(data):
    n = struct.unpack_from("<I", data, 12)[0]
    out = []
    for i in range(n):
        e = 24 + 48 * i
        name = data[e:e + 24].rstrip(b"\0").decode()
        off, size = struct.unpack_from("<QQ", data, e + 24)
        out.append((name, data[off:off + size]))
    return out


def write_bundle(sections):
    n = len(sections)
    table_end = 24 + 48 * n
    offset = (table_end + 4 + 15) // 16 * 16
    offsets = []
    for _, payload in sections:
        offsets.append(offset)
        offset = (offset + len(payload) + 15) // 16 * 16
    total = offsets[-1] + len(sections[-1][1]) if n else table_end + 4
    out = bytearray(total)
    out[0:8] = b"TILEBNDL"
    struct.pack_into("<IIQ", out, 8, 1, n, total)
    for i, (name, payload) in enumerate(sections):
        e = 24 + 48 * i
        out[e:e + len(name)] = name.encode()
        struct.pack_into("<QQII", out, e + 24, offsets[i], len(payload),
                         zlib.crc32(payload), 0)
        out[offsets[i]:offsets[i] + len(payload)] = payload
    struct.pack_into("<I", out, table_end, zlib.crc32(bytes(out[:table_end])))
    return bytes(out)


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


# ---- seeds -----------------------------------------------------------------------

def tensor(name, shape, dims, output=False):
    return {"name": name, "kind": "tensor", "dtype": "float32",
            "rank": len(shape), "shape": shape, "dims": dims, "output": output}


def fixture_meta(name):
    """The runtime tests' metadata (test/Runtime/TestUtil.cpp)."""
    base = {"format": "tile-kernel", "version": 1, "compiler": "tile-test",
            "name": name, "target": {"kind": "cpu", "chip": "x86-64",
                                     "features": ""},
            "block": [1, 1, 1], "shared_bytes": 0,
            "entry": {"blocks": f"{name}__tile_blocks",
                      "native": f"{name}__tile_native"}}

    def ceildiv(a, b):
        return {"op": "ceildivu", "args": [a, {"const": b}]}
    if name == "add":
        base.update(params=[tensor("A", [-1], ["N"]), tensor("B", [-1], ["N"]),
                            tensor("C", [-1], ["N"], True)],
                    out_idx=[2], symbols=["N"],
                    grid=[ceildiv({"sym": "N"}, 64), {"const": 1}, {"const": 1}])
    elif name == "mm":
        base.update(params=[tensor("A", [-1, -1], ["M", "K"]),
                            tensor("B", [-1, -1], ["K", "N"]),
                            tensor("C", [-1, -1], ["M", "N"], True)],
                    out_idx=[2], symbols=["M", "K", "N"],
                    grid=[ceildiv({"sym": "N"}, 16), ceildiv({"sym": "M"}, 16),
                          {"const": 1}])
    else:  # axpy
        base.update(params=[{"name": "alpha", "kind": "scalar", "dtype": "float32"},
                            tensor("X", [-1, 4], ["N", "C"]),
                            tensor("Y", [-1, 4], ["N", "C"], True),
                            {"name": "rows", "kind": "scalar", "dtype": "int32"},
                            {"name": "bias", "kind": "scalar", "dtype": "int64"}],
                    out_idx=[], symbols=["N", "C"],
                    grid=[{"op": "ceildivs", "args": [{"sym": "N"}, {"scalar": 3}]},
                          {"const": 1}, {"const": 1}])
        del base["entry"]["native"]
    return base


def bundle_seeds(out, tilec, fixtures):
    count = 0

    def put(name, data):
        nonlocal count
        (out / name).write_bytes(data)
        count += 1

    if fixtures and fixtures.is_dir():
        for name, so_name in (("add", "add_host.so"), ("mm", "mm_host.so"),
                              ("axpy", "axpy_host.so"),
                              ("add", "add_hashed_host.so")):
            so = fixtures / so_name
            if not so.exists():
                continue
            meta = json.dumps(fixture_meta(name)).encode()
            data = so.read_bytes()
            data = data.replace(b"TILEHASH", struct.pack("<Q", fnv1a64(meta)))
            put(f"fixture-{so.stem}.tileb",
                write_bundle([("metadata", meta), ("host.so", data)]))
            put(f"fixture-{so.stem}.so", data)
        put("metadata-only.tileb",
            write_bundle([("metadata", json.dumps(fixture_meta("mm")).encode())]))
    if tilec:
        targets = [("cpu", []), ("cuda", ["--chip=sm_90a"]),
                   ("cuda", ["--chip=sm_80"])]
        with tempfile.TemporaryDirectory() as tmp:
            for src in sorted((REPO / "examples").glob("*.mlir")):
                for kind, flags in targets:
                    dst = pathlib.Path(tmp) / "k.tileb"
                    proc = subprocess.run(
                        [tilec, str(src), f"--target={kind}", *flags,
                         "-o", str(dst)], capture_output=True)
                    if proc.returncode != 0:
                        continue
                    tag = f"{src.stem}-{kind}{flags[0][7:] if flags else ''}"
                    # The device code is opaque to everything the fuzzer
                    # runs (the driver checks it): stubs keep inputs small.
                    stubs = {"cubin": b"\x7fELF cubin", "ptx": b".version 8.0\n"}
                    sections = [(n, stubs.get(n, p))
                                for n, p in read_bundle(dst.read_bytes())
                                if n not in ("mlir", "llvm")]
                    put(f"{tag}.tileb", write_bundle(sections))
                    for n, p in sections:
                        if n.endswith(".so"):
                            put(f"{tag}-{n}", p)
    return count


def npy_seeds(out):
    import io

    import numpy as np
    count = 0

    def put(name, data):
        nonlocal count
        (out / name).write_bytes(data)
        count += 1

    def npy(arr, version=None):
        buf = io.BytesIO()
        np.lib.format.write_array(buf, arr, version=version,
                                  allow_pickle=False)
        return buf.getvalue()

    rng = np.random.default_rng(0)
    for dtype in ("bool", "int8", "int16", "int32", "int64", "uint8",
                  "uint16", "uint32", "uint64", "float16", "float32",
                  "float64"):
        arr = (rng.uniform(-4, 4, size=(2, 3)) * 10).astype(dtype)
        put(f"{dtype}.npy", npy(arr))
    arr = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    put("fortran.npy", npy(np.asfortranarray(arr)))
    put("v2.npy", npy(arr, (2, 0)))
    put("v3.npy", npy(arr, (3, 0)))
    put("scalar.npy", npy(np.float64(1.5)))
    put("empty.npy", npy(np.zeros((0, 4), np.int32)))
    put("big-endian.npy", npy(np.arange(4, dtype=">f4")))
    header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (1e3, 64), }"
    put("bad-shape.npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header))
        + header + b"\0" * 16)
    return count


def mlir_seeds(out):
    count = 0
    files = sorted((REPO / "examples").glob("*.mlir"))
    files += sorted((REPO / "test" / "E2E" / "kernels").glob("*.mlir"))
    for d in ("Dialect", "Conversion"):
        files += sorted((REPO / "test" / d).rglob("*.mlir"))
    for f in files:
        text = f.read_text(errors="replace")
        for i, case in enumerate(text.split("// -----")):
            rel = f.relative_to(REPO).as_posix().replace("/", "_")
            (out / f"{rel}.{i}.mlir").write_text(case)
            count += 1
    return count


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name")
    ap.add_argument("out", type=pathlib.Path)
    ap.add_argument("--tilec")
    ap.add_argument("--fixtures", type=pathlib.Path)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.name == "bundle":
        n = bundle_seeds(args.out, args.tilec, args.fixtures)
    elif args.name == "npy":
        n = npy_seeds(args.out)
    elif args.name == "mlir-pipeline":
        n = mlir_seeds(args.out)
    else:
        n = 0
    print(f"{n} seeds for {args.name} in {args.out}")


if __name__ == "__main__":
    sys.exit(main())

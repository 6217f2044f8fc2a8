"""TEST-ONLY: run a metal bundle as tile-run runs the others, through the
Python package's real metal-torch launcher (tile._metal) on the fake
torch.mps of fake_torch/ (the MSL compiled against the CPU shim).

  python run_metal.py BUNDLE [--input P=FILE.npy]... [--scalar P=V,...]
                      [--dims S=V,...] --save-outputs DIR

Inputs not given are zeros (shapes from static dims, the inputs' symbols and
--dims); out_idx outputs are allocated by the launcher. Every tensor
parameter is saved after the run as DIR/<name>.npy (tile-run --save-all)."""

import argparse
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "fake_torch"))

import numpy as np  # noqa: E402
import torch  # noqa: E402  (the fake)

import tile  # noqa: E402
from tile._frameworks import numpy_dtype  # noqa: E402


def _pairs(text):
    out = {}
    for item in (text or "").split(","):
        if item:
            k, _, v = item.partition("=")
            out[k.strip()] = v.strip()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bundle")
    ap.add_argument("--input", action="append", default=[])
    ap.add_argument("--scalar", action="append", default=[])
    ap.add_argument("--dims", action="append", default=[])
    ap.add_argument("--save-outputs", required=True)
    a = ap.parse_args()
    kernel = tile.load(a.bundle)
    assert kernel.backend == "metal-torch", kernel.backend
    inputs = {}
    for item in a.input:
        name, _, path = item.partition("=")
        inputs[name] = np.load(path)
    scalars, dims = {}, {}
    for s in a.scalar:
        scalars.update(_pairs(s))
    for s in a.dims:
        dims.update({k: int(v) for k, v in _pairs(s).items()})
    params = kernel.params
    for p in params:  # symbols from the given inputs
        if p["kind"] == "tensor" and p["name"] in inputs:
            for sym, size in zip(p["dims"], inputs[p["name"]].shape):
                if sym:
                    dims.setdefault(sym, int(size))
    args = []
    for i, p in enumerate(params):
        if p["kind"] == "scalar":
            v = scalars.get(p["name"], "1")
            args.append(float(v) if p["dtype"].startswith(("float", "bfloat"))
                        else int(v))
        elif p["name"] in inputs:
            # As tile-run: the .npy converted to the parameter's dtype.
            arr = np.ascontiguousarray(
                inputs[p["name"]].astype(numpy_dtype(p["dtype"])))
            args.append(torch.Tensor(arr.copy(), "mps"))
        elif i in kernel.out_idx:
            args.append(None)
        else:
            shape = [s if s is not None else dims[d]
                     for s, d in zip(p["shape"], p["dims"])]
            args.append(torch.empty(shape, dtype=getattr(torch, p["dtype"]),
                                    device="mps"))
    result = kernel(*args)
    outs = result if isinstance(result, tuple) else (
        () if result is None else (result,))
    for j, i in enumerate(kernel.out_idx):
        args[i] = outs[j]
    out = pathlib.Path(a.save_outputs)
    out.mkdir(parents=True, exist_ok=True)
    for p, t in zip(params, args):
        if p["kind"] == "tensor":
            a = t.numpy()
            # As tile-run: types numpy cannot name (bfloat16) as float32.
            if p["dtype"] in ("bfloat16",) or p["dtype"].startswith("float8"):
                a = a.astype(np.float32)
            np.save(out / f"{p['name']}.npy", a)


if __name__ == "__main__":
    main()

"""The metal-torch backend: a metal kernel's `msl` section compiled by
torch.mps.compile_shader (once per process and source) and dispatched on
torch's MPS stream (docs/python.md, "metal-torch").

Everything about the launch comes from the runtime's parsed metadata (the
kernel handle: params, symbols, block, entry, out_idx) and its grid
evaluation (KernelHandle.launch_grid); nothing here reads the metadata
JSON. The dispatch follows the Metal kernel ABI of docs/bundle.md ("msl"):
one buffer per tensor parameter, then one int64 buffer with, per tensor,
its offset, sizes and strides (elements) and, per scalar, its value.
"""

import hashlib
import struct
import threading

from . import _runtime

# Compiled libraries per process: sha256(source) -> torch.mps ShaderLibrary.
_libraries = {}
_libraries_lock = threading.Lock()

_INT_DTYPES = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
               "uint64", "bool"}


def _torch():
    try:
        import torch
    except ImportError as e:
        raise _runtime.TileError(
            "tile: the metal-torch backend needs PyTorch with MPS "
            "(pip install torch on macOS)") from e
    if getattr(torch, "mps", None) is None or not hasattr(
            torch.mps, "compile_shader"):
        raise _runtime.TileError(
            "tile: this PyTorch has no torch.mps.compile_shader (the "
            "metal-torch backend needs PyTorch 2.6 or newer on macOS)")
    return torch


def shader_library(source):
    """torch.mps.compile_shader(source), once per process per source."""
    key = hashlib.sha256(source.encode()).hexdigest()
    with _libraries_lock:
        lib = _libraries.get(key)
        if lib is None:
            lib = _torch().mps.compile_shader(source)
            _libraries[key] = lib
    return lib


def _scalar_word(value, dtype, name):
    """A scalar parameter as its int64 word (integers sign-extended, floats
    as their IEEE bits)."""
    if dtype in _INT_DTYPES:
        if isinstance(value, float) or not hasattr(value, "__index__"):
            raise _runtime.ArgumentError(
                f"tile: scalar parameter '{name}' ({dtype}) needs an int, "
                f"got {type(value).__name__}")
        v = int(value)
        return int(bool(v)) if dtype == "bool" else v
    if not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        raise _runtime.ArgumentError(
            f"tile: scalar parameter '{name}' ({dtype}) needs a number, got "
            f"{type(value).__name__}")
    if dtype == "float32":
        return struct.unpack("<I", struct.pack("<f", float(value)))[0]
    if dtype == "float16":
        return struct.unpack("<H", struct.pack("<e", float(value)))[0]
    if dtype == "bfloat16":
        bits = struct.unpack("<I", struct.pack("<f", float(value)))[0]
        return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
    raise _runtime.ArgumentError(
        f"tile: scalar parameter '{name}' has type {dtype}, which the metal "
        "target cannot pass")


class MetalTorchLauncher:
    """Launches one metal kernel (`kernel`: its inspect-only handle)."""

    def __init__(self, kernel):
        self._kernel = kernel
        self.params = kernel.params
        self.symbols = list(kernel.symbols)
        self.out_idx = list(kernel.out_idx)
        launch = kernel.launch_info
        self.block = tuple(int(b) for b in launch["block"])
        self.entry = launch["entry"]
        data = kernel.section("msl")
        if data is None:
            raise _runtime.TileError(
                f"tile: kernel '{kernel.name}' has no msl section (compile it "
                "with target='metal')")
        self.source = data.decode("utf-8")
        self._sym_index = {s: i for i, s in enumerate(self.symbols)}
        self._inputs = [i for i in range(len(self.params))
                        if i not in self.out_idx]

    # ---- arguments ----------------------------------------------------------
    def _bind(self, args):
        """One entry per parameter (None for omitted outputs)."""
        n = len(self.params)
        if len(args) == n:
            bound = list(args)
        elif len(args) == len(self._inputs):
            bound = [None] * n
            for i, a in zip(self._inputs, args):
                bound[i] = a
        else:
            raise _runtime.ArgumentError(
                f"tile: kernel '{self._kernel.name}' takes {n} arguments "
                f"({len(self._inputs)} without its out_idx outputs), got "
                f"{len(args)}")
        for i, a in enumerate(bound):
            if a is None and i not in self.out_idx:
                raise _runtime.ArgumentError(
                    f"tile: argument {i} ('{self.params[i]['name']}') is None "
                    "but is not an out_idx output")
        return bound

    def _check_tensor(self, torch, i, t, syms, device):
        p = self.params[i]
        name = p["name"]
        if not isinstance(t, torch.Tensor):
            raise _runtime.ArgumentError(
                f"tile: argument {i} ('{name}') must be a torch tensor on "
                f"'mps', got {type(t).__name__}")
        if t.device.type != "mps":
            raise _runtime.ArgumentError(
                f"tile: argument {i} ('{name}') is on device '{t.device}', "
                "the metal-torch backend runs on 'mps'")
        if device is not None and t.device != device:
            raise _runtime.ArgumentError(
                f"tile: argument {i} ('{name}') is on {t.device}, the first "
                f"tensor on {device}")
        want = getattr(torch, p["dtype"], None)
        if t.dtype != want:
            raise _runtime.ArgumentError(
                f"tile: argument {i} ('{name}') has dtype {t.dtype}, expected "
                f"{p['dtype']}")
        shape = p["shape"]
        if t.dim() != len(shape):
            raise _runtime.ArgumentError(
                f"tile: argument {i} ('{name}') has rank {t.dim()}, expected "
                f"{len(shape)}")
        for d, (static, sym) in enumerate(zip(shape, p["dims"])):
            size = int(t.shape[d])
            if static is not None and size != static:
                raise _runtime.ArgumentError(
                    f"tile: argument {i} ('{name}') has size {size} in dim "
                    f"{d}, expected {static}")
            if sym:
                k = self._sym_index[sym]
                if syms[k] >= 0 and syms[k] != size:
                    raise _runtime.ArgumentError(
                        f"tile: symbol '{sym}' is {syms[k]} from an earlier "
                        f"argument but {size} in dim {d} of argument {i} "
                        f"('{name}')")
                syms[k] = size
        if not t.is_contiguous():
            raise _runtime.ArgumentError(
                f"tile: argument {i} ('{name}') must be contiguous (row-major)")

    def _output_shape(self, i, syms):
        p = self.params[i]
        shape = []
        for static, sym in zip(p["shape"], p["dims"]):
            if static is not None:
                shape.append(static)
            elif sym and syms[self._sym_index[sym]] >= 0:
                shape.append(syms[self._sym_index[sym]])
            else:
                raise _runtime.ArgumentError(
                    f"tile: cannot allocate output '{p['name']}': symbol "
                    f"'{sym}' is not set by any input")
        return shape

    # ---- launch ---------------------------------------------------------------
    def __call__(self, *args, stream=None):
        if stream is not None:
            raise _runtime.ArgumentError(
                "tile: the metal-torch backend runs on torch's MPS stream; "
                "pass no stream")
        torch = _torch()
        bound = self._bind(args)
        syms = [-1] * len(self.symbols)
        scalars = [0] * len(self.params)
        device = None
        for i, a in enumerate(bound):
            if self.params[i]["kind"] == "tensor":
                if a is not None:
                    self._check_tensor(torch, i, a, syms, device)
                    device = device or a.device
            else:
                dtype = self.params[i]["dtype"]
                if dtype in _INT_DTYPES:
                    scalars[i] = int(_scalar_word(a, dtype,
                                                  self.params[i]["name"]))
        if device is None:
            device = torch.device("mps")
        outputs = []
        for i in self.out_idx:
            if bound[i] is None:
                bound[i] = torch.empty(self._output_shape(i, syms),
                                       dtype=getattr(torch,
                                                     self.params[i]["dtype"]),
                                       device=device)
            outputs.append(bound[i])
        grid = self._kernel.launch_grid(syms, scalars)
        tensors, words = [], []
        for i, a in enumerate(bound):
            p = self.params[i]
            if p["kind"] == "tensor":
                tensors.append(a)
                # The buffer is bound at the tensor's first element.
                words += [0, *(int(s) for s in a.shape),
                          *(int(s) for s in a.stride())]
            else:
                words.append(_scalar_word(a, p["dtype"], p["name"]))
        if all(g > 0 for g in grid):
            desc = torch.tensor(words or [0], dtype=torch.int64, device=device)
            fn = getattr(shader_library(self.source), self.entry)
            threads = tuple(int(g) * b for g, b in zip(grid, self.block))
            fn(*tensors, desc, threads=threads, group_size=self.block)
        if not outputs:
            return None
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

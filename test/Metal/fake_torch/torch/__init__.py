"""TEST-ONLY stand-in for PyTorch on an MPS device (no Apple hardware here).

Tensors are numpy arrays labelled with a device ("cpu" or "mps").
torch.mps.compile_shader records the source it is given and returns a
library whose kernel functions record every dispatch (arguments, threads,
group_size; torch's MetalKernelFunction semantics: `threads` counts
threads, not threadgroups). With execution enabled (the default; set
`torch.mps.execute = False` to only record) a dispatch compiles the MSL
with clang++ against the test shim (test/Metal/shim) and runs it with one
std::thread per Metal thread (test/Metal/shim_launch.py).

Only what tile's metal-torch launcher uses is here; it is not PyTorch.
"""

import numpy as np

from . import mps  # noqa: F401

__version__ = "0.0-fake-mps"


class dtype:
    def __init__(self, name, np_dtype):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize

    def __repr__(self):
        return f"torch.{self.name}"


def _ml(name):
    try:
        import ml_dtypes
        return getattr(ml_dtypes, name)
    except ImportError:
        return None


float16 = dtype("float16", np.float16)
float32 = dtype("float32", np.float32)
float64 = dtype("float64", np.float64)
int8 = dtype("int8", np.int8)
int16 = dtype("int16", np.int16)
int32 = dtype("int32", np.int32)
int64 = dtype("int64", np.int64)
uint8 = dtype("uint8", np.uint8)
bool = dtype("bool", np.bool_)  # noqa: A001 - torch's name
if _ml("bfloat16") is not None:
    bfloat16 = dtype("bfloat16", _ml("bfloat16"))

_BY_NP = {d.np: d for d in (float16, float32, float64, int8, int16, int32,
                            int64, uint8, bool)}
if "bfloat16" in globals():
    _BY_NP[bfloat16.np] = bfloat16


class device:
    def __init__(self, type, index=None):  # noqa: A002 - torch's name
        if isinstance(type, device):
            type, index = type.type, type.index
        t, _, i = str(type).partition(":")
        self.type = t
        self.index = int(i) if i else (index if index is not None else
                                       (0 if t == "mps" else None))

    def __eq__(self, other):
        other = device(other) if not isinstance(other, device) else other
        return (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __repr__(self):
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


class Size(tuple):
    pass


class Tensor:
    def __init__(self, array, dev="cpu"):
        self._a = array
        self.device = device(dev)
        self.dtype = _BY_NP[array.dtype]

    @property
    def shape(self):
        return Size(self._a.shape)

    def size(self, d=None):
        return self.shape if d is None else self._a.shape[d]

    def dim(self):
        return self._a.ndim

    def stride(self):
        return tuple(s // self._a.itemsize for s in self._a.strides)

    def is_contiguous(self):
        return self._a.flags.c_contiguous

    def numel(self):
        return self._a.size

    def numpy(self):
        return self._a

    def cpu(self):
        return Tensor(self._a, "cpu")

    def to(self, dev):
        return Tensor(np.ascontiguousarray(self._a), dev)

    def t(self):
        return Tensor(self._a.T, self.device)

    def __repr__(self):
        return f"fake_tensor({self._a!r}, device='{self.device}')"


def _dev(dev):
    return device(dev if dev is not None else "cpu")


def empty(*shape, dtype=float32, device=None):  # noqa: A002
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    return Tensor(np.zeros(shape, dtype.np), _dev(device))


def zeros(*shape, dtype=float32, device=None):  # noqa: A002
    return empty(*shape, dtype=dtype, device=device)


def tensor(data, dtype=None, device=None):  # noqa: A002
    a = np.array(data, dtype=dtype.np if dtype else None)
    return Tensor(a, _dev(device))


def from_numpy(a):
    return Tensor(a, "cpu")

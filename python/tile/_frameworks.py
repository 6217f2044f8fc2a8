"""Per-framework glue used by tile._runtime (called once per Python type, never
per launch) and by the profiler / autotuner.

probe(obj) tells the C++ call path how to convert objects of type(obj):
  conv:      "numpy" (numpy.ndarray: read the array struct), "dlpack"
             (__dlpack__ capsule), "int", "float" (numbers), or "none"
  versioned: __dlpack__ accepts max_version=(1, 0) (DLPack 1.x capsules)
  is_torch:  on CUDA, the default launch stream is torch's current stream
  alloc:     alloc(shape, dtype_name, device_type, device_id) -> new tensor of
             this framework, used for omitted out_idx outputs
  finish:    finish(obj) -> obj applied to allocated outputs (e.g. jax), or None
  export:    a C function obj -> DLPack capsule (torch._C._to_dlpack_versioned)
  exchange:  the type's DLPack C exchange API (__dlpack_c_exchange_api__,
             torch >= 2.10) may be used: no capsule and no Python call per
             tensor, the producer's current stream from C. False for jax
             (immutable arrays: the exchange DLTensor has no read-only flag).
"""

import numbers
import sys

# tile dtype name -> (DLPack code, bits, lanes): the runtime's table
# (TILE_DTYPES in tile_abi.h). The names are numpy's (ml_dtypes' for bfloat16
# and float8) and torch's as well.
from ._runtime import DTYPES

# DLPack device types.
KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_ROCM = 1, 2, 3, 10


def _ml_dtypes():
    try:
        import ml_dtypes
        return ml_dtypes
    except ImportError:  # pragma: no cover - pinned in requirements.txt
        return None


def numpy_dtype(name):
    """numpy dtype for a tile dtype name (those numpy lacks, bfloat16 and
    float8, from ml_dtypes)."""
    import numpy as np
    if name not in DTYPES:
        raise TypeError(f"tile: unknown dtype {name!r}")
    try:
        return np.dtype(name)
    except TypeError:
        pass
    ml = _ml_dtypes()
    if ml is None:
        raise TypeError(f"tile: {name} numpy arrays need ml_dtypes "
                        "(pip install ml_dtypes)")
    return np.dtype(getattr(ml, name))


def numpy_dlpack_dtype(descr):
    """(code, bits, itemsize) of a numpy dtype, or None when DLPack has none.
    Non-native byte order is rejected (None)."""
    import numpy as np
    dt = np.dtype(descr)
    if dt.byteorder == ">" or (dt.byteorder == "=" and sys.byteorder == "big"):
        return None
    for name, (code, bits, _lanes) in DTYPES.items():
        try:
            if dt == numpy_dtype(name):
                return (code, bits, dt.itemsize)
        except TypeError:  # an ml_dtypes type without ml_dtypes
            continue
    return None


# ---- allocators --------------------------------------------------------------

_numpy_dtypes = {}


def numpy_alloc(shape, dtype, device_type, device_id):
    dt = _numpy_dtypes.get(dtype)
    if dt is None:
        import numpy as np
        dt = _numpy_dtypes[dtype] = (np.empty, numpy_dtype(dtype))
    if device_type != KDL_CPU and device_type != KDL_CUDA_HOST:
        raise RuntimeError("tile: numpy cannot allocate an output on device "
                           f"type {device_type}; pass the output tensor")
    return dt[0](shape, dt[1])


def torch_dtype(name):
    """torch dtype for a tile dtype name (torch uses the same names; older
    versions lack the unsigned and float8 ones)."""
    import torch
    dt = getattr(torch, name, None) if name in DTYPES else None
    if not isinstance(dt, torch.dtype):
        raise TypeError(f"tile: torch has no dtype {name}")
    return dt


def torch_alloc(shape, dtype, device_type, device_id):
    import torch
    if device_type == KDL_CPU:
        device = "cpu"
    elif device_type in (KDL_CUDA, KDL_ROCM):
        device = torch.device("cuda", device_id)
    else:
        raise RuntimeError(f"tile: torch cannot allocate on device type {device_type}")
    return torch.empty(shape, dtype=torch_dtype(dtype), device=device)


def cupy_alloc(shape, dtype, device_type, device_id):
    import cupy
    with cupy.cuda.Device(device_id):
        return cupy.empty(shape, dtype=numpy_dtype(dtype))


def _jax_finish(obj):
    import jax.numpy as jnp
    return jnp.asarray(obj)


def _jax_alloc(shape, dtype, device_type, device_id):
    # jax arrays are immutable: the kernel writes a numpy (CPU) / cupy or torch
    # (GPU) buffer that finish() turns into a jax array.
    if device_type == KDL_CPU:
        return numpy_alloc(shape, dtype, device_type, device_id)
    try:
        return torch_alloc(shape, dtype, device_type, device_id)
    except ImportError:
        return cupy_alloc(shape, dtype, device_type, device_id)


def _jax_finish_any(obj):
    import jax.dlpack
    import numpy as np
    if isinstance(obj, np.ndarray):
        return _jax_finish(obj)
    return jax.dlpack.from_dlpack(obj)


def _accepts_max_version(obj):
    try:
        cap = obj.__dlpack__(max_version=(1, 0))
    except TypeError:
        return False
    except BufferError:
        # e.g. a dtype the producer cannot export; still a versioned producer
        return True
    del cap
    return True


def probe(obj):
    """Conversion strategy for type(obj) (see the module docstring)."""
    tp = type(obj)
    mod = tp.__module__.split(".")[0]
    r = {"conv": "none", "versioned": False, "is_torch": False,
         "alloc": None, "finish": None, "export": None, "exchange": True}
    if "numpy" in sys.modules:
        import numpy as np
        if isinstance(obj, np.ndarray):
            r.update(conv="numpy", versioned=_accepts_max_version(obj),
                     alloc=numpy_alloc)
            return r
    if hasattr(obj, "__dlpack__"):
        r["conv"] = "dlpack"
        r["versioned"] = _accepts_max_version(obj)
        if mod == "torch":
            r.update(is_torch=True, alloc=torch_alloc)
            # torch's C exporter: Tensor.__dlpack__ is Python code (stream
            # handshake) and costs microseconds; used when no explicit stream
            # is given (the launch then runs on torch's current stream).
            import torch
            for name in ("_to_dlpack_versioned", "_to_dlpack"):
                fn = getattr(torch._C, name, None)
                if fn is not None:
                    r.update(conv="export", export=fn)
                    break
        elif mod == "cupy":
            r["alloc"] = cupy_alloc
        elif mod in ("jax", "jaxlib"):
            r.update(alloc=_jax_alloc, finish=_jax_finish_any, exchange=False)
        else:
            r["alloc"] = _generic_alloc(obj)
        return r
    if isinstance(obj, numbers.Integral) or hasattr(obj, "__index__"):
        r["conv"] = "int"
    elif isinstance(obj, numbers.Real) or hasattr(obj, "__float__"):
        r["conv"] = "float"
    return r


def _generic_alloc(obj):
    """Allocator for an unknown DLPack framework: its module's empty() if it
    has one (array-API style), else numpy on CPU."""
    mod = sys.modules.get(type(obj).__module__.split(".")[0])
    empty = getattr(mod, "empty", None)
    if empty is None:
        return numpy_alloc

    def alloc(shape, dtype, device_type, device_id):
        if device_type == KDL_CPU:
            try:
                return empty(shape, dtype=numpy_dtype(dtype))
            except Exception:  # noqa: BLE001 - fall back to numpy
                return numpy_alloc(shape, dtype, device_type, device_id)
        return empty(shape, dtype=dtype)

    return alloc


def torch_stream_getter():
    """fn(device_index) -> torch's current CUDA stream as an int (CUstream):
    torch._C._cuda_getCurrentRawStream (a C function, as Triton uses). The C++
    call path looks it up once and calls it directly (when the tensor type
    has no DLPack exchange API, whose current_work_stream is cheaper still)."""
    import torch
    fn = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if fn is None:  # pragma: no cover - older torch
        def fn(i):
            return torch.cuda.current_stream(i).cuda_stream
    return fn


_torch_raw_stream = None


def torch_current_stream(device_index):
    """torch's current CUDA stream on device_index, as an int (CUstream)."""
    global _torch_raw_stream
    if _torch_raw_stream is None:
        _torch_raw_stream = torch_stream_getter()
    return _torch_raw_stream(device_index)


# ---- devices -------------------------------------------------------------------

def cuda_device_count():
    """Visible CUDA devices: torch, else cupy, else the driver (libcuda)."""
    if "torch" in sys.modules or _importable("torch"):
        try:
            import torch
            if torch.cuda.is_available():
                return torch.cuda.device_count()
            return 0
        except Exception:  # noqa: BLE001
            pass
    if _importable("cupy"):
        try:
            import cupy
            return cupy.cuda.runtime.getDeviceCount()
        except Exception:  # noqa: BLE001
            pass
    return _libcuda_device_count()


def _importable(name):
    import importlib.util
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _libcuda_device_count():
    import ctypes
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0
    if lib.cuInit(0) != 0:
        return 0
    n = ctypes.c_int(0)
    if lib.cuDeviceGetCount(ctypes.byref(n)) != 0:
        return 0
    return n.value


def cuda_chip(device=0):
    """sm_XY of a CUDA device (sm_90a for compute capability 9.0)."""
    major = minor = None
    try:
        import torch
        if torch.cuda.is_available():
            major, minor = torch.cuda.get_device_capability(device)
    except ImportError:
        pass
    if major is None:
        try:
            import cupy
            cc = cupy.cuda.Device(device).compute_capability
            major, minor = int(cc[:-1]), int(cc[-1])
        except Exception:  # noqa: BLE001
            pass
    if major is None:
        import ctypes
        try:
            lib = ctypes.CDLL("libcuda.so.1")
            lib.cuInit(0)
            dev = ctypes.c_int()
            lib.cuDeviceGet(ctypes.byref(dev), device)
            a, b = ctypes.c_int(), ctypes.c_int()
            lib.cuDeviceGetAttribute(ctypes.byref(a), 75, dev)  # CC major
            lib.cuDeviceGetAttribute(ctypes.byref(b), 76, dev)  # CC minor
            major, minor = a.value, b.value
        except OSError:
            return None
    suffix = "a" if major >= 9 else ""
    return f"sm_{major}{minor}{suffix}"


def hip_torch():
    """torch when it is a ROCm (HIP) build with a visible AMD GPU, else None.
    Under HIP builds torch.cuda is ROCm's API (kDLROCM tensors, hipStream_t
    streams from torch's current stream)."""
    if "torch" not in sys.modules and not _importable("torch"):
        return None
    try:
        import torch
        if getattr(torch.version, "hip", None) and torch.cuda.is_available():
            return torch
    except Exception:  # noqa: BLE001
        pass
    return None


def hip_chip(device=0):
    """gfxNNN of an AMD GPU (gcnArchName without its feature suffixes, e.g.
    'gfx942:sramecc+:xnack-' -> 'gfx942'), or None when not known."""
    torch = hip_torch()
    if torch is None:
        return None
    name = getattr(torch.cuda.get_device_properties(device), "gcnArchName", "")
    return name.split(":")[0] or None

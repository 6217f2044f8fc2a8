"""tile.compile + Kernel calls on the CPU target with numpy: numerics of the
examples, out_idx, bf16, scalars, DLPack objects, errors, sources, export."""

import os

import numpy as np

import pytest

from tile_testutil import E2E_KERNELS, EXAMPLES, elementwise_source

ml_dtypes = pytest.importorskip("ml_dtypes")


def rng(seed=0):
    return np.random.default_rng(seed)


@pytest.fixture(scope="module")
def add(tile):
    return tile.compile(EXAMPLES / "elementwise_add.mlir", target="cpu")


# ---- numerics of the examples ------------------------------------------------

@pytest.mark.parametrize("backend", ["ffi", "native"])
def test_elementwise_add(tile, backend):
    k = tile.compile(str(EXAMPLES / "elementwise_add.mlir"), target="cpu",
                     execution_backend=backend)
    assert k.backend == backend
    r = rng(1)
    a = r.standard_normal(5000).astype(np.float32)
    b = r.standard_normal(5000).astype(np.float32)
    np.testing.assert_array_equal(k(a, b), a + b)


def test_reduce_rows(tile):
    k = tile.compile(EXAMPLES / "reduce_rows.mlir", target="cpu")
    x = rng(2).standard_normal((77, 300)).astype(np.float32)
    np.testing.assert_allclose(k(x), x.sum(axis=1), rtol=1e-4, atol=1e-4)


def test_softmax(tile):
    k = tile.compile(EXAMPLES / "softmax.mlir", target="cpu")
    x = rng(3).standard_normal((19, 1024)).astype(np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(k(x), e / e.sum(axis=1, keepdims=True),
                               rtol=1e-5, atol=1e-6)


def test_gemm_f16(tile):
    k = tile.compile(EXAMPLES / "gemm.mlir", target="cpu")
    r = rng(4)
    a = r.standard_normal((65, 40)).astype(np.float16)
    b = r.standard_normal((40, 33)).astype(np.float16)
    c = k(a, b)
    assert c.dtype == np.float16 and c.shape == (65, 33)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.linalg.norm(c - ref) / np.linalg.norm(ref) < 2e-3


def test_scalars(tile):
    k = tile.compile(E2E_KERNELS / "axpy3d.mlir", target="cpu")
    r = rng(5)
    x = r.standard_normal((3, 9, 40)).astype(np.float16)
    y = r.standard_normal((3, 9, 40)).astype(np.float32)
    ref = 0.5 * x.astype(np.float32) + y + 2.0
    assert k(x, y, 0.5, 2, np.int32(2)) is None  # no out_idx: returns None
    np.testing.assert_allclose(y, ref, rtol=1e-3, atol=1e-3)
    with pytest.raises(tile.ArgumentError, match="batch_step"):
        k(x, y, 0.5, 2.0, 1.5)  # a float for an int32 param


# ---- out_idx -------------------------------------------------------------------

def test_out_idx_numpy_out(add):
    a = np.arange(10, dtype=np.float32)
    b = np.ones(10, dtype=np.float32)
    c = add(a, b)                       # C omitted: allocated, numpy out
    assert isinstance(c, np.ndarray) and c.dtype == np.float32
    np.testing.assert_array_equal(c, a + 1)
    c2 = np.zeros(10, np.float32)
    assert add(a, b, c2) is c2          # given: returned as is
    np.testing.assert_array_equal(c2, a + 1)
    c3 = add(a, b, None)                # None placeholder: allocated
    np.testing.assert_array_equal(c3, a + 1)
    assert add.out_idx == [2]


def test_out_idx_from_compile_negative(tile):
    src = elementwise_source().replace(', tile.output}', '}')
    k = tile.compile(src, out_idx=-1, target="cpu")
    assert k.out_idx == [2]
    a = np.ones(7, np.float32)
    np.testing.assert_array_equal(k(a, a), 2 * a)
    assert tile.compile(src, target="cpu").out_idx == []


def test_noncontiguous_input_rejected(add):
    a = np.ones(20, np.float32)[::2]
    with pytest.raises(ValueError, match="not contiguous"):
        add(a, np.ones(10, np.float32))


def test_zero_length(add):
    a = np.ones(0, np.float32)
    assert add(a, a).shape == (0,)


# ---- bf16 / fp8 dtypes (ml_dtypes) -------------------------------------------

def test_bf16(tile):
    if tile._runtime.NUMPY_VIA_DLPACK:
        pytest.skip("numpy's __dlpack__ cannot export ml_dtypes arrays")
    k = tile.compile(elementwise_source(dtype="bf16", name="ew_bf16"), target="cpu")
    r = rng(6)
    a = r.standard_normal(3000).astype(ml_dtypes.bfloat16)
    b = r.standard_normal(3000).astype(ml_dtypes.bfloat16)
    c = k(a, b)
    assert c.dtype == ml_dtypes.bfloat16
    ref = (a.astype(np.float32) + b.astype(np.float32)).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(c.astype(np.float32), ref.astype(np.float32))
    with pytest.raises(tile.ArgumentError, match="expected dtype bfloat16, got float16"):
        k(a.astype(np.float16), b)


# ---- bad arguments -----------------------------------------------------------

def test_wrong_dtype_message_from_runtime(add):
    a = np.ones(8, np.float64)
    b = np.ones(8, np.float32)
    with pytest.raises(ValueError) as e:
        add(a, b)
    assert str(e.value) == "argument 'A' (#0): expected dtype float32, got float64"
    assert e.value.status == "INVALID_ARGUMENT"


def test_bad_arguments(tile, add):
    a = np.ones(8, np.float32)
    with pytest.raises(tile.ArgumentError, match="takes 3 arguments .or 2"):
        add(a)
    with pytest.raises(tile.ArgumentError, match="symbol 'N'"):
        add(a, np.ones(9, np.float32))
    with pytest.raises(TypeError, match="cannot pass an object of type 'str'"):
        add(a, "b")
    with pytest.raises(TypeError, match="unexpected keyword"):
        add(a, a, bogus=1)
    ro = np.ones(8, np.float32)
    ro.flags.writeable = False
    add(ro, ro)  # read-only inputs are fine
    with pytest.raises(tile.ArgumentError, match="read-only"):
        add(a, a, ro)
    with pytest.raises(tile.ArgumentError, match="expected rank 1, got 2"):
        add(np.ones((2, 4), np.float32), a)


# ---- DLPack objects (the generic path) ----------------------------------------

class DLPackOnly:
    """A foreign tensor type: only __dlpack__ / __dlpack_device__."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None, max_version=None, **kw):
        if max_version is None:
            return self.array.__dlpack__()
        return self.array.__dlpack__(max_version=max_version)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


class LegacyDLPack(DLPackOnly):
    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()


@pytest.mark.parametrize("cls", [DLPackOnly, LegacyDLPack])
def test_dlpack_protocol_objects(add, cls):
    a = np.arange(50, dtype=np.float32)
    b = np.full(50, 2.0, np.float32)
    c = np.zeros(50, np.float32)
    out = add(cls(a), cls(b), cls(c))
    assert isinstance(out, cls)
    np.testing.assert_array_equal(c, a + 2)
    # omitted output of an unknown framework: numpy
    np.testing.assert_array_equal(add(cls(a), cls(b)), a + 2)


# ---- sources, info, export / load -------------------------------------------

def test_info_sources_export(tile, add, tmp_path):
    info = add.info
    assert info["name"] == "elementwise_add" and info["target"] == "cpu"
    assert [p["name"] for p in info["params"]] == ["A", "B", "C"]
    assert info["symbols"] == ["N"] and "mlir" in info["sections"]
    assert "func.func @elementwise_add" in add.get_source("mlir")
    assert "define" in add.get_source("llvm")
    with pytest.raises(ValueError, match="has no ptx source.*metadata"):
        add.get_source("ptx")
    with pytest.raises(ValueError, match="unknown kind"):
        add.get_source("sass")
    path = add.export(tmp_path / "add.tileb")
    k2 = tile.load(path, execution_backend="ffi")
    assert k2.backend == "ffi" and k2.name == "elementwise_add"
    a = np.ones(4, np.float32)
    np.testing.assert_array_equal(k2(a, a), 2 * a)
    bad = tmp_path / "bad.tileb"
    bad.write_bytes(b"TILEBNDL" + b"\0" * 100)
    with pytest.raises(tile.TileError):
        tile.load(bad)


def _cuda_env(tile):
    """tilec's environment for a cuda compile (tile.toolchain), skipping the
    test when this machine has no CUDA toolchain."""
    try:
        return tile.toolchain.tilec_env(["--target=cuda"])
    except tile.toolchain.ToolchainError as e:
        pytest.skip(str(e))


def test_load_without_device_inspects_any_bundle(tile, tmp_path, monkeypatch):
    """tile.load(path, device=None): a CUDA bundle opens on a machine without
    a CUDA driver (none here; TILE_CUDA_DRIVER makes sure of it)."""
    import subprocess
    path = tmp_path / "softmax.tileb"
    proc = subprocess.run([tile.find_tilec(), str(EXAMPLES / "softmax.mlir"),
                           "--target=cuda", "--chip=sm_90a", "-o", str(path)],
                          capture_output=True, text=True,
                          env=_cuda_env(tile))
    if proc.returncode != 0 and "ptxas not found" in proc.stderr:
        pytest.skip("no CUDA toolkit (ptxas) here")
    assert proc.returncode == 0, proc.stderr
    monkeypatch.setenv("TILE_CUDA_DRIVER", str(tmp_path / "no-libcuda.so"))
    k = tile.load(path, device=None)
    assert k.inspect_only and k.backend == "none"
    assert (k.name, k.target_kind, k.target_chip) == ("softmax", "cuda", "sm_90a")
    assert [p["name"] for p in k.params] == ["X", "Y"] and k.out_idx == [1]
    assert k.sections == ["metadata", "cubin", "ptx", "native.so", "cuda",
                          "mlir"]
    assert ".entry softmax_kernel(" in k.get_source("ptx")
    assert 'extern "C" __global__' in k.get_source("cuda")
    assert "func.func @softmax" in k.get_source("mlir")
    assert k.info["inspect_only"] and k.info["grid"] is not None
    assert "backend  none" in k.describe() and "ptx " in k.describe()
    x = np.ones((2, 1024), np.float32)
    with pytest.raises(tile.TileError, match="inspection only") as e:
        k(x)
    assert e.value.status == "BACKEND_UNAVAILABLE"
    import pickle
    assert pickle.loads(pickle.dumps(k)).inspect_only
    with pytest.raises(tile.TileError, match="no CUDA driver"):
        tile.load(path)  # device="auto": loads the device code
    with pytest.raises(ValueError, match="holds a 'cuda' kernel.*device 'cpu'"):
        tile.load(path, device="cpu")
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        tile.load(path, device="tpu")


def test_nvrtc_env_finds_pip_nvrtc(tile, tmp_path, monkeypatch):
    """Backend nvrtc: when the loader finds no libnvrtc and TILE_NVRTC_PATH
    is unset, the runtime is pointed at the pip nvidia-cuda-nvrtc wheel's
    library (here a fake one; its builtins library is not NVRTC)."""
    import sys
    lib = tmp_path / "site" / "nvidia" / "cu13" / "lib"
    lib.mkdir(parents=True)
    (lib / "libnvrtc.so.13").write_bytes(b"")
    (lib / "libnvrtc-builtins.so.13.0").write_bytes(b"")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(tile.compiler, "_system_has_nvrtc", lambda: False)
    monkeypatch.setenv("TILE_NVRTC_PATH", "")
    sys.modules.pop("nvidia", None)
    try:
        tile.compiler.nvrtc_env()
        assert os.environ["TILE_NVRTC_PATH"] == str(lib / "libnvrtc.so.13")
        monkeypatch.setenv("TILE_NVRTC_PATH", "/opt/nvrtc/libnvrtc.so")
        tile.compiler.nvrtc_env()  # the caller's choice stays
        assert os.environ["TILE_NVRTC_PATH"] == "/opt/nvrtc/libnvrtc.so"
    finally:
        sys.modules.pop("nvidia", None)


def test_backend_validation(tile):
    src = EXAMPLES / "elementwise_add.mlir"
    with pytest.raises(ValueError, match="unknown execution_backend 'bogus'.*auto, ffi, native"):
        tile.compile(src, target="cpu", execution_backend="bogus")
    with pytest.raises(ValueError, match="'nvrtc' cannot run 'cpu'.*auto, ffi, native"):
        tile.compile(src, target="cpu", execution_backend="nvrtc")
    # nvrtc runs cuda kernels (the bundle's CUDA C++, compiled at load).
    assert tile.compiler.check_backend("cuda", "nvrtc") == "nvrtc"
    with pytest.raises(ValueError, match="'metal-torch' cannot run 'cpu'"):
        tile.compile(src, target="cpu", execution_backend="metal-torch")
    with pytest.raises(ValueError, match="unknown target"):
        tile.compile(src, target="tpu")
    # metal kernels run through the package's metal-torch (test/Metal).
    assert tile.compiler.check_backend("metal", "auto") == "auto"
    assert tile.compiler.check_backend("metal", "metal-torch") == "metal-torch"
    with pytest.raises(ValueError, match="'ffi' cannot run 'metal'"):
        tile.compiler.check_backend("metal", "ffi")
    cpu = tile.compile(src, target="cpu")
    with pytest.raises(ValueError, match="'metal-torch' cannot run 'cpu'"):
        tile.Kernel(cpu.bundle, "metal-torch")


def test_abi_tables_come_from_the_runtime(tile):
    """The dtype, target and backend tables have one home (tile_abi.h,
    tile_targets.h); Python reads them from tile._runtime."""
    from tile import _frameworks, _runtime, compiler
    assert _runtime.DTYPES["bfloat16"] == (4, 16, 1)
    assert _runtime.DTYPES["float8_e5m2"] == (12, 8, 1)
    assert _frameworks.DTYPES is _runtime.DTYPES
    assert compiler.TARGETS == _runtime.TARGETS == ("cpu", "cuda", "hip", "metal")
    assert compiler.ALL_BACKENDS == tuple(_runtime.BACKENDS)
    assert compiler.ALLOWED_BACKENDS["cpu"] == ("auto", "ffi", "native")
    assert _runtime.BACKENDS["native"] == {
        "targets": ("cpu", "cuda", "hip"), "compiled": True,
        "implemented": True}
    # Every table dtype maps to numpy and back to its DLPack encoding.
    for name, (code, bits, lanes) in _runtime.DTYPES.items():
        dt = _frameworks.numpy_dtype(name)
        assert _frameworks.numpy_dlpack_dtype(dt) == (code, bits, dt.itemsize)
        assert dt.itemsize * 8 == bits * lanes
    assert _frameworks.numpy_dlpack_dtype(np.dtype(np.complex64)) is None
    assert _frameworks.numpy_dlpack_dtype(np.dtype(">f4")) is None


def test_compile_error(tile):
    with pytest.raises(tile.CompileError, match="tilec failed"):
        tile.compile("func.func @broken(", target="cpu")


def test_auto_target_is_cpu_here(tile):
    assert tile.detect_target() in ("cpu", "cuda")


def test_profiler(add):
    prof = add.get_profiler(N=1 << 16)
    ms = prof.do_bench(warmup=2, rep=10)
    assert ms > 0
    a, b = prof.make_inputs()
    assert a.shape == (1 << 16,) and a.dtype == np.float32
    np.testing.assert_array_equal(prof.run(a, b), a + b)
    with pytest.raises(ValueError, match="symbol 'N'"):
        add.get_profiler().do_bench()


def test_pickle_and_threads(add):
    import pickle
    import threading
    k = pickle.loads(pickle.dumps(add))
    assert k.name == add.name and k.backend == add.backend
    a = np.arange(3000, dtype=np.float32)
    errors = []

    def work():
        try:
            for _ in range(50):
                np.testing.assert_array_equal(k(a, a), 2 * a)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


# ---- the DLPack C exchange API (type.__dlpack_c_exchange_api__) --------------

def _exchange_producer(capsule=True, major=1, fail=False):
    """A tensor type publishing a DLPack exchange API table (ctypes stand-in
    for torch >= 2.10's): capsule=True the DLPack 1.3 form
    (__dlpack_c_exchange_api__, PyCapsule), else the 1.2 form
    (__c_dlpack_exchange_api__, int address)."""
    import ctypes as C

    class Device(C.Structure):
        _fields_ = [("device_type", C.c_int), ("device_id", C.c_int32)]

    class DType(C.Structure):
        _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8),
                    ("lanes", C.c_uint16)]

    class DLTensor(C.Structure):
        _fields_ = [("data", C.c_void_p), ("device", Device),
                    ("ndim", C.c_int32), ("dtype", DType),
                    ("shape", C.c_void_p), ("strides", C.c_void_p),
                    ("byte_offset", C.c_uint64)]

    class Header(C.Structure):
        _fields_ = [("major", C.c_uint32), ("minor", C.c_uint32),
                    ("prev_api", C.c_void_p)]

    from_obj = C.CFUNCTYPE(C.c_int, C.c_void_p, C.POINTER(DLTensor))
    stream = C.CFUNCTYPE(C.c_int, C.c_int, C.c_int32, C.POINTER(C.c_void_p))

    class API(C.Structure):
        _fields_ = [("header", Header), ("allocator", C.c_void_p),
                    ("managed_from", C.c_void_p), ("managed_to", C.c_void_p),
                    ("dltensor_from", from_obj), ("current_stream", stream)]

    calls = []

    def fill(pyobj, out):
        try:
            obj = C.cast(pyobj, C.py_object).value
            if fail:  # a C producer would set a Python error; ctypes can't
                return -1
            a = obj.array
            out[0].data = a.ctypes.data
            out[0].device = Device(1, 0)
            out[0].ndim = a.ndim
            out[0].dtype = DType(2, 32, 1)
            out[0].shape = C.addressof(obj.shape)
            out[0].strides = C.addressof(obj.strides)
            out[0].byte_offset = 0
            calls.append(obj)
            return 0
        except Exception:  # noqa: BLE001 - ctypes prints it
            return -1

    def no_stream(dev_type, dev_id, out):
        out[0] = None
        return 0

    api = API(Header(major, 3 if capsule else 2, None), None, None, None,
              from_obj(fill), stream(no_stream))
    if capsule:
        new = C.pythonapi.PyCapsule_New
        new.restype = C.py_object
        new.argtypes = [C.c_void_p, C.c_char_p, C.c_void_p]
        name = C.create_string_buffer(b"dlpack_exchange_api")
        attr = ("__dlpack_c_exchange_api__",
                new(C.addressof(api), name, None))
    else:
        name = None
        attr = ("__c_dlpack_exchange_api__", C.addressof(api))

    class Tensor(DLPackOnly):
        def __init__(self, array):
            super().__init__(array)
            n = array.ndim
            self.shape = (C.c_int64 * n)(*array.shape)
            self.strides = (C.c_int64 * n)(
                *(s // array.itemsize for s in array.strides))

    setattr(Tensor, attr[0], attr[1])
    Tensor._keep = (api, name, fill, no_stream)  # alive with the type
    return Tensor, calls


@pytest.mark.parametrize("capsule", [True, False])
def test_dlpack_exchange_api(tile, add, capsule):
    from tile import _runtime
    Tensor, calls = _exchange_producer(capsule=capsule)
    a = np.arange(50, dtype=np.float32)
    b = np.full(50, 2.0, np.float32)
    c = np.zeros(50, np.float32)
    ta, tb, tc = Tensor(a), Tensor(b), Tensor(c)
    expect = "exchange" if _runtime.DLPACK_EXCHANGE else "dlpack"
    assert _runtime.conversion(ta) == expect
    assert add(ta, tb, tc) is tc
    np.testing.assert_array_equal(c, a + 2)
    if expect == "exchange":
        assert calls == [ta, tb, tc]  # no capsule: the table filled them
    # omitted output: allocated through the capsule route (numpy here)
    np.testing.assert_array_equal(add(ta, tb), a + 2)
    # the runtime still checks what the producer reported
    with pytest.raises(ValueError):
        add(ta, Tensor(np.ones(49, np.float32)), tc)


def test_dlpack_exchange_api_rejected_or_failing(tile, add):
    from tile import _runtime
    if not _runtime.DLPACK_EXCHANGE:
        pytest.skip("TILE_PY_NO_DLPACK_EXCHANGE is set")
    Tensor, calls = _exchange_producer(major=2)  # unknown major: not used
    assert _runtime.conversion(Tensor(np.ones(3, np.float32))) == "dlpack"
    Tensor, calls = _exchange_producer(fail=True)
    x = np.ones(5, np.float32)
    with pytest.raises(RuntimeError, match="dltensor_from_py_object_no_sync"):
        add(Tensor(x), Tensor(x), Tensor(x))

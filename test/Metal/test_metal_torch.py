"""The metal-torch launcher (tile._metal) against the fake torch.mps of
fake_torch/ (no Apple hardware here): the shader source handed to
compile_shader, the dispatch parameters (threads, group_size, buffers, the
argument words of the Metal kernel ABI), symbolic dims, out_idx outputs,
argument checks, and the numerics of a few kernels run on the CPU shim.

Run by utils/check.sh's metal stage (its own pytest process: the fake
`torch` must not meet a real one)."""

import os
import pathlib
import struct
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
EXAMPLES = REPO / "examples"


@pytest.fixture
def torch(monkeypatch):
    """The fake torch, imported fresh, removed afterwards."""
    monkeypatch.syspath_prepend(str(HERE))
    monkeypatch.syspath_prepend(str(HERE / "fake_torch"))
    for name in [m for m in sys.modules if m == "torch" or
                 m.startswith("torch.")]:
        monkeypatch.delitem(sys.modules, name)
    import torch as fake
    assert fake.__version__ == "0.0-fake-mps"
    fake.mps.compiled.clear()
    fake.mps.dispatches.clear()
    fake.mps.execute = True
    yield fake
    for name in [m for m in sys.modules if m == "torch" or
                 m.startswith("torch.")]:
        del sys.modules[name]


@pytest.fixture
def tile():
    import tile as t
    from tile import _metal
    _metal._libraries.clear()
    return t


def mps(torch, array):
    return torch.Tensor(np.ascontiguousarray(array), "mps")


def test_auto_is_metal_torch_and_msl_source(torch, tile):
    k = tile.compile(str(EXAMPLES / "elementwise_add.mlir"), target="metal")
    assert k.backend == "metal-torch"
    assert k.target_kind == "metal"
    src = k.get_source("msl")
    assert "kernel void elementwise_add_kernel(" in src
    assert src == k.section("msl").decode()
    k2 = tile.compile(str(EXAMPLES / "elementwise_add.mlir"),
                      target="metal:apple-m3",
                      execution_backend="metal-torch")
    assert k2.target_chip == "apple-m3"
    with pytest.raises(ValueError, match="cannot run 'metal' kernels"):
        tile.compile(str(EXAMPLES / "elementwise_add.mlir"), target="metal",
                     execution_backend="ffi")


def test_dispatch_parameters_and_out_idx(torch, tile):
    k = tile.compile(str(EXAMPLES / "elementwise_add.mlir"), target="metal",
                     out_idx=[2])
    n = 1000
    a = np.arange(n, dtype=np.float32)
    b = np.full(n, 0.5, np.float32)
    c = k(mps(torch, a), mps(torch, b))
    # One compile_shader with the bundle's own source.
    assert torch.mps.compiled == [k.get_source("msl")]
    (d,) = torch.mps.dispatches
    assert d["kernel"] == k.launch_info["entry"] == "elementwise_add_kernel"
    block = tuple(k.block)
    grid = k.launch_grid([n], [0, 0, 0])
    assert grid == ((n + 1023) // 1024, 1, 1)
    assert d["group_size"] == block
    assert d["threads"] == tuple(g * b for g, b in zip(grid, block))
    *buffers, desc = d["args"]
    assert buffers[0].numpy() is not None and len(buffers) == 3
    # Per tensor: offset 0, size N, stride 1.
    assert list(desc.numpy()) == [0, n, 1] * 3
    assert desc.dtype == torch.int64 and desc.device.type == "mps"
    # The out_idx output: allocated on mps, returned, computed.
    assert c.device.type == "mps" and c.dtype == torch.float32
    assert c.shape == (n,)
    np.testing.assert_array_equal(c.numpy(), a + b)
    # The library is compiled once per process.
    k(mps(torch, a), mps(torch, b))
    assert len(torch.mps.compiled) == 1
    assert len(torch.mps.dispatches) == 2


def test_empty_grid_dispatches_nothing(torch, tile):
    k = tile.compile(str(EXAMPLES / "elementwise_add.mlir"), target="metal",
                     out_idx=[2])
    e = np.zeros(0, np.float32)
    c = k(mps(torch, e), mps(torch, e))
    assert c.shape == (0,)
    assert torch.mps.dispatches == []


def test_scalar_words_and_2d_symbols(torch, tile):
    k = tile.compile(str(EXAMPLES / "rmsnorm.mlir"), target="metal",
                     out_idx=[2])
    m, n = 3, 1024
    r = np.random.default_rng(0)
    x = r.standard_normal((m, n)).astype(np.float16)
    w = r.standard_normal(n).astype(np.float16)
    eps = 1e-5
    y = k(mps(torch, x), mps(torch, w), eps)
    (d,) = torch.mps.dispatches
    words = list(d["args"][-1].numpy())
    # X: offset, M, N, strides N, 1; W: offset, N, 1; Y as X; then eps.
    assert words[:5] == [0, m, n, n, 1]
    assert words[5:8] == [0, n, 1]
    assert words[13] == struct.unpack("<I", struct.pack("<f", eps))[0]
    values = {"M": m, "N": n}
    grid = k.launch_grid([values[s] for s in k.symbols], [0] * 4)
    assert d["threads"] == tuple(g * b for g, b in zip(grid, k.block))
    assert d["group_size"] == tuple(k.block)
    xf = x.astype(np.float64)
    ref = xf / np.sqrt((xf ** 2).mean(axis=1, keepdims=True) + eps) * w
    assert np.abs(y.numpy().astype(np.float64) - ref).max() < 2e-2


def test_argument_checks(torch, tile):
    k = tile.compile(str(EXAMPLES / "elementwise_add.mlir"), target="metal",
                     out_idx=[2])
    torch.mps.execute = False
    a = np.zeros(8, np.float32)
    with pytest.raises(tile.ArgumentError, match="dtype torch.float16, "
                       "expected float32"):
        k(mps(torch, a.astype(np.float16)), mps(torch, a))
    with pytest.raises(tile.ArgumentError, match="is on device 'cpu'"):
        k(torch.Tensor(a, "cpu"), mps(torch, a))
    with pytest.raises(tile.ArgumentError, match="has rank 2, expected 1"):
        k(mps(torch, a.reshape(2, 4)), mps(torch, a))
    with pytest.raises(tile.ArgumentError, match="symbol 'N' is 8"):
        k(mps(torch, a), mps(torch, np.zeros(4, np.float32)))
    strided = torch.Tensor(np.zeros(16, np.float32)[::2], "mps")
    with pytest.raises(tile.ArgumentError, match="must be contiguous"):
        k(mps(torch, a), strided)
    with pytest.raises(tile.ArgumentError, match="must be a torch tensor"):
        k(a, mps(torch, a))
    with pytest.raises(tile.ArgumentError, match="takes 3 arguments"):
        k(mps(torch, a))
    with pytest.raises(tile.ArgumentError, match="pass no stream"):
        k(mps(torch, a), mps(torch, a), stream=1)
    assert torch.mps.dispatches == []


def test_gemm_numerics_on_the_shim(torch, tile):
    k = tile.compile(str(EXAMPLES / "gemm.mlir"), target="metal", out_idx=[2])
    r = np.random.default_rng(1)
    a = r.standard_normal((70, 48)).astype(np.float16)
    b = r.standard_normal((48, 130)).astype(np.float16)
    c = k(mps(torch, a), mps(torch, b))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    err = np.abs(c.numpy().astype(np.float64) - ref).max()
    assert err < 5e-2 * max(1.0, np.abs(ref).max()) / 10, err


def test_load_inspect_and_pickle(torch, tile, tmp_path):
    import pickle
    k = tile.compile(str(EXAMPLES / "softmax.mlir"), target="metal")
    path = k.export(tmp_path / "softmax.tileb")
    info = tile.load(path, device=None)
    assert info.inspect_only and info.target_kind == "metal"
    loaded = tile.load(path)
    assert loaded.backend == "metal-torch"
    again = pickle.loads(pickle.dumps(loaded))
    assert again.backend == "metal-torch"
    assert again.get_source("msl") == k.get_source("msl")


def test_no_torch_is_a_clear_error(tile, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    k = tile.compile(str(EXAMPLES / "elementwise_add.mlir"), target="metal",
                     out_idx=[2])
    with pytest.raises(tile.TileError, match="needs PyTorch with MPS"):
        k(np.zeros(4, np.float32), np.zeros(4, np.float32))


def test_c_runtime_refuses_metal(tile):
    k = tile.compile(str(EXAMPLES / "elementwise_add.mlir"), target="metal")
    from tile import _runtime
    with pytest.raises(tile.TileError, match="metal-torch"):
        _runtime.KernelHandle(k.bundle, "auto", False)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"] + sys.argv[1:]))

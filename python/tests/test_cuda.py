"""The package on an NVIDIA GPU (run on the GPU host by utils/gpu/run.sh).

The GPU host has no compiler: the bundles are compiled on the build host by
utils/gpu/prepare.sh into .gpu/examples/NAME.CHIP.tileb and loaded with
tile.load. Skipped where torch has no CUDA device or the bundles are absent."""

import os
import pathlib

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
tile = pytest.importorskip("tile")

BUNDLES = pathlib.Path(os.environ.get(
    "TILE_GPU_EXAMPLES",
    pathlib.Path(__file__).resolve().parents[2] / ".gpu" / "examples"))
CHIPS = ["sm_90a", "sm_80"]  # sm_80 runs through the PTX JIT on an H200
# nvrtc: the bundle's CUDA C++ compiled by NVRTC for the device at load.
BACKENDS = ["ffi", "native", "nvrtc"]


def bundle(name, chip):
    path = BUNDLES / f"{name}.{chip}.tileb"
    if not path.exists():
        pytest.skip(f"{path} not prepared (utils/gpu/prepare.sh)")
    return path


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_torch_in_torch_out(chip, backend):
    k = tile.load(bundle("elementwise_add", chip), execution_backend=backend)
    assert k.backend == backend
    a = torch.randn(5000, device="cuda")
    b = torch.randn(5000, device="cuda")
    c = k(a, b)  # the omitted output is allocated by torch on a's device
    assert isinstance(c, torch.Tensor) and c.is_cuda
    torch.cuda.synchronize()
    assert torch.equal(c, a + b)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gemm_matches_torch(backend):
    k = tile.load(bundle("gemm", "sm_90a"), execution_backend=backend)
    a = torch.randn(300, 200, device="cuda", dtype=torch.float16)
    b = torch.randn(200, 260, device="cuda", dtype=torch.float16)
    c = torch.full((300, 260), float("nan"), device="cuda", dtype=torch.float16)
    k(a, b, c)
    ref = a.double() @ b.double()
    err = (c.double() - ref).norm() / ref.norm()
    assert err < 2e-3, err


def test_variant_rules_in_info():
    """k.info's variants carry the per-launch rules (C API
    tile_kernel_variant_rules): examples/gemm.mlir on sm_90a has a split-K
    variant, narrow ones (max_rows 16 and 64 over A and C) and a coarse
    one."""
    variants = tile.load(bundle("gemm", "sm_90a")).info["variants"]
    by = {v["kernel"]: v for v in variants}
    sk = by["gemm_kernel_sm90_sk"]
    assert sk["split_k"] is not None and sk["split_k"][2] == 64
    assert sk["max_tiles"] > 0 and sk["coarsen"] == (1, 1, 1)
    assert sk["split"] == 1 and sk["max_rows"] == 0
    assert by["gemm_kernel_sm90_nr16"]["max_rows"] == 16
    assert by["gemm_kernel_sm90_nr16"]["row_params"] == [0, 2]
    wide = by["gemm_kernel_sm90_wide"]
    assert wide["coarsen"] != (1, 1, 1) and wide["coarse_speedup"] >= 100
    assert wide["split_k"] is None


def test_split_k_launches_of_different_shapes_in_sequence(monkeypatch):
    """Split-K launches of one kernel on one stream with different tile and
    slice counts reuse one workspace: each must find its arrival counters at
    0, whatever the previous launch's partial sums left (the first layout
    put the counters after tiles x S partial slots, so a launch with more
    tiles x S read a partial sum as a counter: wrong results)."""
    k = tile.load(bundle("gemm", "sm_90a"))
    shapes = [(1000, 1000, 1000, "16"), (1024, 1024, 1024, "2"),
              (512, 512, 16384, "auto"), (64, 4096, 4096, "auto"),
              (1024, 1024, 1024, "5"), (256, 256, 8192, "auto"),
              (1000, 1000, 1000, "16"), (512, 512, 16384, "3")]
    for m, n, kk, slices in shapes:
        monkeypatch.setenv("TILE_SPLIT_K", slices)
        a = torch.randn(m, kk, device="cuda", dtype=torch.float16)
        b = torch.randn(kk, n, device="cuda", dtype=torch.float16)
        c = torch.full((m, n), float("nan"), device="cuda",
                       dtype=torch.float16)
        k(a, b, c)
        ref = a.double() @ b.double()
        err = ((c.double() - ref).norm() / ref.norm()).item()
        assert err < 2e-3, (m, n, kk, slices, err)


def test_runs_on_torch_current_stream():
    k = tile.load(bundle("elementwise_add", "sm_90a"))
    a = torch.randn(1 << 20, device="cuda")
    b = torch.randn(1 << 20, device="cuda")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        c = k(a, b)  # default: torch's current stream, i.e. s
        s.synchronize()
    assert torch.equal(c, a + b)
    c2 = torch.empty_like(a)
    k(a, b, c2, stream=s.cuda_stream)  # an explicit stream handle
    s.synchronize()
    assert torch.equal(c2, a + b)


def test_wrong_device_is_rejected():
    k = tile.load(bundle("elementwise_add", "sm_90a"))
    a = torch.randn(16)  # host tensor for a CUDA kernel
    with pytest.raises(Exception, match="argument 'A'"):
        k(a, a.clone())


def test_do_bench_uses_cuda_events():
    k = tile.load(bundle("gemm", "sm_90a"))
    a = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    b = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    c = torch.empty(1024, 1024, device="cuda", dtype=torch.float16)
    ms = k.get_profiler().do_bench(warmup=5, rep=20, inputs=[a, b, c])
    assert 0 < ms < 100


def test_launch_orders_after_pending_work_on_current_stream():
    # The default stream is torch's current one (from the DLPack exchange
    # API's current_work_stream, or torch._C._cuda_getCurrentRawStream): the
    # kernel must see the copy queued before it on that (non-blocking) stream.
    k = tile.load(bundle("elementwise_add", "sm_90a"))
    n = 1 << 20
    x = torch.randn(n, device="cuda")
    b = torch.randn(n, device="cuda")
    a = torch.zeros(n, device="cuda")
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(20_000_000)  # keeps s busy for milliseconds
        a.copy_(x)
        c = k(a, b)
    s.synchronize()
    assert torch.equal(c, x + b)


def test_torch_conversion_path():
    from tile import _runtime
    has_api = any(hasattr(torch.Tensor, n) for n in (
        "__dlpack_c_exchange_api__", "__c_dlpack_exchange_api__"))
    expect = "exchange" if has_api and _runtime.DLPACK_EXCHANGE else "export"
    assert _runtime.conversion(torch.zeros(4, device="cuda")) == expect
    k = tile.load(bundle("elementwise_add", "sm_90a"))
    # a torch.Tensor subclass takes the same route
    p = torch.nn.Parameter(torch.randn(5000, device="cuda"),
                           requires_grad=False)
    c = k(p, p)
    torch.cuda.synchronize()
    assert torch.equal(c, p.detach() * 2)
    # strides come through: a strided view is rejected by the runtime
    v = torch.randn(10000, device="cuda")[::2]
    with pytest.raises(ValueError, match="contiguous"):
        k(v, v)


def test_nvrtc_source_and_cache(tmp_path, monkeypatch):
    """get_source("cuda") is the CUDA C++ NVRTC compiles; a second load of
    the same bundle reads the cubin from the cache (TILE_CACHE_DIR)."""
    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path))
    k = tile.load(bundle("softmax", "sm_90a"), execution_backend="nvrtc")
    src = k.get_source("cuda")
    assert 'extern "C" __global__' in src and "softmax_kernel" in src
    x = torch.randn(37, 1024, device="cuda")
    torch.testing.assert_close(k(x), torch.softmax(x, dim=1))
    cubins = list((tmp_path / "nvrtc").glob("*.cubin"))
    assert len(cubins) == 1, cubins
    k2 = tile.load(bundle("softmax", "sm_90a"), execution_backend="nvrtc")
    torch.testing.assert_close(k2(x), torch.softmax(x, dim=1))


def test_tma_producer_and_its_fallback(monkeypatch, capfd):
    """examples/flash_attention.mlir on sm_90a: the TMA-producer variant
    runs where the runtime can encode its tensor maps; a tensor whose data
    is not 16-byte aligned makes it launch the cp.async variant instead
    (TILE_CUDA_VERBOSE says so), with the same results."""
    import math
    k = tile.load(bundle("flash_attention", "sm_90a"))
    monkeypatch.setenv("TILE_CUDA_VERBOSE", "1")

    def run(shift):
        b, h, s, d = 2, 3, 333, 64
        n = b * h * s * d
        q, kk, v = (torch.randn(n + shift, device="cuda",
                                dtype=torch.float16)[shift:].view(b, h, s, d)
                    for _ in range(3))
        o = torch.full_like(q, float("nan"))
        k(q, kk, v, o, 1.0 / math.sqrt(d), 1)
        torch.cuda.synchronize()
        ref = torch.nn.functional.scaled_dot_product_attention(
            q.float(), kk.float(), v.float(), is_causal=True)
        err = ((o.float() - ref).abs().max() / ref.abs().max()).item()
        assert err < 2e-2, err
        return capfd.readouterr().err

    refused = "not launching flash_attention_kernel_ws_tma"
    assert refused not in run(0)
    assert refused in run(1)


def test_cuda_graph_replays_keep_their_tensor_maps():
    """A launch captured into a CUDA graph passes the device addresses of
    its variant's tensor maps, which every replay reads again: the runtime
    uses only maps cached before the capture (here torch's warm-up) and
    never replaces them afterwards, however many other tensors later
    launches bring (more than the cache's 64 slots). A capture with tensors
    never launched before neither synchronizes (which would invalidate it)
    nor copies a map: it takes a variant without maps or the generic
    kernel."""
    k = tile.load(bundle("gemm", "sm_90a"))
    m = n = kk = 2048  # 256 tiles: the wide-tile variant (A, B, C maps)

    def new(*shape):
        return torch.randn(*shape, device="cuda", dtype=torch.float16)

    def check(a, b, c):
        torch.cuda.synchronize()
        ref = a.double() @ b.double()
        err = ((c.double() - ref).norm() / ref.norm()).item()
        assert err < 2e-3, err

    a, b = new(m, kk), new(kk, n)
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        k(a, b, c)  # warm-up: caches the maps
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        k(a, b, c)
    keep = []
    for _ in range(30):  # 90 maps through the cache
        x, y = new(m, kk), new(kk, n)
        keep.append((x, y, k(x, y)))
    a.copy_(new(m, kk))
    c.fill_(float("nan"))
    g.replay()
    check(a, b, c)
    check(*keep[-1])
    # Captured with fresh tensors (C allocated in the graph's pool).
    a2, b2 = new(m, kk), new(kk, n)
    g2 = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g2):
        c2 = k(a2, b2)
    g2.replay()
    check(a2, b2, c2)

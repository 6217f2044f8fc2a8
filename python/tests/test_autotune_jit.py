"""@tile.autotune over @tile.jit kernels, tuning from bundles compiled
elsewhere (tilec hidden), the import/export of bundle directories, and the
multi-device scheduling (fake devices on the CPU)."""

import json
import threading
import time

import numpy as np
import pytest

from tile_testutil import elementwise_source

T = pytest.importorskip("tile.language")
N = T.symbolic("N")


def make_scale(tile, configs, key=None, reference=None, **jit_kw):
    @tile.autotune(configs=configs, key=key, reference=reference, warmup=1,
                   rep=3, progress=False)
    @tile.jit(out_idx=-1, target="cpu", locations=False, **jit_kw)
    def scale(A: T.Tensor((N,)), factor: T.float32, B: T.Tensor((N,)),
              block=256, threads=32):
        with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
            a = T.alloc_fragment((block,), A.dtype)
            T.copy(A[bx * block], a)
            for i in T.Parallel(block):
                a[i] = a[i] * factor
            T.copy(a, B[bx * block])
    return scale


CONFIGS = [{"block": 128}, {"block": 256, "threads": 64}, {"block": 512}]


@pytest.fixture
def tunes(monkeypatch):
    """Counts the tuning runs (the searches that compile and time)."""
    import tile.autotuner as at
    calls = []
    real = at._time_configs

    def counting(kernels, valid, *a, **kw):
        calls.append(len(valid))
        return real(kernels, valid, *a, **kw)
    monkeypatch.setattr(at, "_time_configs", counting)
    return calls


def test_tunes_once_per_problem_then_dispatches(tile, fresh_cache, tunes):
    scale = make_scale(tile, CONFIGS)
    x = np.arange(3000, dtype=np.float32)
    for _ in range(3):
        np.testing.assert_array_equal(scale(x, 2.0), x * 2)
    assert tunes == [3]
    np.testing.assert_array_equal(scale(x, 3.0), x * 3)   # scalar not in key
    assert tunes == [3]
    y = np.arange(700, dtype=np.float32)                  # other shape
    np.testing.assert_array_equal(scale(y, 2.0), y * 2)
    h = np.arange(700).astype(np.float16)                 # other dtype
    np.testing.assert_array_equal(scale(h, 2.0), h * 2)
    assert tunes == [3, 3, 3]
    (res,) = [r for s, r in scale.results.items() if s[0] == (3000,)]
    assert res.config in CONFIGS and len(res.results) == 3
    # explicit configuration: runs it, no tuning
    np.testing.assert_array_equal(scale(x, 2.0, block=128), x * 2)
    assert tunes == [3, 3, 3]
    # a new decorator (a new process): the disk cache, no timing
    again = make_scale(tile, CONFIGS)
    np.testing.assert_array_equal(again(x, 2.0), x * 2)
    assert tunes == [3, 3, 3]
    assert list(again.results.values())[0].cached
    # another config space tunes again
    other = make_scale(tile, CONFIGS + [{"block": 1024}])
    other(x, 2.0)
    assert tunes == [3, 3, 3, 4]
    out = np.empty_like(x)
    assert scale(x, 2.0, out) is out


def test_key_selects_what_retunes(tile, fresh_cache, tunes):
    scale = make_scale(tile, CONFIGS, key=["factor"])
    x = np.arange(1000, dtype=np.float32)
    scale(x, 2.0)
    scale(np.arange(2000, dtype=np.float32), 2.0)   # shape not in the key
    assert tunes == [3]
    scale(x, 4.0)                                   # the key's value changed
    assert tunes == [3, 3]
    scale(x.astype(np.float16), 2.0)  # the jit's specialization (dtype) always
    assert tunes == [3, 3, 3]


def test_callable_configs_and_reference(tile, fresh_cache):
    seen = []

    def configs(A, factor):
        seen.append(A.shape)
        return [{"block": b} for b in (64, 128)]
    scale = make_scale(tile, configs, reference=lambda a, f: a * f)
    x = np.arange(900, dtype=np.float32)
    np.testing.assert_array_equal(scale(x, 2.0), x * 2)
    assert seen == [(900,)]
    res = list(scale.results.values())[0]
    assert [r["status"] for r in res.results] == ["ok", "ok"]
    assert all(r["latency_ms"] > 0 for r in res.results)


def test_bad_configs(tile):
    with pytest.raises(ValueError, match="configs= is required"):
        tile.autotune(key=["A"])
    with pytest.raises(ValueError, match="configs is empty"):
        make_scale(tile, [])
    with pytest.raises(TypeError, match="config #1 is a int"):
        make_scale(tile, [{"block": 64}, 3])
    with pytest.raises(TypeError, match=r"config #0 sets blk, not a configuration"):
        make_scale(tile, [{"blk": 64}])
    with pytest.raises(TypeError, match="key names 'C', not a kernel parameter"):
        make_scale(tile, CONFIGS, key=["C"])
    with pytest.raises(TypeError, match="key names the out_idx output"):
        make_scale(tile, CONFIGS, key=["B"])
    bad = make_scale(tile, lambda: [{"nope": 1}])
    with pytest.raises(TypeError, match="config #0 sets nope"):
        bad(np.ones(10, np.float32), 1.0)


def test_failing_configs_are_skipped(tile, fresh_cache):
    # 3000 threads fail while tracing (T.Kernel's check): recorded as a
    # compile error, the others tune
    configs = [{"block": 128, "threads": 3000}, {"block": 256}, {"block": 64}]
    scale = make_scale(tile, configs)
    x = np.arange(500, dtype=np.float32)
    np.testing.assert_array_equal(scale(x, 2.0), x * 2)
    res = list(scale.results.values())[0]
    assert res.results[0]["status"] == "compile_error"
    assert "threads" in res.results[0]["error"]
    assert res.config in configs[1:]
    everything_bad = make_scale(tile, [{"threads": 3000}, {"threads": 0}])
    with pytest.raises(RuntimeError, match="no config compiled.*#0.*#1"):
        everything_bad(x, 2.0)


def test_stale_cache_retunes(tile, fresh_cache, tunes):
    scale = make_scale(tile, CONFIGS)
    x = np.arange(800, dtype=np.float32)
    scale(x, 2.0)
    (doc,) = (fresh_cache / "autotune").glob("*.json")
    data = json.loads(doc.read_text())
    data["best"] = 17                  # hand-edited / from an older space
    doc.write_text(json.dumps(data))
    tile.clear_cache(disk=False)
    make_scale(tile, CONFIGS)(x, 2.0)
    assert tunes == [3, 3]
    # the kernel's code changed (a new body, same name and configs)

    @tile.autotune(configs=CONFIGS, warmup=1, rep=2, progress=False)
    @tile.jit(out_idx=-1, target="cpu", locations=False)
    def scale2(A: T.Tensor((N,)), factor: T.float32, B: T.Tensor((N,)),
               block=256, threads=32):
        with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
            a = T.alloc_fragment((block,), A.dtype)
            T.copy(A[bx * block], a)
            for i in T.Parallel(block):
                a[i] = a[i] * factor + 1
            T.copy(a, B[bx * block])
    np.testing.assert_array_equal(scale2(x, 2.0), x * 2 + 1)
    assert tunes == [3, 3, 3]


def test_factory_form(tile, fresh_cache, tunes):
    @tile.autotune(configs=[{"block": 64}, {"block": 128}], warmup=1, rep=2,
                   progress=False)
    @tile.jit(out_idx=-1, target="cpu")
    def make(n, block=32):
        @T.prim_func
        def add(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32"),
                C: T.Tensor((n,), "float32")):
            with T.Kernel(T.ceildiv(n, block), threads=32) as bx:
                a = T.alloc_fragment((block,), "float32")
                b = T.alloc_fragment((block,), "float32")
                T.copy(A[bx * block], a)
                T.copy(B[bx * block], b)
                for i in T.Parallel(block):
                    a[i] = a[i] + b[i]
                T.copy(a, C[bx * block])
        return add
    k = make(1000)
    assert isinstance(k, tile.Kernel) and make(1000) is k
    x = np.arange(1000, dtype=np.float32)
    np.testing.assert_array_equal(k(x, x), 2 * x)
    assert tunes == [2]
    with pytest.raises(TypeError, match="config #0 sets blk"):
        tile.autotune(configs=[{"blk": 1}])(make.jit)


# ---- tuning without the compiler ---------------------------------------------------

@pytest.fixture
def no_tilec(monkeypatch, tmp_path):
    """tilec hidden: TILE_TILEC names nothing (it is searched first) and PATH
    has no tilec."""
    def hide():
        monkeypatch.setenv("TILE_TILEC", str(tmp_path / "no-tilec"))
        monkeypatch.setenv("PATH", "/usr/bin:/bin")
    return hide


def test_compile_here_tune_there(tile, fresh_cache, tmp_path, no_tilec,
                                 monkeypatch, tunes):
    scale = make_scale(tile, CONFIGS + [{"threads": 3000}])
    x = np.arange(2500, dtype=np.float32)
    out = scale.export_bundles(tmp_path / "b", x, 2.0, target="cpu")
    assert len(out["written"]) == 3 and list(out["failed"]) == [3]
    index = json.loads((tmp_path / "b" / "index.json").read_text())
    assert sorted(e["config"]["block"] for e in index["entries"].values()) == [128, 256, 512]
    # "there": a fresh cache, no tilec
    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path / "there"))
    tile.clear_cache(disk=False)
    no_tilec()
    with pytest.raises(RuntimeError, match="cannot find|not an executable"):
        tile.find_tilec()
    with pytest.raises(RuntimeError, match="no config compiled.*no imported "
                       "bundle matches kernel 'scale' for cpu"):
        make_scale(tile, CONFIGS)(x, 2.0)
    assert tile.import_bundles(tmp_path / "b") == 3
    there = make_scale(tile, CONFIGS + [{"threads": 3000}])
    np.testing.assert_array_equal(there(x, 2.0), x * 2)
    res = list(there.results.values())[0]
    assert [r["status"] for r in res.results] == ["ok"] * 3 + ["compile_error"]
    assert "threads must be an int in [1, 1024]" in res.results[3]["error"]
    # kernels=: the directory (configs from its index), paths, Kernel objects
    d = tile.autotune(kernels=tmp_path / "b", inputs=[x, 2.0], warmup=1, rep=2,
                      progress=False)
    assert d.config in CONFIGS
    paths = sorted((tmp_path / "b").glob("*.tileb"))
    p = tile.autotune(kernels=paths, inputs=[x, 2.0], warmup=1, rep=2,
                      progress=False, use_cache=False)
    assert p.config in [str(q) for q in paths]
    np.testing.assert_array_equal(p.kernel(x, 2.0), x * 2)
    ks = [tile.load(q) for q in paths]
    kk = tile.autotune(kernels=ks, configs=["a", "b", "c"], inputs=[x, 2.0],
                       reference=lambda a, f: a * f, warmup=1, rep=2,
                       progress=False)
    assert kk.config in "abc" and kk.kernel in ks


def test_bundle_errors(tile, fresh_cache, tmp_path):
    with pytest.raises(tile.BundleError, match="no such bundle directory"):
        tile.import_bundles(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(tile.BundleError, match="no index.json"):
        tile.import_bundles(tmp_path / "empty")
    k = tile.compile(elementwise_source(name="exp_b"), target="cpu")
    tile.export_bundles([k], tmp_path / "d", configs=[{"block": 1024}])
    (f,) = (tmp_path / "d").glob("*.tileb")
    data = f.read_bytes()
    f.write_bytes(data[:-10])
    with pytest.raises(tile.BundleError, match="size/sha256 differ"):
        tile.import_bundles(tmp_path / "d")
    f.unlink()
    with pytest.raises(tile.BundleError, match="missing.*exp_b"):
        tile.import_bundles(tmp_path / "d")
    with pytest.raises(tile.BundleError, match="missing"):
        tile.autotune(kernels=tmp_path / "d", inputs=[])
    with pytest.raises(FileNotFoundError, match="no bundle"):
        tile.autotune(kernels=[tmp_path / "gone.tileb"], inputs=[])
    (tmp_path / "d" / "index.json").write_text('{"format": "other"}')
    with pytest.raises(tile.BundleError, match="not a tile-bundles/1 index"):
        tile.import_bundles(tmp_path / "d")
    with pytest.raises(ValueError, match="no source key"):
        tile.export_bundles([tile.load(k.export(tmp_path / "k.tileb"))],
                            tmp_path / "e")
    with pytest.raises(ValueError, match="2 kernels but 1 configs"):
        tile.export_bundles([k, k], tmp_path / "e", configs=[{}])
    with pytest.raises(ValueError, match="builder or kernels, not both"):
        tile.autotune(lambda c: "", [1], kernels=[k])
    with pytest.raises(TypeError, match="kernels must be"):
        tile.autotune(kernels=[3], inputs=[])


def test_imported_bundle_wins_and_memory_only_import(tile, fresh_cache, tmp_path,
                                                      monkeypatch, no_tilec):
    src = elementwise_source(name="imp_mem")
    k = tile.compile(src, target="cpu")
    tile.export_bundles([k], tmp_path / "d")
    monkeypatch.setenv("TILE_DISABLE_CACHE", "1")
    tile.clear_cache(disk=False)
    no_tilec()
    tile.import_bundles(tmp_path / "d")   # memory only (the cache is off)
    k2 = tile.compile(src, target="cpu")
    a = np.ones(300, np.float32)
    np.testing.assert_array_equal(k2(a, a), 2 * a)
    tile.clear_cache(disk=False)          # forgets memory imports
    with pytest.raises(tile.CompileError, match="no imported bundle"):
        tile.compile(src, target="cpu")


# ---- several devices ------------------------------------------------------------------

def test_schedule_spreads_over_fake_devices():
    from tile.autotuner import schedule
    lock = threading.Lock()
    log = []

    def work(i, d):
        with lock:
            log.append((i, d, threading.current_thread().name))
        time.sleep(0.01 if d == "slow" else 0.002)
    ran = schedule(range(20), ["fast", "slow"], work)
    assert sorted(i for i, _, _ in log) == list(range(20))        # each once
    assert sorted(ran["fast"] + ran["slow"]) == list(range(20))
    assert len(ran["fast"]) > len(ran["slow"]) > 0                # a queue
    assert len({t for _, d, t in log if d == "slow"}) == 1        # a thread each
    assert {t for _, d, t in log if d == "fast"} != {t for _, d, t in log if d == "slow"}
    assert schedule([1, 2], [7], lambda i, d: None) == {7: [1, 2]}
    assert schedule([], [0, 1], lambda i, d: None) == {0: [], 1: []}

    def boom(i, d):
        if i == 3:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        schedule(range(100), ["a", "b"], boom)


def test_autotune_on_fake_devices(tile, fresh_cache):
    configs = [{"block": b} for b in (64, 128, 256, 512)]
    a = np.ones(4000, np.float32)
    res = tile.autotune(lambda c: elementwise_source(block=c["block"],
                                                     name=f"dev{c['block']}"),
                        configs, inputs=[a, a], reference=lambda x, y: x + y,
                        target="cpu", devices=["gpu0", "gpu1"], warmup=1,
                        rep=2, progress=False)
    assert {r["device"] for r in res.results} <= {"gpu0", "gpu1"}
    assert all(r["status"] == "ok" for r in res.results)
    with pytest.raises(ValueError, match="devices is empty"):
        tile.autotune(lambda c: "", [1], target="cpu", devices=[])
    with pytest.raises(ValueError, match="repeat a device"):
        tile.autotune(lambda c: "", [1], target="cpu", devices=[0, 0])
    from tile.autotuner import _devices
    with pytest.raises(ValueError, match="cuda devices are ordinals"):
        _devices("cuda", ["cuda:1"])
    assert _devices("cuda", [1, 0]) == [1, 0]


def test_progress_bar_covers_both_phases(tile, fresh_cache, capsys, monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_tqdm(name, *a, **kw):
        if name.startswith("tqdm"):
            raise ImportError(name)
        return real_import(name, *a, **kw)
    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    a = np.ones(500, np.float32)
    tile.autotune(lambda c: elementwise_source(block=c, name=f"bar{c}"),
                  [64, 128], inputs=[a, a], target="cpu", warmup=1, rep=2,
                  progress=True)
    err = capsys.readouterr().err
    assert "autotune (compile)" in err and "autotune (time, 1 device)" in err
    assert "4/4" in err


# ---- the C++ last-call guard (_runtime.JitDispatch) ----------------------------------

def test_guard_follows_specialization(tile, fresh_cache):
    @tile.jit(out_idx=-1, target="cpu")
    def mul(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"),
            factor=2.0):
        with T.Kernel(T.ceildiv(N, 128), threads=32) as bx:
            a = T.alloc_fragment((128,), "float32")
            T.copy(A[bx * 128], a)
            for i in T.Parallel(128):
                a[i] = a[i] * factor
            T.copy(a, B[bx * 128])
    x = np.arange(300, dtype=np.float32)
    assert not mul._armed
    np.testing.assert_array_equal(mul(x), x * 2)
    assert mul._armed
    np.testing.assert_array_equal(mul(x, factor=3.0), x * 3)   # not guarded
    np.testing.assert_array_equal(mul(x), x * 2)               # the default again
    with pytest.raises(tile.ArgumentError, match="takes 2 arguments"):
        mul(x, x, x)
    with pytest.raises(tile.ArgumentError, match="float32"):
        mul(x.astype(np.float64))

    K = T.const("K")

    @tile.jit(out_idx=-1, target="cpu")
    def head(A: T.Tensor((K,), "float32"), B: T.Tensor((K,), "float32")):
        with T.Kernel(1, threads=32):
            a = T.alloc_fragment((K,), "float32")
            T.copy(A[0], a)
            T.copy(a, B[0])
    for n in (64, 96, 64):          # T.const extents: the DIM guard
        y = np.arange(n, dtype=np.float32)
        np.testing.assert_array_equal(head(y), y)
    assert len(head.kernels) == 2

    class Wrapped:                  # no .dtype / .device: never guarded
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None, max_version=None):
            return self.a.__dlpack__()

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    @tile.jit(out_idx=-1)
    def copy(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 128), threads=32) as bx:
            a = T.alloc_fragment((128,), "float32")
            T.copy(A[bx * 128], a)
            T.copy(a, B[bx * 128])
    np.testing.assert_array_equal(copy(x), x)
    assert copy._armed
    w = Wrapped(x)
    out = np.zeros_like(x)
    copy(w, out)
    np.testing.assert_array_equal(out, x)
    assert not copy._armed


def test_cached_winner_without_kernel_retunes(tile, fresh_cache, tmp_path,
                                              monkeypatch, no_tilec, tunes):
    """The results file names a winner whose kernel is gone (no tilec, its
    bundle not imported): tune again among the kernels there are."""
    x = np.arange(1500, dtype=np.float32)
    make_scale(tile, CONFIGS).export_bundles(tmp_path / "all", x, 2.0,
                                            target="cpu")
    no_tilec()
    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path / "B"))
    tile.clear_cache(disk=False)
    tile.import_bundles(tmp_path / "all")
    first = make_scale(tile, CONFIGS)
    first(x, 2.0)
    winner = list(first.results.values())[0].config
    assert tunes == [3]
    # another host: the results file copied, every bundle but the winner's
    index = json.loads((tmp_path / "all" / "index.json").read_text())
    index["entries"] = {k: e for k, e in index["entries"].items()
                        if e["config"] != winner}
    (tmp_path / "all" / "index.json").write_text(json.dumps(index))
    (tmp_path / "C" / "autotune").mkdir(parents=True)
    for f in (tmp_path / "B" / "autotune").glob("*.json"):
        (tmp_path / "C" / "autotune" / f.name).write_bytes(f.read_bytes())
    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path / "C"))
    tile.clear_cache(disk=False)
    assert tile.import_bundles(tmp_path / "all") == 2
    again = make_scale(tile, CONFIGS)
    np.testing.assert_array_equal(again(x, 2.0), x * 2)
    res = list(again.results.values())[0]
    assert tunes == [3, 2] and not res.cached and res.config != winner
    assert res.results[CONFIGS.index(winner)]["status"] == "compile_error"


def test_guard_general_path_and_autotune_guard(tile, fresh_cache, tunes):
    """Types other than numpy.ndarray (here a subclass) are guarded through
    their .dtype / .shape / .device attributes."""
    class Sub(np.ndarray):
        pass
    scale = make_scale(tile, CONFIGS)
    x = np.arange(400, dtype=np.float32).view(Sub)
    for _ in range(2):
        np.testing.assert_array_equal(scale(x, 2.0), np.asarray(x) * 2)
    assert scale._armed and tunes == [3]
    y = np.arange(401, dtype=np.float32).view(Sub)     # SHAPE guard
    np.testing.assert_array_equal(scale(y, 2.0), np.asarray(y) * 2)
    h = np.arange(400).astype(np.float16).view(Sub)    # DTYPE guard
    np.testing.assert_array_equal(scale(h, 2.0), np.asarray(h) * 2)
    assert tunes == [3, 3, 3]
    np.testing.assert_array_equal(scale(np.asarray(x), 2.0), np.asarray(x) * 2)
    assert tunes == [3, 3, 3]                          # numpy: same problem


# ---- the guard on DLPack-exchange-API tensors (how torch >= 2.10 tensors ----
# ---- reach it): tile_exchange_tensor, a C stand-in with torch's shape      ----

@pytest.fixture
def xt(tile):
    from tile import _runtime
    from tile_testutil import exchange_tensor_module
    mod = exchange_tensor_module()
    if mod is None:
        pytest.skip("tile_exchange_tensor (python/tests/exchange_tensor.cpp) "
                    "is not built")
    if not _runtime.DLPACK_EXCHANGE:
        pytest.skip("TILE_PY_NO_DLPACK_EXCHANGE is set")
    return mod


def test_guard_reads_exchange_tensors_in_cpp(tile, fresh_cache, xt):
    """target="auto" with dtype-less tensors: a repeated call reads no
    .dtype/.shape/.device and asks the producer once per tensor (the guard's
    DLTensor goes to the launch); a new dtype, extent, type or device takes
    the Python dispatch and the right kernel; a failing producer keeps its
    error."""
    from tile_testutil import exchange_tensor

    @tile.jit(out_idx=-1, locations=False)
    def neg(A: T.Tensor((N,)), B: T.Tensor((N,))):
        with T.Kernel(T.ceildiv(N, 64), threads=32) as bx:
            a = T.alloc_fragment((64,), A.dtype)
            T.copy(A[bx * 64], a)
            for i in T.Parallel(64):
                a[i] = -a[i]
            T.copy(a, B[bx * 64])
    x = np.arange(300, dtype=np.float32)
    a = exchange_tensor(x)
    np.testing.assert_array_equal(neg(a), -x)
    assert neg._armed
    reads, fills = xt.attr_reads(), xt.fills()
    for _ in range(3):
        np.testing.assert_array_equal(neg(a), -x)
    assert xt.attr_reads() == reads and xt.fills() - fills == 3
    out = np.zeros_like(x)                               # the full arity
    assert neg(a, exchange_tensor(out)) is not None
    np.testing.assert_array_equal(out, -x)
    h = np.arange(300).astype(np.float16)                # DTYPE guard
    np.testing.assert_array_equal(neg(exchange_tensor(h)), -h)
    assert sorted(neg.kernels) == [("float16", "cpu"), ("float32", "cpu")]
    np.testing.assert_array_equal(neg(a), -x)            # back: no compile
    np.testing.assert_array_equal(neg(x), -x)            # numpy, same key
    np.testing.assert_array_equal(neg(a), -x)
    assert len(neg.kernels) == 2
    bad = exchange_tensor(x, fail=True)
    with pytest.raises(BufferError, match="cannot export"):
        neg(bad)
    assert not neg._armed
    with pytest.raises(BufferError, match="cannot export"):
        neg.kernels[("float32", "cpu")](bad)
    np.testing.assert_array_equal(neg(a), -x)

    K = T.const("K")

    @tile.jit(out_idx=-1, target="cpu", locations=False)
    def head(A: T.Tensor((K,), "float32"), B: T.Tensor((K,), "float32")):
        with T.Kernel(1, threads=32):
            f = T.alloc_fragment((K,), "float32")
            T.copy(A[0], f)
            T.copy(f, B[0])
    for n in (64, 96, 64, 96):                           # DIM guard
        y = np.arange(n, dtype=np.float32)
        np.testing.assert_array_equal(head(exchange_tensor(y)), y)
    assert sorted(head.kernels) == [(64,), (96,)]


def test_guard_reads_reach_the_launch_only_before_python_runs(tile, fresh_cache,
                                                             xt):
    """The launch takes the guard's DLTensors only for arguments it converts
    before any Python code of its own runs (here a float subclass's
    __float__): after that it asks the producer again."""
    from tile_testutil import exchange_tensor

    @tile.jit(target="cpu", locations=False)
    def axpy(alpha: T.float32, X: T.Tensor((N,)), Y: T.Tensor((N,))):
        with T.Kernel(T.ceildiv(N, 64), threads=32) as bx:
            for i in T.Parallel(64):
                if bx * 64 + i < N:
                    Y[bx * 64 + i] = Y[bx * 64 + i] + alpha * X[bx * 64 + i]

    class Alpha(float):
        pass
    x = np.arange(100, dtype=np.float32)
    y = np.zeros(100, np.float32)
    ex, ey = exchange_tensor(x), exchange_tensor(y)
    for alpha, per_call in ((1.0, 2), (Alpha(1.0), 4)):
        axpy(alpha, ex, ey)
        assert axpy._armed
        fills = xt.fills()
        axpy(alpha, ex, ey)
        assert xt.fills() - fills == per_call
    np.testing.assert_array_equal(y, 4 * x)


def test_autotune_guard_on_exchange_tensors(tile, fresh_cache, tunes, xt):
    """A cached winner is reused from C++ for the same key shapes, dtypes
    and key scalars only: another shape is another problem (never the stale
    winner), another dtype or key value too."""
    from tile_testutil import exchange_tensor
    scale = make_scale(tile, CONFIGS, key=["A", "factor"])
    x = np.arange(3000, dtype=np.float32)
    a = exchange_tensor(x)
    np.testing.assert_array_equal(scale(a, 2.0), x * 2)
    assert scale._armed and tunes == [3]
    reads = xt.attr_reads()
    np.testing.assert_array_equal(scale(exchange_tensor(x + 1), 2.0),
                                  (x + 1) * 2)
    assert xt.attr_reads() == reads and tunes == [3]
    y = np.arange(700, dtype=np.float32)                 # SHAPE: not stale
    np.testing.assert_array_equal(scale(exchange_tensor(y), 2.0), y * 2)
    assert tunes == [3, 3] and len(scale.kernels) == 2
    z = np.arange(3000, dtype=np.float32).reshape(3000)  # first shape again
    np.testing.assert_array_equal(scale(exchange_tensor(z), 2.0), z * 2)
    assert tunes == [3, 3]
    np.testing.assert_array_equal(scale(a, 4.0), x * 4)  # VALUE: retunes
    assert tunes == [3, 3, 3]
    h = np.arange(3000).astype(np.float16)               # DTYPE: retunes
    np.testing.assert_array_equal(scale(exchange_tensor(h), 4.0), h * 4)
    assert tunes == [3, 3, 3, 3] and len(scale.kernels) == 4
    np.testing.assert_array_equal(scale(x, 2.0), x * 2)  # numpy: same problem
    assert tunes == [3, 3, 3, 3]


def test_config_tilec_rejects_is_skipped(tile, fresh_cache):
    """A config that traces but that tilec rejects (the dialect's verifier:
    no int16 gemm) is a compile_error with tilec's message."""
    @tile.autotune(configs=[{"extra": "int16"}, {"extra": None}], warmup=1,
                   rep=2, progress=False)
    @tile.jit(out_idx=-1, target="cpu")
    def copy(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"),
             extra=None):
        with T.Kernel(T.ceildiv(N, 16), threads=32) as bx:
            if extra is not None:
                s = T.alloc_shared((16, 16), extra)
                c = T.alloc_fragment((16, 16), extra)
                T.gemm(s, s, c)
            a = T.alloc_fragment((16,), "float32")
            T.copy(A[bx * 16], a)
            T.copy(a, B[bx * 16])
    x = np.arange(100, dtype=np.float32)
    np.testing.assert_array_equal(copy(x), x)
    res = list(copy.results.values())[0]
    assert res.config == {"extra": None}
    assert res.results[0]["status"] == "compile_error"
    assert "tilec failed" in res.results[0]["error"]

"""Kernel cache (hit / miss / corruption / concurrency / dump), par_compile,
autotune."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tile_testutil import elementwise_source


@pytest.fixture
def tilec_runs(tile, monkeypatch):
    """Counts tilec bundle compiles."""
    from tile import compiler
    calls = []
    real = compiler._run_tilec

    def counting(tilec, source, args, verbose, what="compile", **kw):
        if what == "compile" and not any(a.startswith("--emit=") for a in args):
            calls.append(args)
        return real(tilec, source, args, verbose, what, **kw)

    monkeypatch.setattr(compiler, "_run_tilec", counting)
    return calls


def entries(cache):
    d = cache / "kernels"
    return sorted(p for p in d.iterdir()) if d.exists() else []


def test_cache_miss_hit(tile, fresh_cache, tilec_runs):
    src = elementwise_source(block=512, name="cache_hit")
    k1 = tile.compile(src, target="cpu")
    assert len(tilec_runs) == 1
    assert tile.compile(src, target="cpu") is k1          # memory hit
    tile.clear_cache(disk=False)
    k2 = tile.compile(src, target="cpu")                  # disk hit
    assert len(tilec_runs) == 1 and k2 is not k1
    assert k2.info["cache_key"] == k1.info["cache_key"]
    # any change of options is a different key
    tile.compile(src, target="cpu", execution_backend="ffi")
    tile.compile(src, target="cpu", pass_options={"O": 2})
    assert len(tilec_runs) == 3
    (entry,) = [e for e in entries(fresh_cache)
                if e.name == k1.info["cache_key"]]
    manifest = json.loads((entry / "manifest.json").read_text())
    assert manifest["files"]["kernel.tileb"]["size"] == len(k1.bundle)
    assert not [e for e in entries(fresh_cache) if e.name.startswith(".")]


@pytest.mark.parametrize("damage", ["flip", "truncate", "manifest", "missing"])
def test_cache_corruption_recompiles(tile, fresh_cache, tilec_runs, damage):
    src = elementwise_source(block=256, name=f"corrupt_{damage}")
    key = tile.compile(src, target="cpu").info["cache_key"]
    bundle = fresh_cache / "kernels" / key / "kernel.tileb"
    data = bytearray(bundle.read_bytes())
    if damage == "flip":      # same size, different content
        data[len(data) // 2] ^= 0xFF
        bundle.write_bytes(bytes(data))
    elif damage == "truncate":
        data = data[:-100]
        bundle.write_bytes(bytes(data))
    elif damage == "manifest":
        (bundle.parent / "manifest.json").write_text("{not json")
    else:
        bundle.unlink()
    tile.clear_cache(disk=False)

    from tile import compiler
    from tile.kernel import Kernel
    loaded = []
    real_init = Kernel.__init__

    def spy(self, b, *a, **kw):
        loaded.append(bytes(b))
        real_init(self, b, *a, **kw)

    Kernel.__init__ = spy
    try:
        k = tile.compile(src, target="cpu")
    finally:
        Kernel.__init__ = real_init
    assert len(tilec_runs) == 2                     # recompiled
    assert bytes(data) not in loaded or damage in ("manifest", "missing")
    assert loaded == [k.bundle]
    a = np.ones(300, np.float32)
    np.testing.assert_array_equal(k(a, a), 2 * a)
    # the entry was replaced by a good one
    tile.clear_cache(disk=False)
    tile.compile(src, target="cpu")
    assert len(tilec_runs) == 2
    assert compiler  # (module used above)


def test_disable_cache(tile, fresh_cache, tilec_runs, monkeypatch):
    monkeypatch.setenv("TILE_DISABLE_CACHE", "1")
    src = elementwise_source(block=128, name="nocache")
    tile.compile(src, target="cpu")
    tile.compile(src, target="cpu")
    assert len(tilec_runs) == 2
    assert entries(fresh_cache) == []


def test_dump_ir_on_cache_hit(tile, fresh_cache, tilec_runs, monkeypatch, tmp_path):
    src = elementwise_source(block=64, name="dumped")
    tile.compile(src, target="cpu")
    dump = tmp_path / "dump"
    monkeypatch.setenv("TILE_DUMP_IR", str(dump))
    tile.compile(src, target="cpu")     # memory-cache hit: still dumped
    assert len(tilec_runs) == 1
    (d,) = list(dump.iterdir())
    assert d.name.startswith("dumped-")
    files = [p.name for p in d.rglob("*.mlir")]
    assert "source.mlir" in files and len(files) > 3


def test_concurrent_processes_one_entry(tile, tmp_path):
    """8 processes compile the same key at once: all succeed, one good entry."""
    cache = tmp_path / "cache"
    script = textwrap.dedent(f"""
        import sys, numpy as np, tile
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from tile_testutil import elementwise_source
        k = tile.compile(elementwise_source(block=2048, name="race"), target="cpu")
        a = np.ones(5000, np.float32)
        assert (k(a, a) == 2).all()
        print(k.info["cache_key"])
    """)
    env = dict(os.environ, TILE_CACHE_DIR=str(cache))
    procs = [subprocess.Popen([sys.executable, "-c", script], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(8)]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
    keys = {out.strip() for out, _ in outs}
    assert len(keys) == 1
    es = entries(cache)
    assert [e.name for e in es] == [keys.pop()]       # no temp dirs left
    from tile.cache import DiskCache
    assert DiskCache(cache).load(es[0].name) is not None


# ---- par_compile ---------------------------------------------------------------

def test_par_compile_order_and_errors(tile, fresh_cache):
    sources = [elementwise_source(block=b, name=f"par{b}") for b in (64, 128, 256)]
    bad = "func.func @oops(%A: memref<?xf32>) { return }"
    ks = tile.par_compile(sources, target="cpu", num_workers=3)
    assert [k.name for k in ks] == ["par64", "par128", "par256"]
    mixed = [sources[0], bad, sources[2]]
    with pytest.raises(tile.CompileError, match="source #1"):
        tile.par_compile(mixed, target="cpu", num_workers=2)
    ks = tile.par_compile(mixed, target="cpu", num_workers=2, ignore_error=True)
    assert ks[1] is None and ks[0].name == "par64" and ks[2].name == "par256"


def test_par_compile_progress_bar(tile, fresh_cache, capsys):
    sources = [elementwise_source(block=b, name=f"bar{b}") for b in (64, 128)]
    tile.par_compile(sources, target="cpu", progress=True, num_workers=2)
    err = capsys.readouterr().err
    assert "2/2" in err


# ---- autotune ----------------------------------------------------------------

def test_autotune_picks_valid_config(tile, fresh_cache):
    def builder(cfg):
        if cfg["block"] == 0:
            return "func.func @broken("          # does not compile
        return elementwise_source(block=cfg["block"], op=cfg["op"],
                                  name=f"tune_{cfg['block']}_{cfg['op']}")

    configs = [{"block": 0, "op": "addf"},
               {"block": 256, "op": "subf"},       # compiles, wrong result
               {"block": 512, "op": "addf"},
               {"block": 1024, "op": "addf"}]
    res = tile.autotune(builder, configs, reference=lambda a, b: a + b,
                        shapes={"N": 20000}, target="cpu", warmup=1, rep=5,
                        progress=False)
    assert res.config in configs[2:]
    assert res.latency_ms > 0 and not res.cached
    status = [r["status"] for r in res.results]
    assert status[:2] == ["compile_error", "mismatch"]
    kernel, config = res
    a = np.ones(100, np.float32)
    np.testing.assert_array_equal(kernel(a, a), 2 * a)
    again = tile.autotune(builder, configs, reference=lambda a, b: a + b,
                          shapes={"N": 20000}, target="cpu", warmup=1, rep=5,
                          progress=False)
    assert again.cached and again.config == res.config

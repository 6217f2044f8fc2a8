"""Broken caches, autotune cache keys and the TileLang do_bench signature
(issue 10): a bad cache entry is recompiled, an unusable cache directory is
bypassed with one warning, never an exception."""

import builtins
import json
import os
import pathlib
import tempfile
import warnings

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


@pytest.fixture
def no_warned_roots(monkeypatch):
    """Each test sees the first warning for its cache directory."""
    from tile import cache
    monkeypatch.setattr(cache, "_warned_roots", set())


def _check_add(kernel, n=300):
    a = np.arange(n, dtype=np.float32)
    np.testing.assert_array_equal(kernel(a, a), 2 * a)


# ---- bad entries --------------------------------------------------------------

NESTED = "[" * 200000 + "]" * 200000


@pytest.mark.parametrize("manifest", [
    '{"files": null}',
    NESTED,
    '{"files": ' + NESTED + '}',
    '[]',
    '"files"',
    '{"files": {"kernel.tileb": null}}',
    '{"files": {"kernel.tileb": {"size": "1", "sha256": 3}}}',
    '{"files": {"../kernel.tileb": {"size": 1, "sha256": "x"}}}',
    b'\xff\xfe not utf-8',
], ids=["files-null", "nested", "files-nested", "list", "string", "meta-null",
        "meta-types", "path", "binary"])
def test_bad_manifest_is_discarded_and_recompiled(tile, fresh_cache, tilec_runs,
                                                  manifest):
    src = elementwise_source(block=256, name="bad_manifest")
    key = tile.compile(src, target="cpu").info["cache_key"]
    path = fresh_cache / "kernels" / key / "manifest.json"
    path.write_bytes(manifest if isinstance(manifest, bytes) else manifest.encode())
    for _ in range(2):  # before the fix: the same exception on every compile
        tile.clear_cache(disk=False)
        _check_add(tile.compile(src, target="cpu"))
    assert len(tilec_runs) == 2           # recompiled once, then a hit
    assert json.loads(path.read_text())["files"]["kernel.tileb"]["size"] > 0


def test_verified_bundle_the_runtime_refuses_is_recompiled(tile, fresh_cache,
                                                           tilec_runs):
    import hashlib
    src = elementwise_source(block=256, name="refused_bundle")
    key = tile.compile(src, target="cpu").info["cache_key"]
    entry = fresh_cache / "kernels" / key
    junk = b"TILEBNDL but not a bundle"
    (entry / "kernel.tileb").write_bytes(junk)
    manifest = json.loads((entry / "manifest.json").read_text())
    manifest["files"]["kernel.tileb"] = {
        "size": len(junk), "sha256": hashlib.sha256(junk).hexdigest()}
    (entry / "manifest.json").write_text(json.dumps(manifest))
    tile.clear_cache(disk=False)
    _check_add(tile.compile(src, target="cpu"))
    assert len(tilec_runs) == 2


# ---- unusable cache directories --------------------------------------------------

def _deny_writes_under(monkeypatch, root):
    """Makes every write under `root` fail with EACCES, as on a read-only
    directory (chmod does not stop root, which runs CI here)."""
    root = str(root)

    def denied(path):
        return os.path.abspath(os.fspath(path)).startswith(root)

    def err(path):
        return PermissionError(13, "Permission denied", os.fspath(path))

    real_open, real_mkdir = os.open, pathlib.Path.mkdir
    real_mkdtemp, real_mkstemp = tempfile.mkdtemp, tempfile.mkstemp
    real_rename, real_builtin_open = os.rename, builtins.open

    def os_open(path, flags, *a, **kw):
        if denied(path) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise err(path)
        return real_open(path, flags, *a, **kw)

    def mkdir(self, *a, **kw):
        if denied(self) and not self.is_dir():
            raise err(self)
        return real_mkdir(self, *a, **kw)

    def mkdtemp(suffix=None, prefix=None, dir=None):
        if dir is not None and denied(dir):
            raise err(dir)
        return real_mkdtemp(suffix, prefix, dir)

    def mkstemp(suffix=None, prefix=None, dir=None, text=False):
        if dir is not None and denied(dir):
            raise err(dir)
        return real_mkstemp(suffix, prefix, dir, text)

    def rename(src, dst, *a, **kw):
        if denied(src) or denied(dst):
            raise err(src)
        return real_rename(src, dst, *a, **kw)

    def bopen(file, mode="r", *a, **kw):
        if isinstance(file, (str, os.PathLike)) and denied(file) and (
                set(mode) & set("wax+")):
            raise err(file)
        return real_builtin_open(file, mode, *a, **kw)

    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(pathlib.Path, "mkdir", mkdir)
    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    monkeypatch.setattr(os, "rename", rename)
    monkeypatch.setattr(builtins, "open", bopen)


def test_read_only_cache_dir_uses_valid_entry(tile, fresh_cache, tilec_runs,
                                              monkeypatch, no_warned_roots):
    src = elementwise_source(block=512, name="ro_hit")
    tile.compile(src, target="cpu")
    tile.clear_cache(disk=False)
    _deny_writes_under(monkeypatch, fresh_cache)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _check_add(tile.compile(src, target="cpu"))      # the valid entry
        assert len(tilec_runs) == 1
        other = elementwise_source(block=1024, name="ro_miss")
        _check_add(tile.compile(other, target="cpu"))    # compiled, not stored
        _check_add(tile.compile(elementwise_source(block=128, name="ro_miss2"),
                                target="cpu"))
    assert len(tilec_runs) == 3
    msgs = [str(w.message) for w in caught if w.category is RuntimeWarning]
    assert len(msgs) == 1 and "is not usable" in msgs[0], msgs
    assert str(fresh_cache) in msgs[0]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through chmod 0555")
def test_read_only_cache_dir_chmod(tile, fresh_cache, tilec_runs,
                                   no_warned_roots):
    src = elementwise_source(block=512, name="ro_chmod")
    tile.compile(src, target="cpu")
    tile.clear_cache(disk=False)
    dirs = [fresh_cache, *[p for p in fresh_cache.rglob("*") if p.is_dir()]]
    for d in dirs:
        d.chmod(0o555)
    try:
        with pytest.warns(RuntimeWarning, match="is not usable"):
            _check_add(tile.compile(src, target="cpu"))
            _check_add(tile.compile(elementwise_source(name="ro_chmod2"),
                                    target="cpu"))
        assert len(tilec_runs) == 2
    finally:
        for d in dirs:
            d.chmod(0o755)


def test_cache_dir_that_is_a_file(tile, tmp_path, monkeypatch, tilec_runs,
                                  no_warned_roots):
    not_a_dir = tmp_path / "cache-file"
    not_a_dir.write_text("x")
    monkeypatch.setenv("TILE_CACHE_DIR", str(not_a_dir))
    tile.clear_cache(disk=False)
    with pytest.warns(RuntimeWarning, match="is not usable"):
        _check_add(tile.compile(elementwise_source(name="file_cache"),
                                target="cpu"))
    tile.clear_cache(disk=False)


# ---- autotune cache key ---------------------------------------------------------------

def _builder(cfg):
    return elementwise_source(block=cfg["block"], name=f"tk_{cfg['block']}")


def _tune(tile, configs, inputs, **kw):
    return tile.autotune(_builder, configs, inputs=inputs, target="cpu",
                         warmup=1, rep=3, progress=False, **kw)


def test_autotune_keys_on_input_shapes_dtypes_and_configs(tile, fresh_cache):
    configs = [{"block": 256}, {"block": 512}]
    a = np.ones(1000, np.float32)
    first = _tune(tile, configs, [a, a])
    assert not first.cached
    assert _tune(tile, configs, [a.copy(), a.copy()]).cached   # same problem
    b = np.ones(5000, np.float32)
    assert not _tune(tile, configs, [b, b]).cached             # other shape
    assert _tune(tile, configs, [b, b]).cached
    # other dtype (does not run: every config fails, not a stale cache hit)
    c = np.ones(1000, np.float64)
    with pytest.raises(RuntimeError, match="no config passed"):
        _tune(tile, configs, [c, c])
    assert not _tune(tile, configs + [{"block": 1024}], [a, a]).cached
    assert not _tune(tile, configs, [a, a],
                     reference=lambda x, y: x + y).cached


def test_autotune_bad_results_file_retunes(tile, fresh_cache):
    configs = [{"block": 256}, {"block": 512}]
    a = np.ones(700, np.float32)
    _tune(tile, configs, [a, a])
    (doc,) = (fresh_cache / "autotune").glob("*.json")
    for bad in ('{"best": 0}', '[1]', NESTED, '{"best": 7, "results": []}'):
        doc.write_text(bad)
        tile.clear_cache(disk=False)  # the results are also kept in memory
        res = _tune(tile, configs, [a, a])
        assert not res.cached and res.config in configs


# ---- Profiler.do_bench, TileLang's signature ------------------------------------------

def test_do_bench_func_gets_the_generated_inputs(tile, fresh_cache):
    k = tile.compile(elementwise_source(block=512, name="bench_func"),
                     target="cpu")
    prof = k.get_profiler(N=4096)
    seen = []

    def reference(a, b):
        seen.append((a.shape, b.shape))
        return a + b

    assert prof.do_bench(k, warmup=1, rep=3) > 0             # positional func
    assert prof.do_bench(func=k, warmup=1, rep=3) > 0
    assert prof.do_bench(func=reference, warmup=1, rep=2) > 0
    assert seen == [((4096,), (4096,))] * 3
    x = np.ones(64, np.float32)
    assert prof.do_bench(func=k, input_tensors=[x, x], warmup=0, rep=1) > 0
    with pytest.raises(ValueError, match="not both"):
        prof.do_bench(inputs=[x, x], input_tensors=[x, x])
    with pytest.raises(TypeError, match="must be callable"):
        prof.do_bench(func=42)

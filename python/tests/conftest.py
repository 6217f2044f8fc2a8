"""Fixtures of the Python package tests (CPU target, numpy).

The package and tilec come from the build tree: utils/check.sh puts
$TILE_BUILD_DIR/python_packages first on PYTHONPATH and $TILE_BUILD_DIR/bin on
PATH. Every test session uses a private kernel cache (TILE_CACHE_DIR)."""

import os
import pathlib
import shutil

import pytest

_session_cache = None


def pytest_configure(config):
    global _session_cache
    import tempfile
    _session_cache = tempfile.mkdtemp(prefix="tile-pytest-cache-")
    os.environ["TILE_CACHE_DIR"] = _session_cache
    os.environ.pop("TILE_DISABLE_CACHE", None)
    os.environ.pop("TILE_DUMP_IR", None)
    build = os.environ.get("TILE_BUILD_DIR")
    if build and not os.environ.get("TILE_TILEC"):
        tilec = pathlib.Path(build) / "bin" / "tilec"
        if tilec.exists():
            os.environ["TILE_TILEC"] = str(tilec)


def pytest_unconfigure(config):
    if _session_cache:
        shutil.rmtree(_session_cache, ignore_errors=True)


@pytest.fixture(scope="session")
def tile():
    try:
        import tile as t
    except ImportError as e:
        pytest.skip(f"the tile package is not built ({e})")
    try:
        t.find_tilec()
    except RuntimeError as e:
        pytest.skip(str(e))
    return t


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch, tile):
    """A private, empty disk cache and an empty memory cache."""
    d = tmp_path / "cache"
    monkeypatch.setenv("TILE_CACHE_DIR", str(d))
    tile.clear_cache(disk=False)
    yield d
    tile.clear_cache(disk=False)

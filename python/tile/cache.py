"""The kernel cache: memory + disk.

Disk layout ($TILE_CACHE_DIR, default ~/.cache/tile):

    kernels/<key>/kernel.tileb      the bundle
    kernels/<key>/manifest.json     {"files": {name: {"size", "sha256"}}, ...}
    kernels/.tmp-*                  entries being written
    locks/<key>.lock                flock: one compile per key at a time
    autotune/<key>.json             autotune results

An entry is written into a temporary directory inside kernels/, every file
fsync'ed, the manifest written last, then the directory is renamed to its key
(atomic; if another process published the key first, ours is dropped). On a
lookup every file listed in the manifest is checked (size, sha256); an entry
that fails is moved aside and deleted, never loaded, and the caller compiles
again. TILE_DISABLE_CACHE=1 turns the disk and memory caches off.
"""

import contextlib
import hashlib
import json
import os
import pathlib
import shutil
import tempfile
import threading
import time

MANIFEST = "manifest.json"
BUNDLE = "kernel.tileb"


def cache_dir():
    d = os.environ.get("TILE_CACHE_DIR")
    if d:
        return pathlib.Path(d).expanduser()
    return pathlib.Path.home() / ".cache" / "tile"


def cache_disabled():
    return os.environ.get("TILE_DISABLE_CACHE", "0") not in ("", "0", "false", "False")


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def _fsync_dir(path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_file(path, data):
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


class DiskCache:
    """Content-verified, atomically published cache entries."""

    def __init__(self, root=None):
        self.root = pathlib.Path(root) if root else cache_dir()

    @property
    def kernels(self):
        return self.root / "kernels"

    def entry(self, key):
        return self.kernels / key

    @contextlib.contextmanager
    def lock(self, key):
        """Exclusive per-key lock across processes and threads (flock)."""
        locks = self.root / "locks"
        locks.mkdir(parents=True, exist_ok=True)
        try:
            import fcntl
        except ImportError:  # pragma: no cover - non-POSIX
            yield
            return
        fd = os.open(locks / f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)

    def load(self, key):
        """{name: bytes} of a verified entry, or None (missing or corrupt:
        a corrupt entry is removed)."""
        entry = self.entry(key)
        try:
            manifest = json.loads((entry / MANIFEST).read_bytes())
            files = manifest["files"]
            out = {}
            for name, meta in files.items():
                if "/" in name or name.startswith("."):
                    raise ValueError(f"bad file name {name!r}")
                data = (entry / name).read_bytes()
                if len(data) != meta["size"] or sha256(data) != meta["sha256"]:
                    raise ValueError(f"{name}: size/sha256 mismatch")
                out[name] = data
            if BUNDLE not in out:
                raise ValueError("no bundle")
            return out
        except FileNotFoundError:
            if entry.exists():
                self.discard(key, "incomplete entry")
            return None
        except (OSError, ValueError, KeyError, TypeError) as e:
            self.discard(key, str(e))
            return None

    def discard(self, key, why=""):
        entry = self.entry(key)
        trash = self.kernels / f".trash-{key}-{os.getpid()}-{time.monotonic_ns()}"
        try:
            os.rename(entry, trash)
        except OSError:
            return
        shutil.rmtree(trash, ignore_errors=True)

    def store(self, key, files, info=None):
        """Publishes {name: bytes} under key. Returns True if ours was
        published, False if an entry for key already existed."""
        self.kernels.mkdir(parents=True, exist_ok=True)
        tmp = pathlib.Path(tempfile.mkdtemp(prefix=f".tmp-{key[:16]}-",
                                            dir=self.kernels))
        try:
            manifest = {"key": key, "created": time.time(),
                        "info": info or {}, "files": {}}
            for name, data in files.items():
                _write_file(tmp / name, data)
                manifest["files"][name] = {"size": len(data),
                                           "sha256": sha256(data)}
            _write_file(tmp / MANIFEST,
                        json.dumps(manifest, indent=1, sort_keys=True).encode())
            _fsync_dir(tmp)
            os.chmod(tmp, 0o755)
            try:
                os.rename(tmp, self.entry(key))
            except OSError:
                # Someone published first (rename onto a non-empty directory
                # fails): keep theirs if it verifies, else replace it.
                if self.load(key) is not None:
                    return False
                try:
                    os.rename(tmp, self.entry(key))
                except OSError:
                    return False
            _fsync_dir(self.kernels)
            return True
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)

    def clear(self):
        shutil.rmtree(self.root / "kernels", ignore_errors=True)
        shutil.rmtree(self.root / "autotune", ignore_errors=True)

    # small JSON documents (autotune results)
    def load_json(self, kind, key):
        try:
            return json.loads((self.root / kind / f"{key}.json").read_text())
        except (OSError, ValueError):
            return None

    def store_json(self, kind, key, doc):
        d = self.root / kind
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=d)
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, d / f"{key}.json")


class MemoryCache:
    def __init__(self):
        self._items = {}
        self._lock = threading.Lock()
        self._key_locks = {}

    def get(self, key):
        with self._lock:
            return self._items.get(key)

    def put(self, key, value):
        with self._lock:
            self._items[key] = value

    def key_lock(self, key):
        with self._lock:
            return self._key_locks.setdefault(key, threading.Lock())

    def clear(self):
        with self._lock:
            self._items.clear()


memory_cache = MemoryCache()


def clear_cache(disk=True):
    """Empties the in-memory cache and (disk=True) the disk cache."""
    memory_cache.clear()
    if disk:
        DiskCache().clear()

"""The kernel cache: memory + disk.

Disk layout ($TILE_CACHE_DIR, default ~/.cache/tile):

    kernels/<key>/kernel.tileb      the bundle
    kernels/<key>/remarks.txt       tilec's remarks, when it printed any
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

Whatever is on disk is untrusted input: a manifest of the wrong shape (e.g.
{"files": null}), JSON nested deeply enough to exhaust the parser, a
truncated file: each makes the entry a miss (discarded when the directory is
writable), never an exception. A cache directory that cannot be used
(read-only, not a directory, no space) makes the cache step aside with one
RuntimeWarning per directory: entries are still read when they can be (they
are verified and immutable, so no lock is needed for that), and kernels are
compiled without being stored.
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
import warnings

MANIFEST = "manifest.json"
BUNDLE = "kernel.tileb"
REMARKS = "remarks.txt"


def cache_dir():
    d = os.environ.get("TILE_CACHE_DIR")
    if d:
        return pathlib.Path(d).expanduser()
    return pathlib.Path.home() / ".cache" / "tile"


def cache_disabled():
    return os.environ.get("TILE_DISABLE_CACHE", "0") not in ("", "0", "false", "False")


def sha256(data):
    return hashlib.sha256(data).hexdigest()


_warned_roots = set()
_warned_lock = threading.Lock()


def warn_unusable(root, error):
    """One RuntimeWarning per cache directory and process."""
    with _warned_lock:
        if str(root) in _warned_roots:
            return
        _warned_roots.add(str(root))
    warnings.warn(f"tile: the kernel cache at {root} is not usable ({error}); "
                  "kernels are compiled without storing them there",
                  RuntimeWarning, stacklevel=3)


def _parse_json(data):
    """json.loads that turns every way of failing (including RecursionError
    on deeply nested input) into ValueError."""
    try:
        return json.loads(data)
    except RecursionError as e:
        raise ValueError("JSON nested too deeply") from e


def _check_manifest(manifest):
    """{name: (size, sha256)} of a well-formed manifest, else ValueError."""
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise ValueError("manifest has no 'files' object")
    files = {}
    for name, meta in manifest["files"].items():
        if (not isinstance(name, str) or not name or "/" in name or "\\" in name
                or name.startswith(".")):
            raise ValueError(f"bad file name {name!r}")
        if (not isinstance(meta, dict) or type(meta.get("size")) is not int
                or not isinstance(meta.get("sha256"), str)):
            raise ValueError(f"{name}: bad size/sha256 record")
        files[name] = (meta["size"], meta["sha256"])
    return files


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
        """Exclusive per-key lock across processes and threads (flock). When
        the lock cannot be taken (read-only or broken cache directory) it
        warns once and yields unlocked: a lookup stays safe (entries are
        published atomically and verified), at worst two processes compile
        the same key."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - non-POSIX
            yield
            return
        try:
            locks = self.root / "locks"
            locks.mkdir(parents=True, exist_ok=True)
            fd = os.open(locks / f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            warn_unusable(self.root, e)
            yield
            return
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError as e:  # e.g. a file system without locks
                warn_unusable(self.root, e)
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
            files = _check_manifest(_parse_json((entry / MANIFEST).read_bytes()))
            out = {}
            for name, (size, digest) in files.items():
                data = (entry / name).read_bytes()
                if len(data) != size or sha256(data) != digest:
                    raise ValueError(f"{name}: size/sha256 mismatch")
                out[name] = data
            if BUNDLE not in out:
                raise ValueError("no bundle")
            return out
        except FileNotFoundError:
            if entry.exists():
                self.discard(key, "incomplete entry")
            return None
        except (OSError, ValueError, UnicodeError) as e:
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
        published, False if an entry for key already existed or the cache
        directory cannot be written (then with one warning)."""
        try:
            return self._store(key, files, info)
        except OSError as e:
            warn_unusable(self.root, e)
            return False

    def _store(self, key, files, info):
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
        """The document stored under key, or None (missing or unreadable;
        the caller checks its shape)."""
        try:
            return _parse_json((self.root / kind / f"{key}.json").read_bytes())
        except (OSError, ValueError, UnicodeError):
            return None

    def store_json(self, kind, key, doc):
        """Stores doc; False (after one warning) if the directory cannot be
        written."""
        d = self.root / kind
        tmp = None
        try:
            d.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=d)
            with os.fdopen(fd, "w") as f:
                json.dump(doc, f, indent=1, sort_keys=True)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, d / f"{key}.json")
            return True
        except OSError as e:
            if tmp and os.path.exists(tmp):
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            warn_unusable(self.root, e)
            return False


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
    """Empties the in-memory cache (with the autotune results and the
    memory-only bundle imports) and (disk=True) the disk cache."""
    from . import autotuner, bundles
    memory_cache.clear()
    bundles.clear_imported()
    autotuner.clear_memory()
    if disk:
        DiskCache().clear()

"""Kernels compiled elsewhere: export bundles here, import them there.

GPU hosts often have no LLVM and no tilec. The compile cache's key names the
compiler (tilec's version, path, size, mtime), so it cannot be computed
without one. Bundles therefore travel under a *source key*: sha256 of what
determines the kernel and can be known on both hosts: the kernel text, the
target kind and chip (for the CPU's default chip: the host CPU), the
execution backend, tilec's arguments (out_idx, pass options, compile flags)
and the package, runtime and ABI versions. Not the compiler.

    # build host (tilec):
    kernels = tile.par_compile(sources, target="cuda:sm_90a")
    tile.export_bundles(kernels, "bundles/", configs=configs)
    # GPU host (no tilec):
    tile.import_bundles("bundles/")
    kernel = tile.compile(source, target="cuda")   # the imported bundle

A directory holds `<source key>.tileb` files and `index.json`:

    {"format": "tile-bundles/1",
     "entries": {<source key>: {"file", "size", "sha256", "name", "target",
                                "chip", "tilec_args", "config"}}}

(config: the JSON of the autotune config the kernel was built for, or null).
Exports into one directory merge their entries. import_bundles verifies each
file (size, sha256, the runtime opens it) and publishes it in the disk cache
under its source key (kernels/<source key>/, beside compiled entries; the
memory only when the cache is disabled or not writable); tile.compile,
@tile.jit and autotune look the source key up before they look for tilec,
so an imported bundle wins over compiling.
"""

import hashlib
import json
import os
import pathlib
import tempfile
import threading

from .cache import BUNDLE, DiskCache, cache_disabled, sha256

FORMAT = "tile-bundles/1"
INDEX = "index.json"

_imported = {}          # source key -> bundle bytes (memory-only imports)
_lock = threading.Lock()


class BundleError(ValueError):
    """A bundle directory that cannot be used (no index, a missing or
    corrupt file, a bundle the runtime refuses)."""


def source_key(source, kind, chip, backend, args):
    """The compiler-independent key of a kernel (see the module docstring).
    chip is the resolved chip ('' for the CPU's default: the host CPU then
    stands in, as in the compile cache)."""
    from . import __version__, _runtime
    from .compiler import host_cpu_id
    doc = {"what": "tile-source-key/1", "source": source, "target": kind,
           "chip": chip or (f"host:{host_cpu_id()}" if kind == "cpu" else ""),
           "backend": backend, "args": list(args), "package": __version__,
           "runtime": _runtime.version, "abi": _runtime.ABI_VERSION}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def lookup(key):
    """The bundle bytes imported under a source key, or None."""
    with _lock:
        data = _imported.get(key)
    if data is not None or cache_disabled():
        return data
    files = DiskCache().load(key)
    return None if files is None else files[BUNDLE]


def _config_json(config):
    try:
        return json.loads(json.dumps(config))
    except (TypeError, ValueError):
        return {"repr": repr(config)}


def export_bundles(kernels, directory, configs=None):
    """Writes each kernel (tile.compile / par_compile / @tile.jit results,
    i.e. Kernel objects that know their source key) into directory as
    <source key>.tileb and records it in directory/index.json (merged with
    what is there). configs: optional, one entry per kernel (the autotune
    config it was built for; JSON-able values). None entries of kernels (a
    failed par_compile) are skipped. Returns the paths written."""
    kernels = list(kernels)
    if configs is not None:
        configs = list(configs)
        if len(configs) != len(kernels):
            raise ValueError(f"export_bundles: {len(kernels)} kernels but "
                             f"{len(configs)} configs")
    d = pathlib.Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    index = _read_index(d) if (d / INDEX).exists() else {}
    written = []
    for i, k in enumerate(kernels):
        if k is None:
            continue
        key = getattr(k, "source_key", None)
        if key is None:
            raise ValueError(f"export_bundles: kernel #{i} ({k.name}) has no "
                             "source key: export kernels made by tile.compile, "
                             "par_compile or @tile.jit (tile.load'ed bundles "
                             "do not know their source)")
        data = k.bundle
        name = f"{key}.tileb"
        _atomic_write(d / name, data)
        index[key] = {"file": name, "size": len(data), "sha256": sha256(data),
                      "name": k.name, "target": k.target_kind,
                      "chip": k.target_chip,
                      "tilec_args": getattr(k, "_compile_args", None),
                      "config": None if configs is None else _config_json(configs[i])}
        written.append(str(d / name))
    _atomic_write(d / INDEX, json.dumps({"format": FORMAT, "entries": index},
                                        indent=1, sort_keys=True).encode())
    return written


def _atomic_write(path, data):
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _read_index(d):
    p = d / INDEX
    try:
        doc = json.loads(p.read_text())
    except FileNotFoundError:
        raise BundleError(f"{d}: no {INDEX} (not a directory written by "
                          "tile.export_bundles)") from None
    except (OSError, ValueError, RecursionError) as e:
        raise BundleError(f"{p}: unreadable ({e})") from None
    entries = doc.get("entries") if isinstance(doc, dict) else None
    if (not isinstance(doc, dict) or doc.get("format") != FORMAT
            or not isinstance(entries, dict)
            or not all(isinstance(v, dict) and isinstance(v.get("file"), str)
                       for v in entries.values())):
        raise BundleError(f"{p}: not a {FORMAT} index")
    return entries


def read_bundle_dir(directory):
    """[(source key, entry, bundle bytes)] of a bundle directory, every file
    checked (size, sha256); BundleError naming the first bad one."""
    d = pathlib.Path(directory)
    if not d.is_dir():
        raise BundleError(f"{d}: no such bundle directory")
    out = []
    for key, entry in sorted(_read_index(d).items()):
        path = d / pathlib.PurePath(entry["file"]).name
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise BundleError(f"{path}: missing (listed in {d / INDEX} for "
                              f"kernel {entry.get('name')!r})") from None
        if len(data) != entry.get("size") or sha256(data) != entry.get("sha256"):
            raise BundleError(f"{path}: size/sha256 differ from {d / INDEX} "
                              "(truncated or replaced)")
        out.append((key, entry, data))
    return out


def import_bundles(directory):
    """Makes the bundles of a directory written by export_bundles available
    to tile.compile, @tile.jit and autotune on this host (no tilec needed
    for them). Every bundle is verified (size, sha256 and the runtime's own
    checks, without loading device code). Returns the number imported."""
    from ._runtime import TileError
    from .kernel import Kernel
    items = read_bundle_dir(directory)
    for key, entry, data in items:
        try:
            Kernel(data, "auto", inspect=True)
        except TileError as e:
            raise BundleError(f"{entry['file']}: the runtime refuses it: {e}") from None
    disk = None if cache_disabled() else DiskCache()
    for key, entry, data in items:
        stored = False
        if disk is not None:
            files = disk.load(key)
            stored = files is not None and files[BUNDLE] == data
            if not stored:
                if files is not None:
                    disk.discard(key, "replaced by an import")
                stored = disk.store(key, {BUNDLE: data},
                                    {"imported_from": str(directory),
                                     "name": entry.get("name")})
        if not stored:
            with _lock:
                _imported[key] = data
    return len(items)


def clear_imported():
    """Forgets the memory-only imports (tile.clear_cache calls it)."""
    with _lock:
        _imported.clear()


__all__ = ["BundleError", "export_bundles", "import_bundles",
           "read_bundle_dir", "source_key"]

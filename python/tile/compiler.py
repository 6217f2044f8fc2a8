"""tile.compile / tile.load: run tilec, cache, load."""

import functools
import hashlib
import json
import os
import pathlib
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from . import _frameworks, bundles, toolchain
from ._runtime import BACKENDS, TARGETS
from .cache import BUNDLE, REMARKS, DiskCache, cache_disabled, memory_cache

# Target kinds and execution backends come from the runtime's tables
# (tile_targets.h): TARGETS ("cpu", "cuda", ...) and BACKENDS {name:
# {"targets", "compiled", "implemented"}}.
ALL_BACKENDS = tuple(BACKENDS)
# execution_backend values each target accepts.
ALLOWED_BACKENDS = {kind: tuple(b for b, info in BACKENDS.items()
                                if kind in info["targets"])
                    for kind in TARGETS}


class CompileError(RuntimeError):
    """tilec failed; .stderr holds its diagnostics, .command the command."""

    def __init__(self, message, stderr="", command=None):
        super().__init__(message)
        self.stderr = stderr
        self.command = command


class BackendNotImplementedError(NotImplementedError, ValueError):
    """A known execution backend that this package does not implement."""


def _not_implemented(backend, kind=None):
    usable = [b for b in ALLOWED_BACKENDS.get(kind, ())
              if BACKENDS[b]["implemented"]]
    hint = ""
    if len(usable) > 1:  # more than "auto"
        hint = (f"; use {', '.join(repr(b) for b in usable[:-1])} or "
                f"{usable[-1]!r} for {kind}")
    return BackendNotImplementedError(
        f"tile: the {backend} execution backend is not implemented in this "
        f"package yet{hint}")


# ---- tilec ---------------------------------------------------------------------

def find_tilec():
    """$TILE_TILEC, then the wheel's own tile/bin/tilec (static, needs no
    LLVM: it wins over any other tilec), <build>/bin/tilec (build tree
    python_packages/tile), then PATH."""
    env = os.environ.get("TILE_TILEC")
    if env:
        if not os.access(env, os.X_OK):
            raise RuntimeError(f"TILE_TILEC={env} is not an executable")
        return env
    here = pathlib.Path(__file__).resolve().parent
    for cand in (here / "bin" / "tilec", here.parent.parent / "bin" / "tilec"):
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    found = shutil.which("tilec")
    if found:
        return found
    raise RuntimeError(
        "tile: cannot find the compiler 'tilec': set TILE_TILEC=/path/to/tilec, "
        "put it on PATH, or use the build tree's python_packages "
        "(PYTHONPATH=<build>/python_packages)")


def pip_nvrtc_library():
    """libnvrtc.so* of the pip package nvidia-cuda-nvrtc: nvidia/cuda_nvrtc/lib
    (CUDA 12 wheels) or nvidia/cu13/lib (CUDA 13), or None."""
    import importlib.util
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for base in spec.submodule_search_locations:
        for cand in sorted(pathlib.Path(base).glob("*/lib/libnvrtc.so*"),
                           reverse=True):
            if "builtins" not in cand.name and "alt" not in cand.name:
                return str(cand)
    return None


def nvrtc_env():
    """Points the runtime's NVRTC search (TILE_NVRTC_PATH, docs/runtime.md)
    at the pip nvidia-cuda-nvrtc wheel when the caller set none and the
    system has no libnvrtc the loader finds. Called before a kernel is
    loaded with the nvrtc backend."""
    if os.environ.get("TILE_NVRTC_PATH") or _system_has_nvrtc():
        return
    pip = pip_nvrtc_library()
    if pip:
        os.environ["TILE_NVRTC_PATH"] = pip


@functools.lru_cache(maxsize=None)
def _system_has_nvrtc():
    """Whether the dynamic loader finds a libnvrtc (asked once: it runs
    ldconfig)."""
    import ctypes.util
    return ctypes.util.find_library("nvrtc") is not None


_id_lock = threading.Lock()
_compiler_ids = {}


def compiler_id(tilec=None):
    """Identity of the compiler for cache keys: `tilec --version` plus the
    binary's path, size and mtime (a rebuilt tilec gets new keys)."""
    tilec = tilec or find_tilec()
    st = os.stat(tilec)
    stamp = (tilec, st.st_size, st.st_mtime_ns)
    with _id_lock:
        if stamp in _compiler_ids:
            return _compiler_ids[stamp]
    proc = subprocess.run([tilec, "--version"], capture_output=True, text=True)
    ident = f"{proc.stdout.strip()}|{stamp[0]}|{stamp[1]}|{stamp[2]}"
    with _id_lock:
        _compiler_ids[stamp] = ident
    return ident


@functools.lru_cache(maxsize=None)
def host_cpu_id():
    """The host CPU (kernels compiled for the default chip are host-specific,
    so a cache shared between machines must not mix them)."""
    info = platform.machine()
    try:
        text = pathlib.Path("/proc/cpuinfo").read_text()
        for field in ("model name", "flags"):
            m = re.search(rf"^{field}\s*:\s*(.*)$", text, re.M)
            if m:
                info += "|" + m.group(1)
    except OSError:
        pass
    return hashlib.sha256(info.encode()).hexdigest()[:16]


# ---- target / backend ------------------------------------------------------------

def detect_target():
    """'hip' under a ROCm build of torch with an AMD GPU, 'cuda' when a GPU
    is visible (torch, cupy or libcuda), else 'cpu'."""
    try:
        if _frameworks.hip_torch() is not None:
            return "hip"
        if _frameworks.cuda_device_count() > 0:
            return "cuda"
    except Exception:  # noqa: BLE001 - detection must never fail compile
        pass
    return "cpu"


def resolve_target(target):
    """'auto' | 'cpu' | 'cuda' | 'cuda:sm_90a' | ... -> (kind, chip)."""
    if target is None or target == "auto":
        kind, chip = detect_target(), ""
    else:
        kind, _, chip = str(target).partition(":")
    kind = kind.strip().lower()
    if kind not in TARGETS:
        raise ValueError(f"tile: unknown target {target!r} (expected one of: "
                         f"auto, {', '.join(TARGETS)}, optionally with "
                         "':<chip>', e.g. 'cuda:sm_90a')")
    if kind == "cuda" and not chip:
        chip = _frameworks.cuda_chip(0) or ""
    if kind == "hip" and not chip:
        chip = _frameworks.hip_chip(0) or ""
    return kind, chip


def check_backend(kind, backend):
    backend = (backend or "auto").strip().lower()
    allowed = ALLOWED_BACKENDS[kind]
    if backend not in BACKENDS:
        raise ValueError(
            f"tile: unknown execution_backend {backend!r}; allowed for target "
            f"{kind!r}: {', '.join(allowed)}")
    if backend not in allowed:
        raise ValueError(
            f"tile: execution_backend {backend!r} cannot run {kind!r} kernels; "
            f"allowed for target {kind!r}: {', '.join(allowed)}")
    if not BACKENDS[backend]["implemented"]:
        raise _not_implemented(backend, kind)
    # "auto" needs some implemented backend of the target.
    explicit = [b for b in allowed if b != "auto"]
    if not any(BACKENDS[b]["implemented"] for b in explicit):
        raise _not_implemented(explicit[0], kind)
    return backend


# ---- sources -------------------------------------------------------------------

def read_source(source_or_path):
    """(text, path or None). A str containing a newline or 'func.func' is
    source text; otherwise it (or a PathLike) names a file."""
    if isinstance(source_or_path, bytes):
        return source_or_path.decode(), None
    if isinstance(source_or_path, os.PathLike):
        p = pathlib.Path(source_or_path)
        return p.read_text(), str(p)
    if not isinstance(source_or_path, str):
        raise TypeError("tile.compile: expected MLIR text or a path, got "
                        f"{type(source_or_path).__name__}")
    s = source_or_path
    if "\n" in s or "func.func" in s or "{" in s:
        return s, None
    p = pathlib.Path(s)
    if not p.is_file():
        raise FileNotFoundError(f"tile.compile: no such file {s!r} (and the "
                                "string does not look like MLIR text)")
    return p.read_text(), str(p)


def _norm_out_idx(out_idx):
    if out_idx is None:
        return []
    if isinstance(out_idx, int):
        out_idx = [out_idx]
    out = [int(i) for i in out_idx]
    return out


_FUNC_RE = re.compile(r"func\.func\s+(?:(?:private|public|nested)\s+)?@[\w.$-]+\s*\(")
_CLOSE = {"(": ")", "[": "]", "{": "}", "<": ">"}


def _balanced(text, i):
    """Index just past the bracket group opening at text[i] (strings and
    nested groups skipped; the '>' of '->' closes nothing), or -1."""
    stack = []
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c in _CLOSE:
            stack.append(_CLOSE[c])
        elif c == "-" and text.startswith("->", i):
            i += 1
        elif c in ")]}>":
            if not stack or stack.pop() != c:
                return -1
            if not stack:
                return i + 1
        i += 1
    return -1


def _split_top(text):
    """text split at the commas outside any bracket group or string."""
    parts, start, i = [], 0, 0
    while i < len(text):
        c = text[i]
        if c in _CLOSE or c == '"':
            if c == '"':
                j = i + 1
                while j < len(text) and text[j] != '"':
                    j += 2 if text[j] == "\\" else 1
                i = j + 1
            else:
                j = _balanced(text, i)
                if j < 0:
                    return None
                i = j
            continue
        if c == "-" and text.startswith("->", i):
            i += 2
            continue
        if c == ",":
            parts.append(text[start:i])
            start = i + 1
        i += 1
    if text[start:].strip():
        parts.append(text[start:])
    return parts


def kernel_params(source):
    """[(name or None, marked tile.output)] of the source's tile.kernel
    function, read from its signature; None when it cannot be found (then
    tilec alone decides)."""
    for m in _FUNC_RE.finditer(source):
        open_ = m.end() - 1
        close = _balanced(source, open_)
        if close < 0:
            return None
        rest = source[close:close + 4096].lstrip()
        if rest.startswith("->"):  # a kernel returns nothing, but be safe
            continue
        if not rest.startswith("attributes"):
            continue
        brace = rest.find("{")
        end = _balanced(rest, brace) if brace >= 0 else -1
        if end < 0 or not re.search(r"\btile\.kernel\b", rest[brace:end]):
            continue
        args = _split_top(source[open_ + 1:close - 1])
        if args is None:
            return None
        out = []
        for a in args:
            name = re.search(r'\btile\.name\s*=\s*"([^"]*)"', a)
            out.append((name.group(1) if name else None,
                        re.search(r"\btile\.output\b(?![.\w])", a) is not None))
        return out
    return None


def _reconcile_out_idx(source, idx):
    """out_idx against the outputs the source marks itself (`tile.output`,
    e.g. in @tile.jit's get_ir text). The same outputs again: dropped, so
    the compile (and its cache key) is the one without out_idx. Others: a
    ValueError, rather than tilec silently making both sets outputs."""
    if not idx or "tile.output" not in source:
        return idx
    params = kernel_params(source)
    if params is None or not any(out for _, out in params):
        return idx
    n = len(params)
    given = sorted({i + n if i < 0 else i for i in idx})
    if any(not 0 <= i < n for i in given):
        return idx  # tilec reports the index out of range
    marked = [i for i, (_, out) in enumerate(params) if out]
    if given == marked:
        return []

    def names(ix):
        return ", ".join(f"{i} ({params[i][0]})" if params[i][0] else str(i)
                         for i in ix)
    raise ValueError(
        f"tile.compile: out_idx {idx} names parameter(s) {names(given)} of "
        f"kernel '{_kernel_name(source)}', but its source already marks "
        f"{names(marked)} as outputs (tile.output, e.g. from "
        f"@tile.jit(out_idx=...).get_ir): pass no out_idx (or the same one), "
        "or remove tile.output from the source")


def _flag_list(pass_options, compile_flags):
    flags = []
    for k, v in sorted((pass_options or {}).items()):
        k = k.lstrip("-")
        if v is True:
            flags.append(f"--{k}")
        elif v is False or v is None:
            continue
        elif isinstance(v, (list, tuple)):
            flags.append(f"--{k}={','.join(str(x) for x in v)}")
        else:
            flags.append(f"--{k}={v}")
    if isinstance(compile_flags, str):
        compile_flags = compile_flags.split()
    flags += [str(f) for f in (compile_flags or [])]
    return flags


# tilec reads the source from a temporary file; its diagnostics name it
# by this token (stable, so they can be cached) until render_diagnostics
# puts the kernel's label there.
SOURCE_TOKEN = "<tile-source>"
_DIAG = re.compile(r"^(.+?):(\d+):(\d+): (error|warning|note|remark): (.*)$")
_CARET = re.compile(r"^\s*\^[~^]*\s*$")


def _diagnostics(text):
    """tilec's stderr as [(kind, lines)]: each MLIR diagnostic with the
    source line and caret printed under it (kind: error, remark, ...; a note
    takes its diagnostic's kind), any other line alone (kind None)."""
    lines = text.splitlines(keepends=True)
    out, i, last = [], 0, None
    while i < len(lines):
        m = _DIAG.match(lines[i].rstrip("\n"))
        if not m:
            out.append((None, lines[i:i + 1]))
            i += 1
            continue
        kind = last if m.group(4) == "note" and last else m.group(4)
        j = i + 1
        if j + 1 < len(lines) and _CARET.match(lines[j + 1]):
            j += 2
        out.append((kind, lines[i:j]))
        last = kind
        i = j
    return out


def split_remarks(text):
    """(remarks, everything else) of tilec's stderr."""
    rem, rest = [], []
    for kind, lines in _diagnostics(text):
        (rem if kind == "remark" else rest).extend(lines)
    return "".join(rem), "".join(rest)


def render_diagnostics(text, source, label):
    """Diagnostics on the temporary source (SOURCE_TOKEN) as the user can
    find them: at `label` (the source's path, else `<kernel NAME>`: the
    line is one of the MLIR text, get_ir / TILE_DUMP_IR's source.mlir),
    and, for a text tile.language printed without locations in this
    process, at the Python line that emitted the op."""
    if SOURCE_TOKEN not in text:
        return text
    from .language.ir import python_locations
    locs = python_locations(source) or {}
    out = []
    for line in text.splitlines(keepends=True):
        m = _DIAG.match(line.rstrip("\n"))
        if m and m.group(1) == SOURCE_TOKEN:
            at = f"{label}:{m.group(2)}:{m.group(3)}"
            py = locs.get(int(m.group(2)))
            if py:
                pyat = f"{py[0]}:{py[1]}" + (f":{py[2]}" if py[2] else "")
                line = f"{pyat}: {m.group(4)}: {m.group(5)} ({at})\n"
            else:
                line = f"{at}: {m.group(4)}: {m.group(5)}\n"
        out.append(line)
    return "".join(out)


def _run_tilec(tilec, source, args, verbose, what="compile", label=None):
    """Runs tilec on source; returns (its output, its remarks: stderr's
    remark diagnostics, SOURCE_TOKEN naming the source). Remarks are always
    asked for (they only change what tilec prints), so a cached kernel has
    them for a later verbose hit."""
    label = label or f"<kernel {_kernel_name(source)}>"
    with tempfile.TemporaryDirectory(prefix="tile-compile-") as tmp:
        src = pathlib.Path(tmp) / "kernel.mlir"
        src.write_text(source)
        out = pathlib.Path(tmp) / "kernel.out"
        cmd = [tilec, str(src), "-o", str(out), *args]
        if "--remarks" not in args and not any(
                a.startswith(("--emit=metadata", "--info")) for a in args):
            cmd.append("--remarks")
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              env=toolchain.tilec_env(args))
        stderr = proc.stderr.replace(str(src), SOURCE_TOKEN)
        remarks, rest = split_remarks(stderr)
        if verbose:
            print(f"[tile] {' '.join(cmd)}  ({time.perf_counter() - t0:.2f} s, "
                  f"exit {proc.returncode})", file=sys.stderr)
            if stderr:
                print(render_diagnostics(stderr, source, label),
                      file=sys.stderr, end="")
        if proc.returncode != 0:
            rest = render_diagnostics(rest, source, label)
            raise CompileError(f"tilec failed to {what} the kernel "
                               f"(exit {proc.returncode}):\n{rest.strip()}",
                               rest, cmd)
        return out.read_bytes(), remarks


def _print_remarks(remarks, source, label):
    """Prints remarks (cached ones: those of the compile that made the
    entry) as verbose shows a compile's."""
    if remarks:
        print(render_diagnostics(remarks, source, label), file=sys.stderr,
              end="")


# ---- compile -------------------------------------------------------------------

# Load failures that say something about this host, not about a bundle.
_HOST_STATUSES = ("NO_DEVICE", "BACKEND_UNAVAILABLE", "OUT_OF_MEMORY")

_dump_done = set()


def _dump_ir(tilec, source, args, key, name_hint):
    """TILE_DUMP_IR=dir: IR after every pass into dir/<name>-<key>/ (also on
    cache hits: the compile is repeated for the dump only)."""
    root = os.environ.get("TILE_DUMP_IR")
    if not root:
        return
    dest = pathlib.Path(root) / f"{name_hint}-{key[:12]}"
    if (str(dest), key) in _dump_done:
        return
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "source.mlir").write_text(source)
    try:
        _run_tilec(tilec, source, [*args, "--mlir-print-ir-after-all",
                                   f"--mlir-print-ir-tree-dir={dest}"],
                   False, "dump IR of")
    except CompileError as e:
        (dest / "error.txt").write_text(e.stderr)
    _dump_done.add((str(dest), key))


def _kernel_name(source):
    m = re.search(r"func\.func\s+@([\w.$-]+)", source)
    return m.group(1) if m else "kernel"


def compile(source_or_path, out_idx=None, target="auto",
            execution_backend="auto", pass_options=None, compile_flags=None,
            verbose=False, inspect_only=False):
    """Compiles a tile kernel (MLIR text or a .mlir path) with tilec and
    loads it. Results are cached in memory and on disk (see tile.cache).

    out_idx: parameter index (or list) of outputs the runtime allocates when
      the caller omits them (negative indices count from the end). A source
      that marks outputs itself (tile.output, as @tile.jit's get_ir does)
      takes the same out_idx again (a no-op), another one is a ValueError.
    target: 'auto' (cuda when a GPU is visible, else cpu), 'cpu', 'cuda',
      'hip', 'metal', optionally with ':<chip>' ('cuda:sm_90a').
    execution_backend: cpu: auto, ffi, native; cuda: auto, ffi, native,
      nvrtc (the bundle's CUDA C++ compiled by NVRTC at load time); metal:
      auto, metal-torch (the bundle's MSL through torch.mps.compile_shader).
    pass_options: dict of tilec options, {'O': 2} -> --O=2 (True -> a bare
      flag, list -> comma separated).
    compile_flags: extra tilec arguments (list or a string).
    verbose: print the tilec command, cache hits and tilec's remarks (also
      on a hit: they are kept with the entry; kernel.remarks has them).
    inspect_only: compile (and cache) without loading device code, for a
      device this host does not have (the Kernel can export its bundle and
      be inspected, not called: tile.load(path, device=None)).
    """
    from .kernel import Kernel

    source, path = read_source(source_or_path)
    kind, chip = resolve_target(target)
    backend = check_backend(kind, execution_backend)
    target_args = [f"--target={kind}"] + ([f"--chip={chip}"] if chip else [])
    # Negative indices count from the end: tilec resolves them (it knows the
    # parameter count), so there is no second compiler run for them.
    idx = _reconcile_out_idx(source, _norm_out_idx(out_idx))
    args = list(target_args)
    if idx:
        args.append(f"--out-idx={','.join(str(i) for i in sorted(set(idx)))}")
    if BACKENDS[backend]["compiled"]:
        args.append(f"--backend={backend}")
    args += _flag_list(pass_options, compile_flags)

    # Bundles compiled elsewhere (tile.import_bundles) are keyed without the
    # compiler, so they are found on hosts without tilec; they win.
    skey = bundles.source_key(source, kind, chip, backend, args)
    use_cache = not cache_disabled()
    memory = use_cache and not inspect_only  # loaded kernels only
    if memory:
        k = memory_cache.get(skey)
        if k is not None:
            return k
    imported = bundles.lookup(skey)
    if imported is not None:
        kernel = Kernel(imported, backend, cache_key=skey, source_path=path,
                        compile_args=args, inspect=inspect_only)
        kernel.source_key = skey
        if verbose:
            print(f"[tile] {_kernel_name(source)}: imported bundle "
                  f"{skey[:16]}", file=sys.stderr)
        if memory:
            memory_cache.put(skey, kernel)
        return kernel
    try:
        tilec = find_tilec()
    except RuntimeError as e:
        raise CompileError(f"{e}; and no imported bundle matches kernel "
                           f"'{_kernel_name(source)}' for {kind}"
                           f"{':' + chip if chip else ''} (compile it where "
                           "tilec is, tile.export_bundles(kernels, dir), and "
                           "tile.import_bundles(dir) here)") from None

    from . import __version__, _runtime
    key_doc = {
        "source": source, "target": kind,
        "chip": chip or (f"host:{host_cpu_id()}" if kind == "cpu" else ""),
        "backend": backend, "args": args, "compiler": compiler_id(tilec),
        "package": __version__, "runtime": _runtime.version,
        "abi": _runtime.ABI_VERSION,
    }
    key = hashlib.sha256(json.dumps(key_doc, sort_keys=True).encode()).hexdigest()
    name = _kernel_name(source)
    _dump_ir(tilec, source, args, key, name)

    label = path or f"<kernel {name}>"
    if memory:
        k = memory_cache.get(key)
        if k is not None:
            if verbose:
                print(f"[tile] {name}: memory cache hit {key[:16]}", file=sys.stderr)
                _print_remarks(k.remarks, "", label)
            return k
    disk = DiskCache()
    info = {"name": name, "source_path": path, "target": kind, "chip": chip,
            "tilec_args": args}

    def build():
        return _run_tilec(tilec, source, args, verbose, label=label)

    def finish(kernel, remarks):
        kernel.source_key = skey
        kernel.remarks = render_diagnostics(remarks, source, label)
        return kernel

    if not use_cache:
        bundle, remarks = build()
        return finish(Kernel(bundle, backend, cache_key=key, source_path=path,
                             compile_args=args, inspect=inspect_only), remarks)

    with memory_cache.key_lock(key):
        k = memory_cache.get(key) if memory else None
        if k is not None:
            return k
        with disk.lock(key):
            files = disk.load(key)
            hit = files is not None
            kernel = None
            if hit:
                try:
                    kernel = Kernel(files[BUNDLE], backend, cache_key=key,
                                    source_path=path, compile_args=args,
                                    inspect=inspect_only)
                except _runtime.TileError as e:
                    # Verified bytes the runtime still refuses (e.g. from a
                    # runtime that checked less): a bad entry, recompile.
                    # Not when this host cannot load them (no driver, no
                    # backend, no memory): the entry is fine, the error
                    # the caller's.
                    if getattr(e, "status", None) in _HOST_STATUSES:
                        raise
                    disk.discard(key, str(e))
                    hit = False
            if hit:
                # the remarks of the compile that made the entry (kept with
                # it so that a verbose hit shows them too)
                remarks = files.get(REMARKS, b"").decode("utf-8", "replace")
            else:
                bundle, remarks = build()
                stored = {BUNDLE: bundle}
                if remarks:
                    stored[REMARKS] = remarks.encode()
                disk.store(key, stored, info)
                kernel = Kernel(bundle, backend, cache_key=key,
                                source_path=path, compile_args=args,
                                inspect=inspect_only)
        finish(kernel, remarks)
        if verbose:
            print(f"[tile] {name}: disk cache {'hit' if hit else 'miss'} "
                  f"{key[:16]} ({disk.entry(key)})", file=sys.stderr)
            if hit:
                _print_remarks(remarks, source, label)
        if memory:
            memory_cache.put(key, kernel)
        return kernel


def load(path, execution_backend="auto", device="auto"):
    """Loads a bundle written by Kernel.export / tilec.

    device: "auto" loads the bundle's device code for its target (a CUDA
      bundle needs the CUDA driver and a GPU); "cpu" or "cuda" also checks
      that the bundle targets that device. None opens the bundle for
      inspection only, on any machine and for any target: info, params,
      sections, get_source() and describe() work, calling it raises
      tile.TileError (status BACKEND_UNAVAILABLE).
    """
    from .kernel import Kernel
    data = pathlib.Path(path).read_bytes()
    if device is None:
        return Kernel(data, "auto", inspect=True)
    if device != "auto" and str(device).partition(":")[0] not in TARGETS:
        raise ValueError(f"tile.load: unknown device {device!r} (expected "
                         f"'auto', None, or one of: {', '.join(TARGETS)})")
    if execution_backend not in BACKENDS:
        raise ValueError(f"tile.load: unknown execution_backend "
                         f"{execution_backend!r} (expected one of: "
                         f"{', '.join(ALL_BACKENDS)})")
    if not BACKENDS[execution_backend]["implemented"]:
        raise _not_implemented(execution_backend)
    if device != "auto":
        probe = Kernel(data, "auto", inspect=True)
        kind = str(device).partition(":")[0]
        if probe.target_kind != kind:
            raise ValueError(f"tile.load: {path} holds a {probe.target_kind!r} "
                             f"kernel ({probe.name}); it cannot run on "
                             f"device {device!r}")
    return Kernel(data, execution_backend, source_path=None)

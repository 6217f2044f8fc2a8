"""tile.Kernel: a loaded kernel (the call path is C++: tile._runtime)."""

import os
import pathlib
import tempfile

from . import _runtime

# get_source(kind) -> bundle section
SOURCE_SECTIONS = {
    "mlir": "mlir",
    "llvm": "llvm",
    "ptx": "ptx",
    "cuda": "cuda",
    "msl": "msl",
    "metadata": "metadata",
    # hip: the hsaco's registers, LDS and scratch per kernel (JSON).
    "hsaco.resources": "hsaco.resources",
}


def _is_metal(bundle):
    """Whether a bundle holds a metal kernel (runs through metal-torch)."""
    if b'"metal"' not in bundle:  # cheap: the metadata's target kind
        return False
    return _runtime.KernelHandle(bundle, "auto", True).target_kind == "metal"


class Kernel(_runtime.KernelHandle):
    """A compiled kernel.

    kernel(*tensors_and_scalars, stream=None) launches it. Tensors are any
    objects with __dlpack__ (torch, numpy, cupy, jax, ...); out_idx outputs
    may be omitted (all of them, or each passed as None) and are then
    allocated in the framework of the first tensor argument and returned.
    Returns the out_idx outputs (one object or a tuple), None without out_idx.
    On CUDA the default stream is torch's current stream for torch tensors.

    remarks: tilec's remarks for the kernel (slower paths and why; what
    verbose=True prints), "" when there were none, None when unknown (a
    bundle from tile.load or tile.import_bundles).
    """

    remarks = None

    def __init__(self, bundle, execution_backend="auto", cache_key=None,
                 source_path=None, compile_args=None, inspect=False):
        # inspect: no device code loaded (tile.load(path, device=None)).
        if execution_backend == "nvrtc" and not inspect:
            from .compiler import nvrtc_env
            nvrtc_env()
        bundle = bytes(bundle)
        metal = not inspect and (
            execution_backend == "metal-torch" or
            (execution_backend == "auto" and _is_metal(bundle)))
        # metal-torch launches from Python (tile._metal): the C handle only
        # describes the kernel.
        try:
            super().__init__(bundle, "auto" if metal else execution_backend,
                             inspect or metal)
        except _runtime.TileError as e:
            if getattr(e, "status", None) != "NO_DEVICE":
                raise
            raise _no_device_error(e) from None
        if metal:
            if self.target_kind != "metal":
                raise ValueError(
                    f"tile: execution_backend 'metal-torch' cannot run "
                    f"{self.target_kind!r} kernels")
            from ._metal import MetalTorchLauncher
            self._metal = MetalTorchLauncher(self)
            self.__class__ = MetalKernel
        self._bundle = bundle
        self._cache_key = cache_key
        self._source_path = source_path
        self._compile_args = list(compile_args or [])

    # ---- information (the runtime's parsed view of the metadata) ----------
    @property
    def grid(self):
        """Grid extents (x, y, z) as expressions over the symbols and integer
        scalar params, e.g. ('ceildivu("M", 128)', '1', '1')."""
        return self.launch_info["grid"]

    @property
    def block(self):
        return self.launch_info["block"]

    @property
    def shared_bytes(self):
        return self.launch_info["shared_bytes"]

    @property
    def info(self):
        """Everything known about the kernel, as a dict."""
        launch = self.launch_info
        return {
            "name": self.name,
            "target": self.target_kind,
            "chip": self.target_chip,
            "backend": self.backend,
            "params": self.params,
            "out_idx": self.out_idx,
            "symbols": self.symbols,
            "grid": launch["grid"],
            "block": launch["block"],
            "shared_bytes": launch["shared_bytes"],
            "variants": self.variants,
            "sections": self.sections,
            "compiler": launch["compiler"],
            "cache_key": self._cache_key,
            "source_path": self._source_path,
            "compile_args": self._compile_args,
            "bundle_bytes": len(self._bundle),
            "inspect_only": self.inspect_only,
        }

    def get_source(self, kind="mlir"):
        """Source text from the bundle: 'mlir' (input IR), 'llvm' (host/device
        LLVM IR), 'ptx', 'cuda', 'msl' (Metal), 'metadata', 'hsaco.resources'.
        Raises ValueError when the bundle has no such section."""
        section = SOURCE_SECTIONS.get(kind)
        if section is None:
            raise ValueError(f"get_source: unknown kind {kind!r} (expected one "
                             f"of: {', '.join(SOURCE_SECTIONS)})")
        data = self.section(section)
        if data is None:
            raise ValueError(
                f"kernel '{self.name}' ({self.target_kind}) has no {kind} source: "
                f"its bundle holds the sections {', '.join(self.sections)}")
        return data.decode("utf-8", errors="replace")

    def export(self, path):
        """Writes the bundle (atomically) to path; tile.load(path) reads it."""
        path = pathlib.Path(path)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent or ".")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(self._bundle)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        return str(path)

    @property
    def bundle(self):
        return self._bundle

    def get_profiler(self, **shapes):
        """A Profiler whose inputs are generated from the param info (shape
        symbols given as keyword arguments, e.g. M=1024) or passed to
        do_bench / run."""
        from .profiler import Profiler
        return Profiler(self, **shapes)

    def __repr__(self):
        return (f"<tile.Kernel {self.name} target={self.target_kind}"
                f"{':' + self.target_chip if self.target_chip else ''} "
                f"backend={self.backend}>")

    def __reduce__(self):
        backend = "auto" if self.inspect_only else self.backend
        return (_rebuild, (self._bundle, backend, self._cache_key,
                           self._source_path, self._compile_args,
                           self.inspect_only))


class MetalKernel(Kernel):
    """A metal kernel on the metal-torch backend: launched by
    tile._metal.MetalTorchLauncher through torch.mps (the C runtime has no
    Metal device layer)."""

    def __call__(self, *args, stream=None):
        return self._metal(*args, stream=stream)

    @property
    def backend(self):
        return "metal-torch"

    @property
    def inspect_only(self):
        return False

    def __reduce__(self):
        return (_rebuild, (self._bundle, "metal-torch", self._cache_key,
                           self._source_path, self._compile_args, False))


def _no_device_error(e):
    """The runtime's NO_DEVICE error ("no CUDA driver (...)") plus what to do
    when the point was a bundle for another machine: loading is what needs
    the device, compiling and exporting do not."""
    err = type(e)(
        f"{e}. To compile for a device this host does not have, compile "
        "without loading: tile.compile(..., inspect_only=True), "
        "f.compile(..., inspect_only=True) or f.export(path, ...) of a "
        "@tile.jit function, then .export(path) / tile.export_bundles; "
        "tile.load(path, device=None) opens a bundle for inspection only")
    err.status = e.status
    return err


def _rebuild(bundle, backend, key, path, args, inspect=False):
    return Kernel(bundle, backend, cache_key=key, source_path=path,
                  compile_args=args, inspect=inspect)

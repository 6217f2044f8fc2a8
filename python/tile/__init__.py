"""tile: compile and run tile kernels from Python.

    import tile
    kernel = tile.compile("examples/elementwise_add.mlir", target="cpu")
    c = kernel(a, b)                       # numpy in -> numpy out (C omitted)
    ms = kernel.get_profiler(N=1 << 20).do_bench()

See docs/python.md.
"""

__version__ = "0.1.0"

from . import _runtime  # noqa: E402  (C++ extension: the call path)
from ._runtime import ArgumentError, TileError  # noqa: E402
from .autotuner import AutotuneResult, autotune  # noqa: E402
from .bundles import BundleError, export_bundles, import_bundles  # noqa: E402
from .cache import cache_dir, clear_cache  # noqa: E402
from .compiler import (BackendNotImplementedError, CompileError,  # noqa: E402
                       compile, detect_target, find_tilec, load)
from .kernel import Kernel  # noqa: E402
from .parallel import par_compile  # noqa: E402
from .profiler import Profiler  # noqa: E402
from . import language  # noqa: E402  (tile.language: kernels in Python)
from .jit_decorator import jit  # noqa: E402

__all__ = [
    "ArgumentError", "AutotuneResult", "BackendNotImplementedError",
    "BundleError", "CompileError", "export_bundles", "import_bundles", "Kernel", "Profiler", "TileError", "autotune", "cache_dir",
    "clear_cache", "compile", "detect_target", "find_tilec", "load",
    "jit", "language", "par_compile",
]

"""Helpers of the Python package tests (importable from test files and from
the subprocesses they start)."""

import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
E2E_KERNELS = REPO / "test" / "E2E" / "kernels"


def elementwise_source(block=1024, dtype="f32", op="addf", name="ew"):
    """C = A (op) B for vectors of any length N; `block` elements per block."""
    return f"""
func.func @{name}(%A: memref<?x{dtype}> {{tile.name = "A", tile.dims = ["N"]}},
             %B: memref<?x{dtype}> {{tile.name = "B", tile.dims = ["N"]}},
             %C: memref<?x{dtype}> {{tile.name = "C", tile.dims = ["N"], tile.output}})
    attributes {{tile.kernel}} {{
  %c0 = arith.constant 0 : index
  %cm = arith.constant {block - 1} : index
  %cb = arith.constant {block} : index
  %N = memref.dim %A, %c0 : memref<?x{dtype}>
  %Np = arith.addi %N, %cm : index
  %blocks = arith.divui %Np, %cb : index
  tile.launch blocks(%bx) in (%blocks) threads(128) {{
    %a = tile.alloc : memref<{block}xf32, #tile.scope<fragment>>
    %b = tile.alloc : memref<{block}xf32, #tile.scope<fragment>>
    %c = tile.alloc : memref<{block}xf32, #tile.scope<fragment>>
    %start = arith.muli %bx, %cb : index
    tile.copy %A[%start] to %a : memref<?x{dtype}> to memref<{block}xf32, #tile.scope<fragment>>
    tile.copy %B[%start] to %b : memref<?x{dtype}> to memref<{block}xf32, #tile.scope<fragment>>
    tile.parallel (%i) in [{block}] {{
      %x = memref.load %a[%i] : memref<{block}xf32, #tile.scope<fragment>>
      %y = memref.load %b[%i] : memref<{block}xf32, #tile.scope<fragment>>
      %s = arith.{op} %x, %y : f32
      memref.store %s, %c[%i] : memref<{block}xf32, #tile.scope<fragment>>
    }}
    tile.copy %c to %C[%start] : memref<{block}xf32, #tile.scope<fragment>> to memref<?x{dtype}>
  }}
  return
}}
"""


def exchange_tensor_module():
    """tile_exchange_tensor (python/tests/exchange_tensor.cpp: a C tensor
    type with torch's DLPack exchange API and attribute getters), built
    beside the tile package's build tree; None when it is not built."""
    import importlib
    import sys
    try:
        return importlib.import_module("tile_exchange_tensor")
    except ImportError:
        pass
    import tile
    build = pathlib.Path(tile.__file__).resolve().parents[2]
    if (build / "python").is_dir() and str(build / "python") not in sys.path:
        sys.path.append(str(build / "python"))
    try:
        return importlib.import_module("tile_exchange_tensor")
    except ImportError:
        return None


def exchange_tensor(array, fail=False):
    """array (numpy) as a tile_exchange_tensor.ExchangeTensor."""
    from tile._frameworks import numpy_dlpack_dtype
    code, bits, _ = numpy_dlpack_dtype(array.dtype)
    return exchange_tensor_module().ExchangeTensor(array, code, bits, int(fail))

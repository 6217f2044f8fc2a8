"""TEST-ONLY: compile an `msl` section with clang++ against the CPU shim
(test/Metal/shim/metal_stdlib) and run a dispatch of it: one std::thread
per Metal thread, the threadgroups one after another.

Shared objects are cached by source + entry + buffer count in
$TILE_METAL_SHIM_CACHE (default: a per-process temporary directory)."""

import ctypes
import hashlib
import os
import pathlib
import subprocess
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
SHIM = HERE / "shim"
CXX = os.environ.get("TILE_METAL_SHIM_CXX", "clang++-22")
_loaded = {}


def _cache_dir():
    d = os.environ.get("TILE_METAL_SHIM_CACHE")
    if not d:
        d = os.environ["TILE_METAL_SHIM_CACHE"] = tempfile.mkdtemp(
            prefix="tile-metal-shim-")
    pathlib.Path(d).mkdir(parents=True, exist_ok=True)
    return pathlib.Path(d)


def driver(entry, nbuffers):
    """C++ calling the MSL entry for every thread of a dispatch."""
    buffers = ", ".join(f"tile_shim::buffer{{b[{i}]}}" for i in range(nbuffers))
    return f"""
extern "C" void tile_shim_run(void **b, const unsigned *grid,
                              const unsigned *block) {{
  tile_shim::run({{grid[0], grid[1], grid[2]}}, {{block[0], block[1], block[2]}},
      [&](tile_shim::dims t, tile_shim::dims g, unsigned lane) {{
        {entry}({buffers}, uint3{{t.x, t.y, t.z}}, uint3{{g.x, g.y, g.z}},
            uint3{{block[0], block[1], block[2]}},
            uint3{{grid[0], grid[1], grid[2]}}, ushort(lane));
      }});
}}
"""


def build(source, entry, nbuffers):
    shim = (SHIM / "metal_stdlib").read_text()
    key = hashlib.sha256(f"{source}\0{entry}\0{nbuffers}\0{shim}\0{CXX}"
                         .encode()).hexdigest()[:24]
    if key in _loaded:
        return _loaded[key]
    d = _cache_dir()
    so = d / f"{key}.so"
    if not so.exists():
        cpp = d / f"{key}.cpp"
        cpp.write_text(source + driver(entry, nbuffers))
        tmp = d / f"{key}.{os.getpid()}.so"
        proc = subprocess.run(
            [CXX, "-std=c++20", "-O1", "-fPIC", "-shared", "-w",
             f"-I{SHIM}", "-x", "c++", str(cpp), "-o", str(tmp)],
            capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"clang++ failed on the MSL of {entry} against "
                               f"the shim ({cpp}):\n{proc.stderr[-4000:]}")
        os.replace(tmp, so)
    lib = ctypes.CDLL(str(so))
    lib.tile_shim_run.argtypes = [ctypes.POINTER(ctypes.c_void_p),
                                  ctypes.POINTER(ctypes.c_uint),
                                  ctypes.POINTER(ctypes.c_uint)]
    _loaded[key] = lib
    return lib


def run(source, entry, buffers, grid, block):
    """Runs `entry` over grid x block threads; buffers: numpy arrays (the
    kernel's buffers in order), written in place."""
    for b in buffers:
        if not b.flags.c_contiguous:
            raise ValueError("shim launch: buffers must be contiguous")
    lib = build(source, entry, len(buffers))
    ptrs = (ctypes.c_void_p * max(1, len(buffers)))(
        *[b.ctypes.data for b in buffers])
    g = (ctypes.c_uint * 3)(*grid)
    k = (ctypes.c_uint * 3)(*block)
    lib.tile_shim_run(ptrs, g, k)

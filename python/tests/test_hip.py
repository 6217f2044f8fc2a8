"""The package with the hip target on this machine (no AMD GPU): compile to
an hsaco bundle, inspect it, and loading its device code fails with the
runtime's NO_DEVICE (a missing or device-less HIP runtime)."""

import numpy as np

import pytest

from tile_testutil import EXAMPLES


def test_hip_target_resolution(tile):
    from tile import compiler
    assert compiler.resolve_target("hip:gfx90a") == ("hip", "gfx90a")
    assert "hip" in compiler.TARGETS
    assert compiler.check_backend("hip", "auto") == "auto"
    assert compiler.check_backend("hip", "native") == "native"
    with pytest.raises(ValueError, match="cannot run 'hip' kernels"):
        compiler.check_backend("hip", "nvrtc")


@pytest.mark.parametrize("chip", ["gfx942", "gfx90a"])
def test_compile_inspect_and_no_device(tile, chip, tmp_path, monkeypatch):
    path = tmp_path / f"softmax.{chip}.tileb"
    import subprocess
    proc = subprocess.run([tile.find_tilec(), str(EXAMPLES / "softmax.mlir"),
                           "--target=hip", f"--chip={chip}", "-o", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    k = tile.load(path, device=None)
    assert (k.name, k.target_kind, k.target_chip) == ("softmax", "hip", chip)
    assert k.sections == ["metadata", "hsaco", "hsaco.resources", "native.so",
                          "mlir"]
    assert '"wavefront_size": 64' in k.get_source("hsaco.resources")
    monkeypatch.setenv("TILE_HIP_PATH", str(tmp_path / "no-libamdhip64.so"))
    with pytest.raises(tile.TileError, match="no HIP runtime") as e:
        tile.load(path)  # device="auto": loads the device code
    assert e.value.status == "NO_DEVICE"
    with pytest.raises(ValueError, match="holds a 'hip' kernel.*device 'cpu'"):
        tile.load(path, device="cpu")
    x = np.ones((2, 1024), np.float32)
    with pytest.raises(tile.TileError, match="inspection only"):
        k(x)

"""tile.toolchain: where tilec's CUDA toolchain (ptxas, libdevice) comes from
(the pip nvidia-cuda-nvcc package, /usr/local/cuda, the user's variables),
and the error that names every place searched when there is none."""

import os
import pathlib
import sys

import pytest

from tile import toolchain


@pytest.fixture
def clean(monkeypatch, tmp_path):
    """No CUDA variables, no system toolkit, PATH without ptxas."""
    for var in toolchain.USER_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(toolchain, "SYSTEM_ROOT", str(tmp_path / "no-cuda"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    toolchain._resolve.cache_clear()
    yield monkeypatch
    toolchain._resolve.cache_clear()


def fake_toolkit(root):
    """bin/ptxas + nvvm/libdevice/libdevice.10.bc under `root`."""
    (root / "bin").mkdir(parents=True)
    ptxas = root / "bin" / "ptxas"
    ptxas.write_text("#!/bin/sh\nexit 0\n")
    ptxas.chmod(0o755)
    lib = root / toolchain.LIBDEVICE
    lib.parent.mkdir(parents=True)
    lib.write_bytes(b"BC")
    return root


def test_pip_cu13_sets_tile_cuda_path(clean, tmp_path):
    site = tmp_path / "site"
    root = fake_toolkit(site / "nvidia" / "cu13")
    clean.setattr(sys, "path", [str(site), *sys.path])
    env = toolchain.tilec_env(["--target=cuda", "--chip=sm_90a"])
    assert env["TILE_CUDA_PATH"] == os.path.realpath(root)


def test_pip_cuda12_layout(clean, tmp_path):
    site = tmp_path / "site"
    root = fake_toolkit(site / "nvidia" / "cuda_nvcc")
    clean.setattr(sys, "path", [str(site), *sys.path])
    extra, found = toolchain.cuda_toolchain()
    assert extra == {"TILE_CUDA_PATH": os.path.realpath(root)}
    assert "pip nvidia-cuda-nvcc" in found


def test_user_variables_win(clean, tmp_path):
    site = tmp_path / "site"
    fake_toolkit(site / "nvidia" / "cu13")
    clean.setattr(sys, "path", [str(site), *sys.path])
    clean.setenv("CUDA_HOME", "/opt/my-cuda")
    # tilec reads CUDA_HOME itself: nothing is added.
    assert toolchain.tilec_env(["--target=cuda"]) is None


def test_system_toolkit(clean, tmp_path):
    root = fake_toolkit(tmp_path / "cuda")
    clean.setattr(toolchain, "SYSTEM_ROOT", str(root))
    assert toolchain.tilec_env(["--target=cuda"])["TILE_CUDA_PATH"] == str(root)


def test_cpu_and_metadata_need_no_toolchain(clean):
    assert toolchain.tilec_env(["--target=cpu"]) is None
    assert toolchain.tilec_env(["--target=cuda", "--emit=metadata"]) is None


def test_missing_toolchain_names_every_place(clean, tmp_path):
    site = tmp_path / "site"
    (site / "nvidia" / "cu13" / "bin").mkdir(parents=True)  # no ptxas
    clean.setattr(sys, "path", [str(site), *sys.path])
    with pytest.raises(toolchain.ToolchainError) as e:
        toolchain.tilec_env(["--target=cuda"])
    msg = str(e.value)
    for place in ("$TILE_PTXAS (unset)", "$TILE_CUDA_PATH (unset)",
                  "$CUDA_HOME (unset)", "$CUDA_PATH (unset)",
                  str(site / "nvidia" / "cu13"), "no-cuda", "PATH (no ptxas)",
                  "nvidia-cuda-nvcc"):
        assert place in msg, place


def test_compile_reports_missing_toolchain(clean, tile):
    src = (pathlib.Path(__file__).resolve().parents[2] / "examples" /
           "elementwise_add.mlir").read_text()
    src += f"// {os.getpid()} {id(clean)}: not in any kernel cache\n"
    with pytest.raises(toolchain.ToolchainError, match="no CUDA toolchain"):
        tile.compile(src, target="cuda:sm_90a")

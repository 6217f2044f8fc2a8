"""Fixtures of the end-to-end suite (helpers live in e2e_util.py)."""

import hashlib
import subprocess

import pytest

from e2e_util import TILEC, Bundle, require


@pytest.fixture(scope="session")
def compile_kernel(tmp_path_factory):
    """compile_kernel(source_text, *tilec_flags) -> Bundle (cached by text)."""
    require(TILEC)
    cache = tmp_path_factory.mktemp("bundles")
    built = {}

    def compile_(source, *flags):
        key = hashlib.sha256((source + repr(flags)).encode()).hexdigest()[:16]
        if key in built:
            return built[key]
        src = cache / f"{key}.mlir"
        src.write_text(source)
        out = cache / f"{key}.tileb"
        proc = subprocess.run([str(TILEC), str(src), "-o", str(out), *flags],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"tilec failed:\n{proc.stderr}\n--- source:\n"
                               f"{source}")
        built[key] = Bundle(out)
        return built[key]

    return compile_



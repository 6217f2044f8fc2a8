#!/usr/bin/env python3
"""utils/lib/wheel-elf.py WHEEL|DIR: check the ELF files of a wheel (or an
unpacked tree) for what they need at run time, and print the platform tag it
honestly deserves.

Fails (exit 1) when a file
  * needs a shared library outside the manylinux allowlist (libc, libm,
    libstdc++, libgcc_s, ld-linux, libpthread, libdl, librt): libMLIR,
    libLLVM, libz, ... must not be needed;
  * has an RPATH/RUNPATH (a path of the build machine, or an empty entry,
    which means the current directory).
Prints one line per file (size, NEEDED, highest GLIBC_/GLIBCXX_/CXXABI_
versions) and, last, `tag: manylinux_2_<N>_x86_64` with N the highest
GLIBC_2.N any file references (readelf --dyn-syms; binutils).
"""

import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ALLOWED = {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1",
           "ld-linux-x86-64.so.2", "libpthread.so.0", "libdl.so.2",
           "librt.so.1"}


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def vkey(v):
    return tuple(int(x) for x in v.split("."))


def highest(prefix, text):
    found = set(re.findall(rf"\b{prefix}_([0-9.]+)\b", text))
    return max(found, key=vkey) if found else None


def check_tree(root):
    errors, glibc_max = [], "2.17"
    for path in sorted(p for p in Path(root).rglob("*") if p.is_file()):
        if not is_elf(path):
            continue
        rel = path.relative_to(root)
        dyn = subprocess.run(["readelf", "-d", str(path)], capture_output=True,
                             text=True, check=True).stdout
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.*?)\]", dyn)
        paths = re.findall(r"\((?:RPATH|RUNPATH)\)\s+Library r\w*path: \[(.*?)\]", dyn)
        syms = subprocess.run(["readelf", "--dyn-syms", "-W", str(path)],
                              capture_output=True, text=True, check=True).stdout
        vers = {p: highest(p, syms) for p in ("GLIBC", "GLIBCXX", "CXXABI")}
        if vers["GLIBC"] and vkey(vers["GLIBC"]) > vkey(glibc_max):
            glibc_max = vers["GLIBC"]
        size = path.stat().st_size / 2**20
        print(f"{rel}: {size:.1f} MiB; needs {', '.join(needed) or 'nothing'}; "
              + ", ".join(f"{k}_{v}" for k, v in vers.items() if v))
        for lib in needed:
            if lib not in ALLOWED:
                errors.append(f"{rel} needs {lib} (not in the manylinux allowlist)")
        for p in paths:
            errors.append(f"{rel} has an RPATH/RUNPATH '{p}'")
    return errors, glibc_max


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    target = Path(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        root = target
        if target.is_file():
            zipfile.ZipFile(target).extractall(tmp)
            root = Path(tmp)
        errors, glibc = check_tree(root)
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    major, minor = glibc.split(".")[:2]
    print(f"tag: manylinux_{major}_{minor}_x86_64")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()

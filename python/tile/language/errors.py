"""Errors of tile.language, located at the user's Python line.

Every op the builder emits and every error it raises carries the location of
the innermost stack frame outside the tile package (the user's kernel code),
so a message reads `gemm.py:42: T.copy: ...` and the MLIR the builder prints
carries `loc("gemm.py":42:9)` on every op (tilec's diagnostics then point at
the same line)."""

import os
import sys

# Frames in these directories belong to the package, not to the user.
_PKG_DIRS = (
    os.path.dirname(os.path.abspath(__file__)),          # tile/language
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),  # tile
)


class TileLangError(Exception):
    """A kernel written with tile.language is ill-formed. `filename` and
    `lineno` name the user's line (None when unknown)."""

    def __init__(self, message, filename=None, lineno=None):
        where = f"{filename}:{lineno}: " if filename else ""
        super().__init__(where + message)
        self.filename = filename
        self.lineno = lineno
        self.bare_message = message


_internal = {}


def _is_internal(filename):
    hit = _internal.get(filename)
    if hit is None:
        d = os.path.dirname(os.path.abspath(filename)) if filename else ""
        hit = _internal[filename] = d in _PKG_DIRS
    return hit


def user_frame():
    """The innermost frame outside the tile package, or None."""
    f = sys._getframe(1)
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith("<frozen") and not _is_internal(fn):
            return f
        f = f.f_back
    return None


def user_loc():
    """(filename, line, column) of the user's code being run, or None. The
    column is 1-based (MLIR's convention); 0 when Python does not know it."""
    f = user_frame()
    if f is None:
        return None
    line, col = f.f_lineno, 0
    try:
        positions = list(f.f_code.co_positions())
        pos = positions[f.f_lasti // 2]
        if pos[0] is not None:
            line = pos[0]
        if pos[2] is not None:
            col = pos[2] + 1
    except (AttributeError, IndexError):
        pass
    return (f.f_code.co_filename, line, col)


def user_error(message, loc=None):
    """A TileLangError at loc (default: the user's current line)."""
    if loc is None:
        loc = user_loc()
    if loc is None:
        return TileLangError(message)
    return TileLangError(message, loc[0], loc[1])

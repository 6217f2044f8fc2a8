"""tile.par_compile: compile many kernels in parallel."""

import concurrent.futures
import os
import sys
import threading
import time


class _Bar:
    """tqdm when installed, else a one-line bar on stderr."""

    def __init__(self, total, desc, enabled):
        self.total, self.desc, self.n = total, desc, 0
        self.enabled = enabled and total > 0
        self._tqdm = None
        self._lock = threading.Lock()
        self._t0 = time.perf_counter()
        if not self.enabled:
            return
        try:
            from tqdm.auto import tqdm
            self._tqdm = tqdm(total=total, desc=desc, file=sys.stderr)
        except ImportError:
            self._draw()

    def _draw(self):
        width = 30
        filled = int(width * self.n / self.total)
        bar = "#" * filled + "." * (width - filled)
        sys.stderr.write(f"\r{self.desc} [{bar}] {self.n}/{self.total} "
                         f"{time.perf_counter() - self._t0:5.1f}s")
        sys.stderr.flush()

    def set_description(self, desc):
        if not self.enabled:
            return
        with self._lock:
            self.desc = desc
            if self._tqdm is not None:
                self._tqdm.set_description(desc)
            else:
                self._draw()

    def update(self):
        if not self.enabled:
            return
        with self._lock:
            self.n += 1
            if self._tqdm is not None:
                self._tqdm.update(1)
            else:
                self._draw()

    def close(self):
        if not self.enabled:
            return
        if self._tqdm is not None:
            self._tqdm.close()
        else:
            sys.stderr.write("\n")
            sys.stderr.flush()


def par_compile(sources, out_idx=None, target="auto", execution_backend="auto",
                pass_options=None, compile_flags=None, num_workers=None,
                ignore_error=False, progress=None, verbose=False, errors=None,
                bar=None, inspect_only=False):
    """Compiles every source (MLIR text or path) like tile.compile, with
    num_workers threads each running tilec (default: the CPU count).

    Returns the kernels in input order. A failure raises (the first failing
    source's error, after all finished) unless ignore_error, which puts None
    in its place. progress: show a bar (default: when stderr is a terminal).
    out_idx / pass_options / compile_flags apply to every source, or pass a
    list with one entry per source. errors: a list that receives, per
    source, its exception or None. bar: a progress bar to advance instead
    of a new one (autotune's, over compiling and timing). inspect_only:
    as for tile.compile (bundles for a device this host does not have).
    """
    from .compiler import compile as compile_one

    sources = list(sources)
    n = len(sources)

    def per(value, i):
        if isinstance(value, list) and len(value) == n and n > 0 and (
                value and not isinstance(value[0], (int, str))):
            return value[i]
        return value

    if num_workers is None:
        num_workers = os.cpu_count() or 1
    num_workers = max(1, min(int(num_workers), n or 1))
    if progress is None:
        progress = sys.stderr.isatty()
    own_bar = bar is None
    if own_bar:
        bar = _Bar(n, "tile: compiling", progress)
    results = [None] * n
    if errors is None:
        errors = []
    errors[:] = [None] * n

    def work(i):
        try:
            results[i] = compile_one(
                sources[i], out_idx=per(out_idx, i), target=target,
                execution_backend=execution_backend,
                pass_options=per(pass_options, i),
                compile_flags=per(compile_flags, i), verbose=verbose,
                inspect_only=inspect_only)
        except Exception as e:  # noqa: BLE001 - reported below
            errors[i] = e
        finally:
            bar.update()

    try:
        if num_workers == 1:
            for i in range(n):
                work(i)
        else:
            with concurrent.futures.ThreadPoolExecutor(num_workers) as pool:
                list(pool.map(work, range(n)))
    finally:
        if own_bar:
            bar.close()
    if not ignore_error:
        for i, e in enumerate(errors):
            if e is not None:
                raise type(e)(f"par_compile: source #{i} failed: {e}") from e \
                    if _reconstructible(e) else e
    return results


def _reconstructible(e):
    try:
        type(e)("x")
        return True
    except Exception:  # noqa: BLE001
        return False

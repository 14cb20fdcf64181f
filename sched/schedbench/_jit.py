"""The one decorator every engine kernel uses.

``kernel`` is ``numba.njit(cache=True, nogil=True, error_model="numpy", _nrt=False)``.
Why ``_nrt=False``: the engine's hot path is many small calls that pass arrays around in
branchy loops, where numba's reference-count pruning cannot remove the atomic incref /
decref it emits for every array on every call; measured here, a fit test went from about
150 ns to 20 ns per call without them.  The price is that kernels may not allocate: every
buffer lives in the engine state, allocated once in Python.  ``error_model="numpy"``
drops the zero-division checks of integer divisions, which kernels guard themselves.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba


def _cache_dir() -> str:
    """numba's cache folder for this exact package source.

    numba keys each cached function on its own file's timestamp, so a kernel that calls
    into another module is served stale after that module alone changes (a ``git pull``,
    an edit).  Keying the folder on a digest of every source file of the package rules
    that out.  The root is ``$NUMBA_CACHE_DIR`` when set, else the user cache directory.
    """
    digest = hashlib.sha1()
    here = Path(__file__).resolve().parent
    for path in sorted(here.rglob("*.py")):
        digest.update(path.relative_to(here).as_posix().encode())
        digest.update(path.read_bytes())
    root = os.environ.get("NUMBA_CACHE_DIR")
    if not root:
        import platformdirs

        root = platformdirs.user_cache_dir("schedbench")
    return os.path.join(root, f"numba-{digest.hexdigest()[:12]}")


numba.config.CACHE_DIR = _cache_dir()

kernel = numba.njit(cache=True, nogil=True, error_model="numpy", _nrt=False)

# Small helpers on the hot path are inlined at numba's IR level: each separately compiled
# function costs about half a second of compile time, and these are a few lines each.
inline_kernel = numba.njit(cache=True, nogil=True, error_model="numpy", _nrt=False, inline="always")

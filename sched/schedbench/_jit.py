"""The one decorator every engine kernel uses.

``kernel`` is ``numba.njit(cache=True, nogil=True, error_model="numpy", _nrt=False)``.
Why ``_nrt=False``: the engine's hot path is many small calls that pass arrays around in
branchy loops, where numba's reference-count pruning cannot remove the atomic incref /
decref it emits for every array on every call; measured here, a fit test went from about
150 ns to 20 ns per call without them.  The price is that kernels may not allocate: every
buffer lives in the engine state, allocated once in Python.  ``error_model="numpy"``
drops the zero-division checks of integer divisions, which kernels guard themselves.

``inline_kernel`` adds ``inline="always"`` (numba IR-level inlining).  Even without
reference counts, a call between kernels costs tens of nanoseconds: numba passes every
array as its unpacked struct (nine machine words for a 2-d array), and the engine's steps
take ten or more arrays.  The replay loop (:func:`schedbench.schedulers._run`) therefore
inlines every step it runs at each event: advance, finish, enqueue, predict, learn, the
pass, the in-order start, the fit test, placement and the timeline row.  Inlining
copies a function's IR at each call site and numba's compile time grows with the copies,
so a function is inlined only where it has one or two call sites in the loop; the rest
(``_commit``, ``_backfill``, the allocators' orderings) stay separate kernels.  Measured on
HPC2N with EASY + first-fit: 0.25 s per replay with the per-event steps as separate
kernels, 0.16 s inlined, at an unchanged cold compile (about 25 s).
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

# See the module docstring for which kernels are inlined and why.
inline_kernel = numba.njit(cache=True, nogil=True, error_model="numpy", _nrt=False, inline="always")

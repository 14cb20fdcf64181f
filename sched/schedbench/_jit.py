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

import numba

kernel = numba.njit(cache=True, nogil=True, error_model="numpy", _nrt=False)

# Small helpers on the hot path are inlined at numba's IR level: each separately compiled
# function costs about half a second of compile time, and these are a few lines each.
inline_kernel = numba.njit(cache=True, nogil=True, error_model="numpy", _nrt=False, inline="always")

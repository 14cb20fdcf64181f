"""The command line's process start-up: one BLAS thread, and no cyclic garbage
collections while it imports and builds.

**BLAS.** numpy's OpenBLAS starts a server thread per core at import, and each spins
(yielding) for about 0.1 s of CPU before it sleeps, on the core the command's own helper
threads (imports, file writers) need.  No kernel or numpy call of schedbench uses BLAS,
so the command sets ``OPENBLAS_NUM_THREADS=1`` unless the environment gives a value; it
acts only when this module is imported before numpy (the ``schedbench`` command, ``python
-m schedbench``), never on a program that imported numpy first.  Measured on HPC2N
easy+ff: 1.11 -> 0.98 s of CPU per ``schedbench replay`` (medians of 6).

**Garbage collection.** Importing numba, numpy and polars and building numba's typing
context create about a million long-lived objects; the cyclic collector, triggered by
allocation counts, walks them again and again meanwhile (about 0.07 s of a 1 s
``schedbench replay``).  Nothing allocated then is garbage worth finding, so start-up
phases run with the collector off and end by moving what they built to the permanent
generation (:func:`gc.freeze`), which later collections skip.
"""

from __future__ import annotations

import contextlib
import gc
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


@contextlib.contextmanager
def startup_phase():
    """Run the block with the cyclic collector off, then freeze what it built and restore
    the collector.  Cycles created inside are kept for the process's lifetime: for import
    and set-up code, not for a replay (a cold numba compile makes many)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()

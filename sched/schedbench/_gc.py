"""Start-up without cyclic garbage collections.

Importing numba, numpy and polars and building numba's typing context create about a
million long-lived objects; the cyclic collector, triggered by the allocation counts,
walks them again and again meanwhile (about 0.07 s of a 1 s ``schedbench replay``).
Nothing allocated then is garbage worth finding, so start-up phases run with the
collector off and end by moving what they built to the permanent generation
(:func:`gc.freeze`), which later collections skip.
"""

from __future__ import annotations

import contextlib
import gc


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

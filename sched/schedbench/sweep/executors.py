"""Where a sweep's runs execute: in this process, on a pool of local processes, or on a
Dask cluster.  An executor takes calls ``(function, args)`` and hands each result to
``record`` as it comes; it knows nothing of runs (:mod:`schedbench.sweep.execute`), so
the functions must be importable by name in the workers (module-level functions).
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import signal
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import DataError, UsageError

Call = tuple[Callable[..., Any], tuple]
"""A function and its positional arguments."""


def default_jobs() -> int:
    """The cores this process may use (at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover
        return max(1, os.cpu_count() or 1)


def _mp_context():
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def in_process(calls: Sequence[Call], record: Callable[[Any], None]) -> None:
    """Make ``calls`` one after the other in this process."""
    for fn, args in calls:
        record(fn(*args))


def _ignore_interrupts() -> None:
    """A worker's initializer: a Ctrl-C reaches every process of the terminal's group, but
    only the parent acts on it (it terminates the workers); a worker would otherwise print
    its own KeyboardInterrupt traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _terminate_workers(pool: cf.ProcessPoolExecutor) -> None:
    """Stop ``pool``'s worker processes now (a run in progress is abandoned: its files
    stay in the sweep's ``.tmp``, which the next sweep clears) and let the pool go
    without waiting for its calls."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(timeout=5)
    pool.shutdown(wait=False, cancel_futures=True)


def _as_completed(futures):
    """The futures as they complete, like :func:`concurrent.futures.as_completed` but waking
    every quarter second: a SIGINT the kernel delivers to another thread of this process (the
    pool's own) does not end a wait of the main thread, which would otherwise see the
    Ctrl-C only when a call completes (after a compile: minutes)."""
    position = {fut: i for i, fut in enumerate(futures)}
    pending = set(futures)
    while pending:
        done, pending = cf.wait(pending, timeout=0.25, return_when=cf.FIRST_COMPLETED)
        yield from sorted(done, key=position.__getitem__)  # the calls' order among those done


def process_pool(calls: Sequence[Call], n: int, record: Callable[[Any], None], first: Sequence[Call] = (),
                 record_first: Callable[[Any], None] | None = None) -> None:
    """Make ``calls`` on ``n`` local worker processes, recording results as they complete.
    ``first``: calls made before them, in parallel, whose failures are ignored (warm-ups:
    a failing one's calls will fail themselves and say why); ``record_first`` gets each
    one's result as it completes (None for one that failed).  A worker that dies raises
    DataError.  An interruption (Ctrl-C: KeyboardInterrupt, in the parent only) terminates
    the workers at once, whatever they are doing (compiling, replaying), and is raised
    again; the results recorded so far are kept."""
    pool = cf.ProcessPoolExecutor(max_workers=n, mp_context=_mp_context(), initializer=_ignore_interrupts)
    futures = []
    try:
        for fut in _as_completed([pool.submit(fn, *args) for fn, args in first]):
            if record_first is not None:  # a warm-up's failure is ignored (see the docstring)
                record_first(None if fut.exception() is not None else fut.result())
        futures = [pool.submit(fn, *args) for fn, args in calls]
        for fut in _as_completed(futures):
            try:
                row = fut.result()
            except cf.process.BrokenProcessPool:
                raise DataError("a worker process died; rerun the sweep to resume") from None
            record(row)
    except KeyboardInterrupt:
        _terminate_workers(pool)
        raise
    except BaseException:
        for fut in futures:
            fut.cancel()
        raise
    finally:
        pool.shutdown(wait=True)  # after _terminate_workers: returns at once


def check_dask_address(address: str) -> None:
    """A UsageError unless ``address`` has a Dask scheduler address's form (``host:port``,
    a scheme before it): a malformed one failed inside ``Client()`` with a ValueError,
    and the half-made client's ``__del__`` printed a traceback after a 40 s wait."""
    try:
        from distributed.comm.addressing import get_address_host_port
    except ImportError:  # pragma: no cover - a declared dependency
        raise UsageError("--dask needs dask.distributed: pip install 'dask[distributed]'") from None
    try:
        get_address_host_port(address)
    except ValueError as exc:
        raise UsageError(f"--dask {address!r}: {exc} (expected e.g. tcp://host:8786)") from None


def dask(calls: Sequence[Call], address: str, record: Callable[[Any], None], setup: Call | None = None) -> None:
    """Make ``calls`` on the Dask cluster whose scheduler is at ``address``.  ``setup``: a
    call made first on every worker connected (``Client.run``), whose exception stops
    everything before any call is made (a worker that joins later meets it in its calls)."""
    try:
        from distributed import Client, as_completed
    except ImportError:  # pragma: no cover - a declared dependency
        raise UsageError("--dask needs dask.distributed: pip install 'dask[distributed]'") from None
    check_dask_address(address)
    try:
        client = Client(address, timeout="20s", set_as_default=False)
    except OSError as exc:
        raise DataError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    with client:
        if setup is not None:
            fn, args = setup
            client.run(fn, *args)
        futures = [client.submit(fn, *args, pure=False) for fn, args in calls]
        try:
            for fut in as_completed(futures, loop=client.loop):
                record(fut.result())
        except BaseException:
            client.cancel(futures)
            raise

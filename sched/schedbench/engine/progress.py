"""Progress feedback on stderr for long runs: a tqdm bar on a terminal, a periodic plain line
when stderr is a pipe or a file (a log then shows a run is alive without a bar's carriage
returns).  Feedback only: nothing here changes what a run computes or writes."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable

PIPE_PERIOD_S = 30.0
"""Seconds between two progress lines when stderr is not a terminal."""


def is_terminal(stream) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


class Progress:
    """``update(done)`` reports ``done`` out of ``total`` (jobs started, or seconds of
    simulated time); ``close()`` ends the bar.  On a terminal a tqdm bar shown after
    ``delay_s``; elsewhere one line every ``period_s`` of wall time counted from the first
    update (so a kernel compile before it is not counted)
    (``"schedbench: replay: 12,345 of 200,000 jobs started (6 %), 31 s"``), none when the
    run ends before the first period."""

    def __init__(self, total: int, what: str, unit: str, desc: str, stream=None,
                 period_s: float | None = None, delay_s: float = 2.0,
                 clock: Callable[[], float] = time.monotonic):
        self.total = max(int(total), 1)
        self.what, self.unit, self.desc = what, unit, desc
        self.stream = sys.stderr if stream is None else stream
        self.period_s = PIPE_PERIOD_S if period_s is None else period_s
        self.clock = clock
        self.t0 = self.last = None  # set by the first update: a first compile is not counted
        self.done = 0
        self.bar = None
        if is_terminal(self.stream):
            from tqdm import tqdm

            self.bar = tqdm(total=self.total, unit=unit, desc=desc, file=self.stream, leave=False,
                            delay=delay_s, unit_scale=unit == "s")

    def update(self, done: int) -> None:
        done = min(int(done), self.total)
        if self.bar is not None:
            self.bar.update(done - self.bar.n)
            return
        self.done = done
        now = self.clock()
        if self.t0 is None:
            self.t0 = self.last = now
        if now - self.last >= self.period_s:
            self.last = now
            print(
                f"schedbench: {self.desc}: {done:,} of {self.total:,} {self.what} "
                f"({100 * done // self.total} %), {now - self.t0:.0f} s",
                file=self.stream, flush=True,
            )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


REDRAW_S = 1.0
"""Seconds between two redraws of a bar while nothing updates it."""


def keep_drawing(bar) -> threading.Event:
    """Redraw the tqdm ``bar`` every :data:`REDRAW_S` from a daemon thread until the
    returned event is set (set it before closing the bar).  tqdm redraws only on an
    update, so a bar's elapsed time stood still while one long task or run held every
    worker.  (A redraw that meets the bar closed does nothing: tqdm then disables it.)"""
    stop = threading.Event()

    def redraw() -> None:
        while not stop.wait(REDRAW_S):
            bar.refresh()

    threading.Thread(target=redraw, name="schedbench-progress", daemon=True).start()
    return stop


ROUTINE_LINE_S = 5.0
"""Off a terminal, the seconds of routine steps (a loop loaded from the cache) that one
line stands for: each got a line of its own, 66 lines of cache loads in a sweep after
``make setup``."""


class Steps:
    """Progress over ``total`` tasks of seconds each (compiles): on a terminal one line
    that updates (a tqdm bar naming the last task done, redrawn while none ends);
    elsewhere a plain line per task done (``"schedbench: compile: 3 of 55, easy+bf
    (nodes) 7.9 s"``), except routine ones (``step(..., routine=True)``: a line at most
    every :data:`ROUTINE_LINE_S`, and the last task's).  ``note(text)`` prints a line of
    its own above the bar."""

    def __init__(self, total: int, desc: str, stream=None, clock: Callable[[], float] = time.monotonic):
        self.total, self.desc = total, desc
        self.stream = sys.stderr if stream is None else stream
        self.clock = clock
        self.last_line = clock()
        self.done = 0
        self.bar = None
        if is_terminal(self.stream):
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=desc, unit="task", file=self.stream, leave=False, dynamic_ncols=True)
            self._redraw = keep_drawing(self.bar)

    def step(self, text: str, routine: bool = False) -> None:
        """One task done; ``text`` says which (and how long it took)."""
        self.done += 1
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=False)
            self.bar.update(1)
            return
        now = self.clock()
        if routine and self.done < self.total and now - self.last_line < ROUTINE_LINE_S:
            return
        self.last_line = now
        print(f"schedbench: {self.desc}: {self.done} of {self.total}, {text}", file=self.stream, flush=True)

    def note(self, text: str) -> None:
        if self.bar is not None:
            self.bar.write(f"schedbench: {text}", file=self.stream)
        else:
            print(f"schedbench: {text}", file=self.stream, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self._redraw.set()
            self.bar.close()
            self.bar = None

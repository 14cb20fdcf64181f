"""The ``schedbench`` command line.

Each sub-command lives in ``schedbench.cli.<name>`` and exposes
``register(subparsers)``, which adds its parser and sets ``func(args) -> int`` on it.
Errors are one clear line on stderr: exit status 2 for usage errors, 1 for data errors;
``--debug`` shows the traceback instead.  Any other exception is a bug: it too is one line
("internal error", exit 1), which tests/test_bad_input.py treats as a failure.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys

from .. import __version__
from .._startup import startup_phase
from ..errors import DataError, UsageError

COMMANDS: tuple[str, ...] = ("traces", "replay", "workload", "predict", "sweep", "report", "compare", "compare-log",
                             "gantt", "warm")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own usage errors: exit 2, one line
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="schedbench",
        description="Replay HPC job traces through scheduler+allocator pairs and compare them.",
    )
    parser.add_argument("--version", action="version", version=f"schedbench {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        where = f"schedbench.cli.{name.replace('-', '_')}"  # compare-log lives in compare_log
        try:
            module = importlib.import_module(where)
        except ModuleNotFoundError as exc:
            if exc.name != where:
                raise
            continue
        module.register(sub)
    return parser


def os_message(exc: OSError) -> str:
    """A sentence for a failed file operation (not ``[Errno 17] File exists: 'x'``)."""
    name = exc.filename
    if name is None:
        return exc.strerror or str(exc)
    if isinstance(exc, FileExistsError):
        return f"{name}: exists and is not a folder (give a new or an existing folder)"
    if isinstance(exc, PermissionError):
        return f"{name}: permission denied"
    if isinstance(exc, FileNotFoundError):
        return f"{name}: no such file or folder"
    if isinstance(exc, NotADirectoryError):
        return f"{name}: part of this path is a file, not a folder"
    return f"{name}: {exc.strerror or exc}"


def heed_interrupts() -> None:
    """Make SIGINT raise KeyboardInterrupt even when this process inherited it ignored: a
    shell without job control (a script's ``schedbench ... &``) starts background commands
    so, and Python keeps an inherited SIG_IGN; a Ctrl-C or ``kill -INT`` was then ignored
    and a replay ran on to the end.  Every command stops cleanly on it (exit 130)."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        with contextlib.suppress(ValueError):  # main() called from a thread: not ours to set
            signal.signal(signal.SIGINT, signal.default_int_handler)


def main(argv: list[str] | None = None) -> int:
    heed_interrupts()
    with startup_phase():  # the commands' imports
        parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:
        if args.debug:
            raise
        print(f"schedbench: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # the reader of our output went away (`schedbench ... | head`): stop quietly, as a
        # process killed by SIGPIPE would, and keep the exit-time flush from failing again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (DataError, OSError) as exc:
        if args.debug:
            raise
        message = os_message(exc) if isinstance(exc, OSError) and not isinstance(exc, DataError) else str(exc)
        print(f"schedbench: error: {message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("schedbench: interrupted", file=sys.stderr)
        return 130
    except MemoryError as exc:  # a size the machine cannot hold (--jobs 10000000000): not a bug to report
        if args.debug:
            raise
        print(f"schedbench: error: out of memory{f' ({exc})' if str(exc) else ''}", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - a bug, still one line for the user
        if args.debug:
            raise
        text = str(exc).strip().splitlines()
        print(
            f"schedbench: error: internal error ({type(exc).__name__}: {text[0] if text else ''}); "
            "run with --debug for the traceback and report it",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())

"""Where a replay's files go: a run's folder is written as one unit.

:func:`schedbench.analysis.results.write_run` writes the files into a new hidden folder
beside the destination (``.NAME.tmp-XXXXXXXX``) and renames it into place
(:func:`move_into_place`): nothing of an older run in the destination survives (a stale
``decisions.parquet``), and an error or an interrupt while writing leaves the older run
whole.  Because the destination is replaced whole, it must be new, empty, or a former
run's folder: summary.json and only files a replay writes (``.parquet`` files); a folder
holding anything else is refused, untouched (:func:`check_output_folder`, which the
command line calls before it reads the trace).

The standard library only: the command line checks its ``-o`` before polars is loaded.
"""

from __future__ import annotations

import errno
import os
import shutil
import uuid
from pathlib import Path

from ..errors import DataError


def _foreign_files(folder: Path) -> list[str]:
    """The entries of ``folder`` a replay does not write (sorted): anything but
    summary.json, ``.parquet`` files and hidden ``.tmp`` files."""
    return sorted(
        p.name for p in folder.iterdir()
        if not (p.is_file() and not p.is_symlink()
                and (p.name == "summary.json" or p.suffix == ".parquet"
                     or (p.name.startswith(".") and p.name.endswith(".tmp"))))
    )


def _refuse_unless_replaceable(outdir: Path, shown: Path) -> None:
    """A :class:`DataError` unless the existing folder ``outdir`` is empty or a former
    run's (summary.json, and only files a replay writes): such a folder is replaced whole,
    so a folder holding anything else is refused, untouched."""
    foreign = _foreign_files(outdir)
    if foreign:
        more = f" (and {len(foreign) - 1} more)" if len(foreign) > 1 else ""
        raise DataError(f"{shown}: holds {foreign[0]}{more}, which a replay does not write: a run's folder is "
                        "replaced whole, so give a new or an empty folder, or move that out")
    if any(outdir.iterdir()) and not (outdir / "summary.json").is_file():
        raise DataError(f"{shown}: holds files but no summary.json, so it is not a former run's folder: "
                        "give a new or an empty folder")


def check_output_folder(outdir: str | os.PathLike) -> None:
    """Raise unless a run's files can be written to ``outdir``, before any replay work:
    ``outdir`` must be new, empty, or a former run's folder (see
    :func:`_refuse_unless_replaceable`), must not hold the current folder, and its nearest
    existing ancestor must take a new folder (tried for real: a probe folder is made and
    removed).  Creates nothing.  Errors: :class:`DataError`, or an :class:`OSError` whose
    file name is ``outdir`` (``FileExistsError``: it is a file; ``NotADirectoryError``: a
    part of its path is a file; ``PermissionError``...)."""
    shown = Path(outdir)
    if shown.is_symlink() and not shown.exists():
        raise FileExistsError(errno.EEXIST, "a dangling symbolic link", str(shown))
    target = Path(os.path.realpath(shown))
    if target.exists():
        if not target.is_dir():
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(shown))
        here = Path(os.path.realpath(os.getcwd()))
        if target == here or target in here.parents:
            raise DataError(f"{shown}: holds the current folder; a run's folder is replaced whole, "
                            "so give another folder")
        _refuse_unless_replaceable(target, shown)
    place = target.parent
    while not place.exists():  # the staging folder goes into the parent, made when writing
        place = place.parent
    if not place.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(shown))
    probe = place / f".schedbench-probe-{uuid.uuid4().hex[:8]}"
    try:
        probe.mkdir()
    except OSError as exc:
        raise type(exc)(exc.errno, exc.strerror, str(shown)) from None
    probe.rmdir()


def move_into_place(staging: Path, final: Path, shown: Path) -> None:
    """Rename the finished folder ``staging`` to ``final``: in one rename when ``final``
    is absent or empty; else (a former run, checked again now) the old folder is renamed
    aside, the new one in, and the old one deleted; if the second rename fails the old
    folder is put back."""
    try:
        os.rename(staging, final)
        return
    except OSError as exc:
        if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):  # named as given, not by the hidden staging folder
            raise type(exc)(exc.errno, exc.strerror, str(shown)) from None
    _refuse_unless_replaceable(final, shown)  # a file may have been put there meanwhile
    old = final.with_name(f".{final.name}.old-{uuid.uuid4().hex[:8]}")
    os.rename(final, old)
    try:
        os.rename(staging, final)
    except BaseException:
        os.rename(old, final)
        raise
    shutil.rmtree(old, ignore_errors=True)

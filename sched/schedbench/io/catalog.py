"""The catalog of Parallel Workloads Archive logs that schedbench knows how to download.

The catalog is ``traces/catalog.toml`` in the source tree, shipped in the package as
``schedbench/data/catalog.toml`` (a symlink in the tree) and read with
:mod:`importlib.resources`, so the installed package needs nothing else.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..errors import DataError, UsageError

#: Where the Parallel Workloads Archive keeps its logs; an entry's URL is this base followed
#: by :attr:`Entry.relpath`.
ARCHIVE_BASE = "https://www.cs.huji.ac.il/labs/parallel/workload/"

_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_SAFE_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_REQUIRED = ("name", "folder", "file")
_OPTIONAL_INT = ("jobs", "max_procs", "size")
_OPTIONAL_STR = ("period", "sha256")


@dataclass(frozen=True)
class Entry:
    """One log of the archive.  Optional fields are ``None`` when not known for sure."""

    name: str
    folder: str  # the archive folder without its "l_" prefix
    file: str
    jobs: int | None = None
    max_procs: int | None = None
    period: str | None = None
    size: int | None = None  # bytes of the .gz file as distributed
    sha256: str | None = None

    @property
    def relpath(self) -> str:
        """The file's path below the archive root: ``l_<folder>/<file>``."""
        return f"l_{self.folder}/{self.file}"

    def url(self, base: str | None = None) -> str:
        """The download URL; ``base`` (a mirror) replaces :data:`ARCHIVE_BASE`."""
        if base is not None and not isinstance(base, str):
            raise TypeError(f"base must be a string, not {type(base).__name__}")
        base = ARCHIVE_BASE if base is None else base
        return f"{base.rstrip('/')}/{self.relpath}"


class Catalog(Mapping[str, Entry]):
    """Entries by name, in file order; lookups by :meth:`find` ignore case and accept the
    file name too."""

    def __init__(self, entries: list[Entry], source: str = "<catalog>"):
        self.source = source
        self._entries: dict[str, Entry] = {}
        for entry in entries:
            if entry.name in self._entries:
                raise DataError(f"{source}: log {entry.name!r} is listed twice")
            self._entries[entry.name] = entry

    def __getitem__(self, name: str) -> Entry:
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def find(self, name: str) -> Entry:
        """The entry called ``name`` (case-insensitive; ``NAME.swf.gz`` and ``NAME.swf`` work
        too).  Raises :class:`UsageError` listing similar names when there is none."""
        if not isinstance(name, str) or not name.strip():
            raise UsageError("give a log name (see `schedbench traces list`)")
        wanted = name.strip().lower()
        for suffix in (".swf.gz", ".swf"):
            if wanted.endswith(suffix):
                wanted = wanted[: -len(suffix)]
        for entry in self._entries.values():
            if wanted in (entry.name.lower(), entry.file.lower().removesuffix(".swf.gz")):
                return entry
        close = [e.name for e in self._entries.values() if wanted.split("-")[0] in e.name.lower()]
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise UsageError(
            f"no log called {name!r} in the catalog{hint} (`schedbench traces list` shows them all)"
        )


def _entry(raw: object, where: str) -> Entry:
    if not isinstance(raw, dict):
        raise DataError(f"{where}: expected a table")
    unknown = set(raw) - set(_REQUIRED + _OPTIONAL_INT + _OPTIONAL_STR)
    if unknown:
        raise DataError(f"{where}: unknown fields {sorted(unknown)}")
    for key in _REQUIRED:
        value = raw.get(key)
        if not isinstance(value, str) or not _SAFE_NAME_RE.match(value):
            # These become parts of URLs and cache file names: no slashes, no spaces.
            raise DataError(f"{where}: {key} must be a plain name, not {value!r}")
    for key in _OPTIONAL_INT:
        value = raw.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value <= 0):
            raise DataError(f"{where}: {key} must be a positive integer, not {value!r}")
    for key in _OPTIONAL_STR:
        value = raw.get(key)
        if value is not None and not isinstance(value, str):
            raise DataError(f"{where}: {key} must be a string, not {value!r}")
    sha = raw.get("sha256")
    if sha is not None and not _SHA256_RE.match(sha):
        raise DataError(f"{where}: sha256 must be 64 lower-case hex digits, not {sha!r}")
    return Entry(**raw)


def parse(text: str, source: str = "<catalog>") -> Catalog:
    """A catalog from TOML text (an array of ``[[log]]`` tables; see traces/catalog.toml)."""
    if not isinstance(text, str):
        raise TypeError(f"parse takes a string, not {type(text).__name__}")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DataError(f"{source}: not valid TOML: {exc}") from None
    logs = doc.get("log", [])
    if not isinstance(logs, list):
        raise DataError(f"{source}: `log` must be an array of tables ([[log]])")
    return Catalog([_entry(raw, f"{source}: log #{k + 1}") for k, raw in enumerate(logs)], source)


def load(path: str | Path | None = None) -> Catalog:
    """The catalog at ``path``, or the one shipped with the package when ``path`` is None."""
    if path is None:
        resource = resources.files("schedbench").joinpath("data", "catalog.toml")
        try:
            return parse(resource.read_text(encoding="utf-8"), "schedbench/data/catalog.toml")
        except FileNotFoundError:
            raise DataError(
                "the package's catalog (schedbench/data/catalog.toml) is missing: "
                "reinstall schedbench"
            ) from None
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or Path, not {type(path).__name__}")
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"{path}: cannot read the catalog: {exc.strerror or exc}") from None
    return parse(text, str(path))

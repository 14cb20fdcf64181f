"""Download catalog logs into a local cache and verify them.

The cache is ``$SCHEDBENCH_CACHE`` when set, else platformdirs' user cache directory for
"schedbench".  A log is downloaded to a hidden temporary file in the cache directory,
verified, and only then renamed to its final name, so a file under its final name has always
passed verification: a failed or interrupted download leaves nothing that looks valid.

Verification: size and sha256 when the catalog knows them, else the gzip stream must
decompress completely and parse with :mod:`schedbench.io.swf` (with the catalog's job count, when
known).
"""

from __future__ import annotations

import hashlib
import http.client
import os
import secrets
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from ..errors import DataError, UsageError
from . import catalog as _catalog
from .catalog import Entry

CACHE_ENV = "SCHEDBENCH_CACHE"
_CHUNK = 1 << 16
# HTTP statuses worth another try: the server is busy or a proxy timed out.
_TRANSIENT_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})


class FetchError(DataError):
    """A download that failed or did not verify (the CLI exits 1)."""


class _Transient(Exception):
    """A failure another attempt may cure (connection reset, short transfer, HTTP 503...)."""


@dataclass(frozen=True)
class FetchResult:
    """Where the log is, and whether this call downloaded it (False: it was already cached
    and verified)."""

    path: Path
    downloaded: bool


def cache_dir() -> Path:
    """The cache directory (not created): ``$SCHEDBENCH_CACHE``, else the user cache dir."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("schedbench"))


def cached_path(entry: Entry, cache: str | os.PathLike | None = None) -> Path:
    """Where ``entry`` lives in the cache (whether or not it is there)."""
    if not isinstance(entry, Entry):
        raise TypeError(f"expected a catalog Entry, not {type(entry).__name__}")
    return (Path(cache) if cache is not None else cache_dir()) / entry.file


def is_cached(entry: Entry, cache: str | os.PathLike | None = None) -> bool:
    """True when the cache holds ``entry`` under its final name (which only verified
    downloads ever get)."""
    return cached_path(entry, cache).is_file()


def sha256_of(path: str | os.PathLike) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verify(path: str | os.PathLike, entry: Entry) -> None:
    """Check a downloaded file against ``entry``; raises :class:`FetchError` saying what
    differs.  Size and sha256 when known, else gzip integrity and a clean SWF parse."""
    if not isinstance(entry, Entry):
        raise TypeError(f"expected a catalog Entry, not {type(entry).__name__}")
    path = Path(path)
    if entry.size is not None:
        size = path.stat().st_size
        if size != entry.size:
            raise FetchError(f"{entry.name}: size is {size} bytes, expected {entry.size}")
    if entry.sha256 is not None:
        digest = sha256_of(path)
        if digest != entry.sha256:
            raise FetchError(f"{entry.name}: sha256 is {digest}, expected {entry.sha256}")
    if entry.sha256 is None:
        from . import swf

        data = path.read_bytes()
        if data[:2] != b"\x1f\x8b":
            raise FetchError(f"{entry.name}: the download is not gzip data")
        try:
            # read() decompresses the whole stream, so a truncated or corrupt file fails here.
            table, _ = swf.read(path)
        except swf.SWFError as exc:
            raise FetchError(f"{entry.name}: the download does not verify: {exc}") from None
        if entry.jobs is not None and table.n_jobs != entry.jobs:
            raise FetchError(f"{entry.name}: {table.n_jobs} jobs, expected {entry.jobs}")


def _check_base_url(mirror: str) -> str:
    parts = urllib.parse.urlsplit(mirror)
    if parts.scheme not in ("http", "https", "file") or (parts.scheme != "file" and not parts.netloc):
        raise UsageError(f"--mirror must be an http(s):// or file:// URL, not {mirror!r}")
    return mirror


def _download_once(url: str, dest, timeout: float, progress: bool, label: str) -> None:
    """One attempt: stream ``url`` into the open binary file ``dest`` (truncated first)."""
    from tqdm import tqdm

    dest.seek(0)
    dest.truncate()
    request = urllib.request.Request(url, headers={"User-Agent": "schedbench"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            length = resp.headers.get("Content-Length")
            expected = int(length) if length and length.isdigit() else None
            received = 0
            with tqdm(
                total=expected,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                desc=label,
                file=sys.stderr,
                disable=not progress,
                leave=False,
            ) as bar:
                while chunk := resp.read(_CHUNK):
                    dest.write(chunk)
                    received += len(chunk)
                    bar.update(len(chunk))
    except urllib.error.HTTPError as exc:
        exc.close()  # it holds the response socket
        if exc.code in _TRANSIENT_STATUS:
            raise _Transient(f"HTTP {exc.code} {exc.reason}") from None
        raise FetchError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        # A missing file:// target will not appear by retrying; network errors may clear.
        if isinstance(reason, OSError) and not isinstance(reason, FileNotFoundError):
            raise _Transient(f"{reason}") from None
        raise FetchError(f"{url}: {reason}") from None
    except (http.client.HTTPException, OSError) as exc:
        raise _Transient(f"connection broken ({exc.__class__.__name__}: {exc})") from None
    # http.client returns a short body without complaint when the peer closes early.
    if expected is not None and received != expected:
        raise _Transient(f"transfer cut short: {received} of {expected} bytes")
    dest.flush()


def fetch(
    entry: Entry,
    *,
    mirror: str | None = None,
    cache: str | os.PathLike | None = None,
    retries: int = 3,
    backoff: float = 1.0,
    timeout: float = 60.0,
    progress: bool = True,
    force: bool = False,
    log=None,
) -> FetchResult:
    """Download ``entry`` into the cache unless a verified copy is already there.

    ``mirror`` replaces the archive's base URL (the ``l_<folder>/<file>`` part stays).
    Transient failures (connection errors, HTTP 408/429/5xx, short transfers) are retried
    up to ``retries`` more times, waiting ``backoff * 2**k`` seconds before retry ``k``; a
    404, another HTTP error or a file that does not verify fails at once.  ``log(message)``
    receives progress messages (default: stderr).  Raises :class:`FetchError`.
    """
    if not isinstance(entry, Entry):
        raise TypeError(f"expected a catalog Entry, not {type(entry).__name__}")
    if not isinstance(retries, int) or retries < 0:
        raise UsageError(f"retries must be a non-negative integer, not {retries!r}")
    if not isinstance(backoff, (int, float)) or backoff < 0:
        raise UsageError(f"backoff must be a non-negative number of seconds, not {backoff!r}")
    if not isinstance(timeout, (int, float)) or timeout <= 0:
        raise UsageError(f"timeout must be a positive number of seconds, not {timeout!r}")
    if log is None:
        def log(message: str) -> None:
            print(message, file=sys.stderr)

    url = entry.url(_check_base_url(mirror) if mirror is not None else None)
    directory = Path(cache) if cache is not None else cache_dir()
    final = directory / entry.file
    if final.is_file() and not force:
        try:
            verify(final, entry)
            return FetchResult(final, downloaded=False)
        except FetchError as exc:
            log(f"cached copy does not verify ({exc}); downloading it again")

    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FetchError(f"cannot create the cache directory {directory}: {exc.strerror}") from None
    # Hidden and ".part": never mistaken for a log; random so that concurrent fetches do
    # not write into each other's file; "x" mode (not mkstemp) so the umask sets the mode.
    tmp = directory / f".{entry.file}.{secrets.token_hex(6)}.part"
    try:
        try:
            dest = open(tmp, "x+b")
        except OSError as exc:  # the folder, not the hidden file's random name
            raise FetchError(f"cannot write in the cache directory {directory}: {exc.strerror}") from None
        with dest:
            for attempt in range(retries + 1):
                try:
                    _download_once(url, dest, timeout, progress, entry.file)
                    break
                except _Transient as exc:
                    if attempt == retries:
                        raise FetchError(
                            f"{url}: {exc} (gave up after {retries + 1} attempts)"
                        ) from None
                    delay = backoff * 2**attempt
                    log(f"{url}: {exc}; retrying in {delay:g} s")
                    time.sleep(delay)
        verify(tmp, entry)
        os.replace(tmp, final)
    finally:
        tmp.unlink(missing_ok=True)
    return FetchResult(final, downloaded=True)


def resolve(text: str) -> Path:
    """A trace path as given, or the cached file of a catalog log name."""
    path = Path(text).expanduser()
    if path.exists():
        return path
    # A bare catalog name may end in .swf.gz; anything else path-like is a missing file.
    if "/" in text or (text.endswith((".swf", ".gz")) and not text.endswith(".swf.gz")):
        raise DataError(f"{text}: no such file")
    try:
        entry = _catalog.load().find(text)
    except UsageError:
        raise UsageError(f"{text!r} is neither a file nor a log in the catalog "
                         "(`schedbench traces list` shows the logs)") from None
    cached = cached_path(entry)
    if not cached.is_file():
        raise DataError(f"{entry.name} is not in the cache ({cache_dir()}); "
                        f"download it with `schedbench traces fetch {entry.name}`")
    return cached

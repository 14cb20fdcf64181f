"""Downloads against a local HTTP server that plays the archive (and its failures)."""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from repo_paths import SHARED
from schedbench.errors import DataError, UsageError
from schedbench.io import catalog, fetch

SHARED_SWF = SHARED / "traces" / "swf"
KTH = "KTH-SP2-1996-2.1-cln"
KTH_FILE = f"{KTH}.swf.gz"


class Archive:
    """What the server serves: ``/l_<folder>/<file>`` is ``root/<file>`` (the folder is not
    checked), with a queue of scripted failures per file name.

    Modes: ``ok``; ``503`` (an HTTP error); ``truncate`` (announces the full
    Content-Length, sends half, closes); ``hangup`` (closes without answering).
    """

    def __init__(self, root: Path):
        self.root = root
        self.script: dict[str, list[str]] = {}
        self.hits: Counter[str] = Counter()
        self.base_url = ""

    def fail(self, name: str, *modes: str) -> None:
        self.script.setdefault(name, []).extend(modes)


def _handler(archive: Archive):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's naming)
            parts = self.path.strip("/").split("/")
            name = parts[-1]
            archive.hits[name] += 1
            path = archive.root / name
            if len(parts) != 2 or not parts[0].startswith("l_") or not path.is_file():
                self.send_error(404, "File not found")
                return
            queue = archive.script.get(name)
            mode = queue.pop(0) if queue else "ok"
            if mode == "503":
                self.send_error(503, "Busy")
                return
            if mode == "hangup":
                self.close_connection = True
                return
            data = path.read_bytes()
            self.send_response(200)
            self.send_header("Content-Type", "application/gzip")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if mode == "truncate":
                self.wfile.write(data[: len(data) // 2])
                self.close_connection = True
            else:
                self.wfile.write(data)

        def log_message(self, *args):  # keep test output clean
            pass

    return Handler


def serve(root: Path):
    """Start a server on an ephemeral port; returns (archive, stop)."""
    archive = Archive(root)
    server = HTTPServer(("127.0.0.1", 0), _handler(archive))
    archive.base_url = f"http://127.0.0.1:{server.server_address[1]}/"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()

    def stop():
        server.shutdown()
        thread.join()
        server.server_close()

    return archive, stop


@pytest.fixture
def shared_swf() -> Path:
    if not (SHARED_SWF / KTH_FILE).is_file():
        pytest.skip(f"shared traces not found at {SHARED_SWF}")
    return SHARED_SWF


@pytest.fixture
def archive(shared_swf):
    """A server playing the archive, serving the shared logs."""
    served, stop = serve(shared_swf)
    yield served
    stop()


@pytest.fixture
def corrupt_archive(shared_swf, tmp_path):
    """A server whose copy of KTH has one byte changed (same size)."""
    root = tmp_path / "corrupt"
    root.mkdir()
    data = bytearray((shared_swf / KTH_FILE).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (root / KTH_FILE).write_bytes(bytes(data))
    served, stop = serve(root)
    yield served
    stop()


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "cache"
    monkeypatch.setenv(fetch.CACHE_ENV, str(path))
    return path


@pytest.fixture
def kth() -> catalog.Entry:
    return catalog.load().find(KTH)


def unverified(entry: catalog.Entry, **changes) -> catalog.Entry:
    """A test-only entry for the same file without size and checksum."""
    fields = {**entry.__dict__, "name": entry.name + "-nosum", "size": None, "sha256": None}
    return catalog.Entry(**{**fields, **changes})


def quiet(**kwargs):
    messages: list[str] = []
    return messages, {"progress": False, "backoff": 0, "log": messages.append, **kwargs}


def cache_contents(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.iterdir()) if cache.exists() else []


def test_catalog_checksum_matches_the_shared_copy(kth, shared_swf):
    data = (shared_swf / KTH_FILE).read_bytes()
    assert kth.size == len(data)
    assert kth.sha256 == hashlib.sha256(data).hexdigest()


def test_success_then_nothing_to_do(archive, kth, cache):
    _, kw = quiet()
    result = fetch.fetch(kth, mirror=archive.base_url, **kw)
    assert result.downloaded
    assert result.path == cache / KTH_FILE
    assert fetch.sha256_of(result.path) == kth.sha256
    assert cache_contents(cache) == [KTH_FILE]
    assert fetch.is_cached(kth)
    assert archive.hits[KTH_FILE] == 1

    again = fetch.fetch(kth, mirror=archive.base_url, **kw)
    assert not again.downloaded
    assert archive.hits[KTH_FILE] == 1  # no second request


def test_checksum_mismatch_leaves_nothing(corrupt_archive, kth, cache):
    _, kw = quiet()
    with pytest.raises(fetch.FetchError, match="sha256 is [0-9a-f]{64}, expected " + kth.sha256):
        fetch.fetch(kth, mirror=corrupt_archive.base_url, **kw)
    assert cache_contents(cache) == []
    assert corrupt_archive.hits[KTH_FILE] == 1  # a bad checksum is not retried


def test_without_checksum_a_corrupt_file_fails_to_parse(corrupt_archive, kth, cache):
    _, kw = quiet()
    with pytest.raises(fetch.FetchError, match="does not verify"):
        fetch.fetch(unverified(kth), mirror=corrupt_archive.base_url, **kw)
    assert cache_contents(cache) == []


def test_without_checksum_a_good_file_parses(archive, kth, cache):
    _, kw = quiet()
    assert fetch.fetch(unverified(kth), mirror=archive.base_url, **kw).downloaded
    assert cache_contents(cache) == [KTH_FILE]


def test_without_checksum_the_job_count_is_checked(archive, kth, cache):
    _, kw = quiet()
    with pytest.raises(fetch.FetchError, match="28476 jobs, expected 28477"):
        fetch.fetch(unverified(kth, jobs=28477), mirror=archive.base_url, **kw)
    assert cache_contents(cache) == []


@pytest.mark.parametrize("mode", ["truncate", "hangup"])
def test_broken_transfers_fail_after_retries_and_leave_nothing(archive, kth, cache, mode):
    archive.fail(KTH_FILE, mode, mode, mode)
    messages, kw = quiet(retries=2)
    with pytest.raises(fetch.FetchError, match="gave up after 3 attempts"):
        fetch.fetch(kth, mirror=archive.base_url, **kw)
    assert archive.hits[KTH_FILE] == 3
    assert len(messages) == 2 and all("retrying" in m for m in messages)
    assert cache_contents(cache) == []


def test_truncated_transfer_is_reported_as_such(archive, kth):
    archive.fail(KTH_FILE, "truncate")
    _, kw = quiet(retries=0)
    with pytest.raises(fetch.FetchError, match=rf"cut short: {kth.size // 2} of {kth.size} bytes"):
        fetch.fetch(kth, mirror=archive.base_url, **kw)


@pytest.mark.parametrize("mode", ["503", "truncate", "hangup"])
def test_retry_after_a_failure(archive, kth, cache, mode):
    archive.fail(KTH_FILE, mode)
    messages, kw = quiet(retries=1)
    result = fetch.fetch(kth, mirror=archive.base_url, **kw)
    assert result.downloaded
    assert archive.hits[KTH_FILE] == 2
    assert len(messages) == 1 and "retrying in 0 s" in messages[0]
    assert fetch.sha256_of(result.path) == kth.sha256
    assert cache_contents(cache) == [KTH_FILE]


def test_404_fails_at_once(archive, kth, cache):
    missing = catalog.Entry(name="Nope-1", folder="nope", file="Nope-1.swf.gz")
    _, kw = quiet(retries=3)
    with pytest.raises(fetch.FetchError, match="HTTP 404"):
        fetch.fetch(missing, mirror=archive.base_url, **kw)
    assert archive.hits["Nope-1.swf.gz"] == 1
    assert cache_contents(cache) == []


def test_a_cached_file_that_no_longer_verifies_is_downloaded_again(archive, kth, cache):
    cache.mkdir()
    (cache / KTH_FILE).write_bytes(b"not the log")
    messages, kw = quiet()
    assert fetch.fetch(kth, mirror=archive.base_url, **kw).downloaded
    assert "does not verify" in messages[0]
    assert fetch.sha256_of(cache / KTH_FILE) == kth.sha256


def test_an_interrupted_download_leaves_nothing(archive, kth, cache, monkeypatch):
    def interrupted(url, dest, *args):
        dest.write(b"\x1f\x8b partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(fetch, "_download_once", interrupted)
    _, kw = quiet()
    with pytest.raises(KeyboardInterrupt):
        fetch.fetch(kth, mirror=archive.base_url, **kw)
    assert cache_contents(cache) == []


def test_a_cache_that_cannot_be_written_is_named(archive, kth, cache, monkeypatch):
    # read-only or immutable (root ignores modes: the refusal is simulated): the error named
    # the hidden download, '.KTH-SP2-1996-2.1-cln.swf.gz.2f4efc2f4b9b.part: permission denied'
    def refused(path, mode):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(fetch, "open", refused, raising=False)  # found before the builtin
    _, kw = quiet()
    with pytest.raises(fetch.FetchError) as exc:
        fetch.fetch(kth, mirror=archive.base_url, **kw)
    assert str(exc.value) == f"cannot write in the cache directory {cache}: Permission denied"
    assert archive.hits.get(KTH_FILE, 0) == 0 and cache_contents(cache) == []


def test_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv(fetch.CACHE_ENV, str(tmp_path / "x"))
    assert fetch.cache_dir() == tmp_path / "x"
    monkeypatch.delenv(fetch.CACHE_ENV)
    assert fetch.cache_dir().name == "schedbench"


def test_arguments_are_validated(kth):
    with pytest.raises(UsageError, match="--mirror"):
        fetch.fetch(kth, mirror="ftp://example.org/")
    with pytest.raises(UsageError, match="retries"):
        fetch.fetch(kth, retries=-1)
    with pytest.raises(TypeError):
        fetch.fetch("KTH")
    assert issubclass(fetch.FetchError, DataError)


def test_mirror_keeps_the_archive_layout(kth):
    assert kth.url() == (
        "https://www.cs.huji.ac.il/labs/parallel/workload/l_kth_sp2/KTH-SP2-1996-2.1-cln.swf.gz"
    )
    assert kth.url("http://127.0.0.1:9/pwa") == "http://127.0.0.1:9/pwa/l_kth_sp2/" + KTH_FILE


def test_packaged_catalog_is_consistent():
    cat = catalog.load()
    assert len(cat) >= 16
    for entry in cat.values():
        assert entry.file.endswith(".swf.gz")
        assert entry.name == entry.file.removesuffix(".swf.gz")
        assert (entry.size is None) == (entry.sha256 is None)
    assert cat.find("hpc2n-2002-2.2-cln.swf.gz").max_procs == 240


def test_catalog_parse_errors():
    with pytest.raises(DataError, match="listed twice"):
        catalog.parse('[[log]]\nname="A"\nfolder="a"\nfile="A.swf.gz"\n' * 2)
    with pytest.raises(DataError, match="plain name"):
        catalog.parse('[[log]]\nname="A"\nfolder="../a"\nfile="A.swf.gz"\n')
    with pytest.raises(DataError, match="sha256"):
        catalog.parse('[[log]]\nname="A"\nfolder="a"\nfile="A.swf.gz"\nsha256="xyz"\n')
    with pytest.raises(DataError, match="not valid TOML"):
        catalog.parse("[[log]\n")
    with pytest.raises(UsageError, match="no log called"):
        catalog.parse("").find("A")

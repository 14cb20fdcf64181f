"""Every code block of README.md and docs/ runs, and the replay contract stays in step
with the team's spec (issue 25, item 6; replaces tests/test_readme.py of issue 14).

How a Markdown file's fenced blocks are checked, in document order, in one temporary
folder per file holding a copy of ``traces/`` (so ``traces/tiny.swf`` works as written):

* ``python``: executed; the blocks of one file share one namespace, like a notebook.
* ``sh``: each command (``&&`` splits a line, ``#`` starts a comment) must succeed:
  ``schedbench ARGS`` runs through :func:`schedbench.cli.main.main` and must return 0
  (``--help`` exits 0); ``make TARGET`` must name a target of the Makefile;
  ``python SCRIPT`` and ``pytest PATH`` must name a file of the repository (they are
  slow or need data, so they are checked, not run).  Any other command fails the test.
* ``toml``: parsed, and validated as the config it is: a sweep config (``[[workloads]]``)
  by :func:`schedbench.sweep.run.expand`, a site file by :func:`schedbench.plan.site.parse`,
  an accounts file by the reader of ``priority`` and ``sfs``.  A line
  ``<!-- docs-test: file NAME -->`` before the block also writes it to NAME in the folder,
  for the blocks after it.
* A block preceded by ``<!-- docs-test: skip REASON -->`` is not run (only for what cannot
  run offline, such as downloads); :data:`EXPECTED_SKIPS` counts them, so a new skip has
  to be declared here.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import shutil
import sys
import tomllib
import types
from pathlib import Path

import pytest

from repo_paths import ROOT
from schedbench.cli.main import build_parser, main

DOCS = ROOT / "docs"
SPEC = ROOT.parent / "shared" / "spec" / "replay-semantics.md"
if not SPEC.is_file():
    SPEC = Path("/work/shared/spec/replay-semantics.md")
CONTRACT = DOCS / "reference" / "replay-contract.md"

MARKDOWN = sorted([ROOT / "README.md", *DOCS.rglob("*.md")])

EXPECTED_SKIPS = {
    "docs/user-guide.md": 2,  # real logs: the catalog download and what reads the cached log
    "docs/slurm-cluster.md": 3,  # a cluster's own sacct, sacctmgr and files
}
"""Blocks opted out with a skip marker, per file (each marker gives its reason)."""

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```\s*$", re.M | re.S)
_MARKER = re.compile(r"<!-- docs-test: (\w+)\s*(.*?)\s*-->\s*$")


def blocks(path: Path) -> list[tuple[str, str, dict, int]]:
    """(language, code, markers {kind: argument}, line) of every fenced block of ``path``;
    markers are the ``<!-- docs-test: KIND ARG -->`` lines right above the fence."""
    text = path.read_text()
    out = []
    for m in _FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        above = text[: m.start()].rstrip("\n").split("\n")
        markers = {}
        while above and (mm := _MARKER.search(above[-1])):
            markers[mm.group(1)] = mm.group(2)
            above.pop()
        out.append((m.group(1), m.group(2), markers, line))
    return out


def _commands(code: str) -> list[list[str]]:
    """The commands of a shell block: lines joined at trailing backslashes, comments
    dropped, split at ``&&``."""
    out = []
    for line in code.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        cmd: list[str] = []
        for w in [*words, "&&"]:
            if w == "&&":
                if cmd:
                    out.append(cmd)
                cmd = []
            else:
                cmd.append(w)
    return out


def _make_targets() -> set[str]:
    return set(re.findall(r"^([a-zA-Z][\w-]*):", (ROOT / "Makefile").read_text(), re.M))


def _run_schedbench(args: list[str], where: str) -> None:
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()) as err:
            status = main(args)
    except SystemExit as exc:  # argparse's --help
        status = exc.code or 0
    assert status == 0, f"{where}: schedbench {shlex.join(args)} -> exit {status}: {err.getvalue()[-2000:]}"


def _run_shell(code: str, where: str) -> int:
    ran = 0
    for cmd in _commands(code):
        name, args = cmd[0], cmd[1:]
        if name in ("schedbench", ".venv/bin/schedbench"):
            _run_schedbench(args, where)
        elif name == "make":
            assert args and set(a for a in args if "=" not in a) <= _make_targets(), f"{where}: {shlex.join(cmd)}"
        elif name in ("python", "python3", ".venv/bin/python") and args and not args[0].startswith("-"):
            assert (ROOT / args[0]).is_file(), f"{where}: no script {args[0]}"
        elif name == "pytest" or cmd[:3] in (["python", "-m", "pytest"], [".venv/bin/python", "-m", "pytest"]):
            paths = [a.split("::")[0] for a in args if not a.startswith("-") and "/" in a]
            assert paths and all((ROOT / p).exists() for p in paths), f"{where}: {shlex.join(cmd)}"
        else:
            pytest.fail(f"{where}: the docs test does not know how to check {shlex.join(cmd)!r}")
        ran += 1
    return ran


def _check_toml(code: str, where: str, folder: Path) -> None:
    from schedbench.plan import accounts, site
    from schedbench.sweep import run as sweep

    doc = tomllib.loads(code)
    if "workloads" in doc:
        assert sweep.expand(doc, base_dir=folder), f"{where}: a sweep config with no run"
    elif set(doc) & {"clock", "limit", "freepool", "maintenance", "expensive"}:
        site.parse(code, where)
    elif "accounts" in doc:
        path = folder / ".accounts-check.toml"
        path.write_text(code)
        assert accounts._read_accounts(path)
    else:
        pytest.fail(f"{where}: a TOML block that is no sweep config, site file nor accounts file")


def run_markdown(path: Path, folder: Path, monkeypatch) -> dict:
    """Run every block of ``path`` in ``folder``; {"ran": n, "skipped": n}."""
    shutil.copytree(ROOT / "traces", folder / "traces")
    monkeypatch.chdir(folder)
    # the blocks run in a module that pickle can find by name: numba's cache index of a
    # plug-in's replay loop names the plug-in's class, and a class it cannot import makes
    # the index read as empty, so a plug-in example was compiled again in every run
    module = types.ModuleType("docs")
    monkeypatch.setitem(sys.modules, "docs", module)
    namespace: dict = module.__dict__
    counts = {"ran": 0, "skipped": 0}
    for lang, code, markers, line in blocks(path):
        where = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name}:{line}"
        if "skip" in markers:
            assert markers["skip"], f"{where}: a skip marker must give its reason"
            counts["skipped"] += 1
            continue
        if "file" in markers:
            (folder / markers["file"]).write_text(code)
        if lang == "python":
            exec(compile(code, where, "exec"), namespace)
        elif lang in ("sh", "shell", "console"):
            assert _run_shell(code, where), f"{where}: an empty shell block"
        elif lang == "toml":
            _check_toml(code, where, folder)
        else:
            pytest.fail(f"{where}: a ```{lang} block; the docs test runs python, sh and toml blocks")
        counts["ran"] += 1
    return counts


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_code_block_runs(path, tmp_path, monkeypatch):
    from schedbench import registry

    tables = (registry.SCHEDULERS, registry.ALLOCATORS, registry.PREDICTORS)
    before = [dict(t) for t in tables]  # examples register plug-ins: leave the registry as it was
    try:
        counts = run_markdown(path, tmp_path, monkeypatch)
    finally:
        for table, saved in zip(tables, before, strict=True):
            table.clear()
            table.update(saved)
    assert counts["skipped"] == EXPECTED_SKIPS.get(str(path.relative_to(ROOT)), 0)
    if path.name == "user-guide.md":  # the Python API example wrote its runs
        for run in ("api-easy-ff", "api-py-fcfs"):
            for name in ("jobs.parquet", "timeline.parquet", "allocations.parquet", "summary.json"):
                assert (tmp_path / "runs" / run / name).is_file()
        summary = json.loads((tmp_path / "runs" / "tiny" / "summary.json").read_text())
        assert summary["jobs_input"] == summary["jobs_replayed"] == 60 and summary["label"] == "easy+ff"


def test_the_runner_fails_on_a_failing_block(tmp_path, monkeypatch):
    bad = tmp_path / "bad.md"
    bad.write_text("```sh\nschedbench replay traces/missing.swf -o out\n```\n")
    with pytest.raises(AssertionError, match="exit 1"):
        run_markdown(bad, tmp_path / "run", monkeypatch)


def test_readme_states_the_two_commands_and_links_into_docs():
    text = (ROOT / "README.md").read_text()
    head = "\n".join(text.splitlines()[:40])
    assert "make bench" in head and "make test" in head
    assert len(text.splitlines()) <= 180
    for link in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if "://" not in link:
            assert (ROOT / link).exists(), link


def test_links_between_docs_resolve():
    for path in MARKDOWN:
        for link in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", path.read_text()):
            if "://" not in link:
                assert (path.parent / link).resolve().exists(), f"{path.relative_to(ROOT)}: {link}"


def test_defaults_are_stated_in_replay_help_and_user_guide():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices["replay"]
    text = sub.format_help()
    for default in ("default easy", "default ff", "default requested"):
        assert default in text
    assert "defaults: -s easy -a ff -p requested" in (DOCS / "user-guide.md").read_text()
    assert {a.dest: a.default for a in sub._actions}.items() >= {
        "scheduler": "easy", "allocator": "ff", "predictor": "requested"}.items()


# -- the replay contract and the spec -------------------------------------------------------

# Each heading of the spec and the section of docs/reference/replay-contract.md that says
# the same.  A heading added to the spec fails the test until it has a counterpart here.
SPEC_SECTIONS = {
    "Replay semantics of a homogeneous SWF trace": "The replay contract",
    "Reading a job (SWF fields are 1-based)": "1. Turning an SWF line into a job",
    "Jobs that are not simulated": "2. Jobs that are left out",
    "Time and events": "3. The clock and the order of events",
    "The queue and the policies": "4. The queue and the three base policies",
    "What a replay writes for each job": "5. The output for each job",
    "Conservative backfilling (planning; Keller's OpenCCS, Mu'alem and Feitelson)":
        "7. Conservative backfilling: planning with bookings",
    "Heterogeneous machines (nodes with cores, GPUs, MICs, memory)": "8. Machines with nodes and several resource types",
}


def _headings(text: str) -> list[str]:
    return [m.group(1).strip() for m in re.finditer(r"^#{1,3} (.+)$", text, re.M)]


def _plain(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("*", "")).lower()


@pytest.fixture(scope="module")
def spec() -> str:
    if not SPEC.is_file():
        pytest.skip(f"the team's spec is not beside the repository ({SPEC})")
    return SPEC.read_text()


def test_every_spec_heading_has_a_contract_section(spec):
    contract = _headings(CONTRACT.read_text())
    for heading in _headings(spec):
        assert heading in SPEC_SECTIONS, f"the spec's section {heading!r} has no counterpart in the contract"
        assert SPEC_SECTIONS[heading] in contract, SPEC_SECTIONS[heading]


def test_every_quoted_term_and_formula_of_the_spec_is_in_the_contract(spec):
    contract = CONTRACT.read_text()
    spans = set(re.findall(r"`([^`]+)`", spec))
    assert len(spans) > 10
    for span in spans:
        assert f"`{span}`" in contract, span
    text = _plain(contract)
    for term in set(re.findall(r"\*\*([^*]+?)\.?\*\*", spec)) | set(re.findall(r"(?<!\*)\*([A-Za-z][^*]+?)[.:]?\*(?!\*)", spec)):
        assert _plain(term).rstrip(".:") in text, term


def test_the_swf_field_table_matches(spec):
    def rows(text):
        start = text.index("| --- |")
        table = text[start:].split("\n\n")[0]
        return [re.findall(r"field (\d+)|fields ([\d, and]+)", r) for r in table.splitlines()[1:]]

    def numbers(text):
        out = []
        for row in rows(text):
            nums = []
            for a, b in row:
                nums += [a] if a else re.findall(r"\d+", b)
            out.append(nums)
        return out

    assert numbers(spec) == numbers(CONTRACT.read_text())


def test_output_columns_and_statuses_are_in_the_contract(spec):
    from schedbench.engine.prepare import STATUS_NAMES

    contract = CONTRACT.read_text()
    section = spec[spec.index("## What a replay writes"):]
    section = section[: section.index("\n## ", 5)]
    listed = section.split("\n\n")[1].split("and for jobs left out")[0]
    columns = [part.split()[0] for part in listed.split(",") if part.strip()]
    assert {"job_id", "submit", "wait", "pred", "user"} <= set(columns)
    mine = contract[contract.index("## 5."):]
    for column in columns:
        assert column in mine, column
    for status in STATUS_NAMES:
        assert f"`{status}`" in contract, status
    assert "10 second" in section and "max(1, (wait + run) / max(run, 10))" in contract


# -- the outputs reference and a real run ---------------------------------------------------


def test_outputs_reference_lists_every_column_and_key_of_a_real_run(tmp_path):
    import polars as pl

    text = (DOCS / "reference" / "outputs.md").read_text()
    sections = {m.group(1): m.start() for m in re.finditer(r"^## (\S+)", text, re.M)}

    def section(name):
        start = sections[name]
        later = [s for s in sections.values() if s > start]
        return text[start : min(later) if later else len(text)]

    assert main(["replay", str(ROOT / "traces" / "tiny.swf"), "-q", "-o", str(tmp_path)]) == 0
    for name in ("jobs", "allocations", "timeline"):
        schema = pl.read_parquet(tmp_path / f"{name}.parquet").schema
        rows = dict(re.findall(r"^\| `(\w+)` \| (\w+) \|", section(f"{name}.parquet"), re.M))
        assert list(rows) == list(schema), name  # every column, in file order
        assert rows == {c: str(t) for c, t in schema.items()}, name  # and its dtype
    summary = json.loads((tmp_path / "summary.json").read_text())
    listed = set(re.findall(r"`(\w+)`", section("summary.json")))
    keys = set(summary) | set(summary["metrics"]) | set(summary["timings"]) | set(summary["fairness"])
    keys |= {k for a in summary["fairness"]["accounts"].values() for k in a}
    assert keys - {"accounts"} <= listed, sorted(keys - listed)


def test_job_table_reference_lists_every_column_in_order():
    from schedbench.io.jobs import COLUMNS

    text = (DOCS / "reference" / "job-table.md").read_text()
    assert re.findall(r"^\| `(\w+)` \| (?:\d+ \| )?int64 \|", text, re.M) == list(COLUMNS)

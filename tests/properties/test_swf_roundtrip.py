"""Property: writing a table and header as SWF and reading it back gives them back."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from schedbench.io import jobs, swf

# Ids and times far beyond real logs, short of the 18 digits the reader accepts.
BIG = 10**17
field_value = st.one_of(st.just(-1), st.integers(-(10**6), 10**6), st.integers(-BIG, BIG))

# Header text: printable latin-1 without ':' so that a wrapped line never looks like a
# keyword of its own (a documented limit of the format, not of the reader).
word = st.text(
    alphabet=st.characters(
        codec="latin-1", categories=("L", "N", "P", "S"), exclude_characters=":"
    ),
    min_size=1,
    max_size=8,
)
phrase = st.lists(word, min_size=1, max_size=4).map(" ".join)
paragraph = st.lists(phrase, min_size=1, max_size=3).map("\n".join)
keyword = st.from_regex(r"[A-Z][a-z0-9_]{2,10}", fullmatch=True).filter(
    lambda k: k.lower() not in swf._KEYS
)


@st.composite
def tables(draw) -> jobs.JobTable:
    n = draw(st.integers(0, 25))
    ids = draw(st.lists(st.integers(-BIG, BIG), min_size=n, max_size=n, unique=True))
    columns = {"job_id": np.array(ids, dtype=np.int64)}
    for name in jobs.SWF_FIELDS[1:]:
        columns[name] = np.array(draw(st.lists(field_value, min_size=n, max_size=n)), dtype=np.int64)
    return jobs.from_columns(n, **columns)


headers = st.builds(
    swf.SWFHeader,
    version=st.none() | phrase,
    computer=st.none() | phrase,
    information=st.none() | paragraph,
    max_jobs=st.none() | st.integers(0, 10**9),
    max_procs=st.none() | st.integers(1, 10**7),
    unix_start_time=st.none() | st.integers(0, 2**40),
    time_zone=st.none() | st.integers(-50000, 50000),
    time_zone_string=st.none() | word,
    queues=st.lists(st.builds(swf.Queue, st.integers(-1, 99), st.just("") | word), max_size=3),
    notes=st.lists(paragraph, max_size=3),
    extra=st.dictionaries(keyword, st.just("") | phrase, max_size=2),
)


def _sorted(table: jobs.JobTable) -> jobs.JobTable:
    return table.take(np.lexsort((table.job_id, table.submit)))


@settings(max_examples=40)
@given(table=tables(), header=headers, gz=st.booleans())
def test_write_read_round_trip(table, header, gz):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / ("t.swf.gz" if gz else "t.swf")
        got, got_header = swf.read(swf.write(table, header, path))
    assert got.equals(_sorted(table))
    assert got_header == header


@settings(max_examples=20)
@given(table=tables())
def test_reading_is_idempotent_after_one_write(table):
    # read(write(read(x))) == read(x), the guarantee the shared logs are tested for.
    with tempfile.TemporaryDirectory() as tmp:
        first = swf.read(swf.write(table, None, Path(tmp) / "a.swf"))
        second = swf.read(swf.write(*first, Path(tmp) / "b.swf"))
    assert second[0].equals(first[0])
    assert second[1] == first[1]

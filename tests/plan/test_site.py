"""Site policies (schedbench.plan.site) on the conservative plan: reading and checking the
file, validities, hand-made traces with expected starts for every policy, the engine
against tests/naive_site.py on generated traces and sites, and the CLI."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive_site
from repo_paths import KTH, ROOT
from schedbench.engine import replay
from schedbench.errors import UsageError
from schedbench.io import jobs, machine
from schedbench.plan import site

STATUS = {s.value: s.name.lower() for s in replay.Status}


def table(rows, **cols):
    """rows: (id, submit, run, cores, estimate[, user[, group]]) of single-core units."""
    rows = [tuple(r) + (1,) * (7 - len(r)) for r in rows]
    ids, sub, run, size, est, user, group = (list(c) for c in zip(*rows, strict=True))
    return jobs.from_columns(job_id=ids, submit=sub, run=run, procs_req=size, procs_alloc=size, time_req=est,
                             user=user, group=group, **cols)


def starts(text, rows, spec="1x(cores=10)", allocator="ff"):
    r = replay.replay(table(rows), machine.from_spec(spec), "conservative", allocator, site=site.parse(text))
    return r.start.tolist(), [STATUS[s] for s in r.status]


# --------------------------------------------------------------------------- reading


def test_validities_expand_weekly_windows_on_the_sites_clock():
    s = site.parse('[clock]\nstart = "Wed 12:00"\n[[limit]]\nuser = 1\nitems = 2\n'
                   'validity = "Mon-Fri 08:00-18:00; Sat 22:00-02:00"\n')
    v = s.limits[0].validity
    iv = v.intervals(0, 7 * 86400, s.origin)
    h = 3600
    # t = 0 is Wednesday noon: Wednesday's window is [-4h, 6h), Thursday's [20h, 30h)
    assert [-4 * h, 6 * h] in iv.tolist() and [20 * h, 30 * h] in iv.tolist()
    # Saturday 22:00 to Sunday 02:00: Saturday noon is 3 days after Wednesday noon
    assert [3 * 86400 + 10 * h, 3 * 86400 + 14 * h] in iv.tolist()
    # the longest gap: Sunday 02:00 to Monday 08:00
    assert v.longest_gap() == 30 * h
    assert site.Validity("always").longest_gap() == 0


def test_a_weekly_day_range_may_wrap_past_sunday():
    # "Fri-Mon" runs Fri, Sat, Sun, Mon (days are counted modulo the week in _days).
    s = site.parse('[[limit]]\nuser = 1\nitems = 2\nvalidity = "Fri-Mon 08:00-18:00"\n')
    v = s.limits[0].validity
    d, h = 86400, 3600
    assert v.spans == ((8 * h, 18 * h), (4 * d + 8 * h, 4 * d + 18 * h), (5 * d + 8 * h, 5 * d + 18 * h),
                       (6 * d + 8 * h, 6 * d + 18 * h))
    assert v.longest_gap() == 3 * d + 14 * h  # Monday 18:00 to Friday 08:00


@pytest.mark.parametrize(("text", "words"), [
    ("[[limit]]\nuser = 1\nitemz = 3\n", "1: [[limit]] #1: unknown key 'itemz'"),
    ("[[limit]]\nuser = 1\nitems = 3\n\n[[limit]]\ngroup = 2\nduration = \"4x\"\n", "5: [[limit]] #2: duration"),
    ("[[limit]]\nuser = 1\ngroup = 2\nitems = 3\n", "exactly one consumer"),
    ("[[limit]]\nuser = 1\nitems = 3\nvalidity = \"Mon-Fry 08:00-18:00\"\n", "weekly"),
    ("[[freepool]]\nresource = \"disks\"\nitems = 3\n", "resource must be one of"),
    ("[[maintenance]]\nnodes = \"a-b\"\nfrom = 0\nto = 10\n", "nodes must be"),
    ("[[maintenance]]\nfrom = 10\nto = 10\n", "must be after"),
    ("[limit]\nuser = 1\n", "write [[limit]]"),
    ("[clocks]\n", "unknown section"),
    ("[[limit]\n", "not valid TOML"),
])
def test_bad_site_files_say_where_and_what(text, words):
    with pytest.raises(UsageError, match=None) as e:
        site.parse(text, "s.toml")
    msg = str(e.value)
    assert msg.startswith("s.toml:") and words in msg and "\n" not in msg


def test_missing_site_file_is_one_line(tmp_path):
    with pytest.raises(UsageError, match="no such site file"):
        site.load(tmp_path / "nope.toml")


def test_the_commented_template_is_a_valid_site():

    s = site.load(ROOT / "traces" / "site-template.toml")
    assert s.limits and s.freepools and s.maintenance and s.gpu_node_cores


def test_plan_policies_refuse_queue_schedulers():
    with pytest.raises(UsageError, match="conservative"):
        replay.replay(table([(1, 0, 5, 1, 5)]), machine.from_spec("1x(cores=2)"), "easy", "ff",
                      site=site.parse("[[limit]]\nuser = 1\nitems = 1\n"))


# --------------------------------------------------------------------------- hand-made traces

ROWS = [(1, 0, 10, 6, 10, 1), (2, 0, 10, 4, 10, 1), (3, 1, 5, 2, 5, 2)]


def test_without_a_site_job_3_waits_for_the_first_end():
    assert starts("", ROWS)[0] == [0, 0, 10]


def test_items_limit_counts_the_consumers_bookings():
    # user 1 at most 8 cores: job 2 (4) waits for job 1 (6) to end at 10; job 3 (user 2,
    # 2 cores) backfills at 1 beside job 1.
    assert starts('[[limit]]\nuser = 1\nresource = "cores"\nitems = 8\n', ROWS)[0] == [0, 10, 1]


def test_items_percent_takes_the_larger_of_the_two():
    text = '[[limit]]\nuser = 1\nresource = "cores"\nitems = 2\nitems_percent = 100\n'
    assert starts(text, ROWS)[0] == [0, 0, 10]


def test_items_percent_rounds_down():
    # 25 % of 10 cores is 2.5: the limit is 2 cores (docs/reference/site-file.md: a limit's
    # percentage rounds down).  Job 1
    # (2 cores) books [0, 10); job 2 (1 core) would make 3: it waits for job 1's end.
    text = '[[limit]]\nuser = 1\nresource = "cores"\nitems_percent = 25\n'
    assert starts(text, [(1, 0, 10, 2, 10, 1), (2, 0, 10, 1, 10, 1)]) == ([0, 10], ["replayed", "replayed"])


def test_limit_binds_only_while_valid():
    # the 8-core limit holds over [0, 5): job 2 (d 10) may not overlap it beside job 1;
    # at 5 the limit is gone and 6 + 4 cores fit the machine: job 2 books [5, 15).  Job 3
    # (2 cores, d 5) at 1 would meet 6 + 4 + 2 at 5: it waits for job 1's end at 10.
    text = '[[limit]]\nuser = 1\nresource = "cores"\nitems = 8\nvalidity = { from = 0, to = 5 }\n'
    assert starts(text, ROWS)[0] == [0, 5, 10]


def test_duration_and_area_limits_keep_refused_jobs_out_of_the_validity():
    # jobs over 6 s may not run in [0, 20): jobs 1 and 2 wait until 20
    text = '[[limit]]\nuser = 1\nduration = 6\nvalidity = { from = 0, to = 20 }\n'
    assert starts(text, ROWS)[0] == [20, 20, 1]
    # area 45 core-seconds: job 1 (60) waits, job 2 (40) does not
    text = '[[limit]]\nuser = 1\nresource = "cores"\narea = 45\nvalidity = { from = 0, to = "30s" }\n'
    assert starts(text, ROWS)[0] == [30, 0, 1]


def test_a_job_no_validity_gap_can_take_is_rejected_by_limit():
    got, status = starts('[[limit]]\nuser = 1\nduration = "8s"\n', ROWS)
    assert got == [-1, -1, 1]
    assert status == ["rejected_by_limit", "rejected_by_limit", "replayed"]
    # a weekly limit valid all day but 00:00-00:01 (t = 0 is Monday 00:00): jobs over 6 s
    # submitted at 100 wait for Tuesday's free minute; job 3 (5 s) is not refused
    late = [(1, 100, 10, 6, 10), (2, 100, 10, 4, 10), (3, 101, 5, 2, 5)]
    got, status = starts('[[limit]]\ngroup = 1\nduration = 6\nvalidity = "Mon-Sun 00:01-24:00"\n', late)
    assert status == ["replayed"] * 3
    assert got == [86400, 86400, 101]


def test_freepool_keeps_cores_for_small_jobs():
    # keep 4 cores free over [0, 50) unless a job has at most 2 cores: job 1 (6) starts,
    # job 2 (4) would leave 0 free: it waits for job 1; job 3 (2 cores) may use the pool.
    text = ('[[freepool]]\nresource = "cores"\nitems = 4\nvalidity = { from = 0, to = 50 }\n'
            '[freepool.unless]\nmax_cores = 2\n')
    assert starts(text, ROWS)[0] == [0, 10, 1]
    got, status = starts(text.replace("{ from = 0, to = 50 }", '"always"').replace("items = 4", "percent = 50"), ROWS)
    assert status == ["rejected_by_limit", "replayed", "replayed"] and got[1:] == [0, 1]


def test_freepool_percent_rounds_up():
    # 25 % of 10 cores is 2.5: the pool keeps 3 (docs/reference/site-file.md: a pool's
    # percentage rounds up), so a job of more than 1 core sees 7.  Always valid: the 8-core job can never start
    # (rejected_by_limit); the 1-core job may use the pool and starts at once.
    text = '[[freepool]]\nresource = "cores"\npercent = 25\n[freepool.unless]\nmax_cores = 1\n'
    got = starts(text, [(1, 0, 10, 8, 10), (2, 0, 10, 1, 10)])
    assert got == ([-1, 0], ["rejected_by_limit", "replayed"])


def test_kept_gpu_node_cores_and_maintenance_windows_hold_nodes():
    spec = "1x(cores=4,gpus=1)+1x(cores=4)"
    gpu_job = dict(unit_cores=[1, 1, 4], unit_gpus=[0, 1, 0])
    rows = [(1, 0, 10, 4, 10), (2, 0, 10, 1, 10), (3, 0, 10, 1, 10)]
    t = table(rows, **gpu_job)
    mach = machine.from_spec(spec)
    kept = site.parse("[expensive]\ngpu_node_cores = 1\n")
    r = replay.replay(t, mach, "conservative", "ff", site=kept)
    # job 1 (4 single cores, no GPU) spreads over the GPU node's 3 usable cores and 1 of
    # node 1; job 2 (1 core + 1 GPU) takes the kept core on node 0; job 3 (4 cores on one
    # node) cannot use the GPU node (3 cores for it): node 1 at 10
    assert r.start.tolist() == [0, 0, 10]
    maint = site.parse('[[maintenance]]\nnodes = "1"\nfrom = 5\nto = 30\n')
    r = replay.replay(t, mach, "conservative", "ff", site=maint)
    # node 1 is down [5, 30): job 1 (d 10) can only run on node 0 ([0, 10) meets the
    # window on node 1); job 2 needs the GPU node: [10, 20); job 3 (4 cores on one node)
    # finds node 0 free at 20, before node 1 is back at 30
    assert r.start.tolist() == [0, 10, 20]
    assert r.options["site"]["maintenance_windows"] == 1


# --------------------------------------------------------------------------- engine == oracle


def _valid(draw):
    if draw(st.booleans()):
        return "always"
    a = draw(st.integers(0, 40))
    return [(a, a + draw(st.integers(1, 30)))]


@st.composite
def sites(draw, nodes):
    out = {"limits": [], "freepools": [], "maintenance": [], "gpu_node_cores": 0}
    for _ in range(draw(st.integers(0, 2))):
        out["limits"].append(dict(
            who=draw(st.sampled_from(["user", "group"])), ident=draw(st.sampled_from([None, 1, 2])),
            k=draw(st.sampled_from([0, 1])), items=draw(st.none() | st.integers(0, 6)),
            duration=draw(st.none() | st.integers(1, 20)), area=draw(st.none() | st.integers(1, 60)),
            valid=_valid(draw)))
    for _ in range(draw(st.integers(0, 1))):
        out["freepools"].append(dict(
            k=0, keep=draw(st.integers(0, 4)), max_cores=draw(st.none() | st.integers(1, 3)),
            max_duration=draw(st.none() | st.integers(1, 20)), users=draw(st.none() | st.just({1})),
            groups=None, valid=_valid(draw)))
    if draw(st.booleans()):
        v = _valid(draw)
        if v != "always":
            out["maintenance"].append(dict(nodes=draw(st.lists(st.integers(0, len(nodes) - 1), min_size=1,
                                                                 max_size=len(nodes), unique=True)), valid=v))
    out["gpu_node_cores"] = draw(st.sampled_from([0, 0, 1]))
    return out


def _toml_validity(v):
    return '"always"' if v == "always" else f"{{ from = {v[0][0]}, to = {v[0][1]} }}"


def to_toml(s) -> str:
    out = []
    for lim in s["limits"]:
        out.append("[[limit]]")
        out.append(f'{lim["who"]} = {lim["ident"] if lim["ident"] is not None else chr(34) + "*" + chr(34)}')
        out.append(f'resource = "{site.RESOURCES[lim["k"]]}"')
        for key in ("items", "duration", "area"):
            if lim[key] is not None:
                out.append(f"{key} = {lim[key]}")
        if all(lim[key] is None for key in ("items", "duration", "area")):
            out.append("items = 1000000")
        out.append(f"validity = {_toml_validity(lim['valid'])}")
    for p in s["freepools"]:
        out += ["[[freepool]]", f'resource = "{site.RESOURCES[p["k"]]}"', f'items = {p["keep"]}',
                f"validity = {_toml_validity(p['valid'])}", "[freepool.unless]"]
        if p["max_cores"] is not None:
            out.append(f"max_cores = {p['max_cores']}")
        if p["max_duration"] is not None:
            out.append(f"max_duration = {p['max_duration']}")
        if p["users"] is not None:
            out.append(f"users = {sorted(p['users'])}")
    for mw in s["maintenance"]:
        out += ["[[maintenance]]", f"nodes = {sorted(mw['nodes'])}", f"from = {mw['valid'][0][0]}",
                f"to = {mw['valid'][0][1]}"]
    if s["gpu_node_cores"]:
        out += ["[expensive]", f"gpu_node_cores = {s['gpu_node_cores']}"]
    return "\n".join(out) + "\n"


@st.composite
def traces(draw):
    nodes = [(draw(st.integers(1, 6)), draw(st.integers(0, 2)), 0, 0) for _ in range(draw(st.integers(1, 3)))]
    single = draw(st.booleans())  # all single cores: the totals plan, unless a policy needs nodes
    rows = []
    for i in range(draw(st.integers(1, 14))):
        unit = (1, 0) if single else (draw(st.integers(1, 2)), draw(st.integers(0, 1)))
        rows.append(dict(job_id=i + 1, submit=draw(st.integers(0, 30)), run=draw(st.integers(0, 15)),
                         estimate=draw(st.integers(1, 15)), units=draw(st.integers(1, 4)),
                         unit=(unit[0], unit[1], 0, 0), req_nodes=-1, user=draw(st.sampled_from([1, 2])),
                         group=draw(st.sampled_from([1, 2]))))
    rows.sort(key=lambda r: (r["submit"], r["job_id"]))
    return nodes, rows, draw(sites(nodes))


@settings(max_examples=150)
@given(traces(), st.sampled_from(["ff", "bf"]), st.sampled_from(["requested", "actual"]))
def test_engine_equals_oracle_under_site_policies(trace, allocator, predictor):
    nodes, rows, s = trace
    for r in rows:
        r["pred"] = r["run"] if predictor == "actual" else r["estimate"]
    nv = naive_site.replay_site(rows, nodes, allocator, s)
    t = jobs.from_columns(
        job_id=[r["job_id"] for r in rows], submit=[r["submit"] for r in rows], run=[r["run"] for r in rows],
        estimate=[r["estimate"] for r in rows], units=[r["units"] for r in rows],
        unit_cores=[r["unit"][0] for r in rows], unit_gpus=[r["unit"][1] for r in rows],
        unit_mics=[0] * len(rows), unit_mem=[0] * len(rows), req_nodes=[-1] * len(rows),
        user=[r["user"] for r in rows], group=[r["group"] for r in rows],
    )
    cap = np.array(nodes, dtype=np.int64)
    res = replay.replay(t, machine.Machine(cap, machine.spec_of(cap)), "conservative", allocator, predictor,
                        site=site.parse(to_toml(s)))
    expected = [-1 if x is None else x for x in nv.start]
    assert res.start.tolist() == expected, to_toml(s)
    assert [STATUS[x] for x in res.status] == nv.status


# --------------------------------------------------------------------------- the CLI


def _swf(path, rows):
    """A tiny SWF log: rows of (id, submit, run, procs, requested time, user)."""
    lines = ["; MaxNodes: 4", "; MaxProcs: 4"]
    for i, sub, run, procs, req, user in rows:
        lines.append(f"{i} {sub} 0 {run} {procs} -1 -1 {procs} {req} -1 1 {user} 1 -1 1 -1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_replay_with_a_site_file_as_a_user_runs_it(tmp_path, capsys):
    from schedbench.cli.main import main

    log = _swf(tmp_path / "t.swf", [(1, 0, 100, 2, 100, 1), (2, 0, 100, 2, 100, 1), (3, 5, 50, 4, 9000, 2)])
    sitefile = tmp_path / "site.toml"
    # user 1 at most 2 processors; user 2 at most 1 h per job: job 3 is rejected
    sitefile.write_text('[[limit]]\nuser = 1\nitems = 2\n\n[[limit]]\nuser = 2\nduration = "1h"\n')
    out = tmp_path / "run"
    assert main(["replay", str(log), "-s", "conservative", "--site", str(sitefile), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "rejected by a site limit: 1" in printed
    import json

    import polars as pl

    frame = pl.read_parquet(out / "jobs.parquet").sort("job_id")
    assert frame["start"].to_list() == [0, 100, None]
    assert frame["status"].to_list() == ["replayed", "replayed", "rejected_by_limit"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["site"]["limits"] == 2 and summary["jobs_rejected_by_limit"] == 1
    # a bad file: one line naming file and line, exit 2, no traceback
    sitefile.write_text('[[limit]]\nuser = 1\nitems = "many"\n')
    assert main(["replay", str(log), "-s", "conservative", "--site", str(sitefile), "-o", str(tmp_path / "r2")]) == 2
    err = capsys.readouterr().err
    assert f"{sitefile}:1: [[limit]] #1: items must be an integer" in err and "Traceback" not in err
    assert err.strip().count("\n") == 0


def test_longest_window_gaps_merge_a_nodes_weekly_windows_and_ignore_one_off_ones():
    """Node 0: Tue 06-08 and Fri 06-08 (gaps 3 d 22 h and 2 d 22 h: the longest is Fri 08:00
    to Tue 06:00); node 1: Tue 06-08 alone (6 d 22 h); node 2: a one-off window (it ends:
    for ever); node 3: none."""
    text = ('[[maintenance]]\nnodes = "0-1"\nweekly = "Tue 06:00-08:00"\n'
            '[[maintenance]]\nnodes = "0"\nweekly = "Fri 06:00-08:00"\n'
            '[[maintenance]]\nnodes = "2"\nfrom = 0\nto = 100\n')
    gaps = site.longest_window_gaps(site.parse(text), machine.from_spec("4x(cores=1)"))
    h = 3600
    assert gaps.tolist() == [3 * 86400 + 22 * h, 6 * 86400 + 22 * h, site.FOREVER, site.FOREVER]


def test_a_job_longer_than_every_gap_between_weekly_windows_is_named_on_stderr(tmp_path, capsys):
    """An 8-day job under a weekly window on every node can never start between two
    windows: the replay starts it after the windows' horizon (after every other job), and
    says so; with the window on some nodes only it runs on the others, and nothing is said."""
    from schedbench.cli.main import main

    log = _swf(tmp_path / "t.swf", [(1, 0, 3600, 1, 3600, 1), (2, 0, 8 * 86400, 1, 8 * 86400, 1)])
    sitefile = tmp_path / "site.toml"
    for nodes, warned in (('"all"', True), ('"0-1"', False)):
        sitefile.write_text(f'[[maintenance]]\nnodes = {nodes}\nweekly = "Tue 06:00-08:00"\n')
        out = tmp_path / f"r{int(warned)}"
        assert main(["replay", str(log), "-s", "easy", "--site", str(sitefile), "-o", str(out), "-q"]) == 0
        err = capsys.readouterr().err
        assert (f"{sitefile}: 1 jobs ask for more time than any node has between its weekly maintenance "
                f"windows (597,600 s at most)" in err) == warned, err
        start = pl.read_parquet(out / "jobs.parquet")["start"].to_list()
        assert (start[1] > 30 * 86400) == warned, start


# --------------------------------------------------------------------------- maintenance, every scheduler


@st.composite
def maintained(draw):
    m = draw(st.integers(1, 4))
    nodes = [(draw(st.integers(1, 4)), draw(st.integers(0, 1)), 0, 0) for _ in range(m)]
    wins = []
    for _ in range(m):
        w = []
        for _ in range(draw(st.integers(0, 2))):
            a = draw(st.integers(0, 50))
            w.append((a, a + draw(st.integers(1, 25))))
        wins.append(naive_site.merged(w))
    rows = []
    for i in range(draw(st.integers(1, 16))):
        unit = (draw(st.integers(1, 2)), draw(st.integers(0, 1)), 0, 0)
        units = draw(st.integers(1, 3))
        req_nodes = -1 if draw(st.booleans()) else 1
        rows.append(dict(job_id=i + 1, submit=draw(st.integers(0, 40)), run=draw(st.integers(0, 20)),
                         pred=draw(st.integers(1, 20)), units=units, unit=unit, req_nodes=req_nodes))
    rows.sort(key=lambda r: (r["submit"], r["job_id"]))
    return nodes, wins, rows


def _maintained_case(nodes, rows):
    """(job table, machine) of a :func:`maintained` example."""
    t = jobs.from_columns(
        job_id=[r["job_id"] for r in rows], submit=[r["submit"] for r in rows], run=[r["run"] for r in rows],
        estimate=[r["pred"] for r in rows], units=[r["units"] for r in rows],
        unit_cores=[r["unit"][0] for r in rows], unit_gpus=[r["unit"][1] for r in rows],
        unit_mics=[0] * len(rows), unit_mem=[0] * len(rows), req_nodes=[r["req_nodes"] for r in rows],
    )
    cap = np.array(nodes, dtype=np.int64)
    return t, machine.Machine(cap, machine.spec_of(cap))


def _maintenance_toml(wins) -> str:
    return "".join(f"[[maintenance]]\nnodes = [{i}]\nfrom = {a}\nto = {b}\n\n"
                   for i, w in enumerate(wins) for a, b in w)


@settings(max_examples=150)
@given(maintained(), st.sampled_from(["fcfs", "sjf", "easy", "easy-sjbf", "ebf-accasim", "prb", "prb-blocking"]),
       st.sampled_from(["ff", "bf"]))
def test_maintenance_windows_bind_the_queue_schedulers_as_the_oracle(trace, scheduler, allocator):
    import naive

    nodes, wins, rows = trace
    nv = naive.replay_nodes(rows, nodes, scheduler, allocator, maintenance=wins)
    t, mach = _maintained_case(nodes, rows)
    res = replay.replay(t, mach, scheduler, allocator, site=site.parse(_maintenance_toml(wins)))
    assert res.start.tolist() == [-1 if x is None else x for x in nv.start]
    assert [STATUS[x] for x in res.status] == nv.status


@settings(max_examples=150)
@given(maintained(), st.sampled_from(["ff", "bf"]), st.sampled_from(["requested", "actual"]))
def test_conservative_under_maintenance_windows_equals_the_oracle(trace, allocator, predictor):
    """Several windows a node, overlapping the bookings, and runs past their prediction
    (the fit skips candidates the down nodes alone rule out: it must skip no other)."""
    nodes, wins, rows = trace
    rows = [{**r, "estimate": r["pred"], "pred": max(r["run"], 1) if predictor == "actual" else r["pred"],
             "user": 1, "group": 1} for r in rows]
    s = {"maintenance": [dict(nodes=[i], valid=[(a, b)]) for i, w in enumerate(wins) for a, b in w]}
    nv = naive_site.replay_site(rows, nodes, allocator, s)
    t, mach = _maintained_case(nodes, [{**r, "pred": r["estimate"]} for r in rows])
    res = replay.replay(t, mach, "conservative", allocator, predictor, site=site.parse(_maintenance_toml(wins)))
    assert res.start.tolist() == [-1 if x is None else x for x in nv.start], _maintenance_toml(wins)
    assert [STATUS[x] for x in res.status] == nv.status


def test_a_window_on_some_nodes_moves_a_job_past_it_as_the_oracle():
    """Known answer: two 1-core nodes, node 0 down over [5, 20).  Job 1 (1 core, 10 s)
    starts at 0 on node 0; job 2 (2 cores, 10 s) needs both nodes for 10 s: node 0 is
    down from 5 to 20, so it waits for the window's end (20), although the totals (2
    cores) are free from 10."""
    nodes = [(1, 0, 0, 0), (1, 0, 0, 0)]
    wins = [[(5, 20)], []]
    rows = [dict(job_id=1, submit=0, run=3, pred=4, units=1, unit=(1, 0, 0, 0), req_nodes=-1),
            dict(job_id=2, submit=1, run=10, pred=10, units=2, unit=(1, 0, 0, 0), req_nodes=-1)]
    t, mach = _maintained_case(nodes, rows)
    res = replay.replay(t, mach, "conservative", "ff", site=site.parse(_maintenance_toml(wins)))
    assert res.start.tolist() == [0, 20]
    oracle = naive_site.replay_site([{**r, "estimate": r["pred"], "user": 1, "group": 1} for r in rows], nodes, "ff",
                                    {"maintenance": [dict(nodes=[0], valid=[(5, 20)])]})
    assert oracle.start == [0, 20]


def test_a_window_on_every_node_keeps_the_plan_on_the_pool():
    """Known answer: two 1-core nodes.  Job 1 (2 cores, 10 s) runs [0, 10); job 2 (1 core,
    15 s) and job 3 (1 core, 5 s) wait.  A window on both nodes over [20, 30) rules out
    job 2 at 10 ([10, 25) meets it): it starts at 30, and job 3 backfills at 10.  On node
    0 alone the window leaves node 1 to job 2 at 10.  Only the first plans on the pool."""
    from schedbench.engine.prepare import start_run
    from schedbench.schedulers.conservative import ConservativeNodes, ConservativePool

    rows = [(1, 0, 10, 2, 10), (2, 0, 15, 1, 15), (3, 0, 5, 1, 5)]
    spec = "2x(cores=1)"
    every = '[[maintenance]]\nnodes = "all"\nfrom = 20\nto = 30\n'
    assert starts(every, rows, spec)[0] == [0, 30, 10]
    assert starts(every.replace('"all"', '"0"'), rows, spec)[0] == [0, 10, 10]
    for text, cls in ((every, ConservativePool), (every.replace('"all"', '"0"'), ConservativeNodes),
                      (every.replace('"all"', '"0"') + every.replace('"all"', '"1"'), ConservativePool)):
        run = start_run(table(rows), machine.from_spec(spec), "conservative", site=site.parse(text))
        assert isinstance(run.sched, cls), text


def test_a_booking_as_long_as_the_longest_gap_fits_in_it_and_a_longer_one_waits_for_the_last_window():
    """Known answer: windows on both nodes over [10, 20) and [30, 40) (the gap: 10 s).  At
    15 a 10 s job fits in the gap, [20, 30); an 11 s one meets a window wherever it starts
    before 40, so it starts at 40.  (The fit skips straight past the windows for a booking
    longer than every gap: this pins the boundary.)"""
    text = ('[[maintenance]]\nnodes = "all"\nfrom = 10\nto = 20\n'
            '[[maintenance]]\nnodes = "all"\nfrom = 30\nto = 40\n')
    assert starts(text, [(1, 15, 10, 1, 10), (2, 15, 11, 1, 11)], "2x(cores=1)")[0] == [20, 40]


@st.composite
def windows_everywhere(draw):
    """Single-core jobs (SWF's) on 1-4 nodes and 1-3 windows on every node."""
    nodes = [(draw(st.integers(1, 3)), 0, 0, 0) for _ in range(draw(st.integers(1, 4)))]
    wins = []
    for _ in range(draw(st.integers(1, 3))):
        a = draw(st.integers(0, 60))
        wins.append((a, a + draw(st.integers(1, 25))))
    rows = [dict(job_id=i + 1, submit=draw(st.integers(0, 40)), run=draw(st.integers(0, 20)),
                 pred=draw(st.integers(1, 20)), units=draw(st.integers(1, 4)), unit=(1, 0, 0, 0), req_nodes=-1)
            for i in range(draw(st.integers(1, 16)))]
    rows.sort(key=lambda r: (r["submit"], r["job_id"]))
    return nodes, wins, rows


@settings(max_examples=150)
@given(windows_everywhere(), st.sampled_from(["ff", "bf"]), st.sampled_from(["requested", "actual"]))
def test_conservative_under_windows_on_every_node_equals_the_oracle(trace, allocator, predictor):
    """The pool plan books around windows every node has (runs past their prediction
    included: their bookings are extended across a window)."""
    nodes, wins, rows = trace
    rows = [{**r, "estimate": r["pred"], "pred": max(r["run"], 1) if predictor == "actual" else r["pred"],
             "user": 1, "group": 1} for r in rows]
    all_nodes = list(range(len(nodes)))
    nv = naive_site.replay_site(rows, nodes, allocator, {"maintenance": [dict(nodes=all_nodes, valid=wins)]})
    t, mach = _maintained_case(nodes, [{**r, "pred": r["estimate"]} for r in rows])
    text = "".join(f'[[maintenance]]\nnodes = "all"\nfrom = {a}\nto = {b}\n\n' for a, b in wins)
    res = replay.replay(t, mach, "conservative", allocator, predictor, site=site.parse(text))
    assert res.start.tolist() == [-1 if x is None else x for x in nv.start], text
    assert [STATUS[x] for x in res.status] == nv.status


@pytest.mark.skipif(not KTH.exists(), reason="../shared/traces/swf not present")
def test_conservative_on_a_real_log_with_a_window_equals_the_oracle():
    """KTH-SP2's first 600 jobs on its 100 one-core nodes, 16 of them down for two hours
    from t = 150,000 s: the engine's starts equal the oracle's.  The generated traces
    above are too small for compression to move many bookings on nodes: a stale
    full-until order after a move (schedulers/conservative/fit.py) passed all of them
    and changed 10 starts here (300 jobs changed none)."""
    from schedbench.io import swf

    t, header = swf.read(KTH)
    t = t.head(600)
    mach = machine.from_swf_header(header.max_procs, header.max_nodes, int(t.units.max()))
    at = 150_000
    est = np.where(t.estimate > 0, t.estimate, t.run)  # the contract's estimate (SWF field 9, else the run)
    rows = [dict(job_id=int(a), submit=int(b), run=int(r), estimate=int(e), pred=int(e), units=int(u),
                 unit=(int(c), 0, 0, 0), req_nodes=-1, user=1, group=1)
            for a, b, r, e, u, c in zip(t.job_id, t.submit, t.run, est, t.units, t.unit_cores, strict=True)]
    nodes = [tuple(int(x) for x in row) for row in mach.capacity]
    nv = naive_site.replay_site(rows, nodes, "ff", {"maintenance": [dict(nodes=list(range(16)), valid=[(at, at + 7200)])]})
    res = replay.replay(t, mach, "conservative", "ff",
                        site=site.parse(f'[[maintenance]]\nnodes = "0-15"\nfrom = {at}\nto = {at + 7200}\n'))
    assert res.start.tolist() == [-1 if x is None else x for x in nv.start]
    assert [STATUS[x] for x in res.status] == nv.status


@settings(max_examples=60)
@given(maintained(), st.sampled_from(["fcfs", "sjf", "easy", "prb", "conservative"]),
       st.sampled_from(["ff", "bf"]))
def test_no_job_runs_across_a_window_on_its_nodes(trace, scheduler, allocator):
    """With exact predictions (pred = run), no job's run meets a window of a node it uses."""
    nodes, wins, rows = trace
    t, mach = _maintained_case(nodes, [{**r, "pred": max(r["run"], 1)} for r in rows])
    res = replay.replay(t, mach, scheduler, allocator, "actual", site=site.parse(_maintenance_toml(wins)))
    for j in np.flatnonzero(res.start >= 0):
        p = res.alloc_ptr[j]
        for node, _ in res.alloc_log[p : p + res.nodes_used[j]]:
            for a, b in wins[node]:
                assert not (a < res.end[j] and res.start[j] < b) or res.end[j] == res.start[j]


def test_nodes_under_the_same_windows_share_one_copy():
    mach = machine.from_spec("512x(cores=4)")
    t = table([(1, 0, 10, 1, 10), (2, 400 * 86400, 10, 1, 10)])
    J = __import__("schedbench.core.layout", fromlist=["job_matrix"]).job_matrix(t)
    s = site.parse('[[maintenance]]\nnodes = "all"\nweekly = "Tue 06:00-08:00"\n'
                   '[[maintenance]]\nnodes = "0-1"\nfrom = "3d"\nto = "3d1h"\n')
    arrays, rejected = site.compile_site(s, J, mach, np.ones(t.n_jobs, dtype=bool))
    weeks = site.Validity("weekly", ((86400 + 6 * 3600, 86400 + 8 * 3600),)).intervals(*site.horizon(J, np.ones(t.n_jobs, dtype=bool)), 0).shape[0]
    assert arrays.mwin.shape[0] == weeks + (weeks + 1)  # nodes 2-511 share a copy; 0-1 another (one more window)
    assert (arrays.mspan[2:] == arrays.mspan[2]).all() and (arrays.mspan[0] == arrays.mspan[1]).all()
    assert not rejected.any()


@settings(max_examples=40)
@given(maintained(), st.sampled_from(["ff", "bf"]))
def test_a_python_policy_meets_the_same_windows(trace, allocator):
    """FCFS written against the decision interface, with windows, equals jitted fcfs."""
    from schedbench.engine.simulation import Simulation

    nodes, wins, rows = trace
    t, mach = _maintained_case(nodes, rows)
    s = site.parse(_maintenance_toml(wins))
    sim = Simulation(t, mach, allocator=allocator, site=s)

    class PythonFCFS:
        def decide(self, view):
            for j in view.queue:
                if not sim.fits(j):
                    return
                yield int(j)

    got = sim.run(PythonFCFS())
    want = replay.replay(t, mach, "fcfs", allocator, site=s)
    assert got.start.tolist() == want.start.tolist()


@settings(max_examples=40)
@given(maintained(), st.sampled_from(["ff", "bf"]), st.sampled_from([1, 3, 7]))
def test_skipping_idle_ticks_keeps_the_schedule(trace, allocator, period):
    """A periodic Python FCFS that declares ``waits_for_events`` is not asked again until
    an arrival, end or window end: the same starts and nodes as asking at every tick."""
    from schedbench.engine.simulation import Simulation

    nodes, wins, rows = trace
    t, mach = _maintained_case(nodes, rows)
    s = site.parse(_maintenance_toml(wins))
    runs = []
    for waits in (False, True):
        sim = Simulation(t, mach, allocator=allocator, site=s, period=period)

        class PythonFCFS:
            waits_for_events = waits

            def decide(self, view, sim=sim):
                for j in view.queue:
                    if not sim.fits(j):
                        return
                    yield int(j)

        runs.append((sim.run(PythonFCFS()), sim.passes))
    (every, n_every), (skipping, n_skipping) = runs
    assert skipping.start.tolist() == every.start.tolist()
    assert skipping.nodes_used.tolist() == every.nodes_used.tolist()
    assert skipping.status.tolist() == every.status.tolist()
    assert n_skipping <= n_every


def test_a_periodic_replay_past_the_last_submission_keeps_every_decision_point():
    """Both jobs are submitted at 0 and wait for node 0's window to end at 24: the periodic
    mode decides at every tick up to 25, more instants than the trace has events.  The
    timeline grows instead of dropping rows, and the pass that the zero-length job's end
    at 24 calls for (the last pass's instant) happens whether idle ticks are skipped or
    not (it did not when the timeline was full: 25 instead of 24)."""
    from schedbench.engine.simulation import Simulation

    t = jobs.from_columns(job_id=[1, 2], submit=[0, 0], run=[0, 0], estimate=[1, 1], units=[2, 2],
                          unit_cores=[1, 1], unit_gpus=[0, 0], unit_mics=[0, 0], unit_mem=[0, 0], req_nodes=[1, 1])
    cap = np.array([(2, 0, 0, 0), (1, 0, 0, 0)], dtype=np.int64)
    mach = machine.Machine(cap, machine.spec_of(cap))
    s = site.parse(_maintenance_toml([[(0, 24)], [(0, 1)]]))
    for waits in (False, True):
        sim = Simulation(t, mach, allocator="ff", site=s, period=1)

        class PythonFCFS:
            waits_for_events = waits

            def decide(self, view, sim=sim):
                for j in view.queue:
                    if not sim.fits(j):
                        return
                    yield int(j)

        r = sim.run(PythonFCFS())
        assert r.start.tolist() == [24, 24], waits
        times = r.timeline["time"].tolist()
        assert times[-1] >= 24 and (waits or times == list(range(times[-1] + 1)))  # no decision point lost
    jitted = replay.replay(t, mach, "fcfs", "ff", site=s, period=1)
    times = jitted.timeline["time"].tolist()
    assert jitted.start.tolist() == [24, 24] and times == list(range(times[-1] + 1)) and times[-1] >= 24

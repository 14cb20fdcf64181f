"""FreePools whose conditions are OR-ed (``unless_any``, schedbench.plan.site): Keller's
second example as a site file with known starts under conservative, the AND reading of
the same conditions beside it, bad values, and the engine against tests/naive_site.py on
generated traces and pools."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive_site
from schedbench.engine import replay
from schedbench.errors import UsageError
from schedbench.io import jobs, machine
from schedbench.plan import site

STATUS = {s.value: s.name.lower() for s in replay.Status}
G1, G2, ALICE = 1, 2, 7  # ids as in the trace (the paper names them)

# Keller §3: "Keep all GPUs free for the groups G1, G2 and user alice.  All others may use
# the GPUs only for a maximum of two hours."
EXAMPLE = f"""
[[freepool]]
resource = "gpus"
percent = 100
validity = {{ from = 0, to = 20000 }}
unless_any = [{{ groups = [{G1}, {G2}] }}, {{ users = [{ALICE}] }}, {{ max_duration = "2h" }}]
"""

# (id, submit, run = estimate, units, gpus per unit, user, group); each unit 1 core
ROWS = [
    (1, 0, 10000, 1, 1, 5, 3),  # another user's 2 h 47 min GPU job: not before the validity ends
    (2, 0, 10000, 2, 1, ALICE, 3),  # alice: at once
    (3, 0, 10000, 2, 1, 5, G1),  # group G1: at once
    (4, 1, 3600, 1, 1, 5, 3),  # another user's 1 h GPU job may use them: when 2's GPUs free up
    (5, 2, 100, 4, 0, 6, 4),  # no GPUs: the pool does not concern it
]


def _table(rows):
    cols = list(zip(*rows, strict=True))
    n = len(rows)
    return jobs.from_columns(job_id=cols[0], submit=cols[1], run=cols[2], estimate=cols[2], units=cols[3],
                             unit_cores=[1] * n, unit_gpus=cols[4], unit_mics=[0] * n, unit_mem=[0] * n,
                             user=cols[5], group=cols[6])


def _replay(text, rows=ROWS, spec="2x(cores=4,gpus=2)"):
    r = replay.replay(_table(rows), machine.from_spec(spec), "conservative", "ff", site=site.parse(text))
    return r.start.tolist(), [STATUS[s] for s in r.status]


def _naive(pool, rows=ROWS, nodes=((4, 2, 0, 0), (4, 2, 0, 0))):
    jobs_ = [dict(job_id=i, submit=s, run=d, pred=d, estimate=d, units=u, unit=(1, g, 0, 0), user=usr, group=grp)
             for i, s, d, u, g, usr, grp in rows]
    nv = naive_site.replay_site(jobs_, list(nodes), "ff", {"freepools": [pool]})
    return [-1 if s is None else s for s in nv.start], nv.status


def test_kellers_second_example_ors_the_conditions():
    # 2 and 3 take the 4 GPUs at 0; 4 (1 h) matches by duration and waits for them (10000);
    # 1 matches none and books after the validity (20000); 5 needs no GPU.
    assert _replay(EXAMPLE) == ([20000, 0, 0, 10000, 2], ["replayed"] * 5)
    pool = dict(k=1, keep=4, any_of=[dict(groups={G1, G2}), dict(users={ALICE}), dict(max_duration=7200)],
                valid=[(0, 20000)])
    assert _naive(pool) == ([20000, 0, 0, 10000, 2], ["replayed"] * 5)
    # always valid: no gap will ever take job 1, rejected; the others as before
    always = EXAMPLE.replace("{ from = 0, to = 20000 }", '"always"')
    assert _replay(always) == ([-1, 0, 0, 10000, 2], ["rejected_by_limit"] + ["replayed"] * 4)
    assert _naive({**pool, "valid": "always"}) == ([-1, 0, 0, 10000, 2], ["rejected_by_limit"] + ["replayed"] * 4)


def test_the_same_conditions_in_one_unless_table_are_and_ed():
    # a job must be alice's, in G1 or G2 and at most 2 h: none of the GPU jobs is, all wait
    # for the validity's end.  At 20000 jobs 1 and 2 hold 3 of the 4 GPUs: job 3 (2 GPUs)
    # books their end at 30000, job 4 (1 GPU, booked after it) the last GPU at 20000.
    text = (f'[[freepool]]\nresource = "gpus"\npercent = 100\nvalidity = {{ from = 0, to = 20000 }}\n'
            f'unless = {{ groups = [{G1}, {G2}], users = [{ALICE}], max_duration = "2h" }}\n')
    assert _replay(text)[0] == [20000, 20000, 30000, 20000, 2]
    pool = dict(k=1, keep=4, groups={G1, G2}, users={ALICE}, max_duration=7200, valid=[(0, 20000)])
    assert _naive(pool)[0] == [20000, 20000, 30000, 20000, 2]


def test_a_table_of_unless_any_is_unless():
    one = '[[freepool]]\nresource = "cores"\nitems = 1\nunless_any = [{ max_cores = 2, users = [1] }]\n'
    same = '[[freepool]]\nresource = "cores"\nitems = 1\n[freepool.unless]\nmax_cores = 2\nusers = [1]\n'
    assert site.parse(one).freepools == site.parse(same).freepools
    # the array-of-tables spelling
    tables = ('[[freepool]]\nresource = "cores"\nitems = 1\n[[freepool.unless_any]]\nusers = [1]\n'
              '[[freepool.unless_any]]\ngroups = [2]\n')
    assert [c.users or c.groups for c in site.parse(tables).freepools[0].unless] == [{1}, {2}]


@pytest.mark.parametrize(("text", "words"), [
    ('unless_any = []', "unless_any must be a non-empty list"),
    ('unless_any = { users = [1] }', "unless_any must be a non-empty list"),
    ('unless_any = [{}]', "unless_any[0] is empty"),
    ('unless_any = [{ users = [1] }, 3]', "unless_any[1] must be a table"),
    ('unless_any = [{ user = [1] }]', "unknown key 'user'"),
    ('unless_any = [{ max_duration = "2x" }]', "unless_any[0].max_duration must be seconds"),
    ('unless_any = [{ groups = 1 }]', "unless_any[0].groups must be a list of ids"),
    ('unless_any = [{ groups = [1] }]\nunless = { users = [1] }', "not both"),
])
def test_bad_unless_any_is_one_line_naming_the_line(text, words):
    body = f'# a comment\n[[freepool]]\nresource = "gpus"\nitems = 1\n{text}\n'
    with pytest.raises(UsageError) as e:
        site.parse(body, "s.toml")
    msg = str(e.value)
    assert msg.startswith("s.toml:2: [[freepool]] #1: ") and words in msg and "\n" not in msg


# --------------------------------------------------------------------------- engine == oracle


def _valid(draw):
    if draw(st.booleans()):
        return "always"
    a = draw(st.integers(0, 40))
    return [(a, a + draw(st.integers(1, 30)))]


@st.composite
def cases(draw):
    nodes = [(draw(st.integers(1, 6)), draw(st.integers(0, 2)), 0, 0) for _ in range(draw(st.integers(1, 3)))]
    rows = []
    for i in range(draw(st.integers(1, 14))):
        rows.append((i + 1, draw(st.integers(0, 30)), draw(st.integers(1, 15)), draw(st.integers(1, 4)),
                     draw(st.integers(0, 1)), draw(st.sampled_from([1, 2, 3])), draw(st.sampled_from([1, 2, 3]))))
    rows.sort(key=lambda r: (r[1], r[0]))
    tables = []
    for _ in range(draw(st.integers(1, 3))):
        keys = draw(st.sets(st.sampled_from(["max_cores", "max_duration", "users", "groups"]), min_size=1))
        ids = st.lists(st.sampled_from([1, 2, 3]), min_size=1, max_size=2).map(set)
        make = {"max_cores": st.integers(1, 4), "max_duration": st.integers(1, 15), "users": ids, "groups": ids}
        tables.append({key: draw(make[key]) for key in sorted(keys)})
    pool = dict(k=draw(st.sampled_from([0, 1])), keep=draw(st.integers(0, 4)), any_of=tables, valid=_valid(draw))
    return nodes, rows, pool


def _toml(pool) -> str:
    valid = '"always"' if pool["valid"] == "always" else f"{{ from = {pool['valid'][0][0]}, to = {pool['valid'][0][1]} }}"
    out = ["[[freepool]]", f'resource = "{site.RESOURCES[pool["k"]]}"', f'items = {pool["keep"]}', f"validity = {valid}"]
    for t in pool["any_of"]:
        out.append("[[freepool.unless_any]]")
        out += [f"{key} = {sorted(v) if isinstance(v, set) else v}" for key, v in t.items()]
    return "\n".join(out) + "\n"


@settings(max_examples=150, deadline=None)
@given(cases())
def test_engine_equals_oracle_with_ored_conditions(case):
    nodes, rows, pool = case
    cap = np.array(nodes, dtype=np.int64)
    r = replay.replay(_table(rows), machine.Machine(cap, machine.spec_of(cap)), "conservative", "ff",
                      site=site.parse(_toml(pool)))
    assert (r.start.tolist(), [STATUS[s] for s in r.status]) == _naive(pool, rows, nodes), _toml(pool)

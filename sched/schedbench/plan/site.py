"""Site policies on the plan (Keller, OpenCCS, §3 "Limit", "FreePool", §6 "Expensive
resources"; the maintenance windows every site has), read from a TOML file
(``--site site.toml``; a commented template is ``traces/site-template.toml``).

* **Limits** per consumer (a user or a group, or each user / group separately with
  ``"*"``) and resource type: ``items`` (most items of the consumer's running and booked
  jobs at any instant; with ``items_percent`` the larger of the two, as Keller's
  ``min/max%``), ``duration`` (most requested seconds per job) and ``area`` (most
  items x requested seconds per job), each binding only while the limit is *valid*.  A
  job the limit refuses outright (too long, too large an area, more items than the limit)
  must keep its booking out of the validity; one that can never do so (the limit is
  always valid, or the weekly gaps are shorter than its request) is not replayed: status
  ``rejected_by_limit``.  Keller applies a limit as ``mf(uRS, limit - usdRS)`` (§5.1):
  the consumer's view of the plan has at most ``limit - used by the consumer`` free.
* **FreePools** keep ``items`` (or ``percent`` % of the machine's total, the larger) of a
  resource type free while valid, unless the job matches the pool's ``unless``
  condition (at most ``max_cores`` cores, at most ``max_duration`` requested seconds,
  listed ``users`` or ``groups``; a job matches when it meets every condition given).
  ``unless_any`` instead lists several such condition tables and a job matches when it
  meets every condition of at least one of them (Keller's second example: GPUs kept for
  groups G1, G2 and user alice, others only up to two hours, is three tables).
  Keller's ``uRS = sRS + FreePool``: a job that does not match sees the machine's total
  minus the pool.
* **Expensive resources:** ``gpu_node_cores = N`` keeps N cores of every node with GPUs
  for jobs that request GPUs (Keller §6: jobs without GPUs get at most ``cores - N`` of
  such a node).
* **Maintenance windows:** a node set is unavailable over ``[from, to)`` or weekly; no job
  is booked across one on an affected node.

Validity: ``"always"``, an absolute interval ``{ from = T, to = T }`` (trace seconds or a
duration such as ``"2d12h"`` after t = 0) or a weekly window ``"Mon-Fri 08:00-18:00"``
(several joined with ``";"``; an end at or before the start crosses midnight) on a clock
whose t = 0 is ``[clock] start`` (default ``"Mon 00:00"``; Keller's cron validity).

Limits, FreePools and kept cores act on the plan of the ``conservative`` scheduler
(Keller's planning); maintenance windows bind every jitted scheduler but ``slurm``, which
refuses them (the core hides a node from a job whose predicted run meets one of its
windows, but slurm's backfill plan does not book around them).  See
``docs/reference/site-file.md``.  :func:`load` reads and checks a file;
:func:`compile_site` turns it into the arrays the scheduler's kernels read.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..core.layout import (
    J_EST,
    J_GROUP,
    J_PRED,
    J_REQ,
    J_RUN,
    J_SUBMIT,
    J_UNITS,
    J_USER,
    N_RES,
)
from ..core.screening import too_wide_on
from ..errors import UsageError
from ..io.machine import Machine

WEEK = 7 * 86400
FOREVER = 1 << 61  # beyond any trace instant, below the plan's INF
RESOURCES = ("cores", "gpus", "mics", "mem")
DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": WEEK}


# --------------------------------------------------------------------------- the model


@dataclass(frozen=True)
class Validity:
    """When a policy binds: ``kind`` "always", "absolute" (``spans``: [(a, b)], trace
    seconds) or "weekly" (``spans``: [(a, b)] seconds after Monday 00:00, b may pass the
    week's end)."""

    kind: str
    spans: tuple[tuple[int, int], ...] = ()

    def intervals(self, lo: int, hi: int, origin: int) -> np.ndarray:
        """Sorted disjoint [a, b) intervals (int64 (v, 2)) covering the validity inside
        [lo, hi); ``origin``: the week offset of t = 0 (s after Monday 00:00)."""
        if self.kind == "always":
            return np.array([[-FOREVER, FOREVER]], dtype=np.int64)
        if self.kind == "absolute":
            rows = list(self.spans)
        else:
            first = (lo + origin) // WEEK - 1
            last = (hi + origin) // WEEK + 1
            weeks = np.arange(first, last + 1, dtype=np.int64)[:, None] * WEEK - origin
            spans = np.array(self.spans, dtype=np.int64)
            rows = (weeks[:, None, :] + spans[None, :, :]).reshape(-1, 2).tolist()
        return _merge(rows)

    def longest_gap(self) -> int:
        """The longest stretch outside the validity (s): 0 for always, for ever after an
        absolute interval, the longest weekly gap otherwise."""
        if self.kind == "always":
            return 0
        if self.kind == "absolute":
            return FOREVER
        iv = _merge([(a + w, b + w) for a, b in self.spans for w in (0, WEEK)])
        gaps = [iv[0, 0] + WEEK - iv[-1, 1]] + [int(iv[i + 1, 0] - iv[i, 1]) for i in range(len(iv) - 1)]
        return max(0, max(gaps))


@dataclass(frozen=True)
class Limit:
    who: str  # "user" or "group"
    ident: int | None  # None: each consumer separately ("*")
    types: tuple[int, ...]
    items: int | None
    items_percent: float | None
    duration: int | None
    area: int | None
    validity: Validity


@dataclass(frozen=True)
class Condition:
    """One condition table of a FreePool: a job meets it when it meets every bound given
    (None: not given); at least one is given."""

    max_cores: int | None = None
    max_duration: int | None = None
    users: frozenset[int] | None = None
    groups: frozenset[int] | None = None


@dataclass(frozen=True)
class FreePool:
    """``unless``: the alternative condition tables; a job may use the pool when it meets
    one of them (``unless = {..}`` is one table, ``unless_any = [..]`` several; none:
    no job may)."""

    rtype: int
    items: int
    percent: float | None
    unless: tuple[Condition, ...]
    validity: Validity


@dataclass(frozen=True)
class Maintenance:
    nodes: str | tuple[int, ...]  # "all", "gpu", "mic" or node indices
    validity: Validity


@dataclass(frozen=True)
class Site:
    """A site file, checked (see the module docstring)."""

    path: str = ""
    origin: int = 0  # the week offset of t = 0
    limits: tuple[Limit, ...] = ()
    freepools: tuple[FreePool, ...] = ()
    maintenance: tuple[Maintenance, ...] = ()
    gpu_node_cores: int = 0
    text: str = field(default="", repr=False)

    @property
    def plan_only(self) -> bool:
        """Whether it holds a policy only a planning scheduler applies."""
        return bool(self.limits or self.freepools or self.gpu_node_cores)

    def summary(self) -> dict:
        return {
            "file": self.path, "sha256": hashlib.sha256(self.text.encode()).hexdigest(), "limits": len(self.limits), "freepools": len(self.freepools),
            "maintenance_windows": len(self.maintenance), "gpu_node_cores": self.gpu_node_cores,
        }


# --------------------------------------------------------------------------- reading


class _Where:
    """Names a place of the file in error messages (file:line: [[section]] #i)."""

    def __init__(self, path: str, text: str):
        self.path, self.lines = path, text.splitlines()

    def line(self, section: str, index: int) -> int:
        pat = re.compile(r"^\s*\[\[\s*" + re.escape(section) + r"\s*\]\]" if index >= 0
                         else r"^\s*\[\s*" + re.escape(section) + r"\s*\]")
        seen = -1
        for no, text in enumerate(self.lines, 1):
            if pat.match(text):
                seen += 1
                if seen == max(index, 0):
                    return no
        return 1

    def error(self, section: str, index: int, msg: str) -> UsageError:
        name = f"[[{section}]] #{index + 1}" if index >= 0 else f"[{section}]"
        return UsageError(f"{self.path}:{self.line(section, index)}: {name}: {msg}")


def load(path: str | Path) -> Site:
    """Read and check a site file; a :class:`UsageError` names the file, line and entry."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such site file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"{path}: cannot read the site file ({e.__class__.__name__})") from None
    return parse(text, str(path))


def parse(text: str, path: str = "<site>") -> Site:
    """:func:`load` on the text of a site file."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"line (\d+)", str(e))
        raise UsageError(f"{path}:{m.group(1) if m else 1}: not valid TOML ({e})") from None
    w = _Where(path, text)
    unknown = sorted(set(doc) - {"clock", "limit", "freepool", "maintenance", "expensive"})
    if unknown:
        raise UsageError(f"{path}:1: unknown section {unknown[0]!r} (known: clock, limit, freepool, "
                         "maintenance, expensive)")
    origin = 0
    if "clock" in doc:
        c = _table(doc["clock"], w, "clock", -1, {"start"})
        if "start" in c:
            origin = _week_instant(c["start"], w, "clock", -1)
    limits = tuple(_limit(e, w, i) for i, e in enumerate(_entries(doc, "limit", w)))
    pools = tuple(_freepool(e, w, i) for i, e in enumerate(_entries(doc, "freepool", w)))
    maint = tuple(_maintenance(e, w, i) for i, e in enumerate(_entries(doc, "maintenance", w)))
    gpu_cores = 0
    if "expensive" in doc:
        e = _table(doc["expensive"], w, "expensive", -1, {"gpu_node_cores"})
        gpu_cores = _int(e.get("gpu_node_cores", 0), w, "expensive", -1, "gpu_node_cores")
    return Site(path, origin, limits, pools, maint, gpu_cores, text)


def _entries(doc: dict, section: str, w: _Where) -> list:
    value = doc.get(section, [])
    if not isinstance(value, list):
        raise UsageError(f"{w.path}:{w.line(section, -1)}: write [[{section}]] (an array of tables), not [{section}]")
    return value


def _table(value, w: _Where, section: str, i: int, keys: set[str]) -> dict:
    if not isinstance(value, dict):
        raise w.error(section, i, "must be a table")
    extra = sorted(set(value) - keys)
    if extra:
        raise w.error(section, i, f"unknown key {extra[0]!r} (known: {', '.join(sorted(keys))})")
    return value


def _int(value, w, section, i, key, minimum=0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise w.error(section, i, f"{key} must be an integer >= {minimum}, not {value!r}")
    return value


def _seconds(value, w, section, i, key) -> int:
    """Seconds from an integer or a duration string ("90s", "4h", "1d12h", "2w")."""
    if isinstance(value, bool):
        raise w.error(section, i, f"{key} must be seconds or a duration such as \"4h\", not {value!r}")
    if isinstance(value, int) and value >= 0:
        return value
    if isinstance(value, str):
        parts = re.fullmatch(r"\s*((\d+)\s*([smhdw])\s*)+", value.lower())
        if parts:
            return sum(int(n) * _UNITS[u] for n, u in re.findall(r"(\d+)\s*([smhdw])", value.lower()))
    raise w.error(section, i, f"{key} must be seconds or a duration such as \"4h\" or \"1d12h\", not {value!r}")


def _hhmm(text: str) -> int | None:
    m = re.fullmatch(r"(\d{1,2}):(\d{2})", text.strip())
    if not m or int(m.group(1)) > 24 or int(m.group(2)) > 59 or (int(m.group(1)) == 24 and int(m.group(2))):
        return None
    return int(m.group(1)) * 3600 + int(m.group(2)) * 60


def _week_instant(value, w, section, i) -> int:
    m = re.fullmatch(r"\s*([A-Za-z]{3})\s+(\S+)\s*", value) if isinstance(value, str) else None
    t = _hhmm(m.group(2)) if m else None
    if not m or m.group(1).lower() not in DAYS or t is None or t >= 86400:
        raise w.error(section, i, f"start must look like \"Mon 00:00\", not {value!r}")
    return DAYS.index(m.group(1).lower()) * 86400 + t


def _days(text: str) -> list[int] | None:
    out = []
    for part in text.lower().split(","):
        ends = part.strip().split("-")
        if len(ends) > 2 or any(e not in DAYS for e in ends):
            return None
        a, b = DAYS.index(ends[0]), DAYS.index(ends[-1])
        out += [(a + k) % 7 for k in range((b - a) % 7 + 1)]
    return out


def _validity(value, w, section, i) -> Validity:
    if value == "always":
        return Validity("always")
    if isinstance(value, dict):
        v = _table(value, w, section, i, {"from", "to"})
        if set(v) != {"from", "to"}:
            raise w.error(section, i, "an absolute validity needs both from and to")
        a = _seconds(v["from"], w, section, i, "from")
        b = _seconds(v["to"], w, section, i, "to")
        if b <= a:
            raise w.error(section, i, f"validity to ({b}) must be after from ({a})")
        return Validity("absolute", ((a, b),))
    if isinstance(value, str):
        spans = []
        for part in value.split(";"):
            m = re.fullmatch(r"\s*(\S+)\s+(\d{1,2}:\d{2})\s*-\s*(\d{1,2}:\d{2})\s*", part)
            days = _days(m.group(1)) if m else None
            a, b = (_hhmm(m.group(2)), _hhmm(m.group(3))) if m else (None, None)
            if days is None or a is None or b is None or a >= 86400:
                raise w.error(section, i, f"validity must be \"always\", {{ from = .., to = .. }} or weekly "
                                          f"like \"Mon-Fri 08:00-18:00\", not {value!r}")
            if b <= a:
                b += 86400  # crosses midnight
            spans += [(d * 86400 + a, d * 86400 + b) for d in days]
        return Validity("weekly", tuple(sorted(spans)))
    raise w.error(section, i, f"validity must be \"always\", {{ from = .., to = .. }} or weekly like "
                              f"\"Mon-Fri 08:00-18:00\", not {value!r}")


def _rtype(value, w, section, i, allow_all: bool) -> tuple[int, ...]:
    if allow_all and value == "*":
        return tuple(range(N_RES))
    if value not in RESOURCES:
        choices = ", ".join(RESOURCES) + (' or "*"' if allow_all else "")
        raise w.error(section, i, f"resource must be one of {choices}, not {value!r}")
    return (RESOURCES.index(value),)


def _ident(value, w, section, i, key) -> int | None:
    if value == "*":
        return None
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise w.error(section, i, f"{key} must be an id as in the trace (an integer) or \"*\", not {value!r}")


def _limit(e, w, i) -> Limit:
    s = "limit"
    e = _table(e, w, s, i, {"user", "group", "resource", "items", "items_percent", "duration", "area", "validity"})
    if ("user" in e) == ("group" in e):
        raise w.error(s, i, "give exactly one consumer: user = ID or group = ID (\"*\": each separately)")
    who = "user" if "user" in e else "group"
    if not {"items", "items_percent", "duration", "area"} & set(e):
        raise w.error(s, i, "a limit needs items, items_percent, duration or area")
    pct = e.get("items_percent")
    if pct is not None and (isinstance(pct, bool) or not isinstance(pct, int | float) or not 0 <= pct <= 100):
        raise w.error(s, i, f"items_percent must be a number in [0, 100], not {pct!r}")
    return Limit(
        who=who, ident=_ident(e[who], w, s, i, who), types=_rtype(e.get("resource", "*"), w, s, i, True),
        items=_int(e["items"], w, s, i, "items") if "items" in e else None,
        items_percent=None if pct is None else float(pct),
        duration=_seconds(e["duration"], w, s, i, "duration") if "duration" in e else None,
        area=_seconds(e["area"], w, s, i, "area") if "area" in e else None,
        validity=_validity(e.get("validity", "always"), w, s, i),
    )


def _freepool(e, w, i) -> FreePool:
    s = "freepool"
    e = _table(e, w, s, i, {"resource", "items", "percent", "unless", "unless_any", "validity"})
    if "resource" not in e or not {"items", "percent"} & set(e):
        raise w.error(s, i, "a FreePool needs resource and items or percent")
    pct = e.get("percent")
    if pct is not None and (isinstance(pct, bool) or not isinstance(pct, int | float) or not 0 <= pct <= 100):
        raise w.error(s, i, f"percent must be a number in [0, 100], not {pct!r}")
    if "unless" in e and "unless_any" in e:
        raise w.error(s, i, "give unless (all of its conditions) or unless_any (one of its tables), not both")
    if "unless_any" in e:
        tables = e["unless_any"]
        if not isinstance(tables, list) or not tables:
            raise w.error(s, i, "unless_any must be a non-empty list of condition tables, e.g. "
                                "[{ groups = [1, 2] }, { max_duration = \"2h\" }]")
        unless = tuple(_condition(u, w, s, i, f"unless_any[{n}]", True) for n, u in enumerate(tables))
    else:
        cond = _condition(e.get("unless", {}), w, s, i, "unless", False)
        unless = (cond,) if cond is not None else ()
    return FreePool(
        rtype=_rtype(e["resource"], w, s, i, False)[0], items=_int(e.get("items", 0), w, s, i, "items"),
        percent=None if pct is None else float(pct), unless=unless,
        validity=_validity(e.get("validity", "always"), w, s, i),
    )


def _condition(u, w, s, i, name: str, required: bool) -> Condition | None:
    """The condition table ``name`` of a FreePool; None when it is empty (an empty
    ``unless`` lets no job in; an empty table of ``unless_any`` is an error)."""
    if not isinstance(u, dict):
        raise w.error(s, i, f"{name} must be a table of conditions (max_cores, max_duration, users, groups)")
    u = _table(u, w, s, i, {"max_cores", "max_duration", "users", "groups"})
    if not u:
        if required:
            raise w.error(s, i, f"{name} is empty: give max_cores, max_duration, users or groups")
        return None

    def ids(key):
        if key not in u:
            return None
        if not isinstance(u[key], list):
            raise w.error(s, i, f"{name}.{key} must be a list of ids")
        return frozenset(_ident(x, w, s, i, f"{name}.{key}") for x in u[key])

    return Condition(
        max_cores=_int(u["max_cores"], w, s, i, f"{name}.max_cores") if "max_cores" in u else None,
        max_duration=_seconds(u["max_duration"], w, s, i, f"{name}.max_duration") if "max_duration" in u else None,
        users=ids("users"), groups=ids("groups"),
    )


def _maintenance(e, w, i) -> Maintenance:
    s = "maintenance"
    e = _table(e, w, s, i, {"nodes", "from", "to", "weekly"})
    nodes = e.get("nodes", "all")
    if isinstance(nodes, str) and nodes not in ("all", "gpu", "mic"):
        try:
            nodes = tuple(sorted({k for part in nodes.split(",") for k in _span(part)}))
        except ValueError:
            raise w.error(s, i, f"nodes must be \"all\", \"gpu\", \"mic\", a list or ranges such as \"0-15,32\", "
                                f"not {e['nodes']!r}") from None
    elif isinstance(nodes, list):
        nodes = tuple(sorted({_int(x, w, s, i, "a node index") for x in nodes}))
    if "weekly" in e:
        if "from" in e or "to" in e:
            raise w.error(s, i, "give from and to, or weekly, not both")
        validity = _validity(e["weekly"], w, s, i)
        if validity.kind != "weekly":
            raise w.error(s, i, f"weekly must look like \"Tue 06:00-10:00\", not {e['weekly']!r}")
    else:
        validity = _validity({k: e[k] for k in ("from", "to") if k in e}, w, s, i)
    return Maintenance(nodes, validity)


def _span(part: str) -> range:
    a, _, b = part.strip().partition("-")
    lo, hi = int(a), int(b or a)
    if lo < 0 or hi < lo:
        raise ValueError(part)
    return range(lo, hi + 1)


# --------------------------------------------------------------------------- compiling


class SiteArrays(NamedTuple):
    """What the scheduler's kernels read (all int64).

    valid (v, 2): the validity intervals of every policy, set s is rows vptr[s]:vptr[s+1];
    cptr (n + 1,), crow (c, 4): job j's constraints are crow[cptr[j]:cptr[j+1]], each
    (vector, room, validity set, resource type): while valid, the vector's used items plus
    the job's demand of that type stay within room (room < demand: the job avoids the
    validity); vector >= 0 a consumer's usage vector (``lslots[vector]``), -(k + 1) the
    plan's total of type k (a FreePool).  jvptr (n + 1,), jvrow (r, 2): the consumer
    vectors (vector, type) job j's bookings count in.  nvec: consumer vectors.  mspan (m,
    2), mwin (w, 2): node i's maintenance windows are mwin[mspan[i, 0] : mspan[i, 1]],
    sorted (nodes under the same windows share rows); mends (e,): every window
    end, sorted, unique.  gpu_node_cores: cores of a GPU node kept for GPU jobs."""

    valid: np.ndarray
    vptr: np.ndarray
    cptr: np.ndarray
    crow: np.ndarray
    jvptr: np.ndarray
    jvrow: np.ndarray
    nvec: int
    mspan: np.ndarray
    mwin: np.ndarray
    mends: np.ndarray
    gpu_node_cores: int

    @property
    def windows_per_node(self) -> bool:
        """Whether some maintenance window is on some nodes and not on others (node i's
        windows are merged, so equal rows mean the same seconds down)."""
        spans = np.unique(self.mspan, axis=0)
        first = self.mwin[spans[0, 0] : spans[0, 1]] if spans.size else self.mwin[:0]
        return any(not np.array_equal(self.mwin[a:b], first) for a, b in spans[1:])


def _merge(rows) -> np.ndarray:
    """Sorted disjoint [a, b) intervals from possibly overlapping ones (touching ones join)."""
    out: list[list[int]] = []
    for a, b in sorted((int(a), int(b)) for a, b in rows if b > a):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return np.array(out, dtype=np.int64).reshape(-1, 2)


def horizon(J: np.ndarray, live: np.ndarray) -> tuple[int, int]:
    """The span weekly validities are expanded over: a week before the first submit to
    two weeks after the last, plus twice every job's longest duration (no booking of the
    replay can end later); ``live``: bool (n,), the jobs the replay keeps."""
    if not live.any():
        return 0, WEEK
    longest = np.maximum(np.maximum(J[live, J_EST], J[live, J_RUN]), np.maximum(J[live, J_PRED], 1))
    return int(J[live, J_SUBMIT].min()) - WEEK, int(J[live, J_SUBMIT].max()) + 2 * int(longest.sum()) + 2 * WEEK


def _node_set(spec, machine: Machine, where: str) -> np.ndarray:
    cap = machine.capacity
    if spec == "all":
        return np.arange(machine.n_nodes)
    if spec == "gpu":
        return np.flatnonzero(cap[:, 1] > 0)
    if spec == "mic":
        return np.flatnonzero(cap[:, 2] > 0)
    nodes = np.array(spec, dtype=np.int64)
    if nodes.size and nodes.max() >= machine.n_nodes:
        raise UsageError(f"{where}: node {int(nodes.max())} is not on this machine ({machine.n_nodes} nodes, 0-"
                         f"{machine.n_nodes - 1})")
    return nodes


def longest_window_gaps(site: Site, machine: Machine) -> np.ndarray:
    """Per node, int64 (m,): the longest stretch (s) between its maintenance windows in the
    long run: the gap of its weekly ones merged, FOREVER when it has none or one-off ones
    only (they end)."""
    spans: list[list] = [[] for _ in range(machine.n_nodes)]
    for i, mw in enumerate(site.maintenance):
        if mw.validity.kind == "weekly":
            for node in _node_set(mw.nodes, machine, f"{site.path}: [[maintenance]] #{i + 1}"):
                spans[node].extend(mw.validity.spans)
    return np.array([Validity("weekly", tuple(sp)).longest_gap() if sp else FOREVER for sp in spans], dtype=np.int64)


def compile_site(site: Site, J: np.ndarray, machine: Machine, live: np.ndarray,
                 elig: np.ndarray | None = None) -> tuple[SiteArrays, np.ndarray]:
    """The arrays of ``site`` for the job matrix ``J`` on ``machine``, and a bool (n,)
    mask of the jobs the site refuses for ever (``rejected_by_limit``): jobs no validity
    gap can ever take, and jobs without GPUs that no empty machine can host once the kept
    cores of every GPU node are set aside.  ``live``: bool (n,), the jobs the set-up's
    screening kept (the others are left out of every rule)."""
    n = J.shape[0]
    lo, hi = horizon(J, live)
    total = machine.capacity.sum(axis=0)
    sets: list[np.ndarray] = []
    index: dict[Validity, int] = {}

    def set_of(v: Validity) -> int:
        if v not in index:
            index[v] = len(sets)
            sets.append(v.intervals(lo, hi, site.origin))
        return index[v]

    units = J[:, J_UNITS]
    demand = units[:, None] * J[:, J_REQ : J_REQ + N_RES]  # (n, N_RES)
    est = J[:, J_EST]
    rows: list[list[tuple[int, int, int, int]]] = [[] for _ in range(n)]
    vecs: dict[tuple[str, int, int], int] = {}
    jv: list[set[tuple[int, int]]] = [set() for _ in range(n)]
    rejected = np.zeros(n, dtype=bool)

    def refuse(j, room, k, v):
        rows[j].append((-(k + 1), room, set_of(v), k))

    for lim in site.limits:
        col = J_USER if lim.who == "user" else J_GROUP
        members = np.flatnonzero(live & ((J[:, col] == lim.ident) if lim.ident is not None else True))
        for k in lim.types:
            items = None
            if lim.items is not None or lim.items_percent is not None:
                items = max(lim.items or 0, int(np.floor((lim.items_percent or 0) * total[k] / 100)))
            for j in members:
                dk = int(demand[j, k])
                if dk <= 0:
                    continue
                refused = (lim.duration is not None and est[j] > lim.duration) or (
                    lim.area is not None and dk * est[j] > lim.area) or (items is not None and dk > items)
                if refused:
                    refuse(j, -1, k, lim.validity)
                    if est[j] > lim.validity.longest_gap():
                        rejected[j] = True
                elif items is not None:
                    key = (lim.who, int(J[j, col]), k)
                    vec = vecs.setdefault(key, len(vecs))
                    rows[j].append((vec, items, set_of(lim.validity), k))
                    jv[j].add((vec, k))
    # a consumer's vector counts every booking of the consumer, constrained or not
    for (who, ident, k), vec in vecs.items():
        col = J_USER if who == "user" else J_GROUP
        for j in np.flatnonzero(live & (J[:, col] == ident) & (demand[:, k] > 0)):
            jv[j].add((vec, k))
    for pool in site.freepools:
        k = pool.rtype
        keep = max(pool.items, int(np.ceil((pool.percent or 0) * total[k] / 100)))
        room = int(total[k]) - keep
        for j in np.flatnonzero(live & (demand[:, k] > 0)):
            if _matches(pool, J, j):
                continue
            rows[j].append((-(k + 1), room, set_of(pool.validity), k))
            if demand[j, k] > room and est[j] > pool.validity.longest_gap():
                rejected[j] = True
    cptr = np.zeros(n + 1, dtype=np.int64)
    cptr[1:] = np.cumsum([len(r) for r in rows])
    crow = np.array([c for r in rows for c in r], dtype=np.int64).reshape(-1, 4)
    jvptr = np.zeros(n + 1, dtype=np.int64)
    jvptr[1:] = np.cumsum([len(s) for s in jv])
    jvrow = np.array([c for s in jv for c in sorted(s)], dtype=np.int64).reshape(-1, 2)
    vptr = np.zeros(len(sets) + 1, dtype=np.int64)
    vptr[1:] = np.cumsum([s.shape[0] for s in sets])
    valid = np.concatenate(sets) if sets else np.zeros((0, 2), dtype=np.int64)
    # nodes under the same windows share one merged copy of them (a weekly window on
    # every node of a big machine would otherwise be stored once per node)
    expanded = [mw.validity.intervals(lo, hi, site.origin) for mw in site.maintenance]
    entries: list[list[int]] = [[] for _ in range(machine.n_nodes)]
    for i, mw in enumerate(site.maintenance):
        for node in _node_set(mw.nodes, machine, f"{site.path}: [[maintenance]] #{i + 1}"):
            entries[node].append(i)
    mspan = np.zeros((machine.n_nodes, 2), dtype=np.int64)
    groups: dict[tuple[int, ...], tuple[int, int]] = {}
    blocks: list[np.ndarray] = []
    rows = 0
    for node, ent in enumerate(entries):
        if not ent:
            continue
        key = tuple(sorted(set(ent)))
        if key not in groups:
            merged = _merge(np.concatenate([expanded[i] for i in key]).tolist())
            groups[key] = (rows, rows + merged.shape[0])
            blocks.append(merged)
            rows += merged.shape[0]
        mspan[node] = groups[key]
    mwin = np.concatenate(blocks) if blocks else np.zeros((0, 2), dtype=np.int64)
    mends = np.unique(mwin[:, 1]) if mwin.size else np.zeros(0, dtype=np.int64)
    arrays = SiteArrays(valid, vptr, cptr, crow, jvptr, jvrow, len(vecs), mspan, mwin, mends, site.gpu_node_cores)
    rejected |= _refused_by_kept_cores(machine, J, site.gpu_node_cores, elig)
    return arrays, rejected & live


def _refused_by_kept_cores(machine: Machine, J: np.ndarray, keep: int, elig: np.ndarray | None) -> np.ndarray:
    """Jobs without GPUs that no empty machine can host once ``keep`` cores of every GPU
    node are kept for GPU jobs (Keller's expensive resources), on their class's nodes
    (elig, uint8 (k, m), or None: every node)."""
    gpu_nodes = machine.capacity[:, 1] > 0
    if keep <= 0 or not gpu_nodes.any():
        return np.zeros(J.shape[0], dtype=np.bool_)
    cap = np.array(machine.capacity, dtype=np.int64)
    cap[gpu_nodes, 0] = np.maximum(cap[gpu_nodes, 0] - keep, 0)
    return too_wide_on(cap, J, elig) & (J[:, J_REQ + 1] == 0)


def _matches(pool: FreePool, J: np.ndarray, j: int) -> bool:
    """Whether job j meets every condition of one of the pool's condition tables (and so
    may use it)."""
    return any(_meets(c, J, j) for c in pool.unless)


def _meets(c: Condition, J: np.ndarray, j: int) -> bool:
    """Whether job j meets every condition given in ``c``."""
    return ((c.max_cores is None or J[j, J_UNITS] * J[j, J_REQ] <= c.max_cores)
            and (c.max_duration is None or J[j, J_EST] <= c.max_duration)
            and (c.users is None or int(J[j, J_USER]) in c.users)
            and (c.groups is None or int(J[j, J_GROUP]) in c.groups))

"""Accounts and their targets, shared by the fair-share schedulers (``priority`` and
``sfs``, :mod:`schedbench.schedulers.fairshare`) and the per-account fairness metrics of
every replay (:mod:`schedbench.analysis.results`): which account a job belongs to (its SWF group
or user), and each account's target occupancy, from an accounts file or from its share
of the trace's work.  Numpy only, so that writing a replay's results does not import a
scheduler.
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

import numpy as np

from ..errors import UsageError
from ..schema import Status

DEFAULT_FACTOR = 2.0
"""An account's target occupancy over its ideal share of the machine's use, unless the
accounts file gives one."""


def accounts(J: np.ndarray, by: str) -> tuple[np.ndarray, np.ndarray]:
    """(account ids, each job's account index): ids are the SWF group (``by`` "group") or
    user ("user") numbers, sorted."""
    if by not in ("group", "user"):
        raise UsageError(f"account must be 'group' or 'user', not {by!r}")
    # imported here: writing results (account_targets) must not load the numba core
    from ..core.layout import J_GROUP, J_USER

    ids, index = np.unique(J[:, J_GROUP if by == "group" else J_USER], return_inverse=True)
    return ids, index.astype(np.int64)


def allocations(submit: np.ndarray, run: np.ndarray, units: np.ndarray, live: np.ndarray, ids: np.ndarray,
                index: np.ndarray, path: str | None, factor: float = DEFAULT_FACTOR,
                ) -> tuple[np.ndarray, np.ndarray, dict]:
    """(target occupancy float64 (A,), allocation shares float64 (A,), a record for
    summary.json) of the accounts ``ids`` (``index``: each job's) from the accounts file at
    ``path`` or, without one, from the work (units x run) of the ``live`` jobs."""
    run = np.maximum(run, 0)
    span = float(max(1, int((submit[live] + run[live]).max() - submit[live].min()))) if live.any() else 1.0
    ideal = np.zeros(ids.size)
    target = np.zeros(ids.size)
    if path:
        spec = _read_accounts(path)
        where = {int(i): a for a, i in enumerate(ids)}
        for key, row in spec.items():
            a = where.get(key)
            if a is None:
                continue  # an account with no job in this trace
            f = float(row.get("factor", factor))
            if "target" in row:
                target[a] = float(row["target"])
                ideal[a] = target[a] / f
            else:
                ideal[a] = float(row["allocation"]) / span
                target[a] = f * ideal[a]
        source = str(path)
    else:
        work = np.bincount(index[live], weights=(units[live] * run[live]).astype(float), minlength=ids.size)
        ideal = work / span
        target = factor * ideal
        source = "trace"
    shares = ideal / ideal.sum() if ideal.sum() > 0 else np.zeros(ids.size)
    record = {"source": source, "span_s": span, "factor": factor,
              "target": {str(int(i)): round(float(t), 3) for i, t in zip(ids, target, strict=True)}}
    return target, shares, record


def job_sizes(units: np.ndarray, per_unit: np.ndarray) -> np.ndarray:
    """Each job's size as priority and sfs count it, int64 (n,): its cores (units x cores
    per unit), or for a job that asks for no cores, units x the per-unit amount of its
    first requested type (a pool job's size is then its units, of whatever type).
    units: int64 (n,); per_unit: int64 (n, 4), cores, GPUs, MICs, MiB per unit."""
    req = np.maximum(per_unit, 0)
    first = np.argmax(req > 0, axis=1)  # 0 (cores) whenever the job asks for cores
    return units * req[np.arange(req.shape[0]), first]


def account_targets(table, status: np.ndarray, by: str = "group", path: str | None = None,
                    factor: float = DEFAULT_FACTOR) -> dict[int, float]:
    """{account id: target occupancy (job sizes, :func:`job_sizes`)} of a replayed table,
    as priority and sfs compute them (``status``: the replay's per-job
    :class:`schedbench.schema.Status`; only the jobs the replay kept count)."""
    column = table.group if by == "group" else table.user
    ids, index = np.unique(column, return_inverse=True)
    live = np.isin(status, (Status.REPLAYED, Status.NOT_STARTED))
    size = job_sizes(table.units, np.stack([table.unit_cores, table.unit_gpus, table.unit_mics, table.unit_mem], 1))
    target, _, _ = allocations(table.submit, table.run, size, live, ids, index, path, factor)
    return {int(i): float(t) for i, t in zip(ids, target, strict=True)}


def notices(table, by: str, path: str | None = None) -> list[str]:
    """What a fair-share run of ``table`` with accounts ``by`` ("group" or "user") and the
    accounts file at ``path`` would do silently, one line each: every job in the one
    account -1 (unknown), and accounts of the file that no job of the trace belongs to."""
    column = table.group if by == "group" else table.user
    out = []
    if column.size and bool((column == -1).all()):
        other = "user" if by == "group" else "group"
        hint = f"; account={other} charges jobs to their {other}s" if (getattr(table, other) != -1).any() else ""
        out.append(f"every job's {by} is -1 (unknown): fair share sees a single account and shares nothing{hint}")
    if path:
        present = set(np.unique(column).tolist())
        unknown = sorted(set(_read_accounts(path)) - present)
        if unknown:
            shown = ", ".join(map(str, unknown[:10])) + (", ..." if len(unknown) > 10 else "")
            out.append(f"{path}: {len(unknown):,} account(s) match no {by} of the trace, ignored: {shown}")
    return out


def _read_accounts(path) -> dict[int, dict]:
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text())
    except FileNotFoundError:
        raise UsageError(f"{p}: no such accounts file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{p}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{p}: not TOML: {exc}") from None
    table = data.get("accounts")
    if not isinstance(table, dict) or set(data) - {"accounts"}:
        raise UsageError(f"{p}: expected only [accounts.ID] tables")
    out = {}
    for key, row in table.items():
        try:
            ident = int(key)
        except ValueError:
            raise UsageError(f"{p}: account {key!r}: IDs are the trace's numbers") from None
        if not isinstance(row, dict) or set(row) - {"target", "allocation", "factor"} or \
                ("target" in row) == ("allocation" in row):
            raise UsageError(f"{p}: [accounts.{key}] takes target = U or allocation = U*s, and an optional factor")
        for name, value in row.items():
            # TOML reads 1e400 as inf and takes nan: neither is a target (summary.json would hold them)
            if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value) or value < 0:
                raise UsageError(f"{p}: [accounts.{key}] {name} must be a finite number >= 0")
        out[ident] = row
    return out

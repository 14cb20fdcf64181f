"""Account shares and QOS priorities from ``sacctmgr`` output (the ``slurm`` scheduler's accounts file).

:func:`read_accounts` reads the ``|``-separated output of

* ``sacctmgr -P show assoc format=Account,User,Share`` (header ``Account|User|Share``; the share
  column may also be headed ``Fairshare`` or ``RawShares``, and further columns such as Cluster
  or Partition may be present, in any order), and/or
* ``sacctmgr -P show qos format=Name,Priority`` (header ``Name|Priority``),

one after the other in one file, each block starting with its header line.  ``-p`` output (a
``|`` closing every line) is read too; blank lines are skipped.

Result: ``{"shares": {account: int}, "user_shares": {"account/user": int}, "qos_priority":
{qos: int}}``.  ``shares`` comes from the association rows whose User is empty (the account's
own row, the one fair share between accounts uses); ``user_shares`` from the rows naming a user.
A share of ``parent`` (the association draws on its parent account's share) has no number of its
own and is left out.  The same association listed twice (one per cluster or partition) must carry
the same share.  Anything else (a data line before a header, a wrong field count, a share that is
not a whole number or ``parent``) is a :class:`~schedbench.errors.DataError` naming ``file:line``.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import DataError
from .machine import read_text

_SHARE_COLUMNS = ("share", "fairshare", "rawshares")
_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z_]*$")


def read_accounts(path) -> dict:
    """The shares and QOS priorities of a sacctmgr dump (module docstring)."""
    path = Path(path)
    shares: dict[str, int] = {}
    user_shares: dict[str, int] = {}
    qos_priority: dict[str, int] = {}
    seen: dict[tuple[str, str], tuple[int, int]] = {}  # (table, key) -> (value, line)
    block: tuple[str, dict[str, int], int] | None = None  # (kind, column -> index, field count)
    for lineno, raw in enumerate(read_text(path, "sacctmgr file").splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        fields = line.split("|")
        if len(fields) > 1 and fields[-1] == "" and line.endswith("|"):
            fields = fields[:-1]  # -p (--parsable) closes each line with a '|'
        header = _header(fields)
        if header is not None:
            block = header
            continue
        if block is None:
            raise DataError(f"{path}:{lineno}: expected a header line such as 'Account|User|Share' "
                            f"(sacctmgr -P show assoc) or 'Name|Priority' (sacctmgr -P show qos), got {line!r}")
        kind, cols, width = block
        if len(fields) != width:
            raise DataError(f"{path}:{lineno}: {len(fields)} fields where the header above has {width}: {line!r}")
        if kind == "assoc":
            account = fields[cols["account"]].strip()
            user = fields[cols["user"]].strip() if "user" in cols else ""
            share_text = fields[cols["share"]].strip()
            if not account:
                raise DataError(f"{path}:{lineno}: an association without an account: {line!r}")
            if share_text.lower() == "parent":
                continue
            value = _whole(path, lineno, share_text, "share")
            table, key = (user_shares, f"{account}/{user}") if user else (shares, account)
        else:
            key = fields[cols["name"]].strip()
            if not key:
                raise DataError(f"{path}:{lineno}: a QOS without a name: {line!r}")
            value = _whole(path, lineno, fields[cols["priority"]].strip() or "0", "priority")
            table = qos_priority
        name = "user_shares" if table is user_shares else "shares" if table is shares else "qos"
        if (name, key) in seen and seen[name, key][0] != value:
            raise DataError(f"{path}:{lineno}: {key} has {value} here but {seen[name, key][0]} "
                            f"at line {seen[name, key][1]}")
        seen.setdefault((name, key), (value, lineno))
        table[key] = value
    return {"shares": shares, "user_shares": user_shares, "qos_priority": qos_priority}


def _header(fields: list[str]) -> tuple[str, dict[str, int], int] | None:
    """``(kind, column -> index, width)`` when ``fields`` is an association or QOS header line."""
    names = [f.strip().lower() for f in fields]
    if not all(_NAME_RE.match(n) for n in names):
        return None
    cols = {n: i for i, n in enumerate(names)}
    share = next((c for c in _SHARE_COLUMNS if c in cols), None)
    if "account" in cols and share is not None:
        cols["share"] = cols[share]
        return "assoc", cols, len(fields)
    if "name" in cols and "priority" in cols:
        return "qos", cols, len(fields)
    return None


def _whole(path: Path, lineno: int, text: str, what: str) -> int:
    if not text.isdigit():
        raise DataError(f"{path}:{lineno}: {what} {text!r} is not a whole number"
                        + (" (nor 'parent')" if what == "share" else ""))
    return int(text)

"""A Slurm cluster's ``slurm.conf`` as a :class:`~schedbench.io.machine.Machine` and a scheduling policy.

:func:`read` returns a :class:`SlurmConf`: the machine (one row per node, in file order), the
scheduling policy (a plain dict, below) and the keys the suite does not model.

**Syntax.**  One record a line, ``Key=Value`` pairs separated by blanks; keys are case-insensitive
(node and partition names are not); ``#`` starts a comment; a line ending in ``\\`` continues on the
next; values may be quoted (``Reason="down for repair"``).  ``Include FILE`` reads FILE in place
(a relative name is taken from the including file's folder; an absolute one that does not exist
is also looked for beside the including file, since a copied configuration rarely keeps its
``/etc/slurm`` layout); an Include that still cannot be found is skipped with a notice.

**Nodes** (``NodeName=`` lines).  Names are Slurm host lists: ``n[1-4,7]``, ``gpu[01-10]`` (the
width of the lower bound pads), several bracket groups ``r[1-2]b[3-4]`` (r1b3, r1b4, r2b3, r2b4)
and comma lists.  ``NodeName=DEFAULT`` sets values for the lines after it (each DEFAULT line adds
to the earlier ones).  A node's cores column is Slurm's CPU count: ``CPUs`` (or ``Procs``) when
given, else Boards x Sockets (per board) x CoresPerSocket x ThreadsPerCore (each 1 when absent),
so a hyper-threaded node counts threads, as ``sacct``'s NCPUS does.  A node line with none of
these (nor a DEFAULT giving one) is an error rather than Slurm's one CPU.  ``RealMemory`` is MiB
(Slurm's default 1 MiB when absent, with a notice).  ``Gres`` counts GPUs (``gpu:2``,
``gpu:a100:2``, ``gpu:a100:2(S:0-1)``, comma-separated, counts with K/M/G suffixes); a typed GPU
adds the feature ``gpu:TYPE`` to the node; other GRES are ignored with a notice; MICs are 0.
``Feature`` / ``Features`` give the node's features; ``State`` is ignored (every node is up).

**Partitions** (``PartitionName=`` lines; ``DEFAULT`` as for nodes): ``Nodes`` (host lists,
``ALL``, NodeSet names, ``feature{NAME}``), ``Default=YES`` (the last such partition is the
default), ``MaxTime`` (``UNLIMITED``/``INFINITE``, minutes, ``MM:SS``, ``HH:MM:SS``,
``D-HH[:MM[:SS]]``, seconds rounded up to the minute as Slurm does), ``PriorityJobFactor`` and
``PriorityTier`` (default 1; the older ``Priority`` sets both), ``DefMemPerCPU`` /
``DefMemPerNode`` (MiB; a partition setting neither inherits the cluster-wide keys).

**Policy** (:data:`DEFAULT_POLICY` holds the values used for keys absent from the file; the
defaults are those of the Slurm 26.05 slurm.conf(5) manual page):

======================== ===================================================== ==============
key                      slurm.conf source                                     default
======================== ===================================================== ==============
``priority_type``        PriorityType: ``"multifactor"`` or ``"basic"``        multifactor
``weight_age``           PriorityWeightAge (and _FairShare, _JobSize,          0 each
``weight_fairshare``     _Partition, _QOS)
``weight_jobsize``
``weight_partition``
``weight_qos``
``max_age``              PriorityMaxAge, s                                     7-0 (604800)
``decay_half_life``      PriorityDecayHalfLife, s (0: no decay)                7-0 (604800)
``favor_small``          PriorityFavorSmall                                    NO
``calc_period``          PriorityCalcPeriod (minutes in the file), s           5 min (300)
``sched_interval``       SchedulerParameters sched_interval, s (-1: off)       60
``default_queue_depth``  SchedulerParameters default_queue_depth, jobs         100
``bf_interval``          SchedulerParameters bf_interval, s (-1: off)          30
``bf_max_job_test``      SchedulerParameters bf_max_job_test, jobs             500
``bf_window``            SchedulerParameters bf_window (minutes in file), s    1440 min (86400)
``bf_resolution``        SchedulerParameters bf_resolution, s                  60
``bf_max_job_user``      SchedulerParameters bf_max_job_user (0: no limit)     0
``bf_continue``          SchedulerParameters bf_continue flag                  off
``scheduler_type``       SchedulerType: ``"backfill"`` or ``"builtin"``        backfill
``select_type``          SelectType: ``"cons_tres"``, ``"cons_res"``,          cons_tres
                         ``"linear"``
``select_type_parameters`` SelectTypeParameters, as written                    CR_Core_Memory
======================== ===================================================== ==============

(Slurm releases before 23.11 defaulted PriorityType to priority/basic and bf_max_job_test to
100: a file from such a cluster that relied on those defaults should state them.)

**Unknown keys.**  Keys that change scheduling but that the suite does not model (Licenses,
PreemptType, PriorityFlags, PriorityWeightTRES, partition limits such as MaxNodes, node Weight,
SchedulerParameters items such as ``bf_max_job_part``) are listed in ``unknown_keys`` (a node or
partition key as ``NodeName:Weight``, a SchedulerParameters item as ``SchedulerParameters:defer``)
for one notice (:func:`notices`).  Daemon, path, logging, accounting-storage and timeout keys are
accepted silently (:data:`IGNORED_KEYS`).

Malformed input (a bad number or duration, a bad host range, a node without a CPU count, a
partition naming an unknown node, a token that is not ``key=value``) is a
:class:`~schedbench.errors.DataError` naming ``file:line``.
"""

from __future__ import annotations

import itertools
import re
import shlex
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..errors import DataError
from .machine import MAX_PER_NODE, Machine, Partition, read_text, register_machine_file, spec_of

DAY = 86400

DEFAULT_POLICY: dict = {
    "priority_type": "multifactor",
    "weight_age": 0,
    "weight_fairshare": 0,
    "weight_jobsize": 0,
    "weight_partition": 0,
    "weight_qos": 0,
    "max_age": 7 * DAY,
    "decay_half_life": 7 * DAY,
    "favor_small": False,
    "calc_period": 5 * 60,
    "sched_interval": 60,
    "default_queue_depth": 100,
    "bf_interval": 30,
    "bf_max_job_test": 500,
    "bf_window": 1440 * 60,
    "bf_resolution": 60,
    "bf_max_job_user": 0,
    "bf_continue": False,
    "scheduler_type": "backfill",
    "select_type": "cons_tres",
    "select_type_parameters": "CR_Core_Memory",
}

# Keys with no bearing on which job starts when (daemons, hosts, ports, paths, logging,
# authentication, accounting storage, timeouts, plug-ins that act on running jobs), lower case.
IGNORED_KEYS = frozenset(k.lower() for k in """
AccountingStorageBackupHost AccountingStorageEnforce AccountingStorageExternalHost AccountingStorageHost
AccountingStorageLoc AccountingStorageParameters AccountingStoragePass AccountingStoragePort
AccountingStorageTRES AccountingStorageType AccountingStorageUser AccountingStoreFlags
AccountingStoreJobComment AcctGatherEnergyType AcctGatherFilesystemType AcctGatherInfinibandType
AcctGatherInterconnectType AcctGatherNodeFreq AcctGatherProfileType AllowSpecResourcesUsage AuthAltParameters
AuthAltTypes AuthInfo AuthType BackupAddr BackupController BatchStartTimeout BcastExclude BcastParameters
BurstBufferType CacheGroups CertgenType CertmgrType CheckpointType CliFilterPlugins ClusterName
CommunicationParameters CompleteWait ControlAddr ControlMachine CoreSpecPlugin CpuFreqDef CpuFreqGovernors
CredType CryptoType DebugFlags DefaultStorageHost DefaultStorageLoc DefaultStoragePass DefaultStoragePort
DefaultStorageType DefaultStorageUser DependencyParameters DisableRootJobs EioTimeout EnforcePartLimits Epilog
EpilogMsgTime EpilogSlurmctld EpilogTimeout ExtSensorsFreq ExtSensorsType FairShareDampeningFactor FastSchedule
FederationParameters FirstJobId GetEnvTimeout GpuFreqDef GresTypes GroupUpdateForce GroupUpdateTime HashPlugin
HealthCheckInterval HealthCheckNodeState HealthCheckProgram HttpParserType InactiveLimit InteractiveStepOptions
JobAcctGatherFrequency JobAcctGatherParams JobAcctGatherType JobCompHost JobCompLoc JobCompParams JobCompPass
JobCompPort JobCompType JobCompUser JobContainerType JobCredentialPrivateKey JobCredentialPublicCertificate
JobFileAppend JobRequeue JobSubmitPlugins KeepAliveTime KillOnBadExit KillWait LaunchParameters LaunchType
LogTimeFormat MailDomain MailProg MaxArraySize MaxBatchRequeue MaxDBDMsgs MaxJobCount MaxJobId MaxStepCount
MaxTasksPerNode MCSParameters MCSPlugin MessageTimeout MetricsType MinJobAge MpiDefault MpiParams NamespaceType
NodeFeaturesPlugins OverTimeLimit PluginDir PlugStackConfig PowerParameters PowerPlugin PreemptExemptTime
PrEpParameters PrEpPlugins PriorityParameters PrivateData ProctrackType Prolog PrologEpilogTimeout PrologFlags
PrologSlurmctld PrologTimeout PropagatePrioProcess PropagateResourceLimits PropagateResourceLimitsExcept
RebootProgram ReconfigFlags RequeueExit RequeueExitHold ResumeFailProgram ResumeProgram ResumeRate
ResumeTimeout ResvEpilog ResvOverRun ResvProlog ReturnToService RoutePlugin SallocDefaultCommand
ScronParameters SlurmctldAddr SlurmctldDebug SlurmctldHost SlurmctldLogFile SlurmctldParameters
SlurmctldPidFile SlurmctldPort SlurmctldPrimaryOffProg SlurmctldPrimaryOnProg SlurmctldSyslogDebug
SlurmctldTimeout SlurmdDebug SlurmdLogFile SlurmdParameters SlurmdPidFile SlurmdPort SlurmdSpoolDir
SlurmdSyslogDebug SlurmdTimeout SlurmdUser SlurmSchedLogFile SlurmSchedLogLevel SlurmUser SrunEpilog
SrunPortRange SrunProlog StateSaveLocation SuspendExcNodes SuspendExcParts SuspendExcStates SuspendProgram
SuspendRate SuspendTime SuspendTimeout SwitchParameters SwitchType TaskEpilog TaskPlugin TaskPluginParam
TaskProlog TCPTimeout TLSParameters TLSType TmpFS TopologyParam TopologyPlugin TrackWCKey TreeWidth
UnkillableStepProgram UnkillableStepTimeout UrlParserType UsePAM VSizeFactor WaitTime X11Parameters
""".split())

# Node and partition keys that do not change which job starts where, lower case.
_IGNORED_NODE_KEYS = frozenset(k.lower() for k in """
NodeHostname NodeAddr BcastAddr Port TmpDisk Reason CpuBind Parameters SuspendTime AutoResume State
Topology Extra Comment
""".split())
_IGNORED_PARTITION_KEYS = frozenset(k.lower() for k in """
AllocNodes AllowGroups AllowAccounts AllowQos DenyAccounts DenyQos Alternate CpuBind DisableRootJobs GraceTime
Hidden PowerDownOnIdle PreemptMode ReqResv ResumeTimeout RootOnly State SuspendTime SuspendTimeout
""".split())
# SchedulerParameters items that tune slurmctld's own load, not the schedule it computes.
_IGNORED_SCHED_ITEMS = frozenset("""
batch_sched_delay bb_array_stage_cnt bf_max_time bf_node_space_size bf_yield_interval bf_yield_rpc_cnt
bf_yield_sleep build_queue_timeout correspond_after_task_cnt default_gbytes disable_job_shrink
disable_hetjob_steps enable_hetjob_steps enable_user_top extra_constraints ignore_constraint_validation
ignore_prefer_validation ignore_numa kill_invalid_depend max_array_tasks max_rpc_cnt max_sched_time
max_script_size max_submit_line_size max_switch_wait no_backup_scheduling no_env_cache nohold_on_prolog_fail
requeue_setup_env_fail salloc_wait_nodes sbatch_wait_nodes sched_min_interval spec_cores_first
step_retry_count step_retry_time whole_hetjob whole_pack
""".split())

_WEIGHTS = {
    "priorityweightage": "weight_age",
    "priorityweightfairshare": "weight_fairshare",
    "priorityweightjobsize": "weight_jobsize",
    "priorityweightpartition": "weight_partition",
    "priorityweightqos": "weight_qos",
}
_DURATIONS = {"prioritymaxage": "max_age", "prioritydecayhalflife": "decay_half_life",
              "prioritycalcperiod": "calc_period"}
_CPU_KEYS = ("cpus", "procs", "boards", "sockets", "socketsperboard", "corespersocket", "threadspercore")


class SlurmConf(NamedTuple):
    """``machine``: the nodes and partitions; ``policy``: the scheduling keys (module docstring);
    ``unknown_keys``: keys that change scheduling and are not modelled, first-seen order;
    ``notices``: what the reading assumed (missing RealMemory, skipped Include, ignored GRES)."""

    machine: Machine
    policy: dict
    unknown_keys: tuple[str, ...]
    notices: tuple[str, ...] = ()


class _Line(NamedTuple):
    where: str  # "file:line" of the record's first physical line
    pairs: list[tuple[str, str, str]]  # (key lower case, key as written, value)


def sniff(path: str) -> bool:
    """Whether ``path`` names a slurm.conf: its name ends in ``.conf`` or a line of its first
    MiB starts with ``NodeName=``."""
    if str(path).endswith(".conf"):
        return True
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 20)
    except OSError:
        return False
    return re.search(rb"(?im)^[ \t]*NodeName[ \t]*=", head) is not None


def read(path) -> SlurmConf:
    """The machine, policy and unknown keys of the slurm.conf at ``path`` (module docstring)."""
    path = Path(path)
    reader = _Reader(path)
    return reader.run()


def read_machine(path) -> Machine:
    """:func:`read`'s machine alone (what ``--machine slurm.conf`` gives)."""
    return read(path).machine


def notices(conf: SlurmConf, path) -> list[str]:
    """One line listing the unknown keys (when there are any), then the reading's notices."""
    out = []
    if conf.unknown_keys:
        out.append(f"{path}: slurm.conf keys the replay does not model, ignored: {', '.join(conf.unknown_keys)}")
    return out + list(conf.notices)


# --------------------------------------------------------------------------- values


_DURATION_RE = re.compile(r"^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$")


def parse_duration(text: str, *, unlimited: bool = False) -> int:
    """Seconds of a Slurm time string: ``M``, ``M:S``, ``H:M:S``, ``D-H``, ``D-H:M``, ``D-H:M:S``;
    ``UNLIMITED`` / ``INFINITE`` give -1 when ``unlimited``.  ValueError otherwise."""
    text = text.strip()
    if unlimited and text.upper() in ("UNLIMITED", "INFINITE"):
        return -1
    m = _DURATION_RE.match(text)
    if not m:
        raise ValueError(text)
    days, a, b, c = m.groups()
    if days is not None:
        h, mi, s = int(a), int(b or 0), int(c or 0)
        return ((int(days) * 24 + h) * 60 + mi) * 60 + s
    if c is not None:
        return (int(a) * 60 + int(b)) * 60 + int(c)
    if b is not None:
        return int(a) * 60 + int(b)
    return int(a) * 60


_RANGE_RE = re.compile(r"\[([^\[\]]*)\]")


def expand_hostlist(text: str) -> list[str]:
    """The host names of a Slurm host list, in order: comma-separated items, each with any number
    of ``[a-b,c]`` groups (the lower bound's width pads, ``[01-10]``).  ValueError when malformed."""
    names: list[str] = []
    for item in _split_top(text, ","):
        if not item:
            continue
        parts = _RANGE_RE.split(item)  # text, range, text, range, ..., text
        if any(ch in p for p in parts[0::2] for ch in "[]"):
            raise ValueError(f"unbalanced brackets in {item!r}")
        choices: list[list[str]] = []
        for i, part in enumerate(parts):
            choices.append([part] if i % 2 == 0 else _expand_range(part, item))
        names.extend("".join(combo) for combo in itertools.product(*choices))
    return names


def _expand_range(spec: str, item: str) -> list[str]:
    out: list[str] = []
    for piece in spec.split(","):
        lo, sep, hi = piece.strip().partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()):
            raise ValueError(f"bad range [{spec}] in {item!r}")
        width = len(lo)
        a, b = int(lo), int(hi) if sep else int(lo)
        if b < a:
            raise ValueError(f"range {piece.strip()} runs backwards in {item!r}")
        if b - a > 10_000_000:
            raise ValueError(f"range {piece.strip()} in {item!r} is too long")
        out.extend(str(k).zfill(width) for k in range(a, b + 1))
    return out


def _split_top(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside brackets, braces and parentheses, items stripped."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "[({":
            depth += 1
        elif ch in "])}":
            depth -= 1
        elif ch == sep and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    out.append(text[start:].strip())
    return out


def _bool(text: str) -> bool:
    value = text.strip().upper()
    if value in ("YES", "TRUE", "1", "Y"):
        return True
    if value in ("NO", "FALSE", "0", "N"):
        return False
    raise ValueError(text)


_COUNT_RE = re.compile(r"^(\d+)([KMGTP]?)$", re.IGNORECASE)


def _count(text: str) -> int:
    """A GRES count: digits with an optional K/M/G/T/P suffix (powers of 1024)."""
    m = _COUNT_RE.match(text.strip())
    if not m:
        raise ValueError(text)
    return int(m.group(1)) * 1024 ** " KMGTP".index(m.group(2).upper() or " ")


# --------------------------------------------------------------------------- reader


class _Node(NamedTuple):
    cpus: int
    gpus: int
    mem: int
    features: frozenset
    mem_given: bool


class _Reader:
    def __init__(self, path: Path):
        self.path = path
        self.unknown: dict[str, str] = {}  # lower -> as written, first-seen order
        self.notices: list[str] = []
        self.policy = dict(DEFAULT_POLICY)
        self.node_defaults: dict[str, tuple[str, object]] = {}  # key -> (where, parsed value)
        self.part_defaults: dict[str, object] = {}
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        self.where_node: dict[str, str] = {}
        self.nodes: list[_Node] = []
        self.nodesets: dict[str, tuple[str, str, str]] = {}  # name -> (where, nodes text, feature)
        self.raw_parts: list[tuple[str, str, dict]] = []  # (where, name, attrs)
        self.def_mem = {"defmempercpu": 0, "defmempernode": 0}
        self.other_gres: dict[str, None] = {}

    # ----- lines

    def _lines(self, path: Path, stack: tuple[Path, ...] = ()):
        if len(stack) > 20 or path.resolve() in stack:
            raise DataError(f"{path}: Include loop ({' -> '.join(map(str, stack + (path,)))})")
        text = read_text(path, "slurm.conf")
        pending, first = "", 0
        for lineno, raw in enumerate(text.splitlines(), 1):
            if not pending:
                first = lineno
            stripped = raw.rstrip()
            if stripped.endswith("\\"):
                pending += stripped[:-1]  # joined as is, as Slurm does: a blank before the \\ separates
                continue
            logical, pending = pending + raw, ""
            where = f"{path}:{first}"
            lex = shlex.shlex(logical, posix=True)
            lex.whitespace_split, lex.commenters, lex.escape = True, "#", ""
            try:
                tokens = list(lex)
            except ValueError:
                raise DataError(f"{where}: unbalanced quotes: {logical.strip()!r}") from None
            if not tokens:
                continue
            if tokens[0].lower() == "include" and "=" not in tokens[0]:
                yield from self._include(path, where, " ".join(tokens[1:]), stack + (path.resolve(),))
                continue
            pairs = []
            for token in tokens:
                key, sep, value = token.partition("=")
                if not sep or not key:
                    raise DataError(f"{where}: expected key=value, got {token!r}")
                pairs.append((key.lower(), key, value))
            yield _Line(where, pairs)
        if pending:
            raise DataError(f"{path}:{first}: the file ends inside a continued line (trailing '\\')")

    def _include(self, path: Path, where: str, name: str, stack):
        if not name:
            raise DataError(f"{where}: Include without a file name")
        target = Path(name)
        candidates = [target if target.is_absolute() else path.parent / target]
        if target.is_absolute():
            candidates.append(path.parent / target.name)
        for cand in candidates:
            if cand.is_file():
                yield from self._lines(cand, stack)
                return
        self.notices.append(f"{where}: Include {name}: no such file (looked beside {path.name} too); skipped")

    # ----- records

    def run(self) -> SlurmConf:
        for line in self._lines(self.path):
            kind = line.pairs[0][0]
            if kind == "nodename":
                self._node_line(line)
            elif kind == "partitionname":
                self._partition_line(line)
            elif kind == "nodeset":
                self._nodeset_line(line)
            elif kind in ("downnodes", "frontendname", "switchname"):
                continue  # node states and topology: every node is up, the network flat
            else:
                for pair in line.pairs:
                    self._global(line.where, *pair)
        if not self.nodes:
            raise DataError(f"{self.path}: no NodeName lines (nodes defined in an Include that was skipped?)")
        return self._result()

    def _unknown(self, name: str) -> None:
        self.unknown.setdefault(name.lower(), name)

    def _global(self, where: str, key: str, written: str, value: str) -> None:
        p = self.policy
        try:
            if key in _WEIGHTS:
                p[_WEIGHTS[key]] = _nonneg(value)
            elif key in _DURATIONS:
                p[_DURATIONS[key]] = parse_duration(value)
            elif key == "priorityfavorsmall":
                p["favor_small"] = _bool(value)
            elif key == "prioritytype":
                p["priority_type"] = _plugin(value, "priority", ("multifactor", "basic"))
            elif key == "schedulertype":
                p["scheduler_type"] = _plugin(value, "sched", ("backfill", "builtin"))
            elif key == "selecttype":
                p["select_type"] = _plugin(value, "select", ("cons_tres", "cons_res", "linear"))
            elif key == "selecttypeparameters":
                p["select_type_parameters"] = value.strip()
            elif key == "schedulerparameters":
                self._scheduler_parameters(where, value)
            elif key in self.def_mem:
                self.def_mem[key] = _nonneg(value)
            elif key == "priorityusageresetperiod" and value.strip().upper() == "NONE":
                pass
            elif key not in IGNORED_KEYS:
                self._unknown(written)
        except DataError:
            raise
        except ValueError:
            raise DataError(f"{where}: {written}={value}: {_expected(key)}") from None

    def _scheduler_parameters(self, where: str, value: str) -> None:
        ints = {"sched_interval": (-1, 1), "default_queue_depth": (1, 1), "bf_interval": (-1, 1),
                "bf_max_job_test": (1, 1), "bf_window": (1, 60), "bf_resolution": (1, 1), "bf_max_job_user": (0, 1)}
        for item in filter(None, (s.strip() for s in value.split(","))):
            name, sep, arg = item.partition("=")
            name = name.strip().lower()
            if name in ints:
                low, scale = ints[name]
                try:
                    number = int(arg)
                    if not sep or number < low or (number < 0 and number != -1):
                        raise ValueError
                except ValueError:
                    raise DataError(f"{where}: SchedulerParameters {item}: expected {name}=N with N >= {low}") from None
                self.policy[name] = number * scale if number > 0 else number
            elif name == "bf_continue":
                self.policy["bf_continue"] = True
            elif name not in _IGNORED_SCHED_ITEMS:
                self._unknown(f"SchedulerParameters:{name}")

    def _node_line(self, line: _Line) -> None:
        where, pairs = line.where, line.pairs
        names_text = pairs[0][2]
        attrs: dict[str, tuple[str, object]] = {}
        for key, written, value in pairs[1:]:
            try:
                if key in _CPU_KEYS or key == "realmemory":
                    parsed: object = _nonneg(value) if key == "realmemory" else _positive(value)
                elif key == "gres":
                    parsed = self._gres(value)
                elif key in ("feature", "features"):
                    key, parsed = "features", frozenset(f for f in (s.strip() for s in value.split(",")) if f)
                elif key in _IGNORED_NODE_KEYS:
                    continue
                else:
                    self._unknown(f"NodeName:{written}")
                    continue
            except ValueError:
                raise DataError(f"{where}: {written}={value}: {_expected(key)}") from None
            attrs[key] = (where, parsed)
        if names_text.upper() == "DEFAULT":
            self.node_defaults.update(attrs)
            return
        full = {**self.node_defaults, **attrs}
        get = {k: v for k, (_w, v) in full.items()}
        if "cpus" in get or "procs" in get:
            cpus = get.get("cpus", get.get("procs"))
        elif any(k in get for k in _CPU_KEYS):
            sockets = get.get("socketsperboard", get.get("sockets", 1))
            cpus = get.get("boards", 1) * sockets * get.get("corespersocket", 1) * get.get("threadspercore", 1)
        else:
            raise DataError(f"{where}: NodeName={names_text}: no CPU count (give CPUs=, or Sockets=, "
                            "CoresPerSocket= and ThreadsPerCore=, here or on a NodeName=DEFAULT line before it)")
        if cpus > MAX_PER_NODE:
            raise DataError(f"{where}: NodeName={names_text}: {cpus:,} CPUs per node is over {MAX_PER_NODE:,}")
        gres = get.get("gres", ())
        gpus = sum(n for name, _t, n in gres if name == "gpu")
        if gpus > MAX_PER_NODE:
            raise DataError(f"{where}: NodeName={names_text}: {gpus:,} GPUs per node is over {MAX_PER_NODE:,}")
        features = get.get("features", frozenset()) | {f"gpu:{t}" for name, t, _n in gres if name == "gpu" and t}
        node = _Node(cpus, gpus, get.get("realmemory", 1), frozenset(features), "realmemory" in get)
        try:
            names = expand_hostlist(names_text)
        except ValueError as exc:
            raise DataError(f"{where}: NodeName={names_text}: {exc}") from None
        if not names:
            raise DataError(f"{where}: NodeName= names no node")
        for name in names:
            if name in self.index:
                raise DataError(f"{where}: node {name} is already defined at {self.where_node[name]}")
            if name.upper() == "ALL":
                raise DataError(f"{where}: ALL is reserved and cannot name a node")
            self.index[name] = len(self.names)
            self.where_node[name] = where
            self.names.append(name)
            self.nodes.append(node)

    def _gres(self, value: str) -> tuple[tuple[str, str, int], ...]:
        """``(name, type or "", count)`` per GRES item; ValueError when an item has no count."""
        out = []
        for item in _split_top(value, ","):
            if not item:
                continue
            fields = [f for f in item.split("(", 1)[0].split(":") if f.lower() != "no_consume"]
            if len(fields) < 2 or len(fields) > 3:
                raise ValueError(item)
            name = fields[0].strip().lower()
            count = _count(fields[-1])
            out.append((name, fields[1].strip() if len(fields) == 3 else "", count))
            if name != "gpu":
                self.other_gres.setdefault(name)
        return tuple(out)

    def _partition_line(self, line: _Line) -> None:
        where, pairs = line.where, line.pairs
        name = pairs[0][2]
        attrs: dict[str, object] = {}
        for key, written, value in pairs[1:]:
            try:
                if key == "nodes":
                    attrs["nodes"] = (where, value)
                elif key == "default":
                    attrs["default"] = _bool(value)
                elif key == "maxtime":
                    seconds = parse_duration(value, unlimited=True)
                    attrs["max_time"] = seconds if seconds < 0 else -(-seconds // 60) * 60  # Slurm: whole minutes
                elif key in ("priorityjobfactor", "prioritytier", "priority"):
                    number = _nonneg(value)
                    if key != "prioritytier":
                        attrs["job_factor"] = number
                    if key != "priorityjobfactor":
                        attrs["tier"] = number
                elif key in ("defmempercpu", "defmempernode"):
                    attrs[key] = _nonneg(value)
                elif key in ("oversubscribe", "exclusive") and value.strip().upper() == "NO":
                    continue
                elif key in _IGNORED_PARTITION_KEYS:
                    continue
                else:
                    self._unknown(f"PartitionName:{written}")
            except ValueError:
                raise DataError(f"{where}: {written}={value}: {_expected(key)}") from None
        if name.upper() == "DEFAULT":
            self.part_defaults.update(attrs)
            return
        if not name:
            raise DataError(f"{where}: PartitionName= without a name")
        if any(n == name for _w, n, _a in self.raw_parts):
            first = next(w for w, n, _a in self.raw_parts if n == name)
            raise DataError(f"{where}: partition {name} is already defined at {first}")
        self.raw_parts.append((where, name, {**self.part_defaults, **attrs}))

    def _nodeset_line(self, line: _Line) -> None:
        name = line.pairs[0][2]
        values = {key: value for key, _w, value in line.pairs[1:]}
        for key, written, _v in line.pairs[1:]:
            if key not in ("nodes", "feature"):
                self._unknown(f"NodeSet:{written}")
        self.nodesets[name] = (line.where, values.get("nodes", ""), values.get("feature", ""))

    # ----- result

    def _node_indices(self, where: str, owner: str, text: str, depth: int = 0) -> set[int]:
        out: set[int] = set()
        for item in _split_top(text, ","):
            if not item:
                continue
            if item.upper() == "ALL":
                out.update(range(len(self.names)))
            elif item.lower().startswith("feature{") and item.endswith("}"):
                feature = item[len("feature{"):-1]
                out.update(i for i, node in enumerate(self.nodes) if feature in node.features)
            elif item in self.nodesets and depth < 2:
                set_where, nodes, feature = self.nodesets[item]
                out |= self._node_indices(set_where, f"NodeSet {item}", nodes, depth + 1)
                if feature:
                    out.update(i for i, node in enumerate(self.nodes) if feature in node.features)
            else:
                try:
                    names = expand_hostlist(item)
                except ValueError as exc:
                    raise DataError(f"{where}: {owner}: {exc}") from None
                for n in names:
                    if n not in self.index:
                        raise DataError(f"{where}: {owner}: no node named {n!r}")
                    out.add(self.index[n])
        return out

    def _result(self) -> SlurmConf:
        cap = np.array([[n.cpus, n.gpus, 0, n.mem] for n in self.nodes], dtype=np.int64).reshape(-1, 4)
        partitions = []
        default_at = max((i for i, (_w, _n, a) in enumerate(self.raw_parts) if a.get("default")), default=-1)
        for i, (where, name, attrs) in enumerate(self.raw_parts):
            node_where, text = attrs.get("nodes", (where, ""))
            idx = np.array(sorted(self._node_indices(node_where, f"partition {name}", text)), dtype=np.int64)
            own_mem = "defmempercpu" in attrs or "defmempernode" in attrs
            partitions.append(Partition(
                name, idx, i == default_at, int(attrs.get("max_time", -1)), int(attrs.get("job_factor", 1)),
                int(attrs.get("tier", 1)),
                int(attrs.get("defmempercpu", 0) if own_mem else self.def_mem["defmempercpu"]),
                int(attrs.get("defmempernode", 0) if own_mem else self.def_mem["defmempernode"]),
            ))
        missing = [name for name, node in zip(self.names, self.nodes, strict=True) if not node.mem_given]
        if missing:
            self.notices.append(
                f"{self.path}: {len(missing):,} node{'s' if len(missing) > 1 else ''} without RealMemory "
                f"(first {missing[0]}): Slurm's default of 1 MiB each, so no job asking for memory fits there")
        if self.other_gres:
            self.notices.append(f"{self.path}: GRES other than gpu ignored: {', '.join(self.other_gres)}")
        empty = [p.name for p in partitions if p.nodes.size == 0]
        if empty:
            self.notices.append(f"{self.path}: partition{'s' if len(empty) > 1 else ''} without nodes: "
                                f"{', '.join(empty)} (no job submitted there can run)")
        note = f"from slurm.conf {self.path.name}: {len(self.names):,} nodes, {len(partitions)} partitions"
        machine = Machine(np.ascontiguousarray(cap), spec_of(cap), note, tuple(self.names),
                          tuple(n.features for n in self.nodes), tuple(partitions))
        return SlurmConf(machine, self.policy, tuple(self.unknown.values()), tuple(self.notices))


def _nonneg(text: str) -> int:
    value = int(text.strip())
    if value < 0:
        raise ValueError(text)
    return value


def _positive(text: str) -> int:
    value = int(text.strip())
    if value <= 0:
        raise ValueError(text)
    return value


def _plugin(value: str, prefix: str, allowed: tuple[str, ...]) -> str:
    name = value.strip().lower()
    if name.startswith(prefix + "/"):
        name = name[len(prefix) + 1:]
    if name not in allowed:
        raise ValueError(value)
    return name


def _expected(key: str) -> str:
    """What a key's value must be, for its error message."""
    if key in _DURATIONS or key == "maxtime":
        return "expected a duration (minutes, MM:SS, HH:MM:SS or D-HH[:MM[:SS]])" + (
            " or UNLIMITED" if key == "maxtime" else "")
    if key in ("priorityfavorsmall", "default"):
        return "expected YES or NO"
    if key == "prioritytype":
        return "expected priority/multifactor or priority/basic"
    if key == "schedulertype":
        return "expected sched/backfill or sched/builtin"
    if key == "selecttype":
        return "expected select/cons_tres, select/cons_res or select/linear"
    if key == "gres":
        return "expected NAME[:TYPE]:COUNT items such as gpu:2 or gpu:a100:4"
    if key in _CPU_KEYS:
        return "expected a positive whole number"
    return "expected a non-negative whole number"


register_machine_file(sniff, read_machine)

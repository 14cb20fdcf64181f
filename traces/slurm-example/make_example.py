"""Write sacct.txt, the made-up history of the 10-node cluster of slurm.conf beside it.

Run ``python traces/slurm-example/make_example.py`` to rewrite it: the jobs are drawn with
``random.Random(26)``, so the file comes out the same every time.  It is what

    sacct -a -P -S 2024-03-04T08:00:00 -E 2024-03-05T12:00:00 \
      --format=JobIDRaw,JobID,User,UID,Account,Group,GID,Partition,QOS,Submit,Eligible,Start,End,Elapsed,Timelimit,NCPUS,NNodes,ReqCPUS,ReqMem,ReqTRES,AllocTRES,State,Constraints,NodeList,JobName

would print on Slurm 23.02 (times in UTC) had the cluster run these jobs: one line per
job, array task and het-job component, then its steps (``.batch``, ``.extern``, ``.0``).
The starts come from a plausible schedule played here: each job, in submit order,
starts at the first instant (its eligible time, or a job's end) at which enough of its
partition's nodes carrying its features have the cores, memory and GPUs (of its type)
free for its whole run, so no node is ever over-subscribed.  It is not Slurm's own
algorithm: the example is there to show the formats and the commands, and
``schedbench compare-log`` on it measures how far a scheduler is from this schedule.

The history holds array tasks (one array still partly pending at the dump), a het job,
jobs cancelled while pending (Slurm records their cancel time as Start and End, with no
nodes), jobs still pending or running at the dump, a dependency (Eligible after Submit),
typed and untyped GPU requests, node-feature constraints (``a``, ``a&b``: an OR
constraint would put a ``|`` in Constraints too, see the docs), and a JobName holding
``|`` (which ``sacct -P`` does not escape).  :func:`check` reads the file back and checks
that no node is ever asked for more cores, memory or GPUs than it has.
"""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
FORMAT = ("JobIDRaw,JobID,User,UID,Account,Group,GID,Partition,QOS,Submit,Eligible,Start,End,Elapsed,"
          "Timelimit,NCPUS,NNodes,ReqCPUS,ReqMem,ReqTRES,AllocTRES,State,Constraints,NodeList,JobName").split(",")
T0 = datetime(2024, 3, 4, 8, 0, 0, tzinfo=UTC)
DUMP = 28 * 3600  # the dump is taken at T0 + 28 h = 2024-03-05T12:00:00
FIRST_ID = 41000

# name, cores, memory (MiB), GPU type, GPUs, features: as slurm.conf
NODES = (
    [(f"cpu{i:02d}", 32, 191000, None, 0, {"intel", "skylake"}) for i in range(1, 5)]
    + [(f"cpu{i:02d}", 32, 191000, None, 0, {"intel", "cascadelake"}) for i in range(5, 7)]
    + [(f"gpu{i:02d}", 48, 515000, "a100", 4, {"amd", "rome"}) for i in range(1, 3)]
    + [("gpu03", 48, 385000, "v100", 4, {"intel", "cascadelake"})]
    + [("bigmem01", 64, 2060000, None, 0, {"amd", "rome", "bigmem"})]
)
PARTITIONS = {  # name: (node indices, DefMemPerCPU MiB)
    "cpu": ([0, 1, 2, 3, 4, 5, 9], 5800),
    "gpu": ([6, 7, 8], 10000),
    "bigmem": ([9], 31000),
}
USERS = {"alice": (1001, "physics"), "bob": (1002, "physics"), "carol": (1003, "chemistry"),
         "dave": (1004, "chemistry"), "erin": (1005, "biology"), "frank": (1006, "cs")}
GROUPS = {"physics": 2001, "chemistry": 2002, "biology": 2003, "cs": 2004}


class Job:
    def __init__(self, **kw):
        self.__dict__.update(dict(
            array=None, het=None, constraint="", gpus=0, gpu_type=None, mem=None, qos="normal",
            depends=None, outcome="COMPLETED", cancel_after=None, program=None, name="job",
        ))
        self.__dict__.update(kw)
        self.eligible = self.submit
        self.start = self.end = None
        self.nodes: list[int] = []

    @property
    def mem_per_node(self) -> int:
        return self.mem if self.mem is not None else self.cpus * PARTITIONS[self.partition][1]


def _draw_jobs(rng: random.Random) -> list[Job]:
    jobs: list[Job] = []
    t = 0
    programs = {"cpu": ["lmp", "gmx_mpi", "cp2k.psmp", "python3", "Rscript"], "gpu": ["python3", "pmemd.cuda", "gmx"],
                "bigmem": ["spades.py", "python3", "trinity"]}
    for k in range(70):
        t += int(rng.expovariate(1 / 1500)) if k % 9 else rng.randint(60, 400)  # bursts, then lulls
        user = rng.choice(list(USERS))
        kind = rng.choices(["cpu", "wide", "gpu", "bigmem"], weights=[45, 12, 30, 10])[0]
        limit = rng.choice([1800, 3600, 7200, 4 * 3600, 8 * 3600, 12 * 3600])
        job = dict(submit=t, user=user, timelimit=limit, name=f"{rng.choice(['run', 'sim', 'fit', 'md', 'qc'])}_{k:02d}")
        if kind == "cpu":
            job.update(partition="cpu", nnodes=1, cpus=rng.choice([1, 4, 8, 16, 32]),
                       constraint=rng.choice(["", "", "", "skylake", "intel&cascadelake", "intel"]))
        elif kind == "wide":
            job.update(partition="cpu", nnodes=rng.choice([2, 3, 4]), cpus=32, mem=rng.choice([None, 180000]),
                       constraint=rng.choice(["", "skylake"]))
        elif kind == "gpu":
            gpus = rng.choice([1, 1, 2, 4])
            job.update(partition="gpu", nnodes=1, cpus=12 * gpus, gpus=gpus,
                       gpu_type=rng.choice([None, "a100", "a100", "v100"]), mem=rng.choice([None, 64 * 1024 * gpus]))
            job["timelimit"] = min(limit, 12 * 3600)
        else:
            job.update(partition="bigmem", nnodes=1, cpus=rng.choice([16, 32, 64]),
                       mem=rng.choice([512, 1024, 1536]) * 1024, constraint="")
        job["program"] = rng.choice(programs[job["partition"]])
        job["qos"] = rng.choices(["normal", "high", "debug"], weights=[80, 12, 8])[0]
        outcome = rng.choices(["COMPLETED", "FAILED", "TIMEOUT", "OUT_OF_MEMORY", "CANCELLED"],
                              weights=[70, 8, 10, 4, 8])[0]
        job["outcome"] = outcome
        frac = {"COMPLETED": rng.uniform(0.1, 0.95), "FAILED": rng.uniform(0.0, 0.2), "OUT_OF_MEMORY": rng.uniform(0.05, 0.5),
                "CANCELLED": rng.uniform(0.1, 0.7)}.get(outcome, 1.0)
        job["elapsed"] = job["timelimit"] + 7 if outcome == "TIMEOUT" else max(3, int(job["timelimit"] * frac))
        jobs.append(Job(**job))
    # the special cases
    jobs[5].__dict__.update(outcome="CANCELLED", cancel_after=10)  # cancelled while pending if it waits that long
    jobs[11].__dict__.update(name="prep|post", program="bash")  # a '|' sacct -P does not escape
    jobs[20].__dict__.update(array=(1, 6, None), elapsed=900, timelimit=3600, outcome="COMPLETED")  # 6 tasks
    jobs[33].__dict__.update(depends=jobs[32], submit=jobs[32].submit + 40)  # --dependency=afterok on it
    jobs[32].__dict__.update(outcome="COMPLETED")
    jobs[40].__dict__.update(het=dict(partition="gpu", nnodes=1, cpus=12, gpus=1, gpu_type="a100", mem=None))
    jobs[40].__dict__.update(partition="cpu", nnodes=1, cpus=8, constraint="", gpus=0, gpu_type=None, mem=None,
                             outcome="COMPLETED")
    jobs[47].__dict__.update(outcome="NODE_FAIL")
    jobs[55].__dict__.update(array=(1, 8, 4), elapsed=5400, timelimit=7200, outcome="COMPLETED")  # 4 of 8 run by the dump
    jobs[61].__dict__.update(outcome="CANCELLED", cancel_after=300)
    # the big-memory node full at the dump: one long job running, one waiting behind it
    jobs[67].__dict__.update(partition="bigmem", nnodes=1, cpus=64, mem=1900 * 1024, gpus=0, gpu_type=None,
                             constraint="", timelimit=2 * 86400, elapsed=30 * 3600, outcome="COMPLETED")
    jobs[68].__dict__.update(partition="bigmem", nnodes=1, cpus=32, mem=1024 * 1024, gpus=0, gpu_type=None,
                             constraint="bigmem", timelimit=86400, elapsed=3600)
    return [job for job in jobs if job.submit < DUMP]


def _expand(jobs: list[Job]) -> list[Job]:
    """Array tasks as jobs of their own (``array`` = (first, last, how many may start by the
    dump or None)); a het job's second component as a job of its own."""
    out = []
    for job in jobs:
        if job.array:
            first, last, cap = job.array
            for i in range(first, last + 1):
                task = Job(**{k: v for k, v in job.__dict__.items() if k not in ("eligible", "start", "end", "nodes")})
                task.array_task, task.array_last, task.array_cap = i, last, cap
                out.append(task)
        elif job.het:
            job.het_part = 0
            other = Job(**{**{k: v for k, v in job.__dict__.items() if k not in ("eligible", "start", "end", "nodes")},
                           **job.het})
            other.het_part, other.het_with = 1, job
            out += [job, other]
        else:
            out.append(job)
    return out


def _eligible_nodes(job: Job) -> list[list[int]]:
    """Node sets the job may use: one per alternative of a ``[a|b]`` constraint, else one."""
    nodes = PARTITIONS[job.partition][0]
    if job.gpus:
        nodes = [n for n in nodes if NODES[n][4] >= job.gpus and (job.gpu_type in (None, NODES[n][3]))]
    c = job.constraint
    if c.startswith("["):
        return [[n for n in nodes if f in NODES[n][5]] for f in c[1:-1].split("|")]
    if "|" in c:
        return [[n for n in nodes if NODES[n][5] & set(c.split("|"))]]
    if c:
        return [[n for n in nodes if set(c.split("&")) <= NODES[n][5]]]
    return [nodes]


class Schedule:
    def __init__(self):
        self.booked: list[list[tuple[int, int, int, int, int]]] = [[] for _ in NODES]  # (start, end, cpu, mem, gpu)

    def fits(self, node: int, job: Job, a: int, b: int) -> bool:
        _, cores, mem, _, gpus, _ = NODES[node]
        points = [a] + [s for s, _e, *_ in self.booked[node] if a < s < b]
        for p in points:
            used = [0, 0, 0]
            for s, e, c, m, g in self.booked[node]:
                if s <= p < e:
                    used = [used[0] + c, used[1] + m, used[2] + g]
            if used[0] + job.cpus > cores or used[1] + job.mem_per_node > mem or used[2] + job.gpus > gpus:
                return False
        return True

    def place(self, job: Job, t: int) -> list[int] | None:
        for nodes in _eligible_nodes(job):
            free = [n for n in nodes if self.fits(n, job, t, t + job.elapsed)]
            if len(free) >= job.nnodes:
                return free[: job.nnodes]
        return None

    def book(self, job: Job, start: int, nodes: list[int]) -> None:
        job.start, job.end, job.nodes = start, start + job.elapsed, nodes
        for n in nodes:
            self.booked[n].append((start, job.end, job.cpus, job.mem_per_node, job.gpus))

    def earliest(self, job: Job, rng: random.Random) -> tuple[int, list[int]]:
        ends = sorted({e for b in self.booked for _s, e, *_ in b if e > job.eligible})
        for t in [job.eligible + rng.randint(1, 30)] + [e + rng.randint(0, 2) for e in ends]:
            nodes = self.place(job, t)
            if nodes is not None:
                return t, nodes
        raise AssertionError(f"job {job.name} fits nowhere")


def _play(jobs: list[Job], rng: random.Random) -> None:
    sched = Schedule()
    for job in jobs:
        if getattr(job, "het_part", None) == 1:
            continue  # placed with its first component: het components start together
        if job.depends is not None:
            if job.depends.end is None or job.depends.end >= DUMP:
                continue  # its dependency has not ended by the dump: pending
            job.eligible = max(job.submit, job.depends.end)
        if getattr(job, "array_cap", None) and job.array_task > job.array_cap:
            continue  # still pending at the dump
        t, nodes = sched.earliest(job, rng)
        if job.het:  # both components at one instant: the first at which both fit
            other = next(j for j in jobs if getattr(j, "het_with", None) is job)
            while (o_nodes := sched.place(other, t)) is None or (nodes := sched.place(job, t)) is None:
                t += 60
            sched.book(other, t, o_nodes)
        if job.cancel_after is not None and t - job.submit > job.cancel_after:
            job.start = job.end = job.submit + job.cancel_after  # cancelled while pending
            job.nodes = []
            continue
        if t >= DUMP:
            continue
        sched.book(job, t, nodes)


# -- sacct's formats -------------------------------------------------------------------


def _time(s: int | None) -> str:
    return "Unknown" if s is None else (T0 + timedelta(seconds=s)).strftime("%Y-%m-%dT%H:%M:%S")


def _duration(s: int) -> str:
    d, rest = divmod(s, 86400)
    h, rest = divmod(rest, 3600)
    m, sec = divmod(rest, 60)
    return f"{d}-{h:02d}:{m:02d}:{sec:02d}" if d else f"{h:02d}:{m:02d}:{sec:02d}"


def _mem(mib: int) -> str:
    if mib % (1024 * 1024) == 0:
        return f"{mib // (1024 * 1024)}T"
    return f"{mib // 1024}G" if mib % 1024 == 0 else f"{mib}M"


def _nodelist(nodes: list[int]) -> str:
    """Slurm's hostlist: ``cpu[01-03,05]``, ``gpu02``, ``cpu[01-02],bigmem01``."""
    groups: dict[str, list[int]] = {}
    for n in sorted(nodes):
        prefix, num = re.fullmatch(r"([a-z]+)(\d+)", NODES[n][0]).groups()
        groups.setdefault(prefix, []).append(int(num))
    parts = []
    for prefix, nums in groups.items():
        if len(nums) == 1:
            parts.append(f"{prefix}{nums[0]:02d}")
            continue
        runs, lo = [], nums[0]
        for a, b in zip(nums, nums[1:] + [None], strict=True):
            if b != a + 1:
                runs.append(f"{lo:02d}" if lo == a else f"{lo:02d}-{a:02d}")
                lo = b
        parts.append(f"{prefix}[{','.join(runs)}]")
    return ",".join(parts)


def _tres(job: Job, alloc_nodes: list[int] | None, billing: bool = True) -> str:
    n = job.nnodes
    items = {"billing": job.cpus * n, "cpu": job.cpus * n, "mem": job.mem_per_node * n, "node": n}
    if job.gpus:
        typ = job.gpu_type or (NODES[alloc_nodes[0]][3] if alloc_nodes else None)
        items["gres/gpu"] = job.gpus * n
        if typ:
            items[f"gres/gpu:{typ}"] = job.gpus * n
    if not billing:
        del items["billing"]
    return ",".join(f"{k}={_mem(v) if k == 'mem' else v}" for k, v in sorted(items.items()))


def _job_id(job: Job) -> str:
    if getattr(job, "array_task", None) is not None:
        return f"{job.array_master}_{job.array_task}"
    if getattr(job, "het_part", None) is not None:
        return f"{job.het_leader}+{job.het_part}"
    return str(job.raw)


def _state(job: Job) -> str:
    if job.start is None:
        return "PENDING"
    if job.cancel_after is not None and not job.nodes:
        return f"CANCELLED by {USERS[job.user][0]}"
    if job.end > DUMP:
        return "RUNNING"
    if job.outcome == "CANCELLED":
        return f"CANCELLED by {USERS[job.user][0]}"
    return job.outcome


def _lines(job: Job, pending_array: str | None = None) -> list[list[str]]:
    uid, account = USERS[job.user]
    group = account  # the user's Unix group: the account of their research group
    account = "cs" if job.user == "alice" and job.partition == "gpu" else account  # alice also charges cs
    started = job.start is not None and bool(job.nodes)
    running = started and job.end > DUMP
    end = None if (job.start is None or running) else job.end
    elapsed = 0 if not started else (DUMP - job.start if running else job.elapsed)
    state = _state(job)
    row = [str(job.raw), pending_array or _job_id(job), job.user, str(uid), account, group, str(GROUPS[group]), job.partition, job.qos, _time(job.submit), _time(job.eligible),
           _time(job.start), _time(end), _duration(elapsed), _duration(job.timelimit),
           str(job.cpus * job.nnodes if started else 0), str(job.nnodes), str(job.cpus * job.nnodes),
           _mem(job.mem_per_node), _tres(job, None), _tres(job, job.nodes) if started else "", state, job.constraint,
           _nodelist(job.nodes) if started else "None assigned", job.name]
    rows = [row]
    if not started:
        return rows
    step_end = None if running else job.end
    first = job.nodes[:1]
    failed = {"FAILED": "FAILED", "OUT_OF_MEMORY": "OUT_OF_MEMORY", "TIMEOUT": "CANCELLED", "NODE_FAIL": "CANCELLED",
              "CANCELLED": "CANCELLED"}
    step_state = "RUNNING" if running else failed.get(job.outcome, "COMPLETED")

    def step(suffix, name, nodes, start, stop, state, cpus):
        return [f"{job.raw}.{suffix}", f"{_job_id(job)}.{suffix}", "", "", account, "", "", "", "", _time(start),
                _time(start), _time(start), _time(stop), _duration((DUMP if stop is None else stop) - start), "",
                str(cpus), str(len(nodes)), str(cpus), "", "",
                _tres(Job(**{**job.__dict__, "nnodes": len(nodes), "cpus": cpus // max(1, len(nodes))}), nodes, False),
                state, "", _nodelist(nodes), name]

    if getattr(job, "het_part", 0) == 0:
        rows.append(step("batch", "batch", first, job.start, step_end, step_state, job.cpus))
    rows.append(step("extern", "extern", job.nodes, job.start, step_end, "RUNNING" if running else "COMPLETED",
                     job.cpus * job.nnodes))
    if job.nnodes > 1 or job.gpus or getattr(job, "het_part", None) is not None:
        s0 = job.start + 4
        stop = None if running else max(s0, job.end - 2)
        rows.append(step("0", job.program, job.nodes, s0, stop, step_state, job.cpus * job.nnodes))
    return rows


def main() -> None:
    rng = random.Random(26)
    jobs = _expand(_draw_jobs(rng))
    # ids: in submit order; an array's master id goes to its last task (or stays with its
    # pending tasks), its other tasks take the ids after it; a het job's components follow
    next_id = FIRST_ID
    for job in jobs:
        if getattr(job, "array_task", None) is not None:
            if job.array_task == 1:  # ids master .. master + k - 1 (k tasks) or master + cap (some pending)
                master = next_id
                next_id += job.array_last if job.array_cap is None else job.array_cap + 1
            job.array_master = master
            if job.array_cap is None:  # all ran: the last task keeps the array's own id
                job.raw = master if job.array_task == job.array_last else master + job.array_task
            else:  # the pending tasks keep it
                job.raw = master + job.array_task if job.array_task <= job.array_cap else master
        elif getattr(job, "het_part", None) is not None:
            job.raw = next_id
            job.het_leader = job.raw if job.het_part == 0 else job.het_with.raw
            next_id += 1
        else:
            job.raw, next_id = next_id, next_id + 1
    _play(jobs, rng)
    rows = []
    done_pending: set[int] = set()
    for job in sorted(jobs, key=lambda j: (getattr(j, "array_master", None) or getattr(j, "het_leader", None) or j.raw,
                                           getattr(j, "array_task", 0), getattr(j, "het_part", 0))):
        if getattr(job, "array_cap", None) and job.array_task > job.array_cap:
            if job.array_master in done_pending:
                continue
            done_pending.add(job.array_master)
            rest = f"{job.array_master}_[{job.array_task}-{job.array_last}]"
            rows += _lines(job, pending_array=rest)
            continue
        rows += _lines(job)
    text = "|".join(FORMAT) + "\n" + "".join("|".join(r) + "\n" for r in rows)
    check(text)
    (HERE / "sacct.txt").write_text(text)


def _hosts(nodelist: str) -> list[str]:
    out = []
    for prefix, body, single in re.findall(r"([a-z]+)(?:\[([^\]]+)\]|(\d+))", nodelist):
        if single:
            out.append(prefix + single)
            continue
        for part in body.split(","):
            lo, _, hi = part.partition("-")
            out += [f"{prefix}{i:0{len(lo)}d}" for i in range(int(lo), int(hi or lo) + 1)]
    return out


def check(text: str) -> None:
    """Read the dump back (job lines only; JobName last absorbs any extra '|') and assert
    that at every job start no node holds more cores, memory or GPUs than slurm.conf gives."""
    lines = text.splitlines()
    head = lines[0].split("|")
    spans = []  # (start, end, node name, cores, MiB, GPUs)
    for line in lines[1:]:
        fields = line.split("|", len(head) - 1)
        row = dict(zip(head, fields, strict=True))
        if "." in row["JobID"] or row["NodeList"] == "None assigned":
            continue
        hosts = _hosts(row["NodeList"])
        tres = dict(kv.split("=") for kv in row["AllocTRES"].split(","))
        mib = int(tres["mem"][:-1]) * {"M": 1, "G": 1024, "T": 1024 * 1024}[tres["mem"][-1]]
        start = datetime.fromisoformat(row["Start"] + "+00:00")
        end = T0 + timedelta(seconds=DUMP) if row["End"] == "Unknown" else datetime.fromisoformat(row["End"] + "+00:00")
        for h in hosts:
            spans.append((start, end, h, int(tres["cpu"]) // len(hosts), mib // len(hosts),
                          int(tres.get("gres/gpu", 0)) // len(hosts)))
    capacity = {name: (cores, mem, gpus) for name, cores, mem, _t, gpus, _f in NODES}
    for t, _e, host, *_ in spans:
        used = [sum(sp[3 + k] for sp in spans if sp[2] == host and sp[0] <= t < sp[1]) for k in range(3)]
        assert all(u <= c for u, c in zip(used, capacity[host], strict=True)), (host, t, used)


if __name__ == "__main__":
    main()

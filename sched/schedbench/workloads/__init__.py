"""Workload generators and non-SWF trace readers; each produces a :class:`~schedbench.io.jobs.JobTable`.

A generator module registered in :data:`GENERATORS` exposes
``add_arguments(parser)`` (its CLI options) and ``from_args(args) -> (JobTable, meta)``,
where ``meta`` is a JSON-serialisable dict that includes ``"machine"`` (a spec string).
"""

GENERATORS: dict[str, str] = {
    "esp": "schedbench.workloads.esp",
    "soner": "schedbench.workloads.soner",
    "eurora-like": "schedbench.workloads.eurora_like",
    "steffen": "schedbench.workloads.steffen",
    "chains": "schedbench.workloads.chains",
}

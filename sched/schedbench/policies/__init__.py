"""Python-level policies, driven through the decision interface of
:mod:`schedbench.engine.simulation` (``decide(view) -> starts``), one module per family.

:data:`DECLARATIONS` is each policy's whole description (name, factory
``factory(sim, **options)``, options with defaults and help, capabilities);
:mod:`schedbench.registry` registers them with ``kind="python"``.  It lives here, not in
the policy modules, so that listing the registry imports neither kernels nor solvers.
"""

from ..declarations import Capabilities, Entry, Kind, Option, boolean

_PRIORITY_TYPE = Option("priority_type", "basic", "ipsched, aucsched, backfill: 'basic' (first submitted highest) "
                        "or 'multifactor' (age and size, +1 per minute queued)", choices=("basic", "multifactor"))
_IP_OPTIONS = (
    _PRIORITY_TYPE,
    Option("max_jobs", 200, "ipsched, aucsched: MAX_JOB_COUNT, jobs in the window", int, metavar="N"),
    Option("solver", "cbc", "ipsched, aucsched: 'cbc' or 'highs' (python-mip, one thread)", choices=("cbc", "highs")),
    Option("max_nodes", 200, "ipsched, aucsched: branch-and-bound node limit per solve (deterministic)", int,
           metavar="N"),
    Option("on_limit", "halve", "ipsched, aucsched: at the node limit 'halve' (start nothing, halve the window; "
           "the paper) or 'incumbent' (start the best solution found)", choices=("halve", "incumbent")),
    Option("solver_seed", 0, "ipsched, aucsched: the solver's random seed", int, metavar="N"),
)



def _priority_scale(default: str) -> Option:
    return Option("priority_scale", default, "ipsched (default slurm), aucsched (default rank): basic priorities "
                  "on SLURM's scale ('slurm': 0xffff0000 - 1 - j, nearly equal, so the IP starts as many jobs as "
                  "fit; what the paper's runs saw) or 'rank' (n - j)", choices=("slurm", "rank"))


# Soner & Ozturan's 5 s cycle.  A Simulation honours maintenance windows only.
_IP = Capabilities(default_period=5)

DECLARATIONS: tuple[Entry, ...] = (
    Entry("ipsched", Kind.PYTHON, "schedbench.policies.ipsched:ipsched",
          "IPSCHED (Soner & Ozturan): one IP per period allocates nodes' free cores and GPUs to a window of jobs",
          (*_IP_OPTIONS, _priority_scale("slurm"), Option("objective", "priority", "ipsched: 'priority' (sum P_j(s_j - c_j)) or 'cores' "
                                "(sum P_j R_j^cpu (s_j - c_j))", choices=("priority", "cores")),
           Option("model", "states", "ipsched: 'states' (integer counts of nodes per free state; the same "
                  "optimum, far fewer columns) or 'nodes' (the paper's per-node model)",
                  choices=("states", "nodes"))), _IP),
    # Its SLURM bids (slurm_bids=true, the default) are placements in the allocator's planning order.
    Entry("aucsched", Kind.PYTHON, "schedbench.policies.aucsched:aucsched",
          "AUCSCHED (Soner & Ozturan): an auction of contiguous-block bids per period, solved as an IP",
          (*_IP_OPTIONS, _priority_scale("rank"),
           Option("max_bids", 10, "aucsched: MAXBIDSPERJOB", int, metavar="N"),
           Option("slurm_bids", True, "aucsched: add each job's SLURM bid (the allocator's placement)", boolean,
                  metavar="BOOL"),
           Option("spread_bids", "none", "aucsched: bids that spread core-only jobs, our extension: 'none' (the "
                  "paper's A, B, C bids), 'nodeset' (whole nodesets; reproduces Table 1) or 'span' (every node of "
                  "consecutive nodesets, loads left to the IP; reproduces Figures 4-5 and Table 1)",
                  choices=("none", "nodeset", "span")),
           Option("cuts", "off", "aucsched: CBC's cut passes on a window's model: 'off' (none), 'off-first' (none; "
                  "if the node limit stops that solve, the model again with CBC's automatic cuts) or 'auto' "
                  "(automatic cuts at every solve; up to 20 GB of memory on some windows)",
                  choices=("off", "off-first", "auto"))),
          Capabilities(default_period=5, plan_order="always", plan_order_option="slurm_bids")),
    # It places every start in the allocator's planning order.
    Entry("backfill", Kind.PYTHON, "schedbench.policies.backfill:backfill",
          "SLURM backfill as Soner & Ozturan's baseline: EASY over a basic or multifactor priority order, node-level",
          (_PRIORITY_TYPE,), Capabilities(plan_order="always")),
    Entry("cph", Kind.PYTHON, "schedbench.policies.cph:cph",
          "CPH (Netti et al., Borghesi et al.): CP-SAT schedules a window on the aggregated resources for the least "
          "total wait; the allocator places the jobs it starts now, postponing those that do not fit on nodes",
          (Option("cp_jobs", 100, "cph: the window, the first N queued jobs in PRB order that phase 1 schedules", int,
                  metavar="N"),
           Option("cp_det_time", 1.0, "cph: CP-SAT's deterministic-time limit per solve (its work units, about a "
                  "second each; never the wall clock)", float, metavar="T"),
           Option("cp_weights", "queue", "cph: wait weights 'queue' (max expected wait / the job's queue's; the "
                  "authors' code) or 'none' (the paper's total wait)", choices=("queue", "none")),
           Option("cp_seed", 0, "cph: CP-SAT's random seed (one worker)", int, metavar="N"))),
)

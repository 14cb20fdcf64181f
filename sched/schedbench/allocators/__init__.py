"""Allocators: which nodes a starting job gets.

One module per family: :mod:`.fit` (First-Fit, Best-Fit) and :mod:`.netti` (Netti et
al.'s Balanced, Weighted and Priority-Weighted).  Each allocator is a namedtuple state
class with kernels implementing the :func:`schedbench.core.hooks.choose` hook (and any
other allocator hook it needs), and a factory ``factory(setup, **options)`` taking exactly
the options declared below.  The factories return their state packed into the one state
class of :mod:`.dispatch`, which selects the family's kernels by an integer, so that a
scheduler's replay loop is compiled once for every allocator (a new family is one line
there).  All of them agree on *whether* a job fits (that depends on
the free resources only); they differ in *which* nodes it gets.

:data:`DECLARATIONS` is each allocator's whole description (name, factory, options with
defaults and help, capabilities: ``gives_plan_order`` when it implements the
``plan_order`` hook that planners on nodes need); :mod:`schedbench.registry` registers
them.  It lives here, not in the kernel modules, so that listing the registry imports no
kernels.
"""

from ..declarations import Capabilities, Entry, Kind, Option, names

_CRITICAL = Option("critical", ("gpus", "mics"), "balanced, priority-weighted: critical resource types, "
                   "comma-separated", names, metavar="TYPES")
_BOUND = Option("priority_bound", 10, "priority-weighted's bound on priorities", int, metavar="N")
_WEIGHT_RULE = Option(
    "weight_rule", "authors",
    "weighted / priority-weighted w_k: 'authors' (default: AccaSim's smoothing, counters start at 1 over a "
    "window of the next jobs) or 'text' (the paper's Eq. 1 over the whole queue)", choices=("authors", "text"),
)
_WINDOW = Option("window", 100, "weighted / priority-weighted: jobs in the 'authors' weight rule's window", int,
                 metavar="N")
_ORDERED = Capabilities(gives_plan_order=True)


def _node_prio(text: str) -> str:
    """keller's node_prio text, its syntax checked (the kernels' module is imported only
    when the option is given)."""
    from .keller import check_node_prio

    return check_node_prio(text)


DECLARATIONS: tuple[Entry, ...] = (
    Entry("ff", Kind.JITTED, "schedbench.allocators.fit:first_fit", "First-Fit: node index order",
          capabilities=_ORDERED),
    Entry("bf", Kind.JITTED, "schedbench.allocators.fit:best_fit", "Best-Fit: non-decreasing free cores + GPUs + MICs",
          capabilities=_ORDERED),
    Entry("balanced", Kind.JITTED, "schedbench.allocators.netti:balanced",
          "Balanced: nodes without free critical resources first, then interleaved bins", (_CRITICAL,), _ORDERED),
    Entry("weighted", Kind.JITTED, "schedbench.allocators.netti:weighted",
          "Weighted: rank by sum of w_k * impact_k, w_k = mean queued request x load / capacity",
          (_WEIGHT_RULE, _WINDOW)),
    Entry("priority-weighted", Kind.JITTED, "schedbench.allocators.netti:priority_weighted",
          "Weighted with bounded per-critical-type priorities", (_CRITICAL, _BOUND, _WEIGHT_RULE, _WINDOW)),
    Entry("keller", Kind.JITTED, "schedbench.allocators.keller:keller",
          "Keller's greedy mapper: cheap nodes first, rank max_r(node's r / machine's r) + prio_node",
          (Option("node_prio", "", "keller: prio_node per node, 'NODES:P;...' (NODES: all, gpu, mic or "
                  "ranges such as 0-15,32; default 0 everywhere)", _node_prio, metavar="SPEC"),), _ORDERED),
)

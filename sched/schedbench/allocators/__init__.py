"""Allocators: which nodes a starting job gets.

One module per family: :mod:`.fit` (First-Fit, Best-Fit) and :mod:`.netti` (Netti et
al.'s Balanced, Weighted and Priority-Weighted).  Each allocator is a namedtuple state
class with kernels implementing the :func:`schedbench.core.hooks.choose` hook (and any
other allocator hook it needs), and a factory ``build(setup, **options)`` listed in
:mod:`schedbench.registry`.  All of them agree on *whether* a job fits (that depends on
the free resources only); they differ in *which* nodes it gets.
"""

"""Jitted schedulers, one module per family: :mod:`.inorder` (FCFS, SJF), :mod:`.easy`
(EASY backfilling) and :mod:`.prb` (Netti et al.'s PRB).

A scheduler is a namedtuple state class whose pass kernel implements the
:func:`schedbench.core.hooks.schedule` hook (plus the optional hooks it needs) and a
factory ``build(setup, **options) -> JittedScheduler`` listed in
:mod:`schedbench.registry`; the core's replay loop (:mod:`schedbench.core.loop`) runs it.
"""

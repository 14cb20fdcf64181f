"""Jitted schedulers, one module per family: :mod:`.inorder` (FCFS, SJF), :mod:`.easy`
(EASY backfilling) and :mod:`.prb` (Netti et al.'s PRB).

A scheduler is a namedtuple state class whose pass kernel implements the
:func:`schedbench.core.hooks.schedule` hook, a ``_run`` kernel looping over the core's
``advance``, its pass and ``record`` (seven lines, see :mod:`.inorder`), and a factory
``build(setup, **options) -> JittedScheduler`` listed in :mod:`schedbench.registry`.
"""

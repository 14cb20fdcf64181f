"""Jitted schedulers, one module per family: :mod:`.inorder` (FCFS, SJF), :mod:`.easy`
(EASY backfilling) and :mod:`.prb` (Netti et al.'s PRB).

A scheduler is a namedtuple state class whose kernel implements the
:func:`schedbench.core.hooks.schedule` hook, a ``_run`` kernel that compiles the core's
replay loop for it (one line: :func:`schedbench.core.api.replay_loop`), and a factory
``build(setup, **options) -> JittedScheduler`` listed in :mod:`schedbench.registry`.
"""

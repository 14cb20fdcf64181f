"""Python-level policies, driven through the decision interface of
:mod:`schedbench.engine.simulation` (``decide(view) -> starts``), one module per family, each
registered in :mod:`schedbench.registry` with ``kind="python"``."""

"""CLI sub-commands, one module each; see :mod:`schedbench.cli`."""

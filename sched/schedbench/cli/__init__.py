"""The ``schedbench`` command line: :mod:`.main` builds the parser and runs a command; one
module per sub-command (``replay``, ``sweep``, ``traces`` ...) exposes ``register(subparsers)``."""

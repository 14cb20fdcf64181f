"""Exception types the CLI maps to exit statuses (data errors exit 1, usage errors 2)."""


class SchedbenchError(Exception):
    """Base of every error schedbench raises on purpose."""


class DataError(SchedbenchError, ValueError):
    """Bad input data: a malformed trace, a failed download, a checksum mismatch (exit 1)."""


class UsageError(SchedbenchError):
    """A wrong command line or option value (exit 2)."""

"""schedbench: a trace-replay benchmark suite for HPC job schedulers."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("schedbench")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0+unknown"

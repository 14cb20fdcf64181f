"""schedbench: a trace-replay benchmark suite for HPC job schedulers."""

__version__ = "0.1.0"

"""Reading and writing workloads: job tables, machines, SWF / Alea / Eurora readers, the trace catalog and downloads."""

# Registers the slurm.conf reader with machine.parse (it is built on io.machine, which
# cannot import it back), so that every --machine, not only io.load's, reads a slurm.conf.
from . import slurm_conf as _slurm_conf  # noqa: E402, F401

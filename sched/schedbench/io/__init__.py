"""Reading and writing workloads: job tables, machines, SWF / Alea / Eurora readers, the trace catalog and downloads."""

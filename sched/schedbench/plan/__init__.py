"""Planning support: the RUSV resource-usage vector, site policies and accounts."""

"""Shared pytest configuration."""

from hypothesis import settings

# numba compiles on first call, so a per-example deadline would flake on the first example.
settings.register_profile("schedbench", deadline=None)
settings.load_profile("schedbench")

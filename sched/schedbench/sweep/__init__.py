"""Sweeps: many replays from one TOML config, run in parallel and collected."""

"""Driving a replay: set-up (prepare), the one-call replay, the step-by-step Simulation for Python policies."""

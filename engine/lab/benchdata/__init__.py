"""Workloads of ``tau bench``: source files and the tasks run on them."""

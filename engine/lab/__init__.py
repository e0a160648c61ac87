"""The engine's lab: benchmarks, tuning, fitting, simulation and measurements over the runtime.

The runtime (engine/*.py outside this package) never imports it; the lab and the app may.
"""

"""tau's engine: models, contexts, drafters, verification, stats, benchmarks.

Knows nothing of agents or UI. Only ``engine.backend`` imports ``llama_cpp``.
"""

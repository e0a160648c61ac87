"""Evaluations of the agent on outside problems (python -m app.evals.humaneval)."""

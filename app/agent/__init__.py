"""The agent: a small loop that drives a local model through tool calls (no UI imports)."""

from app.agent.exits import AgentExit, Cancelled, EngineFailed, Finished, FormatGiveUp, StepLimit
from app.agent.loop import Agent

__all__ = ["Agent", "AgentExit", "Cancelled", "EngineFailed", "Finished", "FormatGiveUp", "StepLimit"]

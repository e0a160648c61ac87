"""Helpers for the agent tests (imported as ``agent_helpers``; pytest puts this folder on sys.path)."""

import json
import subprocess
from pathlib import Path

from app.config import Config
from app.events import AgentEvent
from tools.permissions_types import approve_all


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def agent_tools():
    from tools.registry import default_tools

    return default_tools()


def call(name: str, **arguments) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


class Recorder:
    def __init__(self) -> None:
        self.events: list[AgentEvent] = []

    def __call__(self, ev: AgentEvent) -> None:
        self.events.append(ev)

    def of(self, cls):
        return [e for e in self.events if isinstance(e, cls)]


# a job's first edit round (app.agent.repair) answered with no file, twice (its one resend):
# the round changes nothing and the tool loop goes on with the rest of a script
ROUND_MISSES = ("I will look at the code first.", "Let me use the tools.")


def make_agent(engine, root, *, mode="auto-edit", approver=approve_all, max_steps=10, on_event=None, **kw):
    from app.agent import Agent

    rec = on_event or Recorder()
    cfg = Config(mode=mode, max_steps=max_steps)
    agent = Agent(engine, root, config=cfg, approver=approver, on_event=rec, tools=agent_tools(), **kw)
    return agent, rec

"""The session's shell sandbox settings, from the config, for run_shell (tools.sandbox)."""

from __future__ import annotations

import re

from app.config import Config
from tools.sandbox import ShellOptions


def shell_options(config: Config, mode: str) -> ShellOptions:
    """What ``ctx.extra['shell']`` holds for a tool call in ``mode``."""
    allow = tuple(n for n in re.split(r"[,\s]+", config.shell_env_allow) if n)
    return ShellOptions(mode=mode, network=config.shell_network, sandbox=config.shell_sandbox, env_allow=allow)


def unconfined_notice(config: Config, mode: str) -> str | None:
    """The line a front end shows once when run_shell would run without bubblewrap."""
    from tools.sandbox_host import current_confinement

    return current_confinement(shell_options(config, mode)).notice

"""Entry point of the ``tau`` command.

Each subcommand lives in its own module under ``app.cli`` and exposes
``register(subparsers) -> None``, which adds a parser whose ``func(args, config) -> int``
runs it. With no subcommand, tau opens the interactive session (TUI, or ``--plain``).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from app.config import Config, ConfigError, load_config

SUBCOMMANDS = ("generate", "bench", "models", "edit", "run", "sessions", "serve", "tune")
EXIT_USAGE = 2


class UsageError(Exception):
    """Bad usage: printed as one line, exit status 2."""


def add_model_flags(p: argparse.ArgumentParser) -> None:
    """Flags that pick and configure the local model; shared by every command that loads one."""
    p.add_argument("--model", help="target GGUF path (default: the Qwen2.5-Coder-1.5B pack)")
    p.add_argument("--draft-model", dest="draft_model", help="draft GGUF path, or 'none'")
    p.add_argument("--ctx", dest="n_ctx", type=int, help="context length")
    p.add_argument("--threads", type=int, help="CPU threads (default: all cores)")
    p.add_argument("--gpu-layers", dest="gpu_layers", type=int, help="layers to offload (-1 = all)")
    p.add_argument("--kv-type", dest="kv_type", choices=["f16", "q8_0", "q4_0"], help="target KV cache type")


def add_shell_flags(p: argparse.ArgumentParser) -> None:
    """Flags of the shell sandbox (tools.sandbox); SUPPRESS so a subcommand's copy keeps the main one's."""
    p.add_argument("--network", dest="shell_network", action="store_const", const=True, default=argparse.SUPPRESS,
                   help="let shell commands use the network (off by default in auto-edit and full-auto)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tau", description="tau: a terminal coding assistant on its own speculative decoding engine"
    )
    parser.add_argument("--plain", action="store_true", help="line-mode interface instead of the full-screen TUI")
    parser.add_argument("--resume", nargs="?", const="latest", metavar="ID", help="continue a session")
    parser.add_argument("--mode", choices=["ask", "auto-edit", "full-auto"], help="permission mode")
    parser.add_argument("--local", action="store_true", help="load the model in-process even if a tau server runs")
    parser.add_argument("--endpoint", help="use an OpenAI-compatible endpoint instead of a local model")
    parser.add_argument("--api-key", dest="api_key", help="API key for --endpoint")
    add_shell_flags(parser)
    add_model_flags(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        try:
            mod = importlib.import_module(f"app.cli.{name}")
        except ModuleNotFoundError as e:
            if e.name == f"app.cli.{name}":
                continue  # not built yet
            raise
        mod.register(sub)
    return parser


def config_from_args(args: argparse.Namespace) -> Config:
    cfg = load_config()
    over = {k: getattr(args, k, None) for k in ("model", "draft_model", "n_ctx", "threads", "gpu_layers", "kv_type", "mode",
                                                "endpoint", "api_key", "shell_network", "temperature_last")}
    if getattr(args, "local", False):
        over["local"] = True
    return cfg.with_overrides(**over)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        cfg = config_from_args(args)
        if args.command is None:
            from app.cli import interactive

            return int(interactive.run(args, cfg))
        return int(args.func(args, cfg))
    except (ConfigError, UsageError) as e:
        print(f"tau: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("tau: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

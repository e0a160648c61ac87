"""``tau serve``: keep the model resident and serve it over an OpenAI-compatible HTTP API."""

from __future__ import annotations

import argparse
import atexit
import dataclasses
import ipaddress
import os
import signal
import sys
from types import FrameType

from app.config import Config

DEFAULT_PORT = 8686


def register(subparsers: argparse._SubParsersAction) -> None:
    from app.cli.main import add_model_flags

    p = subparsers.add_parser(
        "serve",
        help="serve the model over an OpenAI-compatible HTTP API",
        description="Load the model once and serve it at http://HOST:PORT/v1 (chat/completions, "
        "completions, models), /health and /metrics. Other tau commands attach to it.",
    )
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: 127.0.0.1, loopback only)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default: {DEFAULT_PORT}; 0 = any free port)")
    p.add_argument("--api-key", dest="serve_api_key", metavar="KEY",
                   help="require 'Authorization: Bearer KEY' (default: $TAU_SERVE_API_KEY, else no key)")
    p.add_argument("--model-name", dest="model_name", help="model id in /v1/models (default: the GGUF file name without .gguf)")
    p.add_argument("--strict-model", dest="strict_model", action="store_true",
                   help="answer 404 to a request naming another model (default: any name gets the resident model)")
    p.add_argument("--allow-public", dest="allow_public", action="store_true",
                   help="serve on a non-loopback --host without an API key (anyone who can reach the port can use it)")
    p.add_argument("--max-tokens", dest="serve_max_tokens", type=_positive, metavar="N",
                   help="tokens a request that sets no max_tokens may generate (default: the rest of the context, as "
                   "OpenAI's API; a model caught in a loop then writes until the context is full)")
    p.add_argument("--keep-loops", dest="keep_loops", action="store_true",
                   help="let a reply caught in a loop run on (default: one that writes the same block of 100+ "
                   "characters three times back to back is stopped there and ends with its first copy)")
    p.add_argument("--temperature-last", dest="temperature_last", action="store_true", default=None,
                   help="sample in llama.cpp's order (top-k, top-p, min-p on the untempered distribution, then the "
                        "temperature), as llama-server does; default: the temperature first")
    p.add_argument("--quiet", action="store_true",
                   help="log no requests (default: a line on stderr as each request starts and as it ends)")
    add_model_flags(p)
    p.set_defaults(func=run)


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of tokens, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _log_line(line: str) -> None:
    print(f"tau serve: {line}", file=sys.stderr, flush=True)


def _err(msg: str) -> int:
    print(f"tau: {msg}", file=sys.stderr)
    return 1


class _Terminated(Exception):
    pass


def run(args: argparse.Namespace, cfg: Config) -> int:
    from app import announce
    from app.engines.factory import EngineOpenError, open_engine
    from app.progress import ProgressBar
    from app.server import create_app
    from app.server.app import LOOPBACK_NAMES, default_model_id
    from app.server.runner import bind_socket, serve_foreground
    from engine.types import SamplingParams

    host: str = args.host
    port: int = args.port
    key = args.serve_api_key or os.environ.get("TAU_SERVE_API_KEY") or None
    if not 0 <= port <= 65535:
        return _err(f"--port must be 0..65535, got {port}")
    if not _is_loopback(host) and key is None and not args.allow_public:
        return _err(f"refusing to serve on {host or 'all interfaces'} without an API key: anyone who can reach the "
                    "port could use the model; set --api-key (or $TAU_SERVE_API_KEY), or pass --allow-public")

    other = announce.find_server(cfg.model)
    if other is not None:
        return _err(str(announce.AlreadyServing(other)))
    try:
        sock = bind_socket(host, port)
    except OSError as e:
        return _err(f"cannot listen on {host}:{port}: {e.strerror or e}")
    port = sock.getsockname()[1]
    try:
        claim = announce.claim(cfg.model, host=host, port=port, api_key=key is not None, status="loading")
    except announce.AlreadyServing as e:
        sock.close()
        return _err(str(e))
    atexit.register(claim.release)
    engine = None
    try:
        if not _is_loopback(host) and key is None:  # --allow-public: said so, then served
            print(f"tau serve: WARNING: listening on {host} without an API key (--allow-public); anyone who "
                  "can reach this port can use the model", file=sys.stderr)
        print("tau serve: loading the model ...", file=sys.stderr, flush=True)
        try:
            engine = open_engine(dataclasses.replace(cfg, endpoint=""), local=True,
                                 progress=ProgressBar())
        except EngineOpenError as e:
            return _err(str(e))
        name = args.model_name or default_model_id(engine.info)
        app = create_app(engine, api_key=key, model_name=name, strict_model=args.strict_model,
                         default_max_tokens=args.serve_max_tokens,
                         request_log=None if args.quiet else _log_line, loop_stop=not args.keep_loops,
                         defaults=SamplingParams(temperature=cfg.temperature, top_p=cfg.top_p,
                                                 temper_last=cfg.temperature_last),
                         allowed_hosts=LOOPBACK_NAMES if _is_loopback(host) else None)
        ann = claim.update(status="ready", model=engine.info.path, model_name=name)
        print(f"tau serve: {name} (n_ctx {engine.info.n_ctx}, {engine.info.backend}) at {ann.url}/v1 "
              f"(pid {os.getpid()}){'; API key required' if key else ''}", file=sys.stderr, flush=True)

        def on_term(signum: int, frame: FrameType | None) -> None:
            raise _Terminated

        previous = signal.signal(signal.SIGTERM, on_term)
        try:
            serve_foreground(app, sock, log_level="warning")
        except (_Terminated, KeyboardInterrupt):
            pass
        finally:
            signal.signal(signal.SIGTERM, previous)
        print("tau serve: stopped", file=sys.stderr)
        return 0
    finally:
        claim.release()
        if engine is not None:
            engine.close()
        sock.close()

"""``tau generate``: one completion from a prompt file, with the engine's stats."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from app.cli.main import UsageError, add_model_flags
from app.config import Config
from app.wire import wire_for
from engine.types import SPEC_MODES, DoneEvent, GenerateRequest, SamplingParams, StatsEvent, TokenEvent


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("generate", help="one completion from a prompt file, with engine stats")
    p.add_argument("--prompt-file", required=True, help="file with the prompt text ('-' = stdin)")
    p.add_argument("--chat", action="store_true", help="apply the chat template (the file is one user message)")
    p.add_argument("--max-tokens", type=int, default=512)
    p.add_argument("--temp", type=float, default=0.0, help="temperature (0 = greedy)")
    p.add_argument("--top-p", type=float, default=1.0)
    p.add_argument("--top-k", type=int, default=0)
    p.add_argument("--min-p", type=float, default=0.0)
    p.add_argument("--temperature-last", dest="temperature_last", action="store_true", default=None,
                   help="llama.cpp's sampler order: top-k, top-p and min-p before the temperature")
    p.add_argument("--repeat-penalty", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--spec", choices=SPEC_MODES, default=None, help="speculation (default: config, auto)")
    p.add_argument("--json", action="store_true", help="print one JSON object: text, tokens, stats")
    add_model_flags(p)
    p.set_defaults(func=run)


def _read_prompt(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"prompt file not found: {path}")
    try:
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"prompt file is not UTF-8 text: {path}") from None


def run(args: argparse.Namespace, cfg: Config) -> int:
    from app.engines.factory import EngineOpenError, load_local
    from app.progress import ProgressBar

    text = _read_prompt(args.prompt_file)
    if not text.strip():
        raise UsageError("the prompt file is empty")
    if args.max_tokens <= 0:
        raise UsageError("--max-tokens must be positive")
    if args.temp < 0 or not 0 < args.top_p <= 1:
        raise UsageError("--temp must be >= 0 and --top-p in (0, 1]")
    try:
        engine = load_local(cfg, progress=ProgressBar(), draft_always=args.spec == "draft")  # asked for by name
    except EngineOpenError as e:
        print(f"tau: {e}", file=sys.stderr)
        return 1
    try:
        prompt = engine.chat_prompt([{"role": "user", "content": text}]) if args.chat else text
        req = GenerateRequest(
            prompt=prompt,
            max_tokens=args.max_tokens,
            sampling=SamplingParams(
                temperature=args.temp, top_p=args.top_p, top_k=args.top_k, min_p=args.min_p,
                repeat_penalty=args.repeat_penalty, seed=args.seed, temper_last=cfg.temperature_last,
            ),
            spec=args.spec or cfg.spec,
            stop=wire_for(engine.info).stop if args.chat else (),
        )
        done: DoneEvent | None = None
        for ev in engine.stream(req):
            if isinstance(ev, TokenEvent) and not args.json:
                sys.stdout.write(ev.text)
                sys.stdout.flush()
            elif isinstance(ev, DoneEvent):
                done = ev
            elif isinstance(ev, StatsEvent):
                pass
        assert done is not None
        if done.error:
            print(f"tau: generation failed: {done.error}", file=sys.stderr)
            return 1
        if args.json:
            print(json.dumps({"text": done.text, "tokens": list(done.token_ids), "finish_reason": done.finish_reason,
                              "stats": done.stats.to_dict()}))
        else:
            s = done.stats
            print(file=sys.stdout)
            print(
                f"[{s.completion_tokens} tokens, decode {s.decode_tok_s:.1f} tok/s, wall {s.wall_tok_s:.1f} tok/s, "
                f"tau {s.tau:.2f}, prefill {s.prefill_tok_s:.0f} tok/s ({s.reused_tokens} of {s.prompt_tokens} reused), "
                f"first token {s.first_token_s:.2f} s, ceiling {s.ceiling_tok_s:.0f} tok/s "
                f"({s.ceiling_frac * 100:.0f}%), finish {done.finish_reason}]",
                file=sys.stderr,
            )
        return 0
    finally:
        engine.close()

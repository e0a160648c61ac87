"""Keep the conversation inside the context window, leaving room for the reply.

Cheapest first: shorten old tool outputs, then drop them, then summarize the older part of the
conversation (through a callable, normally the engine), and as a last resort cut the largest
messages and drop old ones until the rendered prompt fits. ``fit`` never returns a prompt over
``limit - reply_tokens``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

Messages = list[dict]

TRIMMED = "\n[... {n} characters of old output trimmed ...]\n"
DROPPED = "[old tool output dropped to save context]"


@dataclass(frozen=True)
class BudgetLimits:
    limit: int  # context window in tokens
    reply_tokens: int  # reserved for the model's reply
    keep_recent: int = 4  # messages at the end left whole by the cheap steps
    short_output_chars: int = 1200  # old tool outputs are cut to this

    @property
    def prompt_budget(self) -> int:
        margin = 16 + self.limit // 100
        return max(64, self.limit - self.reply_tokens - margin)


def cut_middle(text: str, keep: int) -> str:
    if len(text) <= keep:
        return text
    head = keep * 2 // 3
    tail = keep - head
    return text[:head] + TRIMMED.format(n=len(text) - keep) + (text[-tail:] if tail else "")


class ContextBudget:
    def __init__(
        self,
        limits: BudgetLimits,
        render: Callable[[Messages], str],
        count: Callable[[str], int],
        summarize: Callable[[Messages], str] | None = None,
    ) -> None:
        self.limits = limits
        self.render = render
        self.count = count
        self.summarize = summarize

    def tokens(self, messages: Messages) -> int:
        return self.count(self.render(messages))

    def fits(self, messages: Messages) -> bool:
        return self.tokens(messages) <= self.limits.prompt_budget

    def fit(self, messages: Messages, force_summary: bool = False) -> tuple[Messages, list[str]]:
        """A copy of ``messages`` that fits the budget, and notes of what was done."""
        msgs = [dict(m) for m in messages]
        notes: list[str] = []
        if not force_summary and self.fits(msgs):
            return msgs, notes
        if not force_summary:
            old = range(1, max(1, len(msgs) - self.limits.keep_recent))
            for step, keep in (("shortened", self.limits.short_output_chars), ("dropped", 0)):
                changed = 0
                for i in old:
                    m = msgs[i]
                    c = str(m.get("content") or "")
                    if m.get("role") == "tool" and len(c) > max(keep, len(DROPPED)):
                        m["content"] = cut_middle(c, keep) if keep else DROPPED
                        changed += 1
                if changed:
                    notes.append(f"{step} {changed} old tool output(s)")
                    if self.fits(msgs):
                        return msgs, notes
        if self.summarize is not None:
            msgs, did = self._summarize(msgs, force_summary)
            if did:
                notes.append("summarized the earlier conversation")
                if self.fits(msgs):
                    return msgs, notes
        msgs, hard = self._hard_fit(msgs)
        notes.extend(hard)
        return msgs, notes

    def _summarize(self, msgs: Messages, force: bool) -> tuple[Messages, bool]:
        keep = 1 if force else self.limits.keep_recent
        cut = max(1, len(msgs) - keep)
        while cut > 1 and msgs[cut].get("role") == "tool":
            cut -= 1  # keep a tool result with the call that asked for it
        if cut <= 1:
            return msgs, False
        assert self.summarize is not None
        try:
            summary = self.summarize(msgs[1:cut]).strip()
        except Exception as e:  # the summarizer is best effort
            summary = f"(summary unavailable: {e})"
        summary = summary or "(no summary)"
        note = {"role": "user", "content": "Summary of the conversation so far:\n" + summary}
        return [msgs[0], note, *msgs[cut:]], True

    def _hard_fit(self, msgs: Messages) -> tuple[Messages, list[str]]:
        notes: list[str] = []
        for _ in range(200):
            if self.fits(msgs):
                return msgs, notes
            over = self.tokens(msgs) - self.limits.prompt_budget
            body = list(range(1, len(msgs)))
            biggest = max(body or [0], key=lambda i: len(str(msgs[i].get("content") or "")))
            content = str(msgs[biggest].get("content") or "")
            if len(content) > 400:
                # cut roughly the overflow (4 chars per token is generous) or half, whichever is more
                keep = max(200, min(len(content) // 2, len(content) - over * 4))
                msgs[biggest] = {**msgs[biggest], "content": cut_middle(content, keep)}
                notes.append(f"cut a {msgs[biggest].get('role')} message to {keep} characters")
            elif len(msgs) > 2:
                dropped = msgs.pop(1)
                while len(msgs) > 2 and msgs[1].get("role") == "tool":
                    msgs.pop(1)
                notes.append(f"dropped an old {dropped.get('role')} message")
            else:
                sys_c = str(msgs[0].get("content") or "")
                msgs[0] = {**msgs[0], "content": cut_middle(sys_c, max(0, len(sys_c) // 2))}
                if len(msgs) > 1:
                    last = str(msgs[-1].get("content") or "")
                    msgs[-1] = {**msgs[-1], "content": last[: len(last) // 2]}
                notes.append("cut the system prompt")
        return msgs, notes

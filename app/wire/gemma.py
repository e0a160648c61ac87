"""Gemma 2 and 3: ``<start_of_turn>user|model ... <end_of_turn>``, no system role, no tool format.

System text joins the first user turn (what Gemma 3's template does, and Gemma 2's template
raises on a system message). Gemma has no native tool calls, so it gets the generic
fenced-JSON protocol of ``app.wire.base``; tool results come back as user turns, merged with
any neighbouring user turn because the templates demand strict user/model alternation.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.wire.base import Wire

START, END = "<start_of_turn>", "<end_of_turn>"


class Gemma(Wire):
    name = "gemma"
    stop = (END, "<eos>", START)
    markup = (START + "model\n", START + "user\n", START, END, "<eos>", "<bos>")
    system_role = False

    def render(self, messages: Sequence[dict], tools: Sequence[dict] | None,
               add_generation_prompt: bool, bos_token: str = "") -> str:
        out = [bos_token or "<bos>"]
        for m in self.textual(messages, tools):
            role = "model" if m["role"] == "assistant" else m["role"]
            out.append(f"{START}{role}\n{m['content'].strip()}{END}\n")
        if add_generation_prompt:
            out.append(START + "model\n")
        return "".join(out)


GEMMA = Gemma()

"""Which wire format a model speaks, from what the engine knows of it.

``wire_for(info)`` looks, in order, at the family the engine declares (``ModelInfo.family``:
the scripted engine, a server that reports it), the chat template's markup, the vocabulary's
special tokens, the GGUF architecture and the model's name; a model none of them names gets the
generic fenced-JSON protocol. ``FINDERS`` lists every family's native call form for parsing.
"""

from __future__ import annotations

from app.wire.base import Wire
from app.wire.calls import Finder
from app.wire.chatml import QWEN3, QWEN25
from app.wire.gemma import GEMMA
from app.wire.llama3 import LLAMA3
from app.wire.mistral import MISTRAL
from engine.types import ModelInfo

GENERIC = Wire()
FAMILIES: dict[str, Wire] = {w.name: w for w in (QWEN25, QWEN3, LLAMA3, GEMMA, MISTRAL, GENERIC)}
ALIASES = {"qwen": QWEN25, "qwen2": QWEN25, "chatml": QWEN25, "llama": LLAMA3, "gemma2": GEMMA, "gemma3": GEMMA}
FINDERS: tuple[Finder, ...] = tuple(w.finder for w in (QWEN25, MISTRAL, LLAMA3) if w.finder is not None)

# (marker in a chat template or the vocabulary, family), most specific first
_MARKERS: tuple[tuple[str, Wire], ...] = (
    ("<|im_start|>", QWEN25),
    ("<|start_header_id|>", LLAMA3),
    ("<start_of_turn>", GEMMA),
    ("[INST]", MISTRAL),
)


def by_name(name: str) -> Wire | None:
    key = name.strip().lower()
    return FAMILIES.get(key) or ALIASES.get(key)


def _from_arch(arch: str) -> Wire | None:
    arch = arch.lower()
    if arch.startswith("qwen3"):
        return QWEN3
    if arch.startswith("qwen"):
        return QWEN25
    if arch.startswith("gemma"):
        return GEMMA
    if arch.startswith(("mistral", "mixtral")):
        return MISTRAL
    return None  # "llama" is Llama 2, 3 and most Mistral GGUFs alike: the tokens decide


def _qwen3(wire: Wire, info: ModelInfo, template: str) -> Wire:
    return QWEN3 if wire is QWEN25 and ("<think>" in template or info.arch.lower().startswith("qwen3")) else wire


def wire_for(info: ModelInfo) -> Wire:
    """The wire format of the model ``info`` describes."""
    declared = by_name(info.family) if info.family else None
    if declared is not None:
        return declared
    template = info.chat_template
    for marker, wire in _MARKERS:
        if marker in template:
            return _qwen3(wire, info, template)
    tokens = set(info.special_tokens)  # the chat format's own tokens say more than the network's name
    for marker, wire in _MARKERS:
        if marker in tokens:
            return _qwen3(wire, info, template)
    return _from_arch(info.arch) or _from_name(info.name) or GENERIC


_NAMES = (("qwen3", QWEN3), ("qwq", QWEN3), ("qwen", QWEN25), ("llama-3", LLAMA3), ("llama3", LLAMA3),
          ("gemma", GEMMA), ("mistral", MISTRAL), ("mixtral", MISTRAL), ("codestral", MISTRAL), ("devstral", MISTRAL))


def _from_name(name: str) -> Wire | None:
    """The family a model's name gives (an OpenAI-style endpoint tells nothing else)."""
    key = name.lower().replace("_", "-").replace(" ", "-")
    return next((wire for word, wire in _NAMES if word in key), None)

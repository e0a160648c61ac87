"""A long-running engine replayed in virtual time: one speculator, one n-gram overlay and one
draft model serving a sequence of varied requests, as ``tau serve`` does for an hour.

Each request is replayed as in :mod:`engine.lab.simulate` (the loop against the recorded
output, every pass charged what the verify-cost curve says), but the speculation state is
the engine's, carried from request to request, and the draft model is simulated with its
own costs: a drafted token, a per-pass sync, and a catch-up per history token it lacks
(after sitting out, or when the next request is another conversation). That is where a
policy that learned on one request can lose on the next; :func:`serve` shows it per request.

:func:`traffic` writes such a sequence at the token level: two agent conversations whose
turns grow with tool outputs and rewritten files, interleaved with whole-file edits and new
code, sampled and greedy.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from engine.decoder import run
from engine.drafters.base import Draft
from engine.drafters.draft_model import IN_STEP_SYNC
from engine.drafters.model_drafter import ModelDrafterBase, common_prefix
from engine.drafters.ngram import NgramDrafter
from engine.lab.simulate import OracleContext, VirtualClock, _Tokens
from engine.policy import CostCurve
from engine.slot import DrafterSlot
from engine.spec import SpecConfig
from engine.speculator import Speculator
from engine.target import Target
from engine.types import GenerateRequest, SamplingParams


@dataclass(frozen=True)
class Served:
    """One request of the traffic: its prompt, plain decoding's output, and how often a draft
    model's next token is right there (copying a file: often; new code: less)."""

    name: str
    prompt: tuple[int, ...]
    output: tuple[int, ...]
    mode: str = "sampled"
    draft_rate: float = 0.5


@dataclass(frozen=True)
class DraftCosts:
    token_s: float  # one drafted token (a single-row decode of the draft model)
    catch_up_s: float  # one history token taken in by a batched catch-up


class SimDraftModel(ModelDrafterBase):
    """A draft model in virtual time: right with the request's ``draft_rate`` per token (seeded),
    its context tracked by tokens so catch-ups cost what they would."""

    name = "draft"

    def __init__(self, clock: VirtualClock, costs: DraftCosts, seed: int = 0) -> None:
        super().__init__()
        self.clock, self.costs = clock, costs
        self.kv: list[int] = []
        self.reference: list[int] = []
        self.rate = 0.0
        self._rng = random.Random(seed)

    def serve(self, req: Served) -> None:
        self.reference = list(req.prompt) + list(req.output)
        self.rate = req.draft_rate

    def reset(self) -> None:
        self.kv.clear()

    def lag(self, history: Sequence[int]) -> int:
        return len(history) - common_prefix(self.kv, history)

    def _sync(self, history: Sequence[int]) -> tuple[float, int]:
        common = min(common_prefix(self.kv, history), len(history) - 1)
        todo = len(history) - common
        self.kv = list(history)
        seconds = self.costs.token_s if todo <= IN_STEP_SYNC else todo * self.costs.catch_up_s
        self.clock.now += seconds
        return seconds, todo

    def catch_up(self, history: Sequence[int]) -> None:
        seconds, n = self._sync(history)
        self.charge(0.0, 0, seconds, n)

    def propose(self, history: Sequence[int], max_len: int) -> Draft:
        if max_len <= 0 or not history:
            return Draft((), self.name)
        sync_s, synced = self._sync(history)
        n = len(history)
        toks: list[int] = []
        for i in range(max_len):
            right = n + i < len(self.reference) and self._rng.random() < self.rate
            want = self.reference[n + i] if n + i < len(self.reference) else 0
            toks.append(want if right else want + 1)
        self.clock.now += (max_len - 1) * self.costs.token_s  # the first token came with the sync
        self.kv.extend(toks[:-1])
        if synced <= IN_STEP_SYNC:
            self.charge(sync_s + (max_len - 1) * self.costs.token_s, max_len)
        else:
            self.charge((max_len - 1) * self.costs.token_s, max_len, sync_s, synced)
        return Draft(tuple(toks), self.name)


@dataclass(frozen=True)
class ServedResult:
    name: str
    mode: str
    plain_s: float  # the output in single-row passes
    decode_s: float  # the engine's passes, drafting and catch-ups included
    prefill_s: float  # what the engine added to the prefill (a draft model catching up with the prompt)
    drafted: dict[str, int]
    accepted: dict[str, int]

    @property
    def speedup(self) -> float:
        """Against plain decoding, the prefill's extra work counted."""
        spent = self.decode_s + self.prefill_s
        return self.plain_s / spent if spent else 1.0


def serve(traffic: Sequence[Served], curve_points: dict[int, float], *, spec: SpecConfig,
          draft: DraftCosts | None = None, prefill_s_per_token: float = 0.0, n_vocab: int | None = None) -> list[ServedResult]:
    """Every request of ``traffic`` through one engine's speculation state, in order.
    prefill_s_per_token: the target's (each prompt is prefilled whole; it is not compared)."""
    clock = VirtualClock()
    vocab = n_vocab or max(max(r.prompt + r.output) for r in traffic) + 2
    ngram = NgramDrafter()
    slots = {"ngram": DrafterSlot(ngram, lookup=True)}
    sim: SimDraftModel | None = None
    if draft is not None:
        sim = SimDraftModel(clock, draft)
        slots["draft"] = DrafterSlot(sim, lookup=False, initial_cost=draft.token_s)
    speculator = Speculator(CostCurve(dict(curve_points)), slots)
    out: list[ServedResult] = []
    for req in traffic:
        charge = CostCurve(dict(curve_points))  # what passes cost (the policy's own curve learns apart)
        ctx = OracleContext(req.prompt, req.output, vocab, charge, clock, prefill_s_per_token)
        if sim is not None:
            sim.serve(req)
        sampling = SamplingParams(temperature=0.0) if req.mode == "greedy" else SamplingParams(temperature=0.6, top_p=0.95, seed=len(out))
        greq = GenerateRequest(tuple(req.prompt), max_tokens=len(req.output), sampling=sampling)
        done = run(Target(ctx), _Tokens(), req.prompt, greq, spec, speculator, lambda _e: None, clock=clock)
        if list(done.token_ids) != list(req.output):
            raise RuntimeError(f"{req.name}: the replay left the recorded output")
        st = done.stats
        out.append(ServedResult(req.name, req.mode, (len(req.output) - 1) * charge.cost(1), st.decode_s,
                                st.prefill_s - len(req.prompt) * prefill_s_per_token, dict(st.drafted), dict(st.accepted)))
    return out


# -- synthetic traffic ---------------------------------------------------------------------

def _edited(rng: random.Random, text: list[int], vocab: int, changes: int) -> list[int]:
    """``text`` with a few changed, inserted and dropped spans (what an edit's output does to a file)."""
    out = list(text)
    for _ in range(changes):
        at = rng.randrange(len(out))
        kind = rng.random()
        span = [rng.randrange(vocab) for _ in range(rng.randint(1, 12))]
        if kind < 0.4:
            out[at : at + len(span)] = span
        elif kind < 0.8:
            out[at:at] = span
        else:
            del out[at : at + rng.randint(1, 8)]
    return out


def traffic(seed: int = 0, *, rounds: int = 3, vocab: int = 4000) -> list[Served]:
    """A long-running server's requests: per round, a turn of each of two agent conversations
    (a tool output read, a file rewritten), a standalone whole-file edit and new code."""
    rng = random.Random(seed)
    system = [rng.randrange(vocab) for _ in range(120)]  # shared by every request, as a fixed system prompt

    def words(n: int) -> list[int]:
        return [rng.randrange(vocab) for _ in range(n)]

    convs = [system + words(40), system + words(40)]
    reqs: list[Served] = []
    for r in range(rounds):
        for c, conv in enumerate(convs):
            call = words(25)  # a tool call: new text
            reqs.append(Served(f"agent{c}-r{r}-call", tuple(conv), tuple(call), "sampled", 0.45))
            conv += call
            file = words(rng.randint(250, 450))
            conv += file + words(20)  # the tool's output, then the user's next instruction
            rewrite = _edited(rng, file, vocab, 4)
            reqs.append(Served(f"agent{c}-r{r}-write", tuple(conv), tuple(rewrite), "sampled", 0.8))
            conv += rewrite + words(15)
        file = words(rng.randint(300, 500))
        mode = "greedy" if r % 2 else "sampled"
        reqs.append(Served(f"edit-r{r}", tuple(system + words(30) + file + words(30)),
                           tuple(_edited(rng, file, vocab, 3)), mode, 0.85))
        reqs.append(Served(f"new-r{r}", tuple(system + words(60)), tuple(words(300)), mode, 0.45))
    return reqs

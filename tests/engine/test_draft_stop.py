"""A draft is verified up to its first end-of-generation token: rows past the end of the reply
are never emitted, whatever the copy it came from ran on into."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.decoder import run
from engine.drafters.ngram import NgramDrafter
from engine.lab.simulate import OracleContext, VirtualClock, _Tokens
from engine.policy import Acceptance, CostCurve
from engine.slot import DrafterSlot
from engine.spec import SpecConfig
from engine.speculator import Speculator
from engine.target import Target
from engine.types import GenerateRequest, SamplingParams

V = 200
EOG = 199
REPLY = list(range(10, 70))  # a 60-token reply the transcript holds already (a repeated tool call)
NEXT_TURN = list(range(100, 160))  # what followed it there: the template's next turn, a tool output
PROMPT = [1, 2, *REPLY, EOG, *NEXT_TURN, 3]


class Counting(OracleContext):
    """The replay's oracle answering ``REPLY`` then the end token, counting the rows of its decode passes."""

    rows = 0

    def decode(self, tokens: Sequence[int], pos: int, *, all_logits: bool) -> np.ndarray:
        if pos >= len(self.prompt):
            self.rows += len(tokens)
        return super().decode(tokens, pos, all_logits=all_logits)


def test_a_copy_of_an_earlier_turn_is_verified_up_to_its_end_token_and_no_further() -> None:
    ctx = Counting(PROMPT, [*REPLY, EOG], V, CostCurve({1: 1.0}), VirtualClock())
    acc = Acceptance()
    for _ in range(20):  # the transcript's copies have run on: wide windows pay
        acc.update("ngram:greedy", 5, 64, 64)
        acc.update("ngram:greedy", 4, 64, 64)
    d = NgramDrafter()
    sp = Speculator(CostCurve({1: 1.0, 2: 1.1, 8: 1.3, 32: 1.8, 64: 2.5}), {d.name: DrafterSlot(d)}, acc)
    req = GenerateRequest(tuple(PROMPT), max_tokens=500, sampling=SamplingParams(temperature=0.0))
    done = run(Target(ctx), _Tokens(EOG), PROMPT, req, SpecConfig(drafters=(d.name,)), sp, lambda _e: None,
               clock=lambda: 0.0)
    assert list(done.token_ids) == REPLY and done.finish_reason == "stop"
    assert done.stats.accepted.get("ngram", 0) > 20  # the copy was verified in windows
    # the passes emitted REPLY[1:] and the end token; a window's last row (its bonus token) is the only
    # one past the end: drafts that ran on into the next turn verified dozens more
    assert ctx.rows <= len(REPLY) + 1


def test_a_proposal_is_cut_after_its_end_token_and_kept_whole_without_one() -> None:
    d = NgramDrafter()
    sp = Speculator(CostCurve({1: 1.0, 2: 1.1, 64: 2.5}), {d.name: DrafterSlot(d)}, Acceptance())
    spec = SpecConfig(drafters=(d.name,))
    hist = [*PROMPT, *REPLY[:40]]
    sp.begin(hist, spec, "greedy", 500, _Tokens(EOG).is_eog)
    sp.saw(40)
    draft, _ = sp.pick(hist, spec, "greedy", 64)
    proposed = draft.tokens if draft is not None else sp.unverified.tokens if sp.unverified else ()
    assert tuple(proposed) == (*REPLY[40:], EOG)
    sp.begin(hist, spec, "greedy", 500)  # no end tokens known: the copy runs on
    sp.saw(40)
    draft, _ = sp.pick(hist, spec, "greedy", 64)
    proposed = draft.tokens if draft is not None else sp.unverified.tokens if sp.unverified else ()
    assert len(proposed) > len(REPLY) - 40 + 1 and proposed[len(REPLY) - 40] == EOG

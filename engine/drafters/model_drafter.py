"""What model-based drafters (draft model, MTP heads) share: the request's sampling and
their measured cost per drafted token, which the window policy weighs."""

from __future__ import annotations

import numpy as np

from engine.sampling import Sampler
from engine.types import SamplingParams


class ModelDrafterBase:
    def __init__(self) -> None:
        self.sampling: SamplingParams = SamplingParams()
        self.sampler = Sampler(self.sampling)
        self.seconds = 0.0  # time spent drafting (not catching up with the history)
        self.tokens = 0

    @property
    def cost_per_token(self) -> float:
        return self.seconds / self.tokens if self.tokens else 0.0

    def set_sampling(self, params: SamplingParams, rng: np.random.Generator | None = None) -> None:
        """Draft with the request's filters (stochastic drafts need the same q as p's pipeline)."""
        self.sampling = params
        self.sampler = Sampler(params, rng)

"""LocalEngine: llama.cpp in-process, with tau's speculative decoding.

Loads the target (and optionally a draft model), measures or loads the machine profile
(verify-cost curve, draft cost, memory bandwidth), and serves ``stream`` requests one at a
time on its owner thread.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import cast

from engine import backend
from engine.chat_template import chat_prompt as render_prompt
from engine.config import EngineConfig
from engine.costs import honest_bandwidth
from engine.decoder import run
from engine.drafters.draft_model import DraftModelDrafter
from engine.drafters.mtp import MtpDrafter
from engine.drafters.ngram import DEFAULT_KEY_LEN, NgramDrafter
from engine.draftload import draft_pays, load_draft
from engine.gguf_info import GGUFError, GGUFInfo, read_gguf, vocab_mismatch
from engine.machine import load_choice, measure_missing
from engine.memfit import FitError, check_fit
from engine.peer_backend import PeerSettings
from engine.policy import CostCurve
from engine.prefixcache import PrefixCache, common_prefix, restore_prefix, save_prefix
from engine.profile import CURVE_VERSION, load_profile, model_id, profile_path, save_profile
from engine.rowpool import RowPool
from engine.sideprefill import ALWAYS, SidePrefill, SideRates
from engine.sideverify import wide_passes
from engine.slot import DrafterSlot
from engine.spec import DEFAULT_MAX_WINDOW, SpecConfig, spec_preset
from engine.speculator import Speculator
from engine.target import Target
from engine.tuned import apply_tuned, tuned_settings, tuned_spec
from engine.types import (
    CancelToken,
    DoneEvent,
    EngineEvent,
    GenerateRequest,
    GenStats,
    LinkedCancel,
    ModelInfo,
    Progress,
    TokenEvent,
)
from engine.verify import top2_gap
from engine.widths import GPU_PASS_WIDTHS, fixed_widths
from engine.worker import OwnerThread

PRIME_CHUNK = 256  # tokens a prime computes between looks at its cancel token (about 1 s on a 2-core CPU)


class EngineError(RuntimeError):
    """Loading or running the engine failed; the message is one line for the user."""


class LocalEngine:
    def __init__(self, cfg: EngineConfig, progress: Progress | None = None) -> None:
        self.cfg = cfg
        self._owner = OwnerThread()
        self._closed = False
        try:
            self._owner.call(lambda: self._load(progress))
        except (GGUFError, backend.BackendError, ValueError, OSError, FitError) as e:
            self._owner.stop()
            raise EngineError(str(e)) from None

    @classmethod
    def load(cls, cfg: EngineConfig, progress: Progress | None = None) -> LocalEngine:
        return cls(cfg, progress)

    # -- loading (owner thread) ------------------------------------------------------------
    def _load(self, progress: Progress | None) -> None:
        cfg = self.cfg
        say = progress or (lambda _m, _f: None)
        backend.init(cfg.log_path)
        self.gguf: GGUFInfo = read_gguf(cfg.model_path)
        self.draft_gguf: GGUFInfo | None = None
        if cfg.draft_model_path:
            self.draft_gguf = read_gguf(cfg.draft_model_path)
            why = vocab_mismatch(self.gguf, self.draft_gguf)
            if why:
                raise EngineError(f"draft model {Path(cfg.draft_model_path).name} cannot draft for {Path(cfg.model_path).name}: {why}")
        say("checking memory", 0.05)
        self.fit = check_fit(cfg)  # a one-line FitError instead of an out-of-memory crash
        self.build = backend.build_id()
        self.choice = load_choice(cfg, self.build, say)
        say(f"loading {self.gguf.name}", 0.1)
        self.model = backend.Model(cfg.model_path, gpu_layers=cfg.gpu_layers, load_mtp=self.gguf.mtp_layers > 0,
                                   extra_buffers=self.choice.extra_buffers, amx=self.choice.amx)
        self.gpu = self.model.gpu
        n_ctx = min(cfg.n_ctx, self.model.n_ctx_train) if self.model.n_ctx_train > 0 else cfg.n_ctx
        self.flash_attn = self.choice.flash_attn
        ctx_kw: dict = dict(n_ctx=n_ctx, n_batch=cfg.n_batch, threads=self.choice.threads, kv_type=cfg.kv_type,
                            flash_attn=self.flash_attn)
        ctx: backend.Context | None = None
        self.mtp_note = ""  # why MTP heads in the GGUF are not used ("" = used or none)
        if self.model.n_layer_nextn > 0:
            from engine.mtp_backend import MtpTargetContext

            try:
                ctx = MtpTargetContext(self.model, **ctx_kw)
            except backend.BackendError as e:  # e.g. no MTP graph for this arch in llama.cpp
                self.mtp_note = str(e)
        self.ctx = ctx if ctx is not None else backend.Context(self.model, **ctx_kw)
        fixed = cfg.pass_widths if cfg.pass_widths is not None else GPU_PASS_WIDTHS if self.gpu else ()
        if ctx is None:  # the MTP context keeps its rows' hidden states: no padding rows there
            self.ctx.pad_table = fixed_widths(fixed)  # the curve is measured through them
        self.side_model: backend.Model | None = None
        self.side_ctx: backend.Context | None = None
        overlap = cfg.overlap_pick if cfg.overlap_pick is not None else self.gpu
        threads = cfg.verify_threads or 0  # None: none, the measured default (engine.rowpool)
        self.row_pool = RowPool(threads) if threads >= 2 else None
        self.target = Target(self.ctx, self._side_prefill(cfg, ctx_kw, mtp=ctx is not None),
                             overlap=overlap and ctx is None)  # the MTP context's steps feed its head
        # machine profile
        fa_key = "auto" if self.flash_attn is None else ("on" if self.flash_attn else "off")
        # one file per layout: a test or lab tool loading the plain layout re-measured the curve
        # for the next `tau` and the one after it, each overwriting the other's
        variant = f"{self.model.layout}-fa-{fa_key}"
        if self.ctx.pad_table:  # a padded pass costs what its width does: its own curve
            variant += "-rows" + "-".join(map(str, sorted(fixed)))
        ppath = profile_path(cfg.cache_dir, cfg.model_path, self.gpu, self.ctx.threads, self.build, variant)
        self.profile_file = ppath
        prof = load_profile(ppath)
        stale = prof.get("flash_attn", fa_key) != fa_key or prof.get("layout", self.model.layout) != self.model.layout
        self.draft_model = None
        self.draft_ctx = None
        self.draft_note = ""  # why a configured draft model is not loaded ("" = loaded or none)
        if self.draft_gguf is not None and not stale and not draft_pays(cfg, prof):
            self.draft_note = "not loaded: it cannot pay on this machine's measured costs"
            say(f"draft {self.draft_gguf.name} {self.draft_note}", 0.5)
            self.draft_gguf = None
        if self.draft_gguf is not None:
            say(f"loading draft {self.draft_gguf.name}", 0.5)
            self.draft_model, self.draft_ctx = load_draft(cfg, self.ctx, self.choice, self.flash_attn, gpu=self.gpu)
        dirty, bw = measure_missing(prof, cfg, self.ctx, self.draft_ctx, self.model, fa_key, stale=stale, gpu=self.gpu,
                                    say=say)
        wide, moved = wide_passes(cfg.side_verify, prof, self.ctx, self.side_ctx, self.model.layout,
                                  CURVE_VERSION, self.model.n_vocab, self.choice.copy_s)
        if dirty or moved:
            save_profile(ppath, prof)
        self.profile = prof
        self.tuned = tuned_settings(prof)  # None unless `tau tune` saved one
        eff = apply_tuned(cfg, self.tuned)  # settings the user gave explicitly win
        if eff.threads and eff.threads != self.ctx.threads:  # 0 = keep the context's own count (all cores):
            self.ctx.set_threads(eff.threads)  # llama.cpp would read 0 as its default of 4 threads
            if self.draft_ctx is not None:
                self.draft_ctx.set_threads(eff.threads)
            if self.side_ctx is not None:
                self.side_ctx.set_threads(eff.threads)
        self._max_window = eff.max_window or DEFAULT_MAX_WINDOW
        self.bytes_per_token = self.gguf.bytes_per_token
        seen = max(float(prof.get("plain_tok_s_max", 0.0)), 1.0 / self.choice.step_s if self.choice.step_s else 0.0)
        self.bandwidth_gbs = honest_bandwidth(float(bw or 0.0), self.bytes_per_token, seen) if bw else 0.0
        self.ceiling_tok_s = self.bandwidth_gbs * 1e9 / self.bytes_per_token if self.bandwidth_gbs else 0.0
        self.target.wide = wide  # wide verify passes on the other layout where they are cheaper there
        points = {int(k): float(v) for k, v in prof["verify_curve"].items()}
        curve = CostCurve(wide.effective(points) if wide is not None else points)
        self.ngram = NgramDrafter(eff.ngram_key or DEFAULT_KEY_LEN)
        slots = {"ngram": DrafterSlot(self.ngram, lookup=True)}
        self.draft_drafter: DraftModelDrafter | None = None
        if self.draft_ctx is not None:
            self.draft_drafter = DraftModelDrafter(self.draft_ctx)
            slots["draft"] = DrafterSlot(self.draft_drafter, lookup=False, initial_cost=float(prof.get("draft_token_s", 0.0)))
        self.mtp_drafter: MtpDrafter | None = None
        head = getattr(self.ctx, "head", None)
        if head is not None:
            if "mtp_token_s" not in prof:
                prof["mtp_token_s"] = head.token_cost()
                save_profile(ppath, prof)
            self.mtp_drafter = MtpDrafter(self.ctx)
            slots["mtp"] = DrafterSlot(self.mtp_drafter, lookup=False, initial_cost=float(prof["mtp_token_s"]))
        self.speculator = Speculator(curve, slots)
        self.prefix_cache: PrefixCache | None = None
        self._unsaved = 0  # tokens unsaved primes computed for the next request (it saves them with its own)
        if cfg.cache_dir and cfg.prefix_cache and self.mtp_drafter is None:  # the MTP context's state is not saved
            layout = f"{model_id(cfg.model_path)}-{self.build}-{cfg.kv_type}-fa{fa_key}-{self.model.layout}"
            self.prefix_cache = PrefixCache(Path(cfg.cache_dir) / "prefix" / layout)
        template = self.model.chat_template()
        self._template = template
        self._info = ModelInfo(
            name=self.gguf.name,
            path=cfg.model_path,
            n_ctx=self.ctx.n_ctx,
            arch=self.gguf.arch,
            quant=self.gguf.quant,
            size_bytes=self.gguf.file_size,
            draft_name=self.draft_gguf.name if self.draft_gguf else None,
            backend="llama.cpp (" + ("gpu" if self.gpu else "cpu") + ")",
            chat_template=template or "",
            special_tokens=self.gguf.special_tokens,
            n_vocab=int(self.model.n_vocab),
        )
        say("ready", 1.0)

    def _side_prefill(self, cfg: EngineConfig, ctx_kw: dict, *, mtp: bool) -> SidePrefill | None:
        """A context on the other CPU weight layout for long prompt additions, where calibration found it
        prefills faster (or the config asks for it); None on a GPU, with MTP heads, when system memory
        has no room for its cache, or if it cannot load."""
        ch = self.choice
        want = cfg.side_prefill if cfg.side_prefill is not None else ch.side_prefill_s > 0
        if not want or self.gpu or mtp or not self.fit.host_room_for(self.fit.side_prefill_bytes):
            return None
        rates = SideRates(ch.prefill_s, ch.side_prefill_s, ch.copy_s) if ch.side_prefill_s > 0 else ALWAYS
        try:
            self.side_model = backend.Model(cfg.model_path, gpu_layers=0, extra_buffers=not self.model.extra_buffers,
                                            amx=ch.side_amx)
            self.side_ctx = backend.Context(self.side_model, **ctx_kw)
        except backend.BackendError:
            if self.side_model is not None:
                self.side_model.close()
            self.side_model = None
            return None
        return SidePrefill(self.side_ctx, rates)

    def _note_plain_speed(self, stats: GenStats) -> None:
        """Raise the ceiling to a plain decode that beat it (a ceiling below a real decode is not one)."""
        if sum(stats.accepted.values()) or stats.decode_s <= 0 or stats.completion_tokens < 8 or not self.bandwidth_gbs:
            return
        tok_s = stats.completion_tokens / stats.decode_s
        if tok_s > self.ceiling_tok_s:
            self.ceiling_tok_s = tok_s
            self.bandwidth_gbs = tok_s * self.bytes_per_token / 1e9
            self.profile["plain_tok_s_max"] = tok_s
            save_profile(self.profile_file, self.profile)

    # -- Engine protocol -----------------------------------------------------------------
    @property
    def info(self) -> ModelInfo:
        return self._info

    def tokenize(self, text: str) -> list[int]:
        return self.model.tokenize(text, add_special=False, parse_special=True)

    def detokenize(self, tokens: Sequence[int]) -> str:
        return self.model.detokenize(tokens)

    def count_tokens(self, text: str) -> int:
        return len(self.tokenize(text))

    def chat_prompt(self, messages: Sequence[dict], tools: Sequence[dict] | None = None, add_generation_prompt: bool = True) -> str:
        # the model's template, else its family's own renderer (engine.chat_template), never ChatML by default
        return render_prompt(self._info, self._template, messages, tools, add_generation_prompt,
                             bos_token=self.gguf.token_text("tokenizer.ggml.bos_token_id"),
                             eos_token=self.gguf.token_text("tokenizer.ggml.eos_token_id"))

    def register_context(self, key: str, text: str) -> None:
        self.ngram.add_source(key, self.tokenize(text))

    @property
    def max_window(self) -> int:
        """Drafted tokens per pass at most: configured, tuned or the default."""
        return self._max_window

    def spec_config(self, mode: str) -> SpecConfig:
        return tuned_spec(spec_preset(mode, self._max_window), self.tuned, mode)

    def stream(
        self, request: GenerateRequest, cancel: CancelToken | None = None, spec: SpecConfig | None = None
    ) -> Iterator[EngineEvent]:
        if self._closed:
            raise EngineError("engine is closed")
        stop = LinkedCancel(cancel)  # the caller's token, plus "the consumer went away"
        q: queue.Queue[EngineEvent | BaseException] = queue.Queue()
        spec = spec or self.spec_config(request.spec)

        def job() -> None:
            try:
                q.put(self._generate(request, spec, q.put, stop))
            except BaseException as e:  # noqa: BLE001 - reported as a DoneEvent
                q.put(e)

        self._owner.submit(job)
        finished = False
        try:
            while True:
                ev = q.get()
                if isinstance(ev, BaseException):
                    finished = True
                    yield DoneEvent("", (), "error", GenStats(), error=f"{type(ev).__name__}: {ev}")
                    return
                if isinstance(ev, DoneEvent):
                    finished = True
                yield ev
                if finished:
                    return
        finally:
            if not finished:
                stop.cancel()  # the consumer went away: free the engine at the next pass

    def _generate(self, request: GenerateRequest, spec: SpecConfig, emit, cancel: CancelToken) -> DoneEvent:
        prompt = list(request.prompt) if not isinstance(request.prompt, str) else self.tokenize(request.prompt)
        if not prompt:
            return DoneEvent("", (), "error", GenStats(), error="empty prompt")
        if self.draft_drafter is not None:
            self.draft_drafter.set_sampling(request.sampling)
        if self.mtp_drafter is not None:
            self.mtp_drafter.set_sampling(request.sampling)
        t0 = time.perf_counter()
        first = 0.0

        def emit_timed(ev: EngineEvent) -> None:
            nonlocal first
            if not first and isinstance(ev, TokenEvent):
                first = time.perf_counter() - t0
            emit(ev)

        try:
            restore_prefix(self.prefix_cache, self.target, prompt)
            done = run(self.target, self.model, prompt, request, spec, self.speculator, emit_timed, cancel,
                       self.ceiling_tok_s, pool=self.row_pool)
            self._note_plain_speed(done.stats)
            done = replace(done, stats=replace(done.stats, first_token_s=first,
                                               ceiling_tok_s=self.ceiling_tok_s or done.stats.ceiling_tok_s))
            if done.error is None:
                reused = done.stats.reused_tokens
                save_prefix(self.prefix_cache, self.target, prompt, done.stats.prompt_tokens - reused + min(self._unsaved, reused))
            return done
        except backend.BackendError as e:
            self.target.rollback(0)
            return DoneEvent("", (), "error", GenStats(prompt_tokens=len(prompt)), error=str(e))
        finally:
            self._unsaved = 0  # what primes left unsaved belongs to this request alone

    def prime(self, prompt: str | Sequence[int], cancel: CancelToken | None = None, save: bool = True) -> int:
        """Compute ``prompt``'s KV cache now, ahead of a request that starts with it (the TUI primes
        its conversation while the user types), and save it as a prefix state for later processes.
        Computed in chunks so that a cancel (closing) or a request queued behind it (another
        client of ``tau serve``) waits for one chunk at most; returns the tokens computed afresh."""
        if self._closed:
            return 0
        toks = list(prompt) if not isinstance(prompt, str) else self.tokenize(prompt)

        def job() -> int:
            if not toks or (cancel is not None and cancel.cancelled):
                return 0
            try:
                restore_prefix(self.prefix_cache, self.target, toks)
                self.target.home()
                start = done = common_prefix(self.target.kv, toks)
                # a request waiting behind it computes the rest itself at no extra cost: yield to it
                while done < len(toks) and not (cancel is not None and cancel.cancelled) and not self._owner.pending:
                    done = min(done + PRIME_CHUNK, len(toks))
                    self.target.prefill(toks[:done])
            except backend.BackendError:
                self.target.rollback(0)  # as after a failed request: the next prefill starts over
                return 0
            whole = done == len(toks)
            if done > start and save and whole:
                save_prefix(self.prefix_cache, self.target, toks, done - start)
            elif done > start:  # unsaved, or cut short (a request waits: it saves them with its own)
                self._unsaved += done - start
            return done - start

        return cast(int, self._owner.call(job))

    def next_token_gap(self, tokens: Sequence[int]) -> float:
        """The target's top-2 logit gap for the token after ``tokens`` (one plain prefill, reusing
        the cached prefix): how near a tie its greedy choice there is."""
        return cast(float, self.call(lambda: top2_gap(self.target.prefill(list(tokens))[0])))

    @property
    def peer_settings(self) -> PeerSettings:
        """The model and load settings a peer implementation runs with, to compare like with like."""
        return PeerSettings(self.cfg.model_path, self.ctx.n_ctx, self.cfg.n_batch, self.ctx.threads,
                                    self.cfg.gpu_layers, self.model.extra_buffers and self.model.amx,
                                    self.cfg.draft_model_path)

    def call(self, fn: Callable[[], object]) -> object:
        """Run ``fn`` on the owner thread (for benchmarks that touch contexts directly)."""
        return self._owner.call(fn)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True

        def free() -> None:
            if self.side_ctx is not None:
                self.side_ctx.close()
            if self.side_model is not None:
                self.side_model.close()
            if self.draft_ctx is not None:
                self.draft_ctx.close()
            if self.draft_model is not None:
                self.draft_model.close()
            self.ctx.close()
            self.model.close()

        try:
            self._owner.call(free)
        finally:
            self._owner.stop()
            pool = getattr(self, "row_pool", None)  # None also when loading failed before it
            if pool is not None:
                pool.close()

    @property
    def queue_length(self) -> int:
        return self._owner.pending

"""The KV state of a prompt's prefix saved by one engine and loaded by the next (a new process pays
only for what is new), with the same greedy output as an engine that prefilled everything."""

from __future__ import annotations

from pathlib import Path

from engine.config import EngineConfig
from engine.local import LocalEngine
from engine.types import DoneEvent, GenerateRequest, generate
from tests.engine.tinymodel import write_tiny_model

FIXED = "".join(chr(97 + (i * 7) % 26) for i in range(220))  # the fixed part: a system prompt's worth


def _run(model: str, cache: Path, prompt: str, **kw) -> DoneEvent:
    eng = LocalEngine.load(EngineConfig(model_path=model, n_ctx=512, threads=1, cache_dir=str(cache), **kw))
    try:
        return generate(eng, GenerateRequest(prompt, max_tokens=24, spec="off"))
    finally:
        eng.close()


def test_a_new_engine_loads_the_saved_prefix_and_decodes_the_same(tmp_path) -> None:
    model = str(write_tiny_model(tmp_path / "t.gguf", vocab=300, byte_fallback=True))
    cache = tmp_path / "cache"
    first = _run(model, cache, FIXED + " question one")
    assert first.error is None and first.stats.reused_tokens == 0
    assert list((cache / "prefix").rglob("*.kv")), "the first engine saved nothing"
    again = _run(model, cache, FIXED + " question one")
    assert again.stats.reused_tokens >= len(FIXED)  # prefilled only what the saved state lacks
    assert again.token_ids == first.token_ids

    other = FIXED + " another question"
    warm = _run(model, cache, other)
    cold = _run(model, tmp_path / "cold", other, prefix_cache=False)
    assert warm.stats.reused_tokens >= len(FIXED) and cold.stats.reused_tokens == 0
    assert warm.stats.prompt_tokens == cold.stats.prompt_tokens
    assert warm.token_ids == cold.token_ids
    assert warm.stats.first_token_s > 0 and cold.stats.first_token_s > 0


def test_a_state_that_does_not_load_falls_back_to_a_full_prefill(tmp_path) -> None:
    model = str(write_tiny_model(tmp_path / "t.gguf", vocab=300, byte_fallback=True))
    cache = tmp_path / "cache"
    first = _run(model, cache, FIXED + " q")
    for kv in (cache / "prefix").rglob("*.kv"):
        kv.write_bytes(b"not a state")
    again = _run(model, cache, FIXED + " q")
    assert again.error is None and again.stats.reused_tokens == 0 and again.token_ids == first.token_ids


def test_a_prompt_that_adds_a_file_to_a_saved_system_prompt_is_saved_too(tmp_path) -> None:
    """A fresh ``tau edit`` of a file edited before loads the system prompt and the file: a saved
    state covering only the shared system prompt does not stop the file's prompt being saved."""
    from engine.prefixcache import MAX_SAVE_TOKENS, MIN_NEW, PrefixCache

    pc = PrefixCache(tmp_path / "p")
    pc.root.mkdir()
    system = list(range(1000, 1000 + 200))
    other_file = system + list(range(5000, 5300))
    pc.path_for(other_file).write_bytes(b"state")  # what the backend would have written
    pc.saved(pc.path_for(other_file), other_file)
    this_file = system + list(range(7000, 7300))
    assert pc.should_save(this_file, fresh=len(this_file) - len(system))  # 300 tokens beyond the saved 200
    assert not pc.should_save(other_file + [1, 2], fresh=len(other_file))  # all but 2 tokens saved already
    assert not pc.should_save(system + [1] * (MIN_NEW - 1), fresh=MIN_NEW)
    long = list(range(MAX_SAVE_TOKENS + 1))
    assert not pc.should_save(long, fresh=len(long))  # too big to keep
    assert pc.best(this_file).common == len(system)

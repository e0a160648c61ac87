"""A reply caught in a loop (the same block written again and again) is stopped at its third copy, keeps the
first, and the model is told why; a counting loop is stopped after a long run; repeated short lines, a block
written twice, real code and repetition the prompt holds are left alone."""

from pathlib import Path

from agent_helpers import call, make_agent

from app.agent.direct_edit import plan_edit
from app.events import EngineStatsEvent, Notice, ToolResultEvent
from app.loopwatch import COUNTER_EVERY, LONG_SPAN, MIN_PERIOD, LoopWatch, counter_period, loop_period
from engine.scripted import CHARS_PER_TOKEN, ScriptedEngine

FUNC = (
    "def median(values):\n    ordered = sorted(values)\n    n = len(ordered)\n    mid = n // 2\n"
    "    if n % 2:\n        return ordered[mid]\n    return (ordered[mid - 1] + ordered[mid]) / 2\n\n\n"
)


def test_the_period_of_a_loop_at_the_end_is_found():
    assert loop_period("intro\n" + FUNC * 3) == len(FUNC)
    # a rotation: the loop is caught wherever the text stops inside its block
    assert loop_period("intro\n" + FUNC * 3 + FUNC[:40]) == len(FUNC)
    # a block whose own lines repeat still reports the whole block
    block = "x = 1\n" * 3 + FUNC
    assert loop_period(block * 3) == len(block)


def test_what_is_not_a_loop_is_left_alone():
    assert loop_period("intro\n" + FUNC * 2) == 0  # twice is a reply quoting its code, not a loop
    assert loop_period("    assert f(1) == 1\n" * 40) == 0  # short lines: shorter than MIN_PERIOD
    assert loop_period(FUNC * 3 + "\nprint(median([1, 2, 3]))\n") == 0  # it moved on
    varied = "".join(FUNC.replace("median", f"median{i}") for i in range(5))
    assert loop_period(varied) == 0
    assert len(FUNC) >= MIN_PERIOD


def test_the_watch_fires_on_streamed_text_and_keeps_the_first_copy():
    watch = LoopWatch()
    text = "Here it is:\n" + FUNC * 7
    fired_at = None
    for i in range(0, len(text), 4):
        if watch.feed(text[i:i + 4]):
            fired_at = i
            break
    assert fired_at is not None and fired_at < len("Here it is:\n") + 3 * len(FUNC) + 40
    kept = watch.kept(text)
    assert kept.count("def median") == 1 and kept.startswith("Here it is:\ndef median")
    assert LoopWatch().kept(text) == text  # no loop seen: nothing cut


def test_a_block_the_prompt_already_repeats_is_copied_not_a_loop():
    table = "".join(FUNC for _ in range(4))
    allowed, plain = LoopWatch(allow="rewrite this file:\n" + table), LoopWatch(allow="a file with one copy:\n" + FUNC)
    for i in range(0, len(table), 4):
        allowed.feed(table[i:i + 4])
        plain.feed(table[i:i + 4])
    assert allowed.period == 0 and plain.period == len(FUNC)


def test_a_looping_reply_is_stopped_and_its_first_copy_used(repo):
    looping = "I will write it.\n" + call("write_file", path="stats.py", content=FUNC * 40)
    engine = ScriptedEngine([looping, "Wrote stats.py with median."])
    agent, rec = make_agent(engine, repo)
    agent.run_turn("Write stats.py with a median function")
    assert any(n.message.startswith("stopped the reply: it wrote the same") for n in rec.of(Notice))
    # the stream was cut soon after the third copy: the engine sent a fraction of the 40
    first = next(e for e in rec.of(EngineStatsEvent) if e.final)
    assert first.stats.completion_tokens < len(looping) // CHARS_PER_TOKEN // 4
    # the cut call (its JSON closed by the repair) writes one copy, and the history holds one
    assert [r.ok for r in rec.of(ToolResultEvent)] == [True]
    assert (repo / "stats.py").read_text().count("def median") == 1
    assert engine.prompts[1].count("ordered = sorted(values)") == 1


def test_a_loop_that_leaves_no_call_is_sent_back_with_the_reason(repo):
    looping = "<tool_call>\n{\"name\": \"write_file\", \"arguments\": " + FUNC * 40
    fixed = call("write_file", path="stats.py", content=FUNC)
    engine = ScriptedEngine([looping, fixed, "Wrote stats.py with median."])
    agent, rec = make_agent(engine, repo)
    agent.run_turn("Write stats.py with a median function")
    assert "repeated the same text over and over" in engine.prompts[1]
    assert engine.prompts[1].count("ordered = sorted(values)") == 1
    assert (repo / "stats.py").read_text() == FUNC


def test_tau_edit_stops_a_looping_rewrite_and_resends_with_the_reason(tmp_path):
    (tmp_path / "stats.py").write_text("def mean(values):\n    return sum(values) / len(values)\n")
    whole = "def mean(values):\n    return sum(values) / len(values)\n\n\n" + FUNC
    looping = "stats.py\n```python\n" + whole + FUNC * 30
    engine = ScriptedEngine([looping, f"stats.py\n```python\n{whole}```\n"])
    outcome = plan_edit(engine, tmp_path, ["stats.py"], "add a median function")
    assert outcome.failures == [] and outcome.changes[0].new.count("def median") == 1
    # the cut reply (its fence never closed) is sent back once, holding one copy, with the reason
    assert outcome.generations == 2 and engine.prompts[1].count("ordered = sorted(values)") == 1
    assert "repeated the same text over and over" in engine.prompts[1]


def _fed(text: str, allow: str = "") -> LoopWatch:
    watch = LoopWatch(allow=allow)
    for i in range(0, len(text), 5):
        if watch.feed(text[i:i + 5]):
            break
    return watch


def test_a_counting_loop_is_stopped_after_a_long_run_and_kept_whole():
    counting = "def f(n):\n" + "".join(f"    if n == {i}:\n        return {i * i}\n" for i in range(2, 400))
    watch = _fed(counting)
    assert watch.counter and watch.period == len("    if n == 0:\n        return 0\n")
    # stopped as soon as the run, numbers masked, filled the span (its numbers make the text a little longer)
    assert LONG_SPAN <= len(watch.text) < LONG_SPAN + 800 + COUNTER_EVERY
    assert watch.kept(counting) == watch.text and "stopped the reply: it repeated one" in watch.describe()
    assert counter_period(counting) == watch.period and counter_period(counting[:LONG_SPAN // 2]) == 0
    # a hand-written table of cases is far shorter than the span
    short = "def f(n):\n" + "".join(f"    if n == {i}:\n        return {i * i}\n" for i in range(2, 40))
    assert _fed(short).period == 0
    # numbers in the prompt's own long table are copied, not a loop
    table = "".join(f"{i}, score {i * 7 % 13}, total {i * i}\n" for i in range(600))
    assert _fed(table).counter and _fed(table, allow="rewrite data.csv:\n" + table).period == 0


def test_real_code_is_no_loop():
    bench = Path(__file__).resolve().parents[2] / "engine" / "lab" / "benchdata"
    for name in ("vending.py.txt", "seatmap.ts.txt", "bitset.go.txt", "ringbuf.c.txt"):
        text = (bench / name).read_text()
        # a file written twice is a reply quoting its code: the counter rule needs many copies of a block
        assert len(text) > 2000 and _fed(text).period == 0 and _fed(text * 2).period == 0, name

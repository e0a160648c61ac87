from app.agent.budget import DROPPED, BudgetLimits, ContextBudget
from app.wire.chatml import render_chatml


def count(text: str) -> int:
    return (len(text) + 3) // 4


def make(limit=2000, reply=400, summarize=None):
    return ContextBudget(BudgetLimits(limit, reply, keep_recent=2), lambda m: render_chatml(m), count, summarize)


def convo(n_tools: int, size: int) -> list[dict]:
    msgs = [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"}]
    for i in range(n_tools):
        msgs.append({"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "read_file", "arguments": {"path": f"f{i}"}}}]})
        msgs.append({"role": "tool", "content": f"output {i} " + "x" * size})
    return msgs


def test_under_budget_is_untouched():
    b = make()
    msgs = convo(1, 100)
    out, notes = b.fit(msgs)
    assert out == msgs and notes == []


def test_old_tool_output_is_shortened_first_and_recent_kept():
    b = make(limit=3000, reply=500)
    msgs = convo(4, 3000)
    out, notes = b.fit(msgs)
    assert b.tokens(out) <= b.limits.prompt_budget
    assert notes and "shortened" in notes[0]
    assert out[-1]["content"] == msgs[-1]["content"]  # the newest output is whole
    assert "trimmed" in out[3]["content"] and out[3]["content"].startswith("output 0")
    assert msgs[3]["content"].endswith("x")  # the input list is not modified


def test_then_dropped_then_summarized():
    calls = []

    def summarize(old):
        calls.append(old)
        return "- read files f0..f8"

    b = make(limit=1500, reply=300, summarize=summarize)
    msgs = convo(40, 300)
    out, notes = b.fit(msgs)
    assert b.tokens(out) <= b.limits.prompt_budget
    assert any("dropped" in n for n in notes) or any(DROPPED in str(m.get("content")) for m in out)
    assert "summarized the earlier conversation" in notes and calls
    assert out[0]["content"] == "sys" and "read files f0..f8" in out[1]["content"]
    assert out[2]["role"] != "tool"  # a tool result never loses its call


def test_never_overflows_even_with_one_huge_message():
    b = make(limit=1024, reply=256, summarize=lambda old: "s" * 5000)  # an unhelpful summary
    msgs = [{"role": "system", "content": "sys " * 300}, {"role": "user", "content": "y" * 50_000}]
    out, notes = b.fit(msgs)
    assert b.tokens(out) <= b.limits.prompt_budget
    assert out[-1]["role"] == "user" and notes


def test_forced_summary_keeps_system_and_last_message():
    b = make(summarize=lambda old: f"{len(old)} messages")
    msgs = convo(3, 10)
    out, notes = b.fit(msgs, force_summary=True)
    assert notes == ["summarized the earlier conversation"]
    assert out[0] == msgs[0] and "Summary of the conversation so far" in out[1]["content"]
    assert out[-1]["role"] == "assistant" or out[-1] == msgs[-1]

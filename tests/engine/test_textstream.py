from engine.textstream import TextStream


def test_utf8_split_across_tokens() -> None:
    s = TextStream()
    data = "héllo ✓".encode()
    out = "".join(s.feed(data[i : i + 1]) for i in range(len(data))) + s.finish()
    assert out == "héllo ✓" == s.text


def test_stop_string_cuts_and_is_never_shown() -> None:
    s = TextStream(("</tool_call>",))
    shown = ""
    for piece in ["ab", "c</tool", "_call>", "ignored"]:
        shown += s.feed(piece.encode())
        if s.hit:
            break
    shown += s.finish()
    assert s.hit and shown == "abc" and s.text == "abc"


def test_held_back_text_is_released_when_not_a_stop() -> None:
    s = TextStream(("STOP",))
    assert s.feed(b"xST") == "x"
    assert s.feed(b"Ox") == "STOx"
    assert s.feed(b"ST") == ""
    assert s.finish() == "ST" and not s.hit

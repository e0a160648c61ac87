from __future__ import annotations

import pytest

from engine.drafters.ngram import NgramDrafter


def test_drafts_the_continuation_of_an_earlier_occurrence() -> None:
    d = NgramDrafter(key_len=3)
    hist = [10, 11, 12, 13, 14, 15, 16, 99, 10, 11, 12]
    assert d.propose(hist, 4).tokens == (13, 14, 15, 16)
    assert d.propose(hist, 2).tokens == (13, 14)


def test_no_match_no_draft_and_zero_window() -> None:
    d = NgramDrafter(key_len=3)
    assert d.propose([1, 2, 3, 4, 5], 4).tokens == ()
    assert d.propose([1, 2, 1, 2], 0).tokens == ()


def test_prefers_the_occurrence_with_the_longest_context_match() -> None:
    d = NgramDrafter(key_len=2, min_key_len=2)
    # "7 8" is followed by 1 after "5 6 7 8" and by 2 after "0 0 7 8"
    hist = [5, 6, 7, 8, 1, 0, 0, 7, 8, 2, 9, 5, 6, 7, 8]
    draft = d.propose(hist, 1)
    assert draft.tokens == (1,)
    assert draft.confidence >= 4


def test_incremental_history_and_a_new_sequence() -> None:
    d = NgramDrafter(key_len=2)
    h = [1, 2, 3, 4]
    assert d.propose(h, 2).tokens == ()
    h += [1, 2]
    assert d.propose(h, 2).tokens == (3, 4)
    # a different request shares only a prefix: stale continuations must not leak
    h2 = [1, 2, 9, 9, 1, 2]
    assert d.propose(h2, 2).tokens == (9, 9)


def test_registered_sources_draft_and_can_be_replaced_or_removed() -> None:
    d = NgramDrafter(key_len=3)
    d.add_source("a.py", [50, 51, 52, 53, 54, 55])
    assert d.propose([7, 50, 51, 52], 3).tokens == (53, 54, 55)
    d.add_source("a.py", [50, 51, 52, 60, 61])
    assert d.propose([7, 50, 51, 52], 3).tokens == (60, 61)
    d.remove_source("a.py")
    assert d.propose([7, 50, 51, 52], 3).tokens == ()
    assert d.n_sources == 0


def test_falls_back_to_shorter_keys() -> None:
    d = NgramDrafter(key_len=4, min_key_len=2)
    hist = [1, 2, 3, 4, 9, 9, 3, 4]
    assert d.propose(hist, 2).tokens == (9, 9)


def test_bad_key_lengths() -> None:
    with pytest.raises(ValueError):
        NgramDrafter(key_len=2, min_key_len=3)

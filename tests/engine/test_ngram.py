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


def _copy_setup() -> tuple[NgramDrafter, list[int], list[int]]:
    d = NgramDrafter(key_len=4)
    src = list(range(100, 200))
    d.add_source("a", src)
    # a decoy: the tokens after the change also follow it in another file, with more context
    d.add_source("b", [500, 121, 122, 900, 901, 902])
    hist = [1, 2] + src[:6]
    assert d.propose(hist, 8).tokens == tuple(src[6:14])
    hist += src[6:20]  # the draft was accepted and the copy went on
    follow = d.propose(hist, 3)
    assert follow.tokens == tuple(src[20:23])
    return d, src, hist


def test_picks_its_copy_up_again_after_a_changed_token() -> None:
    d, src, hist = _copy_setup()
    hist += [500]  # the output changes one token of the copy
    assert d.propose(hist, 3).tokens == ()  # nothing near the copy continues "500" yet
    hist += [121, 122]
    dr = d.propose(hist, 3)
    assert dr.tokens == (123, 124, 125)  # the copy, not file b's "900 901 902" after the longer match
    assert dr.resync


def test_picks_its_copy_up_again_after_an_insertion_and_a_deletion() -> None:
    d, src, hist = _copy_setup()
    hist += [700, 701, 702, 120, 121]  # three new tokens, then the source again
    assert d.propose(hist, 2).tokens == (122, 123)
    hist += [122, 123, 124, 128, 129]  # accepted, then source tokens 125..127 dropped
    dr = d.propose(hist, 2)
    assert dr.tokens == (130, 131) and dr.resync


def test_a_common_token_after_a_long_insertion_is_no_resync() -> None:
    d, src, hist = _copy_setup()
    hist += list(range(700, 712)) + [130]
    assert d.propose(hist, 2).tokens == ()
    hist += [131]
    weak = d.propose(hist, 2)  # the index still finds "130 131", as a short match, not a resync
    assert weak.tokens == (132, 133) and not weak.resync and weak.confidence == 2
    hist += [132]
    dr = d.propose(hist, 2)
    assert dr.tokens == (133, 134) and dr.resync


def test_a_long_copy_is_picked_up_again_after_a_short_one_took_the_anchor() -> None:
    d, src, hist = _copy_setup()
    d.add_source("c", [40, 41, 42, 43, 44, 45, 46])  # the instruction spells out a name the edit inserts
    for t in [7, 41, 42, 43, 44, 8, 9]:  # an inserted line: file c's tokens are confirmed for a while
        d.propose(hist, 2)
        hist.append(t)
    assert d.propose(hist, 2).tokens == ()
    hist += [123, 124, 125, 126]  # the file again, three tokens after where the output left it
    dr = d.propose(hist, 3)
    assert dr.tokens == (127, 128, 129) and dr.resync  # the long copy resumed, not a 4-token match
    hist += [127, 128]
    on = d.propose(hist, 3)
    assert on.tokens == (129, 130, 131) and on.resync  # ...and it is followed with its run counted


def test_a_place_the_index_found_a_token_before_the_resync_is_still_the_copy_resuming() -> None:
    d, src, hist = _copy_setup()
    hist += list(range(700, 712)) + [130, 131]  # a long insertion, then the file again
    assert not d.propose(hist, 2).resync  # the index's 2-token match comes first
    hist += [132]
    assert d.propose(hist, 2).resync  # the same place, now as the copy resuming
    hist += [133]  # confirmed: the copy goes on with its long run counted
    on = d.propose(hist, 2)
    assert on.tokens == (134, 135) and on.resync


def test_new_code_a_resync_took_for_the_file_further_on_leaves_the_copy_to_resume_where_it_left() -> None:
    d, src, hist = _copy_setup()  # the copy left the file at src[20]
    for t in [7, 8, 150, 151, 152, 153, 154]:  # new code that happens to read like the file 30 tokens on
        d.propose(hist, 2)
        hist.append(t)
    assert d.propose(hist, 2).tokens == (155, 156)  # followed there, as the output dropped source text
    for t in [9, 10, 11, 12, 13, 14, 15, 16, 17]:  # it was new code after all
        d.propose(hist, 2)
        hist.append(t)
    hist += [120, 121]  # the file again, where the copy left it
    assert not d.propose(hist, 2).resync  # two tokens: the index's short match, no evidence yet
    hist += [122, 123]  # confirmed: the long copy resuming, its run counted
    on = d.propose(hist, 3)
    assert on.tokens == (124, 125, 126) and on.resync


def test_an_unconfirmed_draft_does_not_move_the_copy() -> None:
    d, src, hist = _copy_setup()
    d.add_source("c", [40, 41, 42, 43, 44, 45])
    hist += [7, 41, 42, 43]  # the output wanders into file c: its draft comes from there...
    assert d.propose(hist, 2).tokens == (44, 45)
    hist += [121, 122]  # ...but the first drafted token was rejected and the copy resumes
    assert d.propose(hist, 2).tokens == (123, 124)


def test_plain_steps_confirm_the_copy_and_following_it_counts_once_it_ran_long() -> None:
    d = NgramDrafter(key_len=4)
    src = list(range(100, 200))
    d.add_source("a", src)
    hist = [1, 2, 100, 101, 102]
    first = d.propose(hist, 4)
    assert first.tokens == (103, 104, 105, 106) and not first.resync
    for t in range(103, 114):  # plain steps emit what was proposed, one token at a time
        hist.append(t)
        following = d.propose(hist, 4)
        assert following.tokens == (t + 1, t + 2, t + 3, t + 4)
        assert not following.resync  # a copy of a few tokens may be chance (new code repeats bits)
    hist.append(114)  # the output has followed the copy for 12 tokens since the draft was made
    assert d.propose(hist, 4).resync


def test_a_reply_that_has_only_copied_one_place_drafts_an_opening_copy() -> None:
    from engine.drafters.ngram import OPENING_MIN

    d = NgramDrafter(key_len=4)
    file = list(range(100, 160))
    prompt = [1, 2, 3] + file + [4, 5, 6]
    d.take_in(prompt)
    hist = list(prompt) + file[:OPENING_MIN - 1]
    early = d.propose(hist, 4)
    assert early.tokens == tuple(file[OPENING_MIN - 1 : OPENING_MIN + 3]) and not early.opening
    hist.append(file[OPENING_MIN - 1])
    assert d.propose(hist, 4).opening  # six tokens of reply, every one of them a copy of the file
    # a code fence's first line above a file whose docstring the reply dropped: still an opening
    # copy; the same three tokens not found above the copy (prose quoting the prompt) are not
    doc = list(range(50, 60))
    fenced_prompt = [1, 2, 3, 900, 901, 902] + doc + file + [4, 5, 6]
    d.take_in(fenced_prompt)
    assert d.propose(fenced_prompt + [900, 901, 902] + file[:OPENING_MIN], 4).opening
    d.take_in(fenced_prompt)
    assert not d.propose(fenced_prompt + [903, 904, 905] + file[:OPENING_MIN], 4).opening
    # a reply that said something else first is no opening copy, whatever it copies now
    d.take_in(prompt)
    other = list(prompt) + [900, 901, 902, 903] + file[:OPENING_MIN + 4]
    dr = d.propose(other, 4)
    assert dr.tokens == tuple(file[OPENING_MIN + 4 : OPENING_MIN + 8]) and not dr.opening


def test_a_draft_from_the_replys_own_earlier_text_is_an_echo() -> None:
    d = NgramDrafter(key_len=4)
    prompt = [1, 2, 3] + list(range(100, 120))
    d.take_in(prompt)
    assert not d.propose(prompt + [100, 101, 102], 4).echo  # the prompt's text
    reply = [500, 501, 502, 503, 504, 505, 9, 500, 501, 502]  # the reply repeats its own first tokens
    dr = d.propose(prompt + reply, 3)
    assert dr.tokens == (503, 504, 505) and dr.echo


def test_the_places_kept_around_a_departed_copy_draft_what_a_fresh_scan_would() -> None:
    import random

    rng = random.Random(7)
    for _ in range(20):
        kept, fresh = NgramDrafter(key_len=4), NgramDrafter(key_len=4)
        src = [rng.randrange(12) for _ in range(150)]  # a small vocabulary: many repeated pairs
        for d in (kept, fresh):
            d.add_source("f", src)
        hist = [99, 98] + src[:30]
        for _ in range(250):  # the output copies, departs, repeats itself and resumes
            a = kept.propose(hist, 6)
            fresh._near.clear()  # no kept table: every pass scans anew
            assert a == fresh.propose(hist, 6)
            r = rng.random()
            hist.append(a.tokens[0] if a.tokens and r < 0.7 else rng.randrange(14))

"""core.edit.pieces: count and replace piece by piece give the builtins' answers exactly."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultwatch.core.edit import pieces

texts = st.text(alphabet="ab\r\n", max_size=60)
patterns = st.text(alphabet="ab\r\n", min_size=1, max_size=4)


@settings(max_examples=3000, deadline=None)
@given(texts, patterns, st.text(alphabet="xy\n", max_size=3), st.integers(1, 7))
def test_count_and_replace_match_the_builtins_at_every_piece_size(text, old, new, piece):
    assert pieces.count(text, old, piece) == text.count(old)
    assert pieces.replace(text, old, new, piece) == text.replace(old, new)


def test_self_overlapping_patterns_and_cuts_inside_matches():
    for text, old in [
        ("a" * 50, "aa"),
        ("ab" * 40 + "a", "aba"),
        ("\r\n" * 30, "\r\n"),
        ("aab" * 20, "ab"),
        ("b" + "a" * 49, "aaa"),
    ]:
        for piece in range(1, 9):
            assert pieces.count(text, old, piece) == text.count(old), (text, old, piece)
            assert pieces.replace(text, old, "X", piece) == text.replace(old, "X"), (text, old, piece)


def test_a_10_mb_note_is_done_in_pieces_with_the_same_answer(monkeypatch):
    text = "# big\n" + "word " * 2_000_000
    calls = []
    real = pieces._spans

    def spans(*args):
        for span in real(*args):
            calls.append(span)
            yield span

    monkeypatch.setattr(pieces, "_spans", spans)
    assert pieces.count(text, "word") == 2_000_000
    assert pieces.replace(text, "word", "wort") == text.replace("word", "wort")
    assert len(calls) >= 2 * (len(text) // pieces.PIECE)  # pieces of at most PIECE characters
    assert all(end - start <= pieces.PIECE + 8 for start, end in calls)

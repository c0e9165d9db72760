"""core.review.visible: one rule for what the person is shown of an agent's text."""

from __future__ import annotations

from vaultwatch.core.review.visible import visible, visible_parts


def test_a_line_in_parts_is_judged_as_the_whole_line():
    # a diff line's changed words are drawn one part at a time: a mark at a part's start sits on the
    # letter before it, so it is judged with that letter, as in the whole line
    assert visible_parts(["cafe", "\u0301 ok"]) == ["cafe", "\u0301 ok"]
    assert visible_parts(["1", "\u0336 paid"]) == ["1", "\\u0336 paid"]
    assert visible_parts([" ", "\u0301"]) == [" ", "\\u0301"]  # nothing under it
    assert "".join(visible_parts(["o\u0301\u0302", "\u0303\u0304\u0306"])) == visible("o\u0301\u0302\u0303\u0304\u0306")
    assert visible_parts(["plain", " ascii"]) == ["plain", " ascii"]

"""A status the person types in the `c` dialog (core.query.statuschoices.typed): one short line of
visible characters, or a sentence saying why not; the vault's own word in the vault's form."""

from __future__ import annotations

import pytest

from vaultwatch.core.query.statuschoices import MAX_TYPED, StatusChoice, typed

OFFERED = (StatusChoice("Published", ["[[Published]]"], 2), StatusChoice("retired", "retired", rule=True))


@pytest.mark.parametrize(
    "text, why",
    [
        ("", "an empty status says nothing"),
        ("   ", "an empty status says nothing"),
        ("in\nreview", "one line: no line breaks"),
        ("in\u2028review", "one line: no line breaks"),
        ("in\treview", "no tabs, control or invisible characters"),
        ("re\u200bview", "no tabs, control or invisible characters"),
        ("x" * (MAX_TYPED + 1), f"at most {MAX_TYPED} characters; this one has {MAX_TYPED + 1}"),
    ],
)
def test_a_typed_status_that_cannot_be_one_says_why(text: str, why: str) -> None:
    said = typed(text, OFFERED, bundle=False)
    assert isinstance(said, str) and why in said, said


def test_a_typed_word_is_written_plain_or_as_the_vault_holds_it() -> None:
    assert typed("  in review ", OFFERED, bundle=False) == StatusChoice("in review", "in review")
    assert typed("x" * MAX_TYPED, OFFERED, bundle=False) == StatusChoice("x" * MAX_TYPED, "x" * MAX_TYPED)
    assert typed("PUBLISHED", OFFERED, bundle=False) is OFFERED[0]


def test_an_okf_bundle_takes_only_okf_statuses() -> None:
    okf = tuple(StatusChoice(w, w) for w in ("draft", "stable", "deprecated"))
    assert typed("Stable", okf, bundle=True) is okf[1]
    said = typed("in review", okf, bundle=True)
    assert isinstance(said, str) and "draft, stable, deprecated" in said, said

"""What a person's rule covers (core.review.rulereach): a folder and everything in it however it is
written, brackets in a real folder name, and a grant that reaches no further than it names."""

from __future__ import annotations

import pytest

from vaultwatch.core.review.rulereach import covers


@pytest.mark.parametrize(
    "pattern, path",
    [
        ("Money/", "Money/m.md"),
        ("Money/", "Money"),
        ("Taxes", "Taxes/2024/t.md"),
        ("./Loans", "Loans/l.md"),
        ("X//Y/", "X/Y/z.md"),
        ("Public/../Private/**", "Private/a.md"),
        ("Finance [2024]/**", "Finance [2024]/b.md"),  # the folder's real name
        ("Finance [2024]/**", "Finance [2024]"),
        ("Finance [2024]/**", "Finance 2/b.md"),  # and the glob's reading, as before
        ("[Dd]rafts", "drafts/x.md"),
        ("Journal/*", "Journal/2024/d.md"),  # a restricting match of a folder holds what is in it
        ("*", "a/b.md"),
        ("A/**/B", "A/x/y/B/c.md"),
        ("**/Private", "a/Private/x.md"),
        (".", "a/b.md"),  # the whole vault
    ],
)
def test_a_restricting_rule_covers(pattern: str, path: str) -> None:
    assert covers(pattern, path)


@pytest.mark.parametrize(
    "pattern, path, granted",
    [
        ("Inbox/", "Inbox/Sub/a.md", True),
        ("Inbox [new]", "Inbox [new]/a.md", True),
        ("Inbox/*", "Inbox/a.md", True),
        ("Inbox/*", "Inbox/Sub", True),
        ("Inbox/*", "Inbox/Sub/a.md", False),  # a wildcard names entries, not what is in them
        ("Inbox/**/*.md", "Inbox/x.md/evil.md", True),
        ("*.md", "x.md/evil.md", False),
        ("*", "a/b.md", False),
        ("Money", "Moneyx/a.md", False),
        ("Private/**", "Privateer/x.md", False),
    ],
)
def test_a_grant_covers_what_it_names(pattern: str, path: str, granted: bool) -> None:
    assert covers(pattern, path, grants=True) is granted


def test_a_rule_never_covers_a_neighbour() -> None:
    assert not covers("Money", "Moneyx/a.md") and not covers("Money/", "Mone")
    assert not covers("Finance [2024]/**", "Finance [2024]x/b.md")


@pytest.mark.parametrize(
    "pattern, path",
    [
        ("Shared/Secret/**", "Shared/secret/a.md"),
        ("Shared/Secret/**", "SHARED/SECRET"),
        ("Shared/Secret/**", "Shared/Secret./a.md"),  # a Windows share and vfat drop trailing dots
        ("Shared/Secret/**", "Shared/Secret /a.md"),  # and a Windows share trailing spaces
        ("Shared/secret", "Shared/Secret/a.md"),
        ("[S]ecret/*.md", "secret/a.MD"),
        ("Private/**", "PRIVATE/a.md"),
    ],
)
def test_a_restricting_rule_covers_every_spelling_a_folding_disk_finds(pattern: str, path: str) -> None:
    """One folder of a vault may sit on a disk that folds case where the vault's root does not: there
    `Shared/secret` is `Shared/Secret`, so a rule that restricts covers it; a grant does not."""
    assert covers(pattern, path)
    assert not covers(pattern, path, grants=True)
    assert covers(pattern, path, grants=True, any_spelling=True)


def test_a_loose_reading_still_never_covers_a_neighbour() -> None:
    assert not covers("Shared/Secret/**", "Shared/Secrets/a.md")
    assert not covers("Shared/Secret/**", "Shared/Secret.d/a.md")
    assert not covers("Money", "moneyx/a.md")

"""Rules spelled so that they cover nothing are said (core.review.rulespelling), with the spelling
meant; a restricting rule spelled with backslashes is applied as meant too (core.review.rulereach),
and never so that it covers less than written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.waiting import wait_until
from vaultwatch.core.edit.effects import PathForm
from vaultwatch.core.events import IndexProblem
from vaultwatch.core.review import approval
from vaultwatch.core.review.agentrules import parse
from vaultwatch.core.review.policy import Policy, Rule
from vaultwatch.core.review.rulespelling import problem
from vaultwatch.core.vault import Vault


@pytest.mark.parametrize(
    "pattern, grants, said",
    [
        (
            "Templates\\**",
            False,
            '(it is applied as "Templates/**" too, so it protects no less): write it as "Templates/**"',
        ),
        ("Templates\\**", True, 'not "\\": write it as "Templates/**"'),
        (
            "../Templates/**",
            False,
            '".." climbs out of the vault, and rules are paths from its top folder: write it as "Templates/**"',
        ),
        ("Notes/../../Templates/**", True, 'write it as "Templates/**"'),
        (
            "Templates/** ",
            False,
            'begin or end with a space, which is seldom meant (it is applied as "Templates/**" too',
        ),
        (" Templates/**", True, 'seldom meant: write it as "Templates/**"'),
        ("", False, 'covers the whole vault: write "**" if that is meant, or remove it'),
        ("**", False, None),
        ("./Templates/**", False, None),  # rulereach drops `.`: it covers Templates as meant
        ("/Templates/**", False, None),  # anchored at the vault's root, as gitignore reads it
        ("Notes/../Templates/**", False, None),  # `..` inside the vault takes back a level
        ("Finance [2024]/**", False, None),
        ("Web clippings/*.md", True, None),
    ],
)
def test_what_is_amiss_with_a_spelling(pattern: str, grants: bool, said: str | None, tmp_path: Path) -> None:
    got = problem(pattern, grants, str(tmp_path))
    assert (got is None) if said is None else (got is not None and said in got), got


def test_an_absolute_path_inside_the_vault_is_said_with_its_path_from_the_top(tmp_path: Path) -> None:
    root = tmp_path / "v"
    (root / "Templates").mkdir(parents=True)
    got = problem(f"{root}/Templates/**", False, str(root))
    assert got is not None and got.endswith('not absolute paths: write it as "Templates/**"'), got
    got = problem(f"{root}/**", False, str(root))
    assert got is not None and got.endswith('write it as "**"'), got
    got = problem(f"{tmp_path}/Elsewhere/**", False, str(root))
    assert got is not None and "names a path outside this vault" in got, got


def test_a_restricting_rule_with_backslashes_covers_the_folder_meant() -> None:
    form = PathForm()
    policy = Policy("none", [Rule("Templates\\**", "never")])
    assert policy.mode_for("Templates/t.md", form)[0] == "never"
    assert policy.mode_for("Templates", form)[0] == "never"  # the folder itself (a rename of it)
    assert policy.mode_for("Notes/t.md", form)[0] == "none"
    assert policy.refusal(["Templates/Sub/t.md"], form) is not None


def test_reading_a_rule_as_meant_never_lets_it_shadow_a_stricter_rule() -> None:
    """First match wins: read as meant, `"A\\**" = "writes"` would come before `"A/B/**" = "never"`;
    the stricter answer of the two readings decides, so A/B stays refused to every agent."""
    form = PathForm()
    policy = Policy("none", [Rule("A\\**", "writes"), Rule("A/B/**", "never")])
    assert policy.mode_for("A/B/x.md", form)[0] == "never"
    assert policy.mode_for("A/x.md", form)[0] == "writes"


def test_a_granting_rule_with_backslashes_grants_nothing_more() -> None:
    form = PathForm()
    policy = Policy("writes", [Rule("Inbox\\**", "none")])
    assert policy.mode_for("Inbox/a.md", form)[0] == "writes"
    rules = parse({"agents": {"scribe": {"write": ["Inbox\\**"], "deny": ["Notes\\Private\\**"]}}}, None)
    scribe = rules.for_name("scribe")
    assert scribe.refusal("write", ["Inbox/a.md"]) is not None  # the grant, as written, reaches nothing
    helper = parse({"agents": {"helper": {"deny": ["Notes\\Private\\**"]}}}, None).for_name("helper")
    assert helper.refusal("write", ["Notes/Private/p.md"]) is not None  # the deny holds as meant
    assert helper.refusal("write", ["Notes/p.md"]) is None


def test_a_misspelled_rule_is_said_not_as_a_missing_folder(tmp_path: Path) -> None:
    settings = tmp_path / "settings.toml"
    root = tmp_path / "v"
    (root / "Templates").mkdir(parents=True)
    settings.write_text(f'[approve.folders]\n"{root}/Templates/**" = "never"\n"./Gone/**" = "never"\n')
    notices = approval.rule_notices(str(root), str(settings))
    assert len(notices) == 2, notices
    assert notices[0].startswith(f'settings file {settings}: rule "{root}/Templates/**" = "never" covers nothing')
    assert "names the folder 'Gone'" in notices[1], notices  # `./` is passed over: the folder is checked


def test_a_misspelled_rule_edited_in_is_said_once(make_vault, tmp_path: Path) -> None:
    root = make_vault({"Notes/a.md": "# A\n"})
    (root / "Templates").mkdir()
    settings = tmp_path / "settings.toml"
    settings.write_text('[approve.folders]\n"Templates/**" = "never"\n')
    vault = Vault(root)
    said: list[str] = []
    vault.bus.subscribe(lambda e: said.append(e.message) if isinstance(e, IndexProblem) else None)
    gate = approval.configure(vault, settings=str(settings))
    assert gate.rule_notices() == []
    settings.write_text('[approve.folders]\n"Templates\\\\**" = "never"\n')
    try:
        wait_until(lambda: gate.applied().nevers() == ("Templates\\**",) and bool(said), what=f"said: {said}")
        settings.write_text('[approve.folders]\n"Templates\\\\**" = "never"\n"Notes/**" = "writes"\n')
        wait_until(lambda: len(gate.applied().folders) == 2, what="the second edit read")
    finally:
        vault.stop()
    assert [m for m in said if "covers nothing" in m] == [
        f'settings file {settings}: rule "Templates\\**" = "never" covers nothing as written: a vault path\'s '
        'folders are separated by "/", not "\\" (it is applied as "Templates/**" too, so it protects no less): '
        'write it as "Templates/**"'
    ], said  # once: the second edit left it as it was

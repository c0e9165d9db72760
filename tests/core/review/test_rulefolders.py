"""Rules that name a folder the vault does not have are said (core.review.rulefolders), on real
folders on disk: a rule's literal folder part, compared as the vault's rules compare names."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from tests.waiting import TIMEOUT, wait_until
from vaultwatch.core.edit.effects import PathForm
from vaultwatch.core.events import IndexProblem
from vaultwatch.core.review import approval
from vaultwatch.core.review.agentrules import parse
from vaultwatch.core.review.rulefolders import FolderWatch, literal_folder, missing, named_folders
from vaultwatch.core.vault import Vault


@pytest.mark.parametrize(
    "pattern, folder",
    [
        ("Templates/**", "Templates"),
        ("Templates/", "Templates"),
        ("Web clippings/*.md", "Web clippings"),
        ("Projects/Secret/**", "Projects/Secret"),
        ("Projects/*/drafts/**", "Projects"),
        ("Notes/a.md", "Notes"),
        ("**/drafts/**", None),
        ("*.md", None),
        ("Templates", None),
        ("[Tt]emplates/**", None),
        ("./Templates/**", "Templates"),  # `.` and a leading `/` are passed over, as the rules read them
        ("/Templates/**", "Templates"),
        ("../Templates/**", None),
    ],
)
def test_the_literal_folder_of_a_glob(pattern: str, folder: str | None) -> None:
    assert literal_folder(pattern) == folder


def test_rules_naming_absent_folders_are_found_in_any_unicode_form(tmp_path: Path) -> None:
    (tmp_path / "Templates").mkdir()
    (tmp_path / unicodedata.normalize("NFD", "Modèles")).mkdir()
    agents = parse(
        {"agents": {"scribe": {"write": ["Clippings/**"], "deny": ["Templates/**"]}, "default": {"deny": ["Gone/**"]}}},
        None,
    )
    folders = [
        ("Templates/**", "never"),
        (unicodedata.normalize("NFC", "Modèles") + "/**", "never"),
        ("**/x", "writes"),
    ]
    gone = missing(str(tmp_path), named_folders(folders, agents), PathForm())
    assert gone == {
        "Clippings": ['[agents."scribe"] write "Clippings/**"'],
        "Gone": ['[agents."default"] deny "Gone/**"'],
    }


def test_a_folder_going_away_is_said_once(tmp_path: Path) -> None:
    (tmp_path / "Templates").mkdir()
    said: list[str] = []
    watch = FolderWatch(
        str(tmp_path), PathForm(), lambda: [("Templates", 'rule "Templates/**" = "never"')], said.append
    )
    assert watch.look(moved=True) == []
    (tmp_path / "Templates").rename(tmp_path / "_templates")
    watch.look(moved=True)
    watch.look(moved=True)
    assert said == [
        'Templates was moved or removed: rules naming it match nothing now: rule "Templates/**" = "never" '
        "(rules do not follow a renamed folder: edit settings.toml to its new name)"
    ]


def test_the_settings_notice_names_the_rule_and_the_file(tmp_path: Path) -> None:
    settings = tmp_path / "settings.toml"
    settings.write_text('[approve.folders]\n"Templates/**" = "never"\n')
    (tmp_path / "v").mkdir()
    [notice] = approval.rule_notices(str(tmp_path / "v"), str(settings))
    assert notice.startswith(f'settings file {settings}: rule "Templates/**" = "never" names the folder \'Templates\'')
    assert "matches nothing" in notice


def test_a_folder_the_vault_never_had_is_said_without_rename_advice(tmp_path: Path) -> None:
    """With no journal to say the vault had it, the rule is another vault's as likely as a renamed
    one's: no advice to remove it (it would drop the other vault's protection)."""
    settings = tmp_path / "settings.toml"
    settings.write_text('[approve.folders]\n"Templates/**" = "never"\n')
    (tmp_path / "v").mkdir()
    [notice] = approval.rule_notices(str(tmp_path / "v"), str(settings))
    assert "which this vault has never had" in notice and "remove it" not in notice, notice


def test_an_empty_folder_a_rule_names_is_said_at_once_when_removed_with_the_real_watcher(make_vault, tmp_path: Path):
    """An empty folder's removal makes no note event; the index keeps folders, so the watcher's
    DocumentsChanged names it. Said at once for one there at the start, and for one missing at the
    start (not said then: the vault never had it), made since (empty) and removed again."""
    root = make_vault({"Notes/a.md": "# A\n"})
    (root / "Drafts").mkdir()
    settings = tmp_path / "settings.toml"
    settings.write_text('[approve.folders]\n"Drafts/**" = "never"\n"Later/**" = "never"\n')
    vault = Vault(root)
    said: list[str] = []
    vault.bus.subscribe(lambda e: said.append(e.message) if isinstance(e, IndexProblem) else None)
    gate = approval.configure(vault, settings=str(settings))
    assert gate.rule_notices() == []  # a folder this vault never had: another vault's, no news here
    vault.start_live(search=False)
    try:
        assert vault.wait_watching(TIMEOUT)
        assert vault.wait_ready(TIMEOUT)
        (root / "Drafts").rmdir()
        wait_until(lambda: any(m.startswith("Drafts was moved or removed") for m in said), what=f"Drafts said: {said}")
        (root / "Later").mkdir()  # the person makes the folder the start said was missing
        wait_until(lambda: vault.snapshot.get("Later") is not None, what="Later in the index")
        (root / "Later").rmdir()
        wait_until(lambda: any(m.startswith("Later was moved or removed") for m in said), what=f"Later said: {said}")
        assert [m for m in said if "Later" in m] == [
            'Later was moved or removed: rules naming it match nothing now: rule "Later/**" = "never" '
            "(rules do not follow a renamed folder: edit settings.toml to its new name)"
        ]
    finally:
        vault.stop()


def test_a_folder_the_ignore_rules_exclude_is_said_at_once_when_removed(make_vault, tmp_path: Path):
    """A folder `.vaultwatchignore` keeps out of the index makes no index event when it goes (the
    index never held it), yet agents may still write there and a rule may name it: the real
    watcher sees the directory go and the rule's notice comes at once."""
    root = make_vault({"Notes/a.md": "# A\n", ".vaultwatchignore": "Private/\n"})
    (root / "Private").mkdir()
    (root / "Private" / "keys.md").write_text("# Keys\n")
    settings = tmp_path / "settings.toml"
    settings.write_text('[approve.folders]\n"Private/**" = "never"\n')
    vault = Vault(root)
    said: list[str] = []
    vault.bus.subscribe(lambda e: said.append(e.message) if isinstance(e, IndexProblem) else None)
    gate = approval.configure(vault, settings=str(settings))
    assert gate.rule_notices() == []
    vault.start_live(search=False)
    try:
        assert vault.wait_watching(TIMEOUT)
        assert vault.wait_ready(TIMEOUT)
        assert vault.snapshot.get("Private") is None and vault.snapshot.get("Private/keys.md") is None
        (root / "Private" / "keys.md").unlink()
        (root / "Private").rmdir()
        wait_until(lambda: any(m.startswith("Private was moved or removed") for m in said), what=f"said: {said}")
    finally:
        vault.stop()

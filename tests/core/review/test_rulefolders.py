"""Rules that name a folder the vault does not have are said (core.review.rulefolders), on real
folders on disk: a rule's literal folder part, compared as the vault's rules compare names."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from vaultwatch.core.edit.effects import PathForm
from vaultwatch.core.review import approval
from vaultwatch.core.review.agentrules import parse
from vaultwatch.core.review.rulefolders import FolderWatch, literal_folder, missing, named_folders


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

"""The settings file (issue 16): $XDG_CONFIG_HOME/vaultwatch/settings.toml holds the theme (kept
when one is picked), the default vault and a keymap of binding ids; tested with a tmp
XDG_CONFIG_HOME."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from vaultwatch.tui import settings
from vaultwatch.tui.idle import settle

APPROVE = '# my rules\n[approve]\nmode = "writes"\n\n[approve.folders]\n"Journal/**" = "none"\n'


@pytest.fixture
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    return home


def settings_file(home: Path) -> Path:
    return home / "vaultwatch" / "settings.toml"


def write(home: Path, text: str) -> Path:
    path = settings_file(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "before, after",
    [
        ("", '[tui]\ntheme = "nord"\n'),
        (APPROVE, APPROVE + '\n[tui]\ntheme = "nord"\n'),
        (
            '[tui]\nvault = "~/n"\n\n[keymap]\n"list.sort" = "S"\n',
            '[tui]\nvault = "~/n"\ntheme = "nord"\n\n[keymap]\n"list.sort" = "S"\n',
        ),
        ('[tui]\ntheme = "gruvbox"  # old\nvault = "x"\n', '[tui]\ntheme = "nord"\nvault = "x"\n'),
    ],
)
def test_the_theme_line_changes_and_nothing_else(before: str, after: str) -> None:
    assert settings.with_theme(before, "nord") == after
    assert tomllib.loads(after)["tui"]["theme"] == "nord"


def test_a_file_that_does_not_parse_is_reported_and_left_alone(config_home: Path) -> None:
    path = write(config_home, "[tui\ntheme = 1\n")
    found = settings.load()
    assert found.theme is None and found.problems and "is not used" in found.problems[0]
    assert "does not parse" in (settings.save_theme("nord") or "")
    assert path.read_text() == "[tui\ntheme = 1\n"


def test_values_of_the_wrong_type_are_reported_and_the_rest_used(config_home: Path) -> None:
    write(config_home, '[tui]\ntheme = 3\nvault = "~/Notes"\n[keymap]\n"list.sort" = "S"\n"app.filter" = 1\n')
    found = settings.load()
    assert found.theme is None and found.vault == str(Path.home() / "Notes")
    assert found.keymap == {"list.sort": "S"}
    assert any("theme must be" in p for p in found.problems) and any("app.filter" in p for p in found.problems)


async def test_theme_keymap_and_a_picked_theme_kept(config_home: Path, tui_demo: Path, app_for) -> None:
    path = write(
        config_home,
        APPROVE + '\n[tui]\ntheme = "textual-light"\n\n[keymap]\n"list.sort" = "S"\n'
        '"app.filter" = "ctrl+f"\n"no.such" = "x"\n',
    )
    app = app_for(tui_demo, settings=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app)
        assert app.theme == "textual-light"
        said = [n.message for n in app._notifications]
        assert any("'no.such'" in m for m in said), said
        doclist = app.main.active_list
        await pilot.press("s")  # rebound: s no longer sorts
        await settle(app)
        assert doclist.sort == "path"
        await pilot.press("S")
        await settle(app)
        assert doclist.sort == "title"
        await pilot.press("ctrl+f")
        await pilot.pause()
        assert app.focused is app.query_one("#filter-input")
        await pilot.press("escape")
        app.theme = "nord"  # as ctrl+p › Theme does
        await pilot.pause()
        for worker in [w for w in app.workers if w.group == "settings"]:
            await worker.wait()
    data = tomllib.loads(path.read_text())
    assert data["tui"]["theme"] == "nord"
    assert data["approve"] == {"mode": "writes", "folders": {"Journal/**": "none"}}  # the rules stay
    assert path.read_text().startswith("# my rules\n")


async def test_without_settings_the_theme_is_not_written(config_home: Path, tui_demo: Path, app_for) -> None:
    app = app_for(tui_demo)  # the test config reads no settings file
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app)
        app.theme = "nord"
        await pilot.pause()
    assert not settings_file(config_home).exists()


def test_the_default_vault_comes_from_the_settings(config_home: Path, tmp_path: Path) -> None:
    vault = tmp_path / "my vault"
    (vault / "Inbox").mkdir(parents=True)
    (vault / "Inbox" / "Only Note.md").write_text("# Only\n")
    write(config_home, f'[tui]\nvault = "{vault}"\n')
    done = subprocess.run(
        [sys.executable, "-m", "vaultwatch.tui.commands.cli", "list", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert '"path": "Inbox/Only Note.md"' in done.stdout

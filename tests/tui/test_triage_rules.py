"""The Deprecated and Stale tabs on a vault that is no OKF bundle (tests/triage_vault.py): they
list by the person's rules (the defaults, or `[triage]` in the settings file) and say in one line
which rule applies and where it is set."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_helpers import open_loaded

from tests.triage_vault import DEPRECATED, STALE, make_triage_vault
from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.idle import settle


@pytest.fixture
def triage_vault(tmp_path: Path) -> Path:
    return make_triage_vault(tmp_path / "vault")


def app_on(root: Path, **changes):
    return make_app(open_loaded(root), config=fixed_config(**changes))


async def open_tab(app, pilot, key: str, pane_id: str, want: int):
    await settle(app)
    await pilot.press(key)
    await settle(app)
    for _ in range(50):  # the tab's list may land a frame after settle
        if app.main.active_pane.id == pane_id and len(app.main.active_list.rows) == want:
            break
        await pilot.pause(0.1)
    return app.main.active_list


async def test_deprecated_and_stale_by_the_default_rules(triage_vault: Path) -> None:
    app = app_on(triage_vault)
    async with app.run_test(size=(160, 40)) as pilot:
        lst = await open_tab(app, pilot, "2", "deprecated", len(DEPRECATED))
        assert [e.path for e in lst.rows] == DEPRECATED
        assert str(app.main.tabs.get_tab("deprecated").label) == f"Deprecated {len(DEPRECATED)}"
        line = str(app.query_one("#deprecated-info").render())
        assert line.startswith("Rule: status is deprecated / archived / obsolete / superseded or tagged #deprecated")
        assert "set in the defaults [triage]" in line
        lst = await open_tab(app, pilot, "3", "stale", len(STALE))
        # most overdue first: expires 2026-06-30, then review_by 2026-11-01
        assert [e.path for e in lst.rows] == ["Reference/Vendor Terms.md", "Projects/Roadmap.md"]
        assert str(app.main.tabs.get_tab("stale").label) == f"Stale {len(STALE)}"
        line = str(app.query_one("#stale-info").render())
        assert "Rule: stale_after / review_by / expires reached" in line


async def test_settings_change_the_rules_and_the_line_says_so(
    triage_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config"
    (config / "vaultwatch").mkdir(parents=True)
    settings = config / "vaultwatch" / "settings.toml"
    settings.write_text(
        '[triage]\ndeprecated_status = ["archived"]\n'
        f'[vaults."{triage_vault}".triage]\ndeprecated_tags = []\ndeprecated_flags = []\nstale_keys = ["expires"]\n'
    )
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    app = app_on(triage_vault)
    async with app.run_test(size=(160, 40)) as pilot:
        lst = await open_tab(app, pilot, "2", "deprecated", 1)
        assert [e.path for e in lst.rows] == ["Projects/Old Website.md"]
        line = str(app.query_one("#deprecated-info").render())
        assert line.startswith("Rule: status is archived · set in ") and str(settings) in line
        lst = await open_tab(app, pilot, "3", "stale", 1)
        assert [e.path for e in lst.rows] == ["Reference/Vendor Terms.md"]
        assert "Rule: expires reached" in str(app.query_one("#stale-info").render())


AGENT_NOTE = "Notes/Agent Draft.md"


def agent_changed(root: Path):
    """The vault, loaded, after an agent rewrote AGENT_NOTE (journaled, not reviewed)."""
    from vaultwatch.core.edit.writes import Writer

    vault = open_loaded(root)
    Writer(vault).write(AGENT_NOTE, "# Agent Draft\n\nThe agent rewrote this.\n", overwrite=True, actor="agent:bot")
    return vault


async def wait_until(pilot, condition, tries: int = 100) -> None:
    for _ in range(tries):
        if condition():
            return
        await pilot.pause(0.05)
    assert condition()


@pytest.mark.parametrize("write_verified", [False, True])
async def test_v_on_an_agent_changed_note_marks_it_reviewed(
    triage_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_verified: bool
) -> None:
    """The Trust tab lists the note an agent changed and nobody reviewed; `v` and `y` take it out
    (the tab's count too). The note is written to only when the settings say write_verified."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    if write_verified:
        config = tmp_path / "config"
        (config / "vaultwatch").mkdir(parents=True)
        (config / "vaultwatch" / "settings.toml").write_text("[triage]\nwrite_verified = true\n")
        monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    from vaultwatch.tui.screens.triage import ConfirmScreen

    vault = agent_changed(triage_vault)
    written = (triage_vault / AGENT_NOTE).read_bytes()
    app = make_app(vault, config=fixed_config(user="tester"))
    async with app.run_test(size=(160, 40)) as pilot:
        lst = await open_tab(app, pilot, "4", "trust", 1)
        assert [e.path for e in lst.rows] == [AGENT_NOTE]
        assert str(app.main.tabs.get_tab("trust").label) == "Trust ✗1"
        bar = str(app.query_one("#tier-bar").render())
        assert "agent-changed, not reviewed 1" in bar and "nobody has reviewed it since" in bar
        lst.focus()
        await pilot.press("v")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_until(pilot, lambda: str(app.main.tabs.get_tab("trust").label) == "Trust ✗0")
        await wait_until(pilot, lambda: not app.main.active_list.rows)
        assert "agent-changed, not reviewed 0" in str(app.query_one("#tier-bar").render())
    after = (triage_vault / AGENT_NOTE).read_bytes()
    if write_verified:
        assert b"verified:" in after and b"human:tester" in after
    else:
        assert after == written


def test_snapshot_deprecated_tab_on_a_vault_without_okf(snap_compare, triage_vault: Path) -> None:
    async def run_before(pilot) -> None:
        await open_tab(pilot.app, pilot, "2", "deprecated", len(DEPRECATED))
        await settle(pilot.app)
        await pilot.pause()

    assert snap_compare(app_on(triage_vault), terminal_size=(120, 24), run_before=run_before)


def test_snapshot_stale_tab_on_a_vault_without_okf(snap_compare, triage_vault: Path) -> None:
    async def run_before(pilot) -> None:
        await open_tab(pilot.app, pilot, "3", "stale", len(STALE))
        await settle(pilot.app)
        await pilot.pause()

    assert snap_compare(app_on(triage_vault), terminal_size=(120, 24), run_before=run_before)

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
        assert sorted(e.path for e in lst.rows) == STALE
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

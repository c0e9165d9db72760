"""The Trust tab on an OKF bundle when an agent rewrites a note a person attested (`verified:` by
`human:`): the note leaves the human-reviewed tier for unverified, the tab's counts follow, its row
says `changed` and the preview says what happened, until the person presses `v`. The filter bar's
`trust:` terms agree with the tab. (The rule itself: tests/core/review/test_trust_after_agent_change.py.)"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tui_helpers import open_loaded, paste
from waiting import await_until

from tests.conftest import OKF_INDEX, write_files
from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.review import triageviews
from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.idle import settle
from vaultwatch.tui.widgets.rowlist import Column

ATTESTED = "Guides/Setup.md"
PLAIN = "Notes/Plain.md"
FRONT = "---\nverified:\n  - by: human:ana\n    at: 2026-01-05\n---\n"
FILES = {"index.md": OKF_INDEX, ATTESTED: FRONT + "# Setup\n\nRun the installer.\n", PLAIN: "# Plain\n"}
TRUST = Column("trust", "Trust", 10)


@pytest.fixture(autouse=True)
def _own_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A journal and a settings file of this test's own."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def agent_rewrites(vault) -> None:
    """An agent rewrites the body and leaves the person's attestation as it was (allowed)."""
    Writer(vault).write(ATTESTED, FRONT + "# Setup\n\nRun it twice.\n", overwrite=True, actor="agent:bot")


def label(app) -> str:
    return str(app.main.tabs.get_tab("trust").label)


def listed(app) -> list[str]:
    return [e.path for e in app.main.active_list.rows]


async def test_an_agents_rewrite_moves_an_attested_note_to_unverified_and_v_brings_it_back(tmp_path: Path) -> None:
    from vaultwatch.tui.screens.triage import ConfirmScreen

    vault = open_loaded(write_files(tmp_path / "vault", FILES))
    app = make_app(vault, config=fixed_config(user="tester"))
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app)
        await pilot.press("4")
        await await_until(lambda: label(app) == "Trust ✗1 ◐0 ✓1" and listed(app) == [PLAIN])
        await pilot.press("]", "]")  # the human-reviewed tier
        await await_until(lambda: listed(app) == [ATTESTED])
        lst = app.main.active_list
        assert lst.cells(lst.rows[0], [TRUST])[0][0] == "human"

        await asyncio.to_thread(agent_rewrites, vault)
        await await_until(lambda: label(app) == "Trust ✗2 ◐0 ✓0" and listed(app) == [])
        bar = str(app.query_one("#tier-bar").render())
        assert "human-reviewed 0" in bar and "no change an agent made since waits for review" in bar

        await pilot.press("[", "[")  # the unverified tier
        await await_until(lambda: listed(app) == [ATTESTED, PLAIN])
        bar = str(app.query_one("#tier-bar").render())
        assert "unverified 2" in bar and "human-reviewed, then changed by an agent nobody has reviewed since" in bar
        lst = app.main.active_list
        assert [lst.cells(row, [TRUST])[0][0] for row in lst.rows] == ["changed", "unverified"]
        lst.focus()
        await await_until(lambda: app.main.preview.path == ATTESTED)
        await await_until(lambda: triageviews.CHANGED_SINCE_REVIEW in app.main.preview.head_text)

        await pilot.press("v")
        await await_until(lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await await_until(lambda: label(app) == "Trust ✗1 ◐0 ✓1" and listed(app) == [PLAIN])
        await pilot.press("]", "]")
        await await_until(lambda: listed(app) == [ATTESTED])
        lst = app.main.active_list
        assert lst.cells(lst.rows[0], [TRUST])[0][0] == "human"
    assert "by: human:tester" in (tmp_path / "vault" / ATTESTED).read_text()


async def test_the_filter_bars_trust_key_on_a_bundle_reads_the_trust_tabs_tiers(tmp_path: Path) -> None:
    vault = open_loaded(write_files(tmp_path / "vault", FILES))
    agent_rewrites(vault)
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app)
        assert listed(app) == [ATTESTED, PLAIN, "index.md"]
        await pilot.press("slash")
        for text, want in [
            ("trust:human", []),
            ("trust:unverified", [ATTESTED, PLAIN, "index.md"]),
            ("-trust:unverified", []),
            ("-trust:human-reviewed", [ATTESTED, PLAIN, "index.md"]),
        ]:
            await pilot.press("ctrl+u")
            await paste(app, pilot, text)
            await settle(app)
            await await_until(lambda want=want: listed(app) == want)

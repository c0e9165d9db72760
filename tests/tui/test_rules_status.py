"""The status line never promises a rule's protection once its folder is gone: a rule matching
nothing is said there for as long as it lasts (at start and when the folder goes while the TUI
watches), and its notice stays until dismissed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tui_helpers import open_loaded
from waiting import TIMEOUT, await_until

from vaultwatch.core.review import approval
from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.idle import settle

pytestmark = pytest.mark.usefixtures("own_state")

STAYS = 3600  # s: a notice that stays until dismissed, not a passing toast
RULES = '[approve.folders]\n"Projects/**" = "never"\n"Attic/**" = "writes"\n'


def status(app) -> str:
    part = app.status.parts.get("approval")
    return part.plain if part is not None else ""


async def test_a_never_rule_whose_folder_goes_says_so_in_the_status_line_while_it_lasts(
    tui_demo: Path, tmp_path: Path
) -> None:
    settings = tmp_path / "settings.toml"
    settings.write_text(RULES)
    vault = open_loaded(tui_demo)
    approval.configure(vault, settings=str(settings))  # as the `vaultwatch` command does
    app = make_app(vault, config=fixed_config(watch=True))
    async with app.run_test(size=(160, 30)):
        await settle(app)
        # at start: Attic is no folder of the demo vault. The status line says so; no notice does, as the
        # vault never had it (a global rule may be another vault's: `vaultwatch pending` lists it)
        assert status(app) == (
            "approve: none + folder rules · never: Projects/** · rules name missing folders: Attic"
        ), status(app)
        assert not [n for n in app._notifications if "'Attic'" in n.message]
        assert await asyncio.to_thread(vault.wait_watching, TIMEOUT)
        (tui_demo / "Projects").rename(tui_demo / "Projets")  # as `mv` does, outside vaultwatch
        await await_until(lambda: "Projects/** (no such folder)" in status(app))
        gone = [n for n in app._notifications if "Projects was moved or removed" in n.message]
        assert gone and all(n.timeout >= STAYS for n in gone), gone
        (tui_demo / "Projets").rename(tui_demo / "Projects")  # back: the promise holds again
        await await_until(lambda: "no such folder" not in status(app))
        assert status(app).startswith("approve: none + folder rules · never: Projects/**"), status(app)


async def test_the_activity_panels_rules_say_a_never_rule_matching_nothing(tui_demo: Path, tmp_path: Path) -> None:
    settings = tmp_path / "settings.toml"
    settings.write_text('[approve.folders]\n"Attic/**" = "never"\n')
    vault = open_loaded(tui_demo)
    gate = approval.configure(vault, settings=str(settings))  # as the `vaultwatch` command does
    assert gate.rules_said("scribe/1.0") == "never Attic/** (no such folder) (every agent)"
    (tui_demo / "Attic").mkdir()
    vault.refresh_paths(["Attic"])
    await await_until(lambda: gate.rules_said("scribe/1.0") == "never Attic/** (every agent)")


async def test_a_missing_rule_folder_stays_on_a_status_line_too_narrow_for_all(tui_demo: Path, tmp_path: Path) -> None:
    """Finding: at 120 columns the line was cut in `rules name missing folders: …`, the folder's
    name gone (it showed at 200); at 80 it ended at `never:`. Where the whole line does not fit, the
    approval part says what asks the person to act first: the missing folder, then the rules that hold."""
    settings = tmp_path / "settings.toml"
    settings.write_text(
        '[approve.folders]\n"Projects/**" = "never"\n[agents.scribe]\napprove = "deletes"\n'
        'write = ["Private/**", "Inbox/**"]\ndeny = ["Private/**"]\n'
    )
    vault = open_loaded(tui_demo)
    approval.configure(vault, settings=str(settings))
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        assert "rules name missing folders: Private" in status(app), status(app)  # the whole part, as before
        shown = app.status.plain  # (as drawn: the line is cut at the screen's edge)
        assert "missing folders: Private" in shown[:120] and "never: Projects/**" in shown[:120], shown
        await pilot.resize_terminal(80, 30)
        await settle(app)
        await pilot.pause()
        assert "missing folders: Private" in app.status.plain[:80], app.status.plain

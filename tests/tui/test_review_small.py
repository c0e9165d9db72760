"""The review's small defects (issue 30): each on a real vault, real journal and Pilot keys."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_actions import INCIDENT, finish, select, start
from tui_agents import wait_for

from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.review.journal import journal_for
from vaultwatch.core.vault import Vault
from vaultwatch.tui.flows.actions import login_name
from vaultwatch.tui.flows.review import ChangesScreen
from vaultwatch.tui.idle import settle
from vaultwatch.tui.screens.triage import ConfirmScreen as TriageConfirm

pytestmark = pytest.mark.usefixtures("own_state")

ROOT = Path(__file__).resolve().parents[2]


async def test_a_revert_says_reverted_change_n_once(tui_demo: Path, app_for):
    app = app_for(tui_demo)
    Writer(app.session.vault).write("Inbox/new.md", "agent text\n", actor="agent:bot")
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        await pilot.press("C")
        await wait_for(lambda: isinstance(app.screen, ChangesScreen))
        await pilot.press("r")
        await wait_for(lambda: any(n.title == "revert" for n in app._notifications))
        [message] = [n.message for n in app._notifications if n.title == "revert"]
    assert message.count("reverted change 1") == 1, message


def test_the_cli_revert_says_reverted_change_n_once(make_vault, tmp_path: Path):
    root = make_vault({"a.md": "one\n"})
    vault = Vault(root)
    vault.load()
    Writer(vault).write("a.md", "two\n", overwrite=True, actor="agent:bot")
    journal_for(vault).close()
    out = subprocess.run(
        [sys.executable, "-m", "vaultwatch.tui.commands.cli", "revert", "1", str(root)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("reverted change 1") == 1, out.stdout
    assert (root / "a.md").read_bytes() == b"one\n"


async def test_the_verify_dialog_names_the_person_and_its_undo_is_journaled_as_an_undo(tui_demo: Path, app_for):
    """The verify dialog, the file and the journal name the person (no user configured: the
    login name); undoing that verify is journaled as an undo of it."""
    app = app_for(tui_demo)
    before = (tui_demo / INCIDENT).read_bytes()
    async with app.run_test(size=(120, 30)) as pilot:
        await start(app, pilot)
        await select(app, pilot, INCIDENT)
        await pilot.press("v")
        await wait_for(lambda: isinstance(app.screen, TriageConfirm))
        question = app.screen.question
        assert f"verified by human:{login_name()}" in question and "human:you" not in question
        await pilot.press("y")
        await finish(app, pilot)
        verified = app.session.snapshot.get(INCIDENT).frontmatter["verified"]
        assert verified[-1]["by"] == f"human:{login_name()}"
        assert journal_for(app.session.vault).changes()[0].who == f"human:{login_name()}"
        await pilot.press("u")
        await finish(app, pilot)
    assert (tui_demo / INCIDENT).read_bytes() == before
    undo, verify = journal_for(app.session.vault).changes()[:2]
    assert (undo.tool, undo.operation) == ("undo", "undo")
    assert verify.tool != "undo" and undo.path == verify.path == INCIDENT


async def test_the_help_lists_the_changes_views_and_the_approval_dialogs_keys(tui_demo: Path, app_for):
    from vaultwatch.tui.flows.review import ApprovalScreen, ChangesScreen, ConflictScreen
    from vaultwatch.tui.screens.help import HelpScreen

    app = app_for(tui_demo)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app)
        await pilot.press("question_mark")
        await wait_for(lambda: isinstance(app.screen, HelpScreen))
        sections = dict(app.screen.sections)
    rows = {what for section in sections.values() for _, what in section}
    for cls in (ChangesScreen, ApprovalScreen, ConflictScreen):
        for binding in cls.BINDINGS:
            assert any(binding.description in what and binding.id in what for what in rows), binding
    approvals = next(keys for title, keys in sections.items() if title.startswith("Approval"))
    assert ("y", "Approve  (approval.approve)") in approvals

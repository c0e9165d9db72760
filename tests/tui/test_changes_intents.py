"""The Changes view's open intents (tui/screens/changes.py): an operation a kill cut off is listed
above the journaled changes, marked INTERRUPTED, its lower pane says what finishing it does and
how, the change keys refuse it in plain words, and `f` finishes it into a journaled change.

Real parts: an agent's write through the real write path in a process of its own (the agent named
as the MCP layer names it), stopped after the note was replaced (Writer's fault_hook) and
SIGKILLed there, over this test's own journal; the app's real journal, worker and Pilot keys. The
app runs without a watcher, and the write is killed after the app's start-up finishing has looked
(a watching or starting process would journal it by itself, before the view could show it).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from paused_writer import start_paused
from tui_helpers import open_loaded
from waiting import await_until

from vaultwatch.core.review import resume
from vaultwatch.core.review.journal import journal_for
from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.flows.review import ChangesScreen
from vaultwatch.tui.idle import settle
from vaultwatch.tui.widgets.diffview import DiffView, plain

REPO = Path(__file__).resolve().parents[2]
OLD = "# Plan\n" + "old line\n" * 20
NEW = "# Plan\n" + "rewritten by the agent\n" * 20
INTERRUPTED = "INTERRUPTED — f finishes it"


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, str]]:
    """A vault, and the environment its agent's process runs in: this test's own state folder
    (so the journal is this test's), the app's too."""
    for name in ("XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    root = tmp_path / "v"
    root.mkdir()
    (root / "Plan.md").write_text(OLD)
    (root / "Other.md").write_text("# Other\nsee [[Plan]]\n")
    return root, {**os.environ, "PYTHONPATH": str(REPO)}


@pytest.fixture
def writers() -> Iterator[list[subprocess.Popen]]:
    """The agents' processes a test started: none outlives it."""
    procs: list[subprocess.Popen] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait(30)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def paused_write(root: Path, env: dict[str, str], procs: list[subprocess.Popen]) -> subprocess.Popen:
    """An agent's write, stopped once it replaced the note and before its journal row."""
    proc = start_paused(root, env, "write", "replaced", NEW)
    procs.append(proc)
    return proc


def kill(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)


async def started(app) -> None:
    """The app is up, and its start-up finishing of interrupted operations has come and gone
    (with nothing to finish): what is killed after this stays open until something finishes it."""
    await settle(app)
    await await_until(lambda: app.services.started)
    await await_until(lambda: not any(t.name == "vaultwatch-resume" for t in threading.enumerate()))


async def changes_view(app, pilot) -> ChangesScreen:
    """The Changes view (C), once it lists an open intent."""
    await pilot.press("C")
    await await_until(lambda: isinstance(app.screen, ChangesScreen) and app.screen.intents)
    return app.screen


def said(app) -> list[str]:
    return [f"{n.title}: {n.message}" for n in app._notifications]


def pane(screen) -> str:
    return plain(screen.query_one(DiffView).renderable)


def title(screen) -> str:
    return str(screen.query_one("#changes-title").content)


async def test_a_killed_agents_write_is_listed_interrupted_refused_by_r_and_finished_by_f(place, writers):
    root, env = place
    vault = open_loaded(root)
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(160, 40)) as pilot:
        await started(app)
        kill(await asyncio.to_thread(paused_write, root, env, writers))
        assert (root / "Plan.md").read_text() == NEW  # landed, not journaled
        screen = await changes_view(app, pilot)
        [intent] = screen.intents
        assert (intent.operation, intent.actor, intent.running) == ("write", "agent:sneaky", False)
        assert screen.rows == []
        table = screen.query_one("#changes-table")
        cells = [str(c) for c in table.get_row_at(0)]
        assert cells[0] == "—" and cells[2:5] == ["agent:sneaky", "write", "Plan.md"], cells
        assert cells[5] == intent.summary and "sneaky's write of Plan.md" in cells[5], cells
        assert cells[6] == INTERRUPTED, cells
        assert "1 interrupted: f finishes" in title(screen)

        # its lower pane: what it was doing, what finishing does and how
        shown = pane(screen)
        assert "INTERRUPTED operation" in shown and intent.summary in shown
        assert f"finishing it: {intent.will}" in shown
        assert "it is journaled as the agent's change" in shown
        assert "f here finishes it now" in shown and "--finish" in shown

        # the change keys on it: said plainly, nothing done
        assert screen.selected() is None
        await pilot.press("r", "m", "u")
        await pilot.pause()
        refused = [s for s in said(app) if "not a change yet" in s]
        assert [s.split(":")[0] for s in refused] == ["revert", "reviewed", "redo"], said(app)
        assert all("f finishes it" in s for s in refused)
        journal = journal_for(vault)
        assert journal.changes() == [] and len(journal.open_intents(interrupted=True)) == 1
        assert (root / "Plan.md").read_text() == NEW

        # f: finished into the agent's journaled change, which now leads the list
        await pilot.press("f")
        await await_until(lambda: screen.rows and not screen.intents)
        [change] = screen.rows
        assert (change.kind, change.operation, change.agent, change.reviewed) == ("change", "write", "sneaky", False)
        await await_until(lambda: any(s.startswith("finish: ") for s in said(app)))
        assert any("journaled agent sneaky's write of Plan.md" in s for s in said(app)), said(app)
        assert "interrupted" not in title(screen)
        assert screen.selected() == change and "rewritten by the agent" in pane(screen)
        assert journal.open_intents() == []

        # nothing is left: a second f says so
        await pilot.press("f")
        await await_until(lambda: any("nothing interrupted to finish" in s for s in said(app)))
        assert [c.id for c in journal.changes()] == [change.id]


async def test_an_operation_under_way_is_listed_as_such_and_f_leaves_it_to_its_process(place, writers):
    root, env = place
    vault = open_loaded(root)
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(160, 40)) as pilot:
        await started(app)
        proc = await asyncio.to_thread(paused_write, root, env, writers)
        screen = await changes_view(app, pilot)
        [intent] = screen.intents
        assert intent.running and intent.process == proc.pid
        cells = [str(c) for c in screen.query_one("#changes-table").get_row_at(0)]
        assert cells[6] == f"under way (process {proc.pid})", cells
        assert "interrupted" not in title(screen)
        assert "operation under way" in pane(screen) and "wait for it to end" in pane(screen)
        await pilot.press("r")
        await await_until(lambda: any("still under way, not a change yet" in s for s in said(app)))

        await pilot.press("f")
        await await_until(lambda: any("nothing interrupted to finish (1 operation under way)" in s for s in said(app)))
        assert journal_for(vault).changes() == [] and proc.poll() is None

        # killed now: f (which lists again) finishes it
        await asyncio.to_thread(kill, proc)
        await pilot.press("f")
        await await_until(lambda: screen.rows and not screen.intents)
        assert [(c.kind, c.agent) for c in screen.rows] == [("change", "sneaky")]


async def test_f_while_another_finishes_them_says_so_and_a_second_f_starts_no_second_run(
    place, writers, monkeypatch: pytest.MonkeyPatch
):
    root, env = place
    vault = open_loaded(root)
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=(160, 40)) as pilot:
        await started(app)
        kill(await asyncio.to_thread(paused_write, root, env, writers))
        screen = await changes_view(app, pilot)
        journal = journal_for(vault)

        # another holder of the journal's claim is finishing them: said, nothing done here
        with resume.claim(journal) as mine:
            assert mine
            await pilot.press("f")
            await await_until(lambda: any("another vaultwatch is finishing" in s for s in said(app)))
        assert [i.running for i in screen.intents] == [False] and screen.rows == []

        # f pressed again while this view's own run is under way: one run, not two
        real = resume.resume_interrupted
        calls: list[int] = []
        gate = threading.Event()

        def held(*args, **kwargs):
            calls.append(1)
            gate.wait(30)
            return real(*args, **kwargs)

        monkeypatch.setattr(resume, "resume_interrupted", held)
        await pilot.press("f")
        await await_until(lambda: calls)
        await pilot.press("f")
        await await_until(lambda: any("already finishing" in s for s in said(app)))
        gate.set()
        await await_until(lambda: screen.rows and not screen.intents)
        assert len(calls) == 1
        assert [(c.kind, c.agent) for c in journal.changes()] == [("change", "sneaky")]

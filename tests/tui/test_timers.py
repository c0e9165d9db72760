"""A one-shot timer whose task runs late still fires (tui.timers.once).

Textual's `set_timer` drops the only tick of a timer that runs later than it was due: the view's
pending work then never ran, and `settle` waited for it until its timeout (a rare flake of the
suite, and a preview that could miss a cursor move). Lateness is made here by Textual's clock
read by a timer's task: its second read (right after the one its schedule starts from) is
JUMP later, the pause a busy machine or another thread holding the interpreter puts there by
chance. Every timer is late once, at its start, and on time after.
"""

from __future__ import annotations

import ast
import asyncio
import sys
import weakref
from pathlib import Path

import pytest
from textual import _time as textual_time
from textual.app import App
from textual.timer import Timer

from vaultwatch.tui.idle import settle
from vaultwatch.tui.timers import once

DELAY = 0.01
JUMP = 0.05  # each read of Textual's clock is this much later than the one before


@pytest.fixture
def jumping_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    real = textual_time.get_time
    reads: weakref.WeakKeyDictionary[Timer, int] = weakref.WeakKeyDictionary()

    def get_time() -> float:
        caller = sys._getframe(1)
        timer = caller.f_locals.get("self")
        if caller.f_code is not Timer._run.__code__ or not isinstance(timer, Timer):
            return real()
        reads[timer] = reads.get(timer, 0) + 1
        return real() + (JUMP if reads[timer] == 2 else 0.0)

    monkeypatch.setattr(textual_time, "get_time", get_time)


async def fired(make) -> bool:
    app = App()
    async with app.run_test():
        done = asyncio.Event()
        make(app, done.set)
        try:
            await asyncio.wait_for(done.wait(), 2)
        except TimeoutError:
            return False
        return True


@pytest.mark.usefixtures("jumping_clock")
async def test_a_late_one_shot_timer_still_fires() -> None:
    # the premise: Textual's own one-shot timer never fires when it runs late
    assert not await fired(lambda app, cb: app.set_timer(DELAY, cb))
    assert await fired(lambda app, cb: once(app, DELAY, cb))


async def test_a_stopped_timer_never_fires_and_a_fired_one_fires_once() -> None:
    app = App()
    async with app.run_test():
        calls: list[str] = []
        stopped = once(app, DELAY, lambda: calls.append("stopped"))
        stopped.stop()
        once(app, DELAY, lambda: calls.append("fired"))
        await asyncio.sleep(DELAY * 20)
        assert calls == ["fired"]


@pytest.mark.usefixtures("jumping_clock", "no_typing_pauses")
async def test_the_views_settle_when_their_timers_run_late(tui_demo, app_for) -> None:
    """The preview's and the counts' timers, late on every tick, still run: the app settles and
    the preview shows the note under the cursor."""
    app = app_for(tui_demo)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        doclist = app.main.active_list
        doclist.focus()
        await pilot.press("down", "down")
        await asyncio.wait_for(settle(app), 30)
        assert app.main.preview.path == doclist.current.path


def test_the_tui_makes_its_one_shot_timers_with_once() -> None:
    """No TUI module calls `set_timer` (whose late tick is dropped): every delay goes through once."""
    tui = Path(__file__).resolve().parents[2] / "tui"
    calls = [
        f"{path.relative_to(tui)}:{node.lineno}"
        for path in sorted(tui.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "set_timer"
    ]
    assert calls == []

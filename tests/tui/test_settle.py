"""Waiting on the TUI never outlives the app: `settle` says at once that the app ended, and the
shared app of tests/tui/shared_app.py drives its pilot with the app's context variables set
(Pilot.pause() lays a screen out in its caller's context; without them that layout raised and
ended the app while the caller waited on it, which stalled a whole test run)."""

from __future__ import annotations

import asyncio
import contextvars

import pytest
from shared_app import SharedApp
from textual.app import active_app
from textual.pilot import Pilot

from vaultwatch.tui.idle import settle


async def test_settle_says_at_once_that_the_app_ended(tui_demo, app_for) -> None:
    app = app_for(tui_demo)
    async with app.run_test(size=(100, 30)):
        await settle(app)
        app.exit(return_code=3)
        with pytest.raises(RuntimeError, match="return code 3"):
            # bounded here only so that a regression fails instead of waiting forever
            await asyncio.wait_for(settle(app), 20)


async def test_the_shared_app_sets_the_running_app_before_its_pilot_runs(tui_demo, app_for, monkeypatch) -> None:
    seen: list[object] = []
    pause = Pilot.pause

    async def watched(self: Pilot, delay: float | None = None) -> None:
        seen.append(active_app.get(None))  # in the caller's context, as Pilot.pause lays out there
        await pause(self, delay)

    monkeypatch.setattr(Pilot, "pause", watched)
    shared = SharedApp(lambda: app_for(tui_demo), (100, 30))
    try:
        for _ in range(2):  # a start, then a reset to the start state
            # each from a context of its own, with nothing set, as a new test's is
            app, _pilot = await asyncio.create_task(shared.ready(), context=contextvars.Context())
    finally:
        await shared.close()
    assert seen and all(s is app for s in seen), seen
    assert shared.starts == 1

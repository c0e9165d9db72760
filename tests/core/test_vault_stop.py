"""`Vault.stop` while another thread is starting the full-text index: the server's stop (stdin's
end) can meet a search call's `start_search`. The stop must wait for the start and stop the index
it started, never join a thread that has not begun."""

from __future__ import annotations

import threading

from vaultwatch.core.live.follower import ChangeFollower
from vaultwatch.core.vault import Vault


def test_a_stop_while_the_search_index_starts_waits_for_it_and_stops_it(demo_vault, clock, monkeypatch):
    vault = Vault(demo_vault, clock=clock)
    vault.load()
    entered, release = threading.Event(), threading.Event()
    start = ChangeFollower.start
    started: list[ChangeFollower] = []

    def held_start(self: ChangeFollower) -> None:  # the starting thread, stopped inside `start`
        started.append(self)
        entered.set()
        assert release.wait(30)
        start(self)

    monkeypatch.setattr(ChangeFollower, "start", held_start)
    errors: list[BaseException] = []

    def run(target) -> threading.Thread:
        def body() -> None:
            try:
                target()
            except BaseException as exc:  # noqa: BLE001  (the test reports what the thread raised)
                errors.append(exc)

        thread = threading.Thread(target=body)
        thread.start()
        return thread

    starter = run(vault.start_search)
    assert entered.wait(30)
    stopper = run(vault.stop)
    stopper.join(0.3)  # the stop may not finish while the start is held
    release.set()
    starter.join(30)
    stopper.join(30)
    assert not starter.is_alive() and not stopper.is_alive()
    assert errors == []
    assert vault._search is None  # the started index was taken by the stop
    (index,) = started
    assert index._thread is not None and not index._thread.is_alive()  # started, then stopped

"""A structure derived from a snapshot (Snapshot.cached) is built once, however many threads ask
for it at the same time: the link graph of a 10k vault costs ~150 ms, and ten agents' first
`triage` calls each building it beside the others held every other call up."""

from __future__ import annotations

import threading

from vaultwatch.core.index.snapshot import Snapshot


def test_callers_asking_while_one_builds_wait_for_that_build() -> None:
    snap = Snapshot(generation=1, paths=(), entries=(), by_path={})
    started, release = threading.Event(), threading.Event()
    builds: list[str] = []

    def build() -> object:
        builds.append(threading.current_thread().name)
        started.set()
        release.wait(10)
        return object()

    got: dict[str, object] = {}

    def ask(name: str) -> None:
        got[name] = snap.cached("slow", build)

    first = threading.Thread(target=ask, args=("first",), name="first")
    first.start()
    assert started.wait(10)
    second = threading.Thread(target=ask, args=("second",), name="second")
    second.start()
    second.join(0.2)  # it waits for the first build (without the guard it builds a second one)
    release.set()
    first.join(10)
    second.join(10)
    assert builds == ["first"]
    assert got["first"] is got["second"]


def test_a_build_may_ask_for_its_own_key_and_other_keys() -> None:
    """The guard is per key: a build that asks for another structure does not wait on itself."""
    snap = Snapshot(generation=1, paths=(), entries=(), by_path={})
    inner = snap.cached("outer", lambda: snap.cached("inner", lambda: 41) + 1)
    assert inner == 42 and snap.cached("inner", lambda: 0) == 41

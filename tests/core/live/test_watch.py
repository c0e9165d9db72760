"""The live index with the real watcher: files and folders change on disk, the index, search and bus follow."""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

import pytest

from tests.waiting import wait_until
from vaultwatch.core import handoffs
from vaultwatch.core.events import DocumentsChanged, IndexProblem, WatcherReady
from vaultwatch.core.live.watch import EMPTY_GUARD, VaultWatcher
from vaultwatch.core.query.listing import Query
from vaultwatch.core.vault import Vault

DEADLINE = 5.0


@pytest.fixture(autouse=True)
def xdg_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    return tmp_path / "xdg-cache"


class Live:
    def __init__(self, vault: Vault, root: Path) -> None:
        self.vault, self.root = vault, root
        self.events: list = []
        vault.bus.subscribe(self.events.append)

    def paths(self, **kw) -> list[str]:
        return [e.path for e in self.vault.list(Query(**kw)).entries]

    def changes(self) -> list[DocumentsChanged]:
        return [e for e in self.events if isinstance(e, DocumentsChanged)]

    def problems(self) -> list[IndexProblem]:
        return [e for e in self.events if isinstance(e, IndexProblem)]

    def write(self, rel: str, text: str) -> Path:
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        return p


@pytest.fixture
def live(make_vault, clock):
    opened: list[Vault] = []

    def open_(files: dict, *, search: bool = False) -> Live:
        root = make_vault(files)
        vault = Vault(root, clock=clock)
        handle = Live(vault, root)
        vault.start_watching()
        vault.load()
        if search:
            vault.start_search()
            assert vault.wait_search_ready(DEADLINE)
        opened.append(vault)
        assert vault.wait_watching(DEADLINE)
        return handle

    yield open_
    for v in opened:
        v.stop()


BASE = {"a.md": "---\ntitle: Alpha\n---\n", "Projects/b.md": "# Beta\nlinks [[a]]\n", "Projects/Sub/c.md": "# Gamma\n"}


def test_new_note_appears_with_an_added_event(live):
    lv = live(BASE)
    gen = lv.vault.snapshot.generation
    lv.write("new.md", "---\ntitle: Brand new\n---\nbody\n")
    # created, then filled: a loaded machine may show the empty file first, the content next
    wait_until(
        lambda: "new.md" in lv.paths() and lv.vault.snapshot.get("new.md").title == "Brand new",
        what="new note listed with its content",
    )
    added = wait_until(lambda: [c for c in lv.changes() if "new.md" in c.added], what="addition published")
    assert added[0].generation > gen and added[0].source == "disk"


def test_edit_updates_the_entry(live):
    lv = live(BASE)
    lv.write("a.md", "---\ntitle: Alpha edited\nstatus: draft\n---\n")
    wait_until(lambda: lv.vault.snapshot.get("a.md").title == "Alpha edited", what="title updated")
    wait_until(lambda: any("a.md" in c.changed for c in lv.changes()), what="change published")
    assert lv.paths(filters=(("status", "draft"),)) == ["a.md"]


def test_delete_removes_the_entry(live):
    lv = live(BASE)
    (lv.root / "Projects" / "b.md").unlink()
    wait_until(lambda: "Projects/b.md" not in lv.paths(), what="note removed")
    wait_until(lambda: any("Projects/b.md" in c.removed for c in lv.changes()), what="removal published")


def test_rename_moves_the_entry(live):
    lv = live(BASE)
    (lv.root / "a.md").rename(lv.root / "Projects" / "a renamed.md")
    wait_until(lambda: "Projects/a renamed.md" in lv.paths() and "a.md" not in lv.paths(), what="rename applied")
    assert lv.vault.snapshot.get("Projects/a renamed.md").title == "Alpha"


def test_folder_moved_within_the_vault_moves_its_subtree(live):
    lv = live(BASE)
    (lv.root / "Projects").rename(lv.root / "Archive")
    want = ["Archive/Sub/c.md", "Archive/b.md", "a.md"]
    wait_until(lambda: lv.paths() == want, what="folder move applied")
    assert lv.vault.snapshot.get("Archive/Sub").kind == "folder"
    assert lv.vault.snapshot.get("Projects") is None


def test_folder_moved_in_from_outside_is_indexed_whole(live, tmp_path):
    lv = live(BASE)
    outside = tmp_path / "outside" / "Imported"
    for i in range(30):
        (outside / f"d{i % 3}").mkdir(parents=True, exist_ok=True)
        (outside / f"d{i % 3}" / f"n{i}.md").write_text(f"---\ntitle: Imported {i}\n---\n")
    outside.rename(lv.root / "Imported")
    wait_until(lambda: len(lv.paths(folder="Imported")) == 30, what="moved-in folder indexed")
    assert lv.vault.snapshot.get("Imported/d1/n4.md").title == "Imported 4"


def test_folder_moved_out_removes_its_subtree(live, tmp_path):
    lv = live(BASE)
    (lv.root / "Projects").rename(tmp_path / "gone")
    wait_until(lambda: lv.paths() == ["a.md"], what="moved-out folder removed")
    assert not any(p.startswith("Projects") for p in lv.vault.snapshot.paths)


def test_hidden_and_ignored_paths_are_not_indexed(live):
    lv = live({**BASE, ".vaultwatchignore": "Ignored/\n"})
    lv.write(".hidden.md", "# hidden\n")
    lv.write(".obsidian/plugin.md", "# hidden too\n")
    lv.write("Ignored/x.md", "# ignored\n")
    lv.write("visible.md", "# visible\n")  # the marker: once it is in, the others were seen too
    wait_until(lambda: "visible.md" in lv.paths(), what="visible note indexed")
    assert lv.vault.wait_for_pending_writes(DEADLINE)
    assert lv.paths() == ["Projects/Sub/c.md", "Projects/b.md", "a.md", "visible.md"]
    touched = {p for c in lv.changes() for p in (*c.added, *c.changed, *c.removed)}
    assert not any(p.startswith((".", "Ignored")) for p in touched)


def test_changed_ignore_rules_rescan_the_vault(live):
    lv = live(BASE)
    lv.write(".vaultwatchignore", "Projects/Sub/\n")
    wait_until(lambda: "Projects/Sub/c.md" not in lv.paths(), what="newly ignored note removed")
    lv.write(".vaultwatchignore", "")
    wait_until(lambda: "Projects/Sub/c.md" in lv.paths(), what="un-ignored note back")


def test_a_burst_of_files_is_coalesced(live):
    lv = live(BASE)
    before = len(lv.changes())
    for i in range(400):
        lv.write(f"Burst/f{i // 100}/note {i}.md", f"# Burst {i}\n")
    wait_until(lambda: len(lv.paths(folder="Burst")) == 400, timeout=10, what="burst absorbed")
    assert lv.vault.wait_for_pending_writes(DEADLINE)
    batches = len(lv.changes()) - before
    assert batches < 100, f"{batches} index updates for 400 files: not coalesced"
    assert not lv.vault.index_stale


def test_our_own_write_is_applied_once(live):
    lv = live(BASE)
    lv.write("mine.md", "---\ntitle: Mine\n---\n")
    snap = lv.vault.refresh_paths(["mine.md"], source="agent:test")  # what the write path does
    assert snap.get("mine.md").title == "Mine"
    # a barrier on the watcher's cycles: the write's own event (the echo) is applied when it returns
    assert lv.vault.wait_for_pending_writes(DEADLINE)
    touching = [c for c in lv.changes() if "mine.md" in (*c.added, *c.changed)]
    assert [c.source for c in touching] == ["agent:test"]


def test_an_outside_change_goes_into_the_index_with_quick_handoffs(live):
    """Applying an outside change blocks and wakes on every stat, read and lock; with another
    thread running Python (an agent polling for the change) each wake-up waited out the whole
    switch interval, so the applier holds a quick block (core.handoffs) while the change goes in.
    Seen from the bus: DocumentsChanged is published by the applier inside that block. A full
    comparison is long and rare and keeps the ordinary interval."""
    lv = live(BASE)
    holds: dict[str, int] = {}

    def on_change(event) -> None:
        if isinstance(event, DocumentsChanged) and "quick.md" in (*event.added, *event.changed):
            holds["quick.md"] = handoffs.quick_holds()

    lv.vault.bus.subscribe(on_change)
    lv.write("quick.md", "# Quick\n")
    wait_until(lambda: "quick.md" in holds, what="the outside change applied")
    assert holds["quick.md"] >= 1
    wait_until(lambda: handoffs.quick_holds() == 0, what="the quick block ended with the batch")


def test_quick_handoffs_last_from_the_queued_change_to_its_application(live):
    """The wake-up of the applier waits out the switch interval too: a quick block begins as soon
    as the watcher queues a small change (here behind one the applier is still busy with) and
    ends once it is applied."""
    lv = live(BASE)
    with lv.vault.refresh_lock:  # the applier takes the first change and waits for the lock
        lv.write("first.md", "# First\n")
        wait_until(lambda: lv.vault._live.pending > 0, what="first event received")
        before = handoffs.quick_holds()
        lv.write("second.md", "# Second\n")
        wait_until(lambda: lv.vault._live.pending > 1, what="second event received")
        assert handoffs.quick_holds() >= before + 1  # other tests' followers may hold one too
    assert lv.vault.wait_for_pending_writes(DEADLINE)
    assert {"first.md", "second.md"} <= set(lv.paths())
    wait_until(lambda: handoffs.quick_holds() == 0, what="the quick blocks ended once applied")


def test_stopping_ends_the_quick_handoffs_of_changes_never_applied(live):
    """A change still queued when the watcher stops is never applied: stop ends its quick block,
    or the whole process would keep the short switch interval."""
    lv = live(BASE)
    with lv.vault.refresh_lock:  # the applier takes the first change and waits for the lock
        lv.write("first.md", "# First\n")
        wait_until(lambda: lv.vault._live.pending > 0, what="first event received")
        lv.write("second.md", "# Second\n")  # queued behind it
        wait_until(lambda: lv.vault._live.pending > 1, what="second event received")
        lv.vault._live.stop(timeout=0.2)  # gives up on the applier while it waits
    wait_until(lambda: handoffs.quick_holds() == 0, what="every quick block ended")


def test_pending_writes_are_counted_until_applied(live):
    lv = live(BASE)
    with lv.vault.refresh_lock:  # keep the applier busy (it takes the same lock)
        lv.write("late.md", "# Late\n")
        wait_until(lambda: lv.vault._live.pending > 0, what="event received")
        assert lv.vault.index_stale
        assert lv.vault.wait_for_pending_writes(0.2) is False
        assert "late.md" not in lv.paths()
    assert lv.vault.wait_for_pending_writes(DEADLINE) is True
    assert "late.md" in lv.paths()
    assert not lv.vault.index_stale


def test_pending_writes_before_the_index_is_loaded(make_vault, clock):
    vault = Vault(make_vault(BASE), clock=clock)
    assert vault.index_stale
    assert vault.wait_for_pending_writes(0.05) is False
    vault.load()
    assert vault.wait_for_pending_writes(0.05) is True
    assert not vault.index_stale


def test_watcher_ready_is_an_event_and_a_wait(make_vault, clock):
    """Tests and front ends wait for the watcher's OS watches instead of sleeping: WatcherReady on
    the bus, once per watch session, and Vault.wait_watching (which also waits for the start)."""
    vault = Vault(make_vault(BASE), clock=clock)
    ready: list[WatcherReady] = []
    vault.bus.subscribe(lambda e: ready.append(e) if isinstance(e, WatcherReady) else None)
    vault.load()
    assert vault.wait_watching(0.05) is False  # nobody started the watcher
    try:
        vault.start_watching()
        assert vault.wait_watching(DEADLINE)
        assert ready == [WatcherReady(polling=False)]
        (Path(vault.root) / "seen.md").write_text("# Seen\n")
        wait_until(lambda: vault.snapshot.get("seen.md") is not None, what="an edit right after the wait")
        for _ in range(3):  # each wait is a barrier on a later watcher cycle: still one event, not one per tick
            assert vault.wait_for_pending_writes(DEADLINE)
        assert len(ready) == 1
    finally:
        vault.stop()
    assert vault.wait_watching(0.05) is False


def test_deleted_vault_root_is_survived_and_reported(live, tmp_path):
    files = {f"n{i:02}.md": f"# Note {i}\n" for i in range(EMPTY_GUARD + 5)}
    lv = live(files)
    shutil.rmtree(lv.root)
    wait_until(lambda: any("deleted or unmounted" in p.message for p in lv.problems()), what="root loss reported")
    assert len(lv.paths()) == len(files)  # the index is kept
    assert lv.vault.index_stale
    lv.root.mkdir()
    (lv.root / "fresh.md").write_text("# Fresh\n")
    wait_until(lambda: lv.paths() == ["fresh.md"], what="recreated root re-indexed")
    assert any("is back" in p.message for p in lv.problems())
    wait_until(lambda: not lv.vault.index_stale, what="fresh again")
    (lv.root / "after.md").write_text("# After\n")  # the watcher is attached to the new folder
    wait_until(lambda: "after.md" in lv.paths(), what="watching the recreated root")


def test_vault_that_suddenly_looks_empty_is_held(live, tmp_path):
    files = {f"n{i:02}.md": f"# Note {i}\n" for i in range(EMPTY_GUARD + 5)}
    lv = live(files)
    parked = tmp_path / "parked"
    parked.mkdir()
    for p in list(lv.root.iterdir()):
        p.rename(parked / p.name)
    wait_until(lambda: any("looks empty" in p.message for p in lv.problems()), what="empty vault reported")
    assert len(lv.paths()) == len(files)
    assert lv.vault.index_stale
    (lv.root / "n00.md").write_text("---\ntitle: Back\n---\n")
    # write_text creates the file, then fills it: the rescan may first see it empty (title
    # "n00"); the filling is a change of its own that must follow
    wait_until(
        lambda: lv.paths() == ["n00.md"] and lv.vault.snapshot.get("n00.md").title == "Back",
        what="rescan after files reappear, with the note's content",
    )


def test_search_follows_outside_edits(live):
    lv = live(BASE, search=True)
    lv.write("Projects/b.md", "# Beta\nthe word zanzibar appears\n")
    wait_until(lambda: [h.path for h in lv.vault.search("zanzibar").hits] == ["Projects/b.md"], what="edit searchable")
    lv.write("Projects/b.md", "# Beta\nno more\n")
    wait_until(lambda: not lv.vault.search("zanzibar").hits, what="old words gone")
    (lv.root / "Projects").rename(lv.root / "Moved")
    wait_until(lambda: [h.path for h in lv.vault.search("beta").hits] == ["Moved/b.md"], what="move searchable")


def test_links_follow_outside_edits(live):
    lv = live(BASE)
    assert [r.source for r in lv.vault.links("a.md").backlinks] == ["Projects/b.md"]
    lv.write("Projects/Sub/c.md", "# Gamma\n[[a]] and [[missing note]]\n")
    wait_until(lambda: len(lv.vault.links("a.md").backlinks) == 2, what="new backlink")
    assert [r.link.target for r in lv.vault.broken_links()] == ["missing note"]


async def test_vault_watcher_runs_in_an_event_loop_and_stops(make_vault, clock):
    root = make_vault(BASE)
    vault = Vault(root, clock=clock)
    watcher = VaultWatcher(vault, search=False)
    task = asyncio.create_task(watcher.run())
    await asyncio.to_thread(vault.load)
    deadline = time.monotonic() + DEADLINE
    assert await asyncio.to_thread(vault.wait_watching, DEADLINE)
    (root / "async.md").write_text("# Async\n")
    while vault.snapshot.get("async.md") is None:
        assert time.monotonic() < deadline, "edit not applied"
        await asyncio.sleep(0.01)
    threads = vault._live._threads
    watcher.stop()
    await asyncio.wait_for(task, 2.0)
    assert all(not t.is_alive() for t in threads)


def test_wait_for_pending_writes_covers_edits_the_watcher_has_not_delivered_yet(live):
    """An outside edit finished before the call is in the listing when the call returns: the wait
    covers events still in the OS queue or in the watcher's debounce window, not only batches
    already handed to the index. Each round writes, then waits at once (no sleep in between)."""
    lv = live(BASE)
    vault = lv.vault
    for i in range(12):
        action = i % 3
        if action == 0:
            lv.write(f"Out/new{i}.md", f"# New {i}\n")
        elif action == 1:
            lv.write("a.md", f"---\ntitle: Alpha {i}\n---\n")
        else:
            (lv.root / f"Out/new{i - 2}.md").rename(lv.root / f"Out/moved{i}.md")
        assert vault.wait_for_pending_writes(DEADLINE) is True
        assert not vault.index_stale
        paths = lv.paths()
        if action == 0:
            assert f"Out/new{i}.md" in paths, (i, paths)
        elif action == 1:
            assert vault.snapshot.get("a.md").title == f"Alpha {i}", i
        else:
            assert f"Out/moved{i}.md" in paths and f"Out/new{i - 2}.md" not in paths, (i, paths)


@pytest.mark.timing
def test_waiting_when_nothing_changed_is_short(live):
    lv = live(BASE)
    assert lv.vault.wait_for_pending_writes(DEADLINE)
    started = time.monotonic()
    for _ in range(5):
        assert lv.vault.wait_for_pending_writes(DEADLINE)
    assert (time.monotonic() - started) / 5 < 0.5

"""core.query.complete against the rule it implements, written the slow, obvious way: on a generated vault
with shuffled modification times, for prefixes from none to one note's, every answer equals the brute-force
ranking (exact prefix, then ignoring case, then by file name; most recent first; the total of all three)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from vaultwatch.core.model import ATTACHMENT, FOLDER, NOTE
from vaultwatch.core.query.complete import complete_folder, complete_path

# one worker builds the module-scoped vaults once (tests split over workers built them on each)
pytestmark = pytest.mark.xdist_group("complete")


def brute(snapshot, typed: str, kinds, by_recency: bool, limit: int = 100):
    typed = typed.lstrip("/")
    folded = typed.casefold()
    entries = [e for e in snapshot.entries if e.kind in kinds]
    exact = [e for e in entries if e.path.startswith(typed)]
    loose = [e for e in entries if not e.path.startswith(typed) and e.path.casefold().startswith(folded)]
    named = [
        e
        for e in entries
        if not e.path.casefold().startswith(folded) and e.path.casefold().rsplit("/", 1)[-1].startswith(folded)
    ]
    place = {e.path: i for i, e in enumerate(entries)}
    key = (lambda e: (-e.mtime_ns, place[e.path])) if by_recency else (lambda e: place[e.path])
    ranked = sorted(exact, key=key) + sorted(loose, key=key) + sorted(named, key=key)
    return [e.path for e in ranked[:limit]], len(ranked)


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    from bench.vaultgen import generate
    from vaultwatch.core.vault import Vault

    root = tmp_path_factory.mktemp("complete") / "v"
    generate(root, 3000, seed=11)
    rng = random.Random(5)
    for path in sorted(root.rglob("*")):
        if path.is_file():
            os.utime(path, ns=(rng.randrange(10**18, 2 * 10**18),) * 2)
    v = Vault(root, cache=False)
    v.load()
    return v


def test_every_completion_is_the_brute_force_ranking(vault):
    snap = vault.snapshot
    notes = [e.path for e in snap.entries if e.kind == NOTE]
    prefixes = ["", "/", "a", "A", "n", "P", "proj", "Projects/", "index", "zz", notes[1234][:-5], notes[7].upper()]
    prefixes += [n.rsplit("/", 1)[-1][:4] for n in notes[::600]]
    for typed in prefixes:
        got = complete_path(snap, typed)
        assert (list(got.values), got.total) == brute(snap, typed, {NOTE, ATTACHMENT}, True), typed
        got = complete_folder(snap, typed)
        assert (list(got.values), got.total) == brute(
            snap, typed.rstrip("/") if typed.strip("/") else "", {FOLDER}, False
        ), typed


@pytest.fixture
def live(make_vault, open_vault):
    """A vault whose files change under test: notes in a few folders, an attachment, mixed cases, old
    and shuffled modification times (so a changed note's new time moves it to the front)."""
    rng = random.Random(9)
    files = {f"{folder}/{stem} {i:03d}.md": f"# {i}\n" for i in range(240) for folder, stem in [rng.choice(_SHAPES)]}
    files |= {"img/Projects.png": b"\x89PNG\r\n", "projects/lower.md": "# lower\n", "Readme.md": "# r\n"}
    root = make_vault(files)
    for path in sorted(root.rglob("*")):
        if path.is_file():
            os.utime(path, ns=(rng.randrange(10**17, 10**18),) * 2)
    return open_vault(root)


_SHAPES = [("Projects", "Note"), ("Projects/Archive", "Old"), ("Areas", "projects plan"), ("Daily", "day")]
_PREFIXES = ["", "P", "Projects/", "projects", "Projects/Archive/", "Areas/", "note", "day 1", "old 0", "zz", "img/"]


def _answers(snapshot):
    out = {}
    for typed in _PREFIXES:
        got = complete_path(snapshot, typed)
        folders = complete_folder(snapshot, typed)
        out[typed] = ((list(got.values), got.total), (list(folders.values), folders.total))
    return out


def _brute_answers(snapshot):
    return {
        typed: (
            brute(snapshot, typed, {NOTE, ATTACHMENT}, True),
            brute(snapshot, typed.rstrip("/") if typed.strip("/") else "", {FOLDER}, False),
        )
        for typed in _PREFIXES
    }


def _changes(root):
    root = Path(root)
    """Each step changes the vault on disk and names the paths to re-read (as the watcher would)."""

    later = iter(range(4 * 10**18, 5 * 10**18, 10**9))

    def touch(rel):
        os.utime(root / rel, ns=(next(later),) * 2)  # newer than anything yet: it must come first
        return [rel]

    def add(rel):
        made = [p.relative_to(root).as_posix() for p in reversed((root / rel).parents) if not p.exists()]
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("# new\n")
        os.utime(root / rel, ns=(3 * 10**18,) * 2)
        return [*made, rel]  # new folders too, as the watcher reports them

    def remove(rel):
        (root / rel).unlink()
        return [rel]

    def rename(old, new):
        (root / old).rename(root / new)
        return [old, new]

    def remove_folder(rel):
        import shutil

        shutil.rmtree(root / rel)
        return [rel]

    notes = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))
    return [
        lambda: touch(notes[5]),
        lambda: add("Projects/Brand new.md"),
        lambda: add("projects/Case twin.md"),  # a sibling folder that differs only by case
        lambda: remove(notes[7]),
        lambda: rename(notes[9], "Projects/Renamed note.md"),
        lambda: add("Zeta/Deep/fresh note.md"),  # two new folders with it
        lambda: touch("Projects/Brand new.md") + remove(notes[11]),
        lambda: remove_folder("Zeta"),  # the folder and everything under it
        lambda: rename("img/Projects.png", "img/Other.png"),
    ]


@pytest.fixture
def builds(monkeypatch):
    """The kinds of every completion table built from a whole snapshot (not patched), in order."""
    import vaultwatch.core.query.complete as complete

    seen = []
    real_subset = complete.subset

    def counted(snapshot, kinds):  # a spy, not a stand-in: it calls the real subset
        seen.append(kinds)
        return real_subset(snapshot, kinds)

    monkeypatch.setattr(complete, "subset", counted)
    return seen


def test_completion_follows_every_change_by_patching_not_rebuilding(live, builds):
    """After each change (a note touched, added, removed, renamed; folders made and removed), the
    next generation's answers equal the brute-force ranking of that generation, and they come from the
    earlier generation's tables patched: the whole vault is not sorted again per change."""
    assert _answers(live.snapshot) == _brute_answers(live.snapshot)
    assert len(builds) == 2  # one table for paths, one for folders
    for step, change in enumerate(_changes(live.root)):
        before = live.snapshot.generation
        live.refresh_paths(change())
        snap = live.snapshot
        assert snap.generation > before, step
        assert _answers(snap) == _brute_answers(snap), step
        assert len(builds) == 2, f"step {step}: a table was built afresh instead of patched"


def test_a_patched_table_equals_a_fresh_one_after_changes_it_did_not_see_one_by_one(live, builds):
    """Several generations with no completion between them: the next completion patches from the
    last generation that had tables, with every path changed since (not only the latest change)."""
    assert _answers(live.snapshot) == _brute_answers(live.snapshot)
    for change in _changes(live.root):
        live.refresh_paths(change())
    snap = live.snapshot
    assert _answers(snap) == _brute_answers(snap)
    assert complete_path(snap, "").values[0] == "Projects/Brand new.md"  # touched last, newest of all
    assert len(builds) == 2  # patched once, from the first generation's tables

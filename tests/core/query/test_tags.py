"""core.query.tags: the whole vault's tag counts after changes equal a count of every note, written the
slow, obvious way (per casefolded tag: the notes carrying it, spelled as its first note in path order
spells it), and a change that allows it is patched into the previous generation's counts."""

from __future__ import annotations

import os
from pathlib import Path

from vaultwatch.core.model import NOTE
from vaultwatch.core.query.complete import complete_tag
from vaultwatch.core.query.tags import tag_counts, tag_counts_ready


def brute(snapshot):
    counts: dict[str, int] = {}
    spelling: dict[str, str] = {}
    for e in sorted(snapshot.entries, key=lambda e: e.path):
        if e.kind == NOTE:
            for key, shown in {t.casefold(): t for t in e.tags}.items():
                counts[key] = counts.get(key, 0) + 1
                spelling.setdefault(key, shown)
    return sorted(((spelling[k], n) for k, n in counts.items()), key=lambda kv: (-kv[1], kv[0]))


def note(tags, body=""):
    return f"---\ntags: [{', '.join(tags)}]\n---\n# note\n{body}"


def test_tag_counts_follow_changes_patched_when_they_can_be(make_vault, open_vault):
    files = {f"b/n{i:02d}.md": note(["ops", "Work"] if i % 2 else ["ops", "idea"]) for i in range(12)}
    files["b/inline.md"] = "# inline\n#Ops and #deep/tag\n"
    vault = open_vault(make_vault(files))
    root = Path(vault.root)
    assert tag_counts(vault.snapshot) == brute(vault.snapshot)

    later = iter(range(2 * 10**18, 3 * 10**18, 10**9))

    def change(rel, content=None):
        if content is None:
            (root / rel).unlink()
        else:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(content)
            os.utime(root / rel, ns=(next(later),) * 2)  # a new time: the same size is a change too
        vault.refresh_paths([rel] + ([] if (root / rel).parent.name != "a" else ["a"]))

    steps = [
        # (path, new content or None to delete, whether the previous counts can be patched)
        ("b/n05.md", note(["ops", "Work", "fresh"]), True),  # a new tag
        ("b/n07.md", note(["ops"]), True),  # a tag dropped by a note that is not its first
        ("a/first.md", note(["OPS", "idea"]), True),  # a note before every other: its spelling wins
        ("a/first.md", note(["Ops", "idea"]), True),  # the first note spells it anew
        ("b/n09.md", None, True),  # a note removed (not the first of any of its tags)
        ("b/n05.md", note(["ops", "Work"]), True),  # "fresh" gone with its only note
        ("a/first.md", None, False),  # the first of "ops" and "idea" removed: the next note's spelling
    ]
    for step, (rel, content, patchable) in enumerate(steps):
        before = vault.snapshot.generation
        change(rel, content)
        snap = vault.snapshot
        assert snap.generation > before, step
        assert tag_counts_ready(snap) is patchable, step
        assert tag_counts(snap) == brute(snap), step
    found = complete_tag(vault.snapshot, "o")
    assert found.values == ("Ops",) and found.total == 1  # b/inline.md spells it first now

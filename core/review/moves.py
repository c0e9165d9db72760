"""Where a note went since a journaled change: the chain of moves the journal recorded after it.

    moves = journal.moves(after=change.id)            # oldest first
    now, via = follow(moves, "Clippings/a.md", change.id)

A move is one journal row that moved paths: a rename made through vaultwatch (an agent's, the
person's, an approved one, a killed one's roll-back), the revert of such a rename (it moves the
note back), or an outside row whose watcher saw files and folders keep their identity under a
new name (a file manager's or a shell's `mv`, Obsidian's rename of a note or folder). Each names
its pairs (old path, new path); a folder's pair carries every path under it along.

`follow` applies them strictly in journal order, each to the path as the moves before it left
it, so a later move of another note onto the old path does not pull the chain there. It only
names a vault path the journal recorded; what a revert may write there is still decided by the
bytes (core.review.revert writes only a note that holds exactly what the change left).

The journal only knows the moves made while vaultwatch watched. A move made while nothing
watched (the folder moved back after the server quit) leaves the chain naming a place that
does not exist; given an `OnDisk` check, `follow` then looks at the chain's earlier places
(newest first, down to the place the change named) and takes the first that holds the bytes
the journal recorded. Only the places of the one chain are read, never the vault.

When no place of the chain holds them (the note moved while nothing watched to a place the chain
never named), `whereabouts` asks `OnDisk.elsewhere` for the one note of the same file name that
holds exactly those bytes (the index lists the few such names; only they are read). That is a
guess, said to the person as one ("moved while vaultwatch was not watching?"), never a place a
revert writes to: a copy of the agent's bytes elsewhere is not the note (docs/journal.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Move:
    """One journal row that moved paths: its id, who moved them (as the journal shows it), and
    its (old, new) pairs."""

    change_id: int
    who: str
    pairs: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class OnDisk:
    """How `follow` checks the place its chain ends at against the disk. `exists(path)`: whether
    anything is there (a cheap look, asked of every followed note, so no view hashes the vault);
    `holds(path)`: whether a place holds the bytes the journal recorded for the note (read and
    hashed, asked only of a missing place's earlier places)."""

    exists: Callable[[str], bool]
    holds: Callable[[str], bool]
    # the one other note of the missing place's file name holding the recorded bytes (None: none,
    # or more than one); only the index's notes of that name are read
    elsewhere: Callable[[str], str | None] | None = None


@dataclass(frozen=True, slots=True)
class Where:
    """Where a change's note is now, as every view says it (`vaultwatch changes`, the Changes view,
    the Trust tab's tiers, a revert's refusal): `path` where the journal's moves leave it, `via`
    those moves, `there` whether anything is at `path` (True when there was nothing to check
    with), `holder` a note elsewhere that holds exactly what the change left (a guess, only when
    nothing is at `path`)."""

    path: str
    via: tuple[Move, ...] = ()
    there: bool = True
    holder: str | None = None

    @property
    def listed(self) -> str:
        """The path a view lists the note at: the guess when nothing is where the moves end."""
        return self.holder if not self.there and self.holder else self.path

    def words(self, named: str) -> str | None:
        """What a view says beside `named` (the path the change names); None: nothing to say."""
        if not self.there and self.holder:
            return (
                "moved while vaultwatch was not watching? a note holding exactly what this change left "
                f"is at {self.holder}"
            )
        if not self.there:
            return f"moved since to {self.path}; nothing is there now" if self.path != named else None
        return f"now at {self.path}" if self.path != named else None


def moved(path: str, pairs: Iterable[tuple[str, str]], *, folders_only: bool = False) -> str | None:
    """Where `pairs` (one move) took `path`: the new path, or None when they leave it where it is.
    `folders_only`: only a move of a folder above `path` counts (a note that was not there any
    more, such as a deleted one, did not move with its own name)."""
    for old, new in pairs:
        if path == old and not folders_only:
            return new
        if path.startswith(old + "/"):
            return new + path[len(old) :]
    return None


def follow(
    moves: Sequence[Move], path: str, after: int, *, folders_only: bool = False, disk: OnDisk | None = None
) -> tuple[str, tuple[Move, ...]]:
    """Where the note at `path` just after change `after` is now, by the journal's moves (oldest
    first), and the moves that took it there (none: it is where it was). `disk`: when the chain
    ends where nothing is, the newest earlier place of the chain that holds the note's recorded
    bytes, with the moves up to it (a move back made while nothing watched); when none holds
    them, where the chain ends (the note is gone)."""
    via: list[Move] = []
    places = [path]
    for move in moves:
        if move.change_id <= after:
            continue
        new = moved(path, move.pairs, folders_only=folders_only)
        if new is not None and new != path:
            path = new
            via.append(move)
            places.append(path)
    if disk is None or not via or disk.exists(path):
        return path, tuple(via)
    for back in range(len(places) - 2, -1, -1):
        if places[back] != path and disk.holds(places[back]):
            return places[back], tuple(via[:back])
    return path, tuple(via)


def whereabouts(
    moves: Sequence[Move], path: str, after: int, *, folders_only: bool = False, disk: OnDisk | None = None
) -> Where:
    """`follow`, and what is at the place it ends: when nothing is, the one note elsewhere with the
    same file name that holds the recorded bytes (`OnDisk.elsewhere`), if there is exactly one."""
    now, via = follow(moves, path, after, folders_only=folders_only, disk=disk)
    if disk is None or disk.exists(now):
        return Where(now, via)
    return Where(now, via, False, disk.elsewhere(now) if disk.elsewhere is not None else None)


def top_pairs(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The pairs no other pair already implies: a folder's pair stands for the files that moved
    along under it with the same names."""
    ordered = sorted(set(pairs), key=lambda p: (p[0].count("/"), p))
    kept: list[tuple[str, str]] = []
    for old, new in ordered:
        if moved(old, kept, folders_only=True) == new:
            continue
        kept.append((old, new))
    return kept


def describe(move: Move) -> str:
    """One move in words: "moved A to B" (and how many more)."""
    old, new = move.pairs[0]
    more = len(move.pairs) - 1
    return f"moved {old} to {new}" + (f" and {more} more" if more else "")


__all__ = ["Move", "OnDisk", "Where", "describe", "follow", "moved", "top_pairs", "whereabouts"]

"""Whether a change waiting for the person can still apply as it is shown to them.

A change waits with what it read: the note's bytes before (and, for a rename, the bytes of each
note whose links it rewrites). If the note is edited, removed or its folder moved meanwhile, the
write path refuses the approved change (a revision conflict, `moved_away`) and nothing is written:
safe, but the person approving it believes they applied something. So the views that show a
waiting change (the TUI's approval dialog, `vaultwatch pending`, the TUI's list of pending
changes) say so while it waits, in the person's words, from the same reading of the disk.

    why_stale(root_real, "write", "Notes/a.md", before, effects, links)   # "" or why not
    proposal_stale(root_real, proposal, links, gate)                         # a pending change

Reads only: one fingerprint (core.review.pending.fingerprint) per path it compares.
"""

from __future__ import annotations

import hashlib
import posixpath
from collections.abc import Iterable
from typing import Any

from vaultwatch.core.edit.effects import CREATE, MOVE_FROM, Effect, EffectSet
from vaultwatch.core.errors import VaultError
from vaultwatch.core.review.pending import fingerprint, unproposed
from vaultwatch.core.review.policy import Asker


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _folder_gone(root_real: str, path: str, effects: Iterable[Effect]) -> str:
    """Why `path`'s folder is not where it was ("" when it is): moved or removed (a folder the
    change itself makes is not there yet, and is not asked about)."""
    made = {e.path for e in effects if e.change == CREATE}
    folder = posixpath.dirname(path)
    while folder and folder not in made:
        if fingerprint(root_real, folder) != "folder":
            return f"its folder {folder} was moved, renamed or removed since"
        folder = posixpath.dirname(folder)
    return ""


def _gone(root_real: str, path: str, effects: Iterable[Effect]) -> str:
    """Why `path` is absent now: its folder moved or went, or it did."""
    return _folder_gone(root_real, path, effects) or f"{path} was moved, renamed or deleted since"


def why_stale(
    root_real: str,
    operation: str,
    path: str,
    before: bytes | None,
    effects: Iterable[Effect],
    links: Iterable[tuple[str, bytes, bytes]] = (),
) -> str:
    """Why the waiting change can no longer apply as shown ("" when it still can): the note it names
    no longer holds the bytes it was read with, is gone, or its folder is; for a rename, its source
    is gone or a note whose links it rewrites (`links`: each note's path after the move, its bytes
    before and after) was edited since."""
    effects = tuple(effects)
    now = fingerprint(root_real, path)
    if operation == "rename":
        if now == "absent":
            return _gone(root_real, path, effects)
        moved = [(e.path, e.dest) for e in effects if e.change == MOVE_FROM and e.dest]
        for note, was, _after in links:
            src = next((s for s, d in moved if d == note), note)  # a linking note the rename carries along
            there = fingerprint(root_real, src)
            if there != _sha(was):
                return (
                    f"{src}, whose links it rewrites, was " + ("removed" if there == "absent" else "edited") + " since"
                )
        return ""
    if before is None:  # a new note (it must still be absent), or a folder's delete (it must be there)
        if operation == "delete":
            return _gone(root_real, path, effects) if now == "absent" else ""
        return _folder_gone(root_real, path, effects) if now == "absent" else f"{path} was created since"
    if now == _sha(before):
        return ""
    if now == "absent":
        return _gone(root_real, path, effects)
    return f"{path} was edited since"


def proposal_stale(root_real: str, proposal: Any, links: Any = (), gate: Any = None, vault: Any = None) -> str:
    """Why a pending change (core.review.pending.Proposal) would be refused if approved now ("" when
    it would apply as shown): a path it touches changed since it was proposed (what `approve`
    checks first), a folder it renames or deletes holds a file or folder since that it did not
    propose (`vault`: the vault, whose write path lists the folder; a folder's own fingerprint does
    not change when a note is put in it), the agent's own rule now forbids it (`gate`: the vault's
    approval gate, which reads the person's settings as they are now), or a rename would now rewrite
    links in a note it did not propose (`links`: pending.link_rewrites, or why they cannot be worked out)."""
    changed = [p for p, was in proposal.fingerprints.items() if fingerprint(root_real, p) != was]
    if changed:
        return f"{', '.join(changed)} changed since it was proposed"
    if vault is not None:
        try:
            added = unproposed(vault, proposal)
        except VaultError as exc:
            return exc.message
        if added:
            verb = "move" if proposal.method == "rename" else "delete"
            return f"it would now also {verb} {', '.join(added)}, which it did not propose (put in the folder since)"
    if gate is not None:
        try:
            gate.refuse_by_rule(EffectSet(proposal.operation, proposal.effects), Asker(proposal.actor, proposal.agent))
        except VaultError as exc:  # a rule added since, or a settings file that does not parse
            return exc.message
    if not isinstance(links, str):
        proposed = {p for e in proposal.effects for p in (e.path, e.via, e.dest) if p}
        outside = sorted({note for note, _was, _after in links if note not in proposed})
        if outside:
            return f"it would now also rewrite links in {', '.join(outside)}, which it did not propose"
    return ""


__all__ = ["proposal_stale", "why_stale"]

"""completion/complete: the picker a client shows for the note template and the prompts' arguments.

With 20,000 paths a client cannot offer `vault://note/{+path}` by listing; it sends the text typed so
far and shows what this answers (core.query.complete: exact prefix first, then ignoring case or by file
name; paths most recent first; at most 100, with the total). Also completed: any prompt argument named
folder (the vault's folders) or tag/tags (the tags in use). Anything else gets no values, never an error,
as the spec asks of a server that has nothing to offer.
"""

from __future__ import annotations

from typing import Any

import anyio.to_thread
from mcp_types import Completion, PromptReference, ResourceTemplateReference

from vaultwatch.core.index.snapshot import Snapshot
from vaultwatch.core.query.complete import complete_folder, complete_path, complete_tag, ready

from .resources import TEMPLATE

FOLDER_ARGUMENTS = frozenset({"folder"})
TAG_ARGUMENTS = frozenset({"tag", "tags"})
NO_VALUES = Completion(values=[], total=0, has_more=False)
COMPLETE = {"path": complete_path, "folder": complete_folder, "tag": complete_tag}


def _what(ref: Any, name: str) -> str | None:
    """Which completion an argument gets ("path", "folder", "tag"), or None."""
    if isinstance(ref, ResourceTemplateReference) and ref.uri == TEMPLATE and name == "path":
        return "path"
    if isinstance(ref, PromptReference) and name in FOLDER_ARGUMENTS:
        return "folder"
    if isinstance(ref, PromptReference) and name in TAG_ARGUMENTS:
        return "tag"
    return None


def _answer(snap: Snapshot, what: str, typed: str) -> Completion:
    found = COMPLETE[what](snap, typed)
    return Completion(values=list(found.values), total=found.total, has_more=found.total > len(found.values))


def register(server: Any, vault: Any) -> None:
    """Serve completion/complete on `server` (the SDK then advertises the `completions` capability)."""

    @server.completion()
    async def complete(ref: Any, argument: Any, context: Any) -> Completion:
        what = _what(ref, argument.name)
        if what is None:
            return NO_VALUES
        snap = vault.snapshot
        if ready(snap, what):  # a bisection and at most a few thousand reads: no thread hop for that
            return _answer(snap, what, argument.value)
        # a whole-vault build (a fresh index, a big change): off the event loop, which the TUI shares
        return await anyio.to_thread.run_sync(_answer, snap, what, argument.value)

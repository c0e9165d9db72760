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

from vaultwatch.core.query.complete import Completions, complete_folder, complete_path, complete_tag

from .resources import TEMPLATE

FOLDER_ARGUMENTS = frozenset({"folder"})
TAG_ARGUMENTS = frozenset({"tag", "tags"})
NO_VALUES = Completion(values=[], total=0, has_more=False)


def register(server: Any, vault: Any) -> None:
    """Serve completion/complete on `server` (the SDK then advertises the `completions` capability)."""

    def answer(ref: Any, name: str, typed: str) -> Completion:
        snap = vault.snapshot
        found: Completions | None = None
        if isinstance(ref, ResourceTemplateReference) and ref.uri == TEMPLATE and name == "path":
            found = complete_path(snap, typed)
        elif isinstance(ref, PromptReference) and name in FOLDER_ARGUMENTS:
            found = complete_folder(snap, typed)
        elif isinstance(ref, PromptReference) and name in TAG_ARGUMENTS:
            found = complete_tag(snap, typed)
        if found is None:
            return NO_VALUES
        return Completion(values=list(found.values), total=found.total, has_more=found.total > len(found.values))

    @server.completion()
    async def complete(ref: Any, argument: Any, context: Any) -> Completion:
        # off the event loop: at 100k notes a loose match scans every path (the TUI shares this loop)
        return await anyio.to_thread.run_sync(answer, ref, argument.name, argument.value)

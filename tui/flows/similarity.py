"""The preview's "similar notes": the nearest notes by meaning, from the core's note vectors
(`Vault.similar`, the same function the MCP `similar` tool and `vaultwatch similar` call).

Only once the vectors are ready (the semantic extra installed and `AppConfig.semantic` on):
the preview never waits for them, and without them it lists no similar notes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vaultwatch.core.errors import VaultError

if TYPE_CHECKING:
    from vaultwatch.core.vault import Vault

LIMIT = 5


def similar_paths(vault: Vault, path: str, limit: int = LIMIT) -> tuple[str, ...]:
    """Paths of the notes most like the note at `path`, best first (none when vectors are not ready)."""
    if not vault.semantic_status()["ready"]:
        return ()
    try:
        return tuple(hit.path for hit in vault.similar(path, limit=limit).hits)
    except VaultError:  # just changed, not a note, ...: no list this time
        return ()

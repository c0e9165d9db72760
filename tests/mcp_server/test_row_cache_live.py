"""The tools' row cache (readcalls.row_cache) sees the vault's own index: once full, the rows of notes deleted
or edited since make room for new ones, so a vault whose notes come and go keeps its listings cached."""

from __future__ import annotations

from vaultwatch.core.query.listing import Query
from vaultwatch.mcp_server import readcalls


def test_a_full_cache_makes_room_for_new_notes_from_deleted_and_edited_ones(make_vault, open_vault):
    root = make_vault({"a.md": "# a\n", "b.md": "# b\n", "c.md": "# c\n"})
    vault = open_vault(root, cache=False)
    try:
        cache = readcalls.row_cache(vault)
        cache.max_rows = 3

        def listed() -> list[bytes]:
            """The rows of the vault's listing, in pages of two (a page is never more than the cache holds)."""
            entries = vault.list(Query()).entries
            bundle = vault.snapshot.is_bundle
            return [
                row for at in range(0, len(entries), 2) for row in cache.rows(entries[at : at + 2], vault.clock, bundle)
            ]

        listed()
        assert len(cache) == 3
        (root / "a.md").unlink()
        (root / "d.md").write_text("# d\n", encoding="utf-8")
        vault.refresh_paths(["a.md", "d.md"])
        first = listed()
        assert [r is s for r, s in zip(listed(), first, strict=True)] == [True, True, True]  # d kept as well
        assert len(cache) == 3
        (root / "b.md").write_text("# b, edited\n", encoding="utf-8")
        (root / "e.md").write_text("# e\n", encoding="utf-8")
        vault.refresh_paths(["b.md", "e.md"])
        first = listed()
        assert [r is s for r, s in zip(listed(), first, strict=True)] == [True, True, True, False]
        assert len(cache) == 3  # b's new row took its old row's place; no room for e
    finally:
        vault.stop()

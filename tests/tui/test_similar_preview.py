"""The preview lists notes similar by meaning once note vectors are ready (issue 17, item 4):
the app starts the vector index itself when the semantic extra is installed."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tui_helpers import copy_demo

from vaultwatch.core.search import semantic
from vaultwatch.tui.idle import settle

pytestmark = pytest.mark.skipif(
    not semantic.available(), reason="the semantic extra is not installed (pip install 'vaultwatch[semantic]')"
)

NOTE = "Areas/Engineering/Deploy Runbook.md"


async def test_the_app_computes_note_vectors_and_the_preview_lists_similar_notes(
    tmp_path: Path, app_for, monkeypatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    app = app_for(copy_demo(tmp_path / "demo"), semantic=True)
    vault = app.session.vault
    try:
        async with app.run_test(size=(160, 50)) as pilot:
            await settle(app)
            deadline = time.monotonic() + 120
            while not vault.semantic_status()["ready"] and time.monotonic() < deadline:
                await pilot.pause(0.1)
            assert vault.semantic_status()["ready"], vault.semantic_status()
            app.main.open_note(NOTE)
            await settle(app)
            preview = app.main.preview
            assert preview.path == NOTE
            want = [h.path for h in vault.similar(NOTE, limit=5).hits]
            assert list(preview.similar) == want and len(want) == 5 and NOTE not in want
            options = preview.query_one("#preview-links")
            ids = [options.get_option_at_index(i).id for i in range(options.option_count)]
            assert [i for i in ids if i.startswith("like:")] == [f"like:{p}" for p in want]
            assert "Similar 5" in str(options.border_title)
            options.highlighted = ids.index(f"like:{want[0]}")
            options.action_select()
            await settle(app)
            assert preview.path == want[0]
    finally:
        vault.stop()


async def test_without_the_setting_the_preview_lists_no_similar_notes(tmp_path: Path, app_for) -> None:
    app = app_for(copy_demo(tmp_path / "demo"))  # the tests' config: semantic off
    async with app.run_test(size=(160, 50)):
        await settle(app)
        app.main.open_note(NOTE)
        await settle(app)
        assert app.main.preview.path == NOTE and app.main.preview.similar == ()
        assert app.session.vault.semantic_status()["ready"] is False

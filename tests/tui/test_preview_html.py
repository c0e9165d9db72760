"""The preview reads inline HTML as Obsidian's reading view renders it: the Obsidian Hub's notes
end with `<span class="git-footer">[Edit In GitHub](…) | …</span>`, which showed its tags, and a
link after a tag on the same line must still be the one a click follows."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import pin_mtimes

from vaultwatch.tui.idle import settle
from vaultwatch.tui.widgets.preview import NoteBody

FOOTER = (
    '<span class="git-footer">[Edit In GitHub](https://github.dev/o/hub/blob/main/A.md "git-hub-edit-note") | '
    '[Copy this note](https://raw.githubusercontent.com/o/hub/main/A.md "git-hub-copy-note") </span>\n'
)


async def test_the_preview_shows_an_html_elements_text_not_its_tags(tmp_path: Path, app_for) -> None:
    root = tmp_path / "v"
    root.mkdir()
    (root / "A.md").write_text("<b>Go</b> [[Target]] now.\n\n# This note in GitHub\n\n" + FOOTER)
    (root / "Target.md").write_text("Back to [[A]].\n")
    pin_mtimes(root)
    app = app_for(root)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        assert app.main.preview.path == "A.md"
        body = app.query_one(NoteBody)
        assert "Edit In GitHub | Copy this note" in body.plain
        assert "<span" not in body.plain and "</span>" not in body.plain and "<b>" not in body.plain
        assert body.plain.startswith("Go Target now.")
        await pilot.click(NoteBody, offset=(4, 0))  # on "Target": after the hidden tags
        await settle(app)
        assert app.main.preview.path == "Target.md"

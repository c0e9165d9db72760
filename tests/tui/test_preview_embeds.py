"""The preview draws an embed of a note as Obsidian's reading view does: the note, its section
or its block in place, in a frame titled with the note's name (before, only `▣ Note › Part`
showed). Read on the worker, never on the UI thread; nested a few levels deep; a note embedding
itself stopped with a mark; a long embed cut with a line saying how much is left out."""

from __future__ import annotations

import os
from pathlib import Path

from tui_helpers import open_loaded, pin_mtimes

from vaultwatch.core.links import embeds as core_embeds
from vaultwatch.core.links import resolve as linkmap
from vaultwatch.core.links.embeds import EmbedReader
from vaultwatch.core.links.graph import missing_part
from vaultwatch.tui.idle import settle
from vaultwatch.tui.widgets.notebody import NoteBody
from vaultwatch.tui.widgets.notedoc import NoteDoc
from vaultwatch.tui.widgets.noterender import Context, body_lines

NOTES = {
    "Internal links.md": (
        "---\npublish: true\n---\n"
        "Learn how to link to notes. By linking notes, you can create a network of knowledge. ^b15695\n\n"
        "## Link to a heading\n\nUse `#` after the name.\n\n## Other\n\nNot this.\n"
    ),
    "Embed files.md": (
        "The text below is an example of an embedded block:\n\n![[Internal links#^b15695]]\n\n"
        "A section:\n\n![[Internal links#Link to a heading]]\n\n"
        "Missing: ![[Internal links#Nope]]\n\n![[Nowhere]]\n\n![[pic.png]]\n\nThe end.\n"
    ),
    "Self.md": "Before.\n\n![[Self]]\n\nAfter.\n",
    "A.md": "In A.\n\n![[B]]\n",
    "B.md": "In B.\n\n![[A]]\n",
    "Level1.md": "One.\n\n![[Level2]]\n",
    "Level2.md": "Two.\n\n![[Level3]]\n",
    "Level3.md": "Three.\n\n![[Level4]]\n",
    "Level4.md": "Four.\n\n![[Level5]]\n",
    "Level5.md": "Five.\n",
    "Long.md": "".join(f"Paragraph {i}.\n\n" for i in range(1, 61)),
    "Reads long.md": "![[Long]]\n\nAfter the embed.\n",
    "Listed.md": "- see ![[Internal links#^b15695]] here\n",
}


def embed_vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    root.mkdir()
    for name, text in NOTES.items():
        (root / name).write_text(text)
    (root / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    return pin_mtimes(root)


def doc_of(root: Path, path: str, width: int = 70) -> NoteDoc:
    vault = open_loaded(root)
    snapshot = vault.snapshot
    ctx = Context(
        lambda link: linkmap.resolve(snapshot, path, link),
        [],
        width=width,
        missing=lambda link, target: missing_part(snapshot, target, link),
        embeds=EmbedReader(snapshot, vault.root_real),
        source=path,
    )
    return NoteDoc(body_lines((root / path).read_text()), ctx, width)


def shown(root: Path, path: str, width: int = 70) -> list[str]:
    doc = doc_of(root, path, width)
    doc.extend(None, 60.0)
    assert doc.complete
    assert all(line.cell_len <= width for line in doc.display)
    return [line.plain.rstrip() for line in doc.display]


def test_a_block_and_a_section_are_drawn_in_place_in_a_frame(tmp_path: Path) -> None:
    lines = shown(embed_vault(tmp_path), "Embed files.md")
    at = lines.index("The text below is an example of an embedded block:") + 2
    assert lines[at].startswith("╭─ Internal links ─") and len(lines[at]) == 70
    assert lines[at + 1] == "│ Learn how to link to notes. By linking notes, you can create a"
    assert lines[at + 2] == "│ network of knowledge."  # wrapped inside the frame, its block id hidden
    assert lines[at + 3].startswith("╰──")
    section = lines[lines.index("A section:") + 2 :]
    assert section[:5] == [
        "╭─ Internal links " + "─" * 52,
        "│ Link to a heading",
        "│",
        "│ Use # after the name.",
        "╰" + "─" * 69,
    ]
    assert "Not this." not in lines and "Learn" not in " ".join(lines[:at])
    # what cannot be shown stays a name, drawn as links are: broken, or an image's name
    assert "Missing: ▣ Internal links › Nope" in lines and "▣ Nowhere" in lines and "▣ pic.png" in lines


def test_the_frame_title_is_a_link_to_the_note(tmp_path: Path) -> None:
    doc = doc_of(embed_vault(tmp_path), "Embed files.md")
    doc.extend(None, 60.0)
    top = next(line for line in doc.display if line.plain.startswith("╭─ Internal links"))
    at = top.plain.index("Internal links")
    click = next(s.style.meta["@click"] for s in top.spans if s.start <= at < s.end and not isinstance(s.style, str))
    index = int(click.removeprefix("follow(").rstrip(")"))
    assert doc.links[index][1] == "Internal links.md"


def test_an_embed_inside_a_line_is_drawn_after_it(tmp_path: Path) -> None:
    lines = shown(embed_vault(tmp_path), "Listed.md")
    assert lines[0] == "• see ▣ Internal links › ^b15695 here"
    assert lines[1].startswith("  ╭─ Internal links") and lines[2].startswith("  │ Learn how to link")


def test_a_note_embedding_itself_or_a_cycle_is_stopped_with_a_mark(tmp_path: Path) -> None:
    root = embed_vault(tmp_path)
    assert shown(root, "Self.md") == ["Before.", "", "▣ Self ↻ embeds itself: not shown again", "", "After."]
    lines = shown(root, "A.md")
    assert lines[2].startswith("╭─ B") and "│ In B." in lines
    assert "│ ▣ A ↻ embeds itself: not shown again" in lines


def test_nested_embeds_stop_at_a_fixed_depth(tmp_path: Path) -> None:
    text = "\n".join(shown(embed_vault(tmp_path), "Level1.md"))
    for level in ("Two.", "Three.", "Four."):
        assert level in text
    assert "Five." not in text and "▣ Level5 … embedded too deep to show here" in text
    assert "│ │ │ Four." in text  # three frames, one inside the other


def test_a_long_embed_is_cut_and_says_how_much_is_left_out(tmp_path: Path, monkeypatch) -> None:
    lines = shown(embed_vault(tmp_path), "Reads long.md")
    kept = [line for line in lines if line.startswith("│ Paragraph")]
    assert len(kept) == (core_embeds.MAX_EMBED_LINES + 1) // 2
    assert f"│ … {119 - core_embeds.MAX_EMBED_LINES} more lines of Long not shown" in lines
    assert lines[-1] == "After the embed."


def test_the_ui_thread_leaves_an_embed_not_read_yet_to_the_worker(tmp_path: Path) -> None:
    """`extend(read=False)` (the body's draw of a line scrolled to ahead of the worker) renders
    up to the embed and stops there; the worker's `extend` reads the note and goes on."""
    doc = doc_of(embed_vault(tmp_path), "Embed files.md")
    doc.extend(None, 60.0, read=False)
    assert not doc.complete
    assert [line.plain for line in doc.display] == ["The text below is an example of an embedded block:", ""]
    assert doc.links == []
    doc.extend(None, 60.0)
    assert doc.complete and any(line.plain.startswith("╭─ Internal links") for line in doc.display)


async def test_the_preview_shows_an_embedded_block_and_follows_its_changes(tmp_path: Path, app_for) -> None:
    root = embed_vault(tmp_path)
    app = app_for(root)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app)
        app.main.open_note("Embed files.md")
        await settle(app)
        await pilot.pause()
        body = app.query_one(NoteBody)
        assert body.complete
        text = body.plain
        assert "╭─ Internal links" in text and "│ Learn how to link to notes." in text, text
        # the embedded note changes: the preview draws it again
        target = root / "Internal links.md"
        target.write_text(target.read_text().replace("Learn how", "Learn now how"))
        st = target.stat()
        os.utime(target, (st.st_atime, st.st_mtime + 5))
        app.session.vault.refresh_paths(["Internal links.md"])
        await pilot.pause()
        await settle(app)
        assert "│ Learn now how to link to notes." in body.plain, body.plain

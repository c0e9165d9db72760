"""The preview reads a note as Obsidian's reading view does (tried on Obsidian's help vault and
kepano's template): comments (`%% %%`, `<!-- -->`) and block ids hidden, a callout's custom
title drawn once, a wrapped quote keeping its bar on every line, an empty property empty."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from tui_helpers import pin_mtimes

from vaultwatch.tui.idle import settle
from vaultwatch.tui.widgets.notebody import NoteBody
from vaultwatch.tui.widgets.notehead import note_meta

READING = """---
title: Reading view
empty_prop:
kind: sample
---
# Reading view

Visible %%an inline secret%% words <!-- an html secret --> stay.
%%
a block comment
over two lines
%%
<!--
an html block comment
-->
Notes are the unit of knowledge. ^b15695

```markdown
> [!info] Here's a callout title
```

> ```
> > quoted code
> ```

![[Engelbart.jpg#outline|100]] ![250](https://e.org/Engelbart.jpg)

> [!note] Note
> A note callout.

> [!tip] My own title
> Tip body.

> [!warning]
> Warning body.

> [!note] Bars
> First | Second
> -- | --
> one | two

> A quoted paragraph that is long enough to wrap several times in a narrow preview, so every wrapped line must keep the bar beside it as reading view draws it.
"""


def reading_vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    root.mkdir()
    (root / "Reading view.md").write_text(READING)
    return pin_mtimes(root)


async def shown_lines(tmp_path: Path, app_for) -> list[str]:
    """The preview body's display lines of the reading-view note, in the app at 100x40."""
    app = app_for(reading_vault(tmp_path))
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(app)
        app.main.open_note("Reading view.md")
        await settle(app)
        await pilot.pause()
        body = app.query_one(NoteBody)
        assert body.complete
        return [line.plain.rstrip() for line in body.lines]


async def test_the_preview_hides_comments_and_block_ids(tmp_path, app_for) -> None:
    lines = await shown_lines(tmp_path, app_for)
    text = "\n".join(lines)
    for hidden in ("secret", "block comment", "%%", "<!--", "-->", "^b15695", "over two lines"):
        assert hidden not in text, (hidden, text)
    assert "Visible  words  stay." in lines
    assert "Notes are the unit of knowledge." in lines


async def test_a_callout_shows_its_custom_title_once(tmp_path, app_for) -> None:
    lines = await shown_lines(tmp_path, app_for)
    # a custom title alone (not "Note Note", not "Tip My own title"); no title: the type's name
    assert "▎ Note" in lines and not any("Note Note" in line for line in lines)
    assert "▎ My own title" in lines and not any("Tip My own title" in line for line in lines)
    assert "▎ Warning" in lines


async def test_a_wrapped_quote_keeps_its_bar_on_every_line(tmp_path, app_for) -> None:
    lines = await shown_lines(tmp_path, app_for)
    start = next(i for i, line in enumerate(lines) if "A quoted paragraph" in line)
    quote = [q for q in lines[start:] if q]  # the last paragraph: to the end
    assert len(quote) >= 2 and all(q.startswith("▎ ") for q in quote), quote
    assert "reading view draws it." in " ".join(q[2:] for q in quote)


async def test_a_quote_marker_in_a_code_block_is_code(tmp_path, app_for) -> None:
    """A Markdown sample of a callout in a fence shows as written, `>` and all, with no bar;
    a fence inside a quote keeps the quote's bar."""
    lines = await shown_lines(tmp_path, app_for)
    assert "  > [!info] Here's a callout title" in lines, lines
    assert "▎   > quoted code" in lines, lines


async def test_an_image_size_shows_the_image_name(tmp_path, app_for) -> None:
    """`|100` after an image embed and a Markdown image's alt text `250` are its size (Obsidian
    help, "Embed files"): the reader sees the image's name."""
    lines = await shown_lines(tmp_path, app_for)
    assert "▣ Engelbart.jpg Engelbart.jpg" in lines, lines


async def test_a_table_in_a_callout_is_a_table(tmp_path, app_for) -> None:
    lines = await shown_lines(tmp_path, app_for)
    start = lines.index("▎ Bars")
    assert lines[start + 1 : start + 4] == ["▎ First │ Second", "▎ ──────┼───────", "▎ one   │ two"], lines


def test_an_empty_property_shows_empty_not_null(tmp_path) -> None:
    from tui_helpers import open_loaded

    vault = open_loaded(reading_vault(tmp_path))
    entry = vault.snapshot.get("Reading view.md")
    console = Console(width=60, color_system=None, record=True)
    console.print(note_meta(entry))
    rows = {line.split()[0]: line.split()[1:] for line in console.export_text().splitlines() if line.strip()}
    assert rows["empty_prop"] == [] and rows["kind"] == ["sample"]


async def test_a_wrapped_list_item_hangs_under_its_text_in_the_preview(tmp_path, app_for) -> None:
    """The Hub's "Why and How to use Stylelint…": a long numbered item's second line starts
    under its text, not at the preview's left edge."""
    root = tmp_path / "v"
    root.mkdir()
    item = "They enforce consistent styling, which increases the readability of your code, " * 3
    (root / "List.md").write_text(f"Intro.\n\n1. {item}\n   - {item}\n")
    app = app_for(pin_mtimes(root))
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(app)
        app.main.open_note("List.md")
        await settle(app)
        await pilot.pause()
        body = app.query_one(NoteBody)
        assert body.complete
        lines = [line.plain.rstrip() for line in body.lines]
    first = next(i for i, line in enumerate(lines) if line.startswith("1. They"))
    nested = next(i for i, line in enumerate(lines) if line.startswith("   • They"))
    assert first + 1 < nested and all(line.startswith("   ") and line[3] != " " for line in lines[first + 1 : nested])
    assert nested + 1 < len(lines) and all(line.startswith("     ") and line[5] != " " for line in lines[nested + 1 :])


async def test_folded_callouts_and_task_states_in_the_preview(tmp_path, app_for) -> None:
    """Obsidian's help vault folds callouts (`> [!tip]- Drag and drop embed` shows its title
    alone); the Hub's Ribbons theme page lists task states (`- [/] Half`, `- [-] Dropped`):
    each is drawn with its own mark, never as an open box or as `[/]`."""
    root = tmp_path / "v"
    root.mkdir()
    (root / "Folds.md").write_text(
        "> [!tip]- Drag and drop embed\n> On desktop, drag files in.\n\n"
        "> [!info]+ Canvas embeds show shapes only\n> Embedded canvases display shapes.\n\n"
        "- [/] Half\n- [-] Dropped\n- [?] Question\n"
    )
    app = app_for(pin_mtimes(root))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app)
        app.main.open_note("Folds.md")
        await settle(app)
        await pilot.pause()
        body = app.query_one(NoteBody)
        assert body.complete
        lines = [line.plain.rstrip() for line in body.lines]
    assert lines == [
        "▎ Drag and drop embed ▸",
        "",
        "▎ Canvas embeds show shapes only ▾",
        "▎ Embedded canvases display shapes.",
        "",
        "◐ Half",
        "⊟ Dropped",
        "? Question",
    ], lines

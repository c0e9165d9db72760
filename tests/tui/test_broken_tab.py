"""The Broken tab on a vault shaped like the ones people keep (tests/template_vault.py): one row
per problem, grouped by kind with counts, templates folders exempt, links to notes not yet
written listed last and not counted; enter opens the note at the problem's line, `e` opens
$EDITOR there."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from tui_helpers import open_loaded

from tests.template_vault import EXPECTED, make_template_vault
from vaultwatch.core.query import problems
from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.idle import settle
from vaultwatch.tui.widgets.problems import PROBLEM_MOST, ProblemList
from vaultwatch.tui.widgets.rowlist import Column, layout

KYOTO = "Trips/Kyoto 2023.md"


@pytest.fixture
def template_vault(tmp_path: Path) -> Path:
    return make_template_vault(tmp_path / "vault")


def app_on(root: Path, **changes):
    return make_app(open_loaded(root), config=fixed_config(**changes))


async def broken_tab(app, pilot) -> ProblemList:
    await settle(app)
    await pilot.press("5")
    await settle(app)
    for _ in range(50):  # the tab's list may land a frame after settle
        if app.main.active_pane.id == "broken" and app.main.active_list.rows:
            break
        await pilot.pause(0.1)
    lst = app.main.active_list
    assert isinstance(lst, ProblemList)
    return lst


async def test_one_row_per_problem_by_kind_templates_exempt(template_vault: Path) -> None:
    app = app_on(template_vault)
    async with app.run_test(size=(160, 50)) as pilot:
        lst = await broken_tab(app, pilot)
        assert [(r.kind, r.path, r.line) for r in lst.rows] == [
            (kind, path, line) for kind, where in EXPECTED.items() for path, line in where
        ]
        assert not [r for r in lst.rows if r.path.startswith(("Templates/", "Meta/Templater/"))]
        # the tab counts real breakage only; the line above the list says each kind's count
        assert str(app.main.tabs.get_tab("broken").label) == "Broken 4"
        info = str(app.query_one("#broken-info").render())
        assert info.startswith("4 problems: 1 missing heading · 1 missing block · 1 missing embed")
        assert "1 bad frontmatter" in info and "then 3 links to notes not yet written" in info
        assert "4 broken" in str(app.main.status.render())


async def test_enter_opens_the_note_at_the_problems_line(template_vault: Path) -> None:
    """Enter on the missing block's row previews Kyoto 2023 scrolled to line 10 (the body's
    first line on screen is the one with the link)."""
    # a long note: the problem's line is below the first screen
    path = template_vault / KYOTO
    text = path.read_text().replace("# Kyoto 2023\n", "# Kyoto 2023\n" + "filler line\n" * 80) + "more\n" * 80
    path.write_text(text)
    want = next(i for i, line in enumerate(text.splitlines(), 1) if "#^railpass" in line)
    app = app_on(template_vault)
    async with app.run_test(size=(160, 50)) as pilot:
        lst = await broken_tab(app, pilot)
        row = next(r for r in lst.rows if r.kind == problems.BLOCK)
        assert row.line == want
        assert lst.select_key(lst.row_key(row))
        await pilot.press("enter")
        await settle(app)
        await pilot.pause()
        preview = app.main.preview
        assert preview.path == KYOTO and app.focused is preview
        body = preview.query_one("#preview-body")
        assert preview.goto_y is not None and preview.scroll_y == preview.goto_y > 0
        top = body.lines[int(preview.scroll_y) - body.virtual_region.y].plain
        assert "Rail pass" in top, top


async def test_e_opens_the_editor_at_the_problems_line(
    template_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editor that takes `+LINE` (here a script named `vi` that logs its arguments) gets the
    problem's line before the file."""
    log = tmp_path / "editor.log"
    editor = tmp_path / "bin" / "vi"
    editor.parent.mkdir()
    editor.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {log}\n')
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", str(editor))
    app = app_on(template_vault, user="tester")
    async with app.run_test(size=(160, 50)) as pilot:
        lst = await broken_tab(app, pilot)
        row = next(r for r in lst.rows if r.kind == problems.HEADING)
        assert lst.select_key(lst.row_key(row))
        await pilot.pause()
        await pilot.press("e")
        for _ in range(100):
            for worker in [w for w in app.workers if w.group == "write"]:
                await worker.wait()
            if log.exists():
                break
            await pilot.pause(0.05)
        assert log.read_text().splitlines() == ["+8", str(template_vault / KYOTO)]


def test_snapshot_broken_tab_on_a_template_vault(snap_compare, template_vault: Path) -> None:
    async def run_before(pilot) -> None:
        await broken_tab(pilot.app, pilot)
        await settle(pilot.app)
        await pilot.pause()

    os.environ.pop("VISUAL", None)
    assert snap_compare(app_on(template_vault), terminal_size=(160, 50), run_before=run_before)


def title_and_status(lst, row) -> tuple[str, str | None]:
    """A Notes row's Title cell as text, and its Status cell (None: the list has no Status column),
    at the list's width."""
    columns = layout(lst.all_columns(), lst.scrollable_content_region.width)
    cells = dict(zip((c.key for c in columns), lst.cells(row, columns), strict=True))
    title = cells["title"]
    text = "".join(part[0] for part in title) if isinstance(title, list) else title[0]
    return text, cells["status"][0] if "status" in cells else None


async def test_the_notes_list_says_broken_frontmatter_templates_exempt(template_vault: Path) -> None:
    """A template's `{{date}}` frontmatter does not parse as YAML, but the Broken tab, the counts and
    `links --broken` leave the templates folders out: the Notes list does not call those notes
    broken either, while a real note whose frontmatter does not parse stays broken. The vault uses
    no status property, so no Status column takes a column of blanks for that one word: the note's
    title says it."""
    app = app_on(template_vault)
    async with app.run_test(size=(200, 50)):
        await settle(app)
        lst = app.main.active_list
        shown = {row.path: title_and_status(lst, row) for row in lst.rows}
        assert all(status is None for _, status in shown.values())
        templates = [p for p in shown if p.startswith("Templates/")]
        assert templates and all(app.session.snapshot.get(p).frontmatter_error for p in templates)
        flagged = {p: title for p, (title, _) in shown.items() if title.endswith("  broken frontmatter")}
        assert flagged == {"Inbox/Broken frontmatter.md": "Broken frontmatter  broken frontmatter"}
        # a narrow title column keeps the Status column's one word and cuts the title
        broken = app.session.snapshot.get("Inbox/Broken frontmatter.md")
        assert lst.cells(broken, [Column("title", "Title", 14)]) == [
            [("Broke…", None), ("  broken", lst.cstyle("rowlist--error"))]
        ]

    # once a note has a status the column is the vault's own, and it says `broken` there
    (template_vault / "Readme.md").write_text("---\nstatus: draft\n---\n# Readme\n")
    app = app_on(template_vault)
    async with app.run_test(size=(160, 50)):
        await settle(app)
        lst = app.main.active_list
        shown = {row.path: title_and_status(lst, row) for row in lst.rows}
        assert shown["Readme.md"] == ("Readme", "draft")
        assert shown["Inbox/Broken frontmatter.md"] == ("Broken frontmatter", "broken")
        assert [p for p, (_, status) in shown.items() if status == "broken"] == ["Inbox/Broken frontmatter.md"]


def hub_like_vault(root: Path) -> Path:
    """Theme notes deep in long folders linking headings a concept note lacks: the rows differ
    only in the heading (the user test on the Obsidian Hub)."""
    folder = root / "02 - Community Expansions" / "02.05 All Community Expansions" / "Themes"
    folder.mkdir(parents=True)
    (root / "05 - Concepts").mkdir()
    (root / "05 - Concepts" / "Obsidian Core Plugins.md").write_text("# Obsidian Core Plugins\n\n## Canvas\n")
    for name, heading in [("Kakano", "Bookmarks"), ("Prism", "None"), ("Typewriter", "Properties view")]:
        (folder / f"{name}.md").write_text(f"# {name}\n\nSee [[Obsidian Core Plugins#{heading}]].\n")
    return root


def problem_cells(lst: ProblemList) -> list[str]:
    """The Problem column's text of every row as drawn."""
    x = lst.column_x("problem")
    assert x is not None
    return [lst.render_line(y).text[x:].rstrip() for y in range(1, len(lst.rows) + 1)]


async def test_the_problem_column_keeps_the_links_heading_and_follows_resizes(tmp_path: Path) -> None:
    """At 160x50 (a list 65 cells wide beside the preview) the Problem column takes what the links
    need up to PROBLEM_MOST, the path the rest, down to a third of the list (no Kind column: every row
    is a missing heading, which the line above says), and a link that still does not fit loses the
    middle of its target, never its heading; a wider screen gives the column more."""
    app = app_on(hub_like_vault(tmp_path / "vault"))
    async with app.run_test(size=(160, 50)) as pilot:
        lst = await broken_tab(app, pilot)
        width = lst.scrollable_content_region.width
        columns = lst.column_widths(width)
        assert "kind" not in columns
        assert columns["problem"] == PROBLEM_MOST
        assert columns["path"] == width - columns["problem"] - 1 >= width // 3
        cells = problem_cells(lst)
        assert cells[0].startswith("[[Obsidian Core Plugins#Bookmarks]]"), cells
        assert cells[1].startswith("[[Obsidian Core Plugins#None]]"), cells
        assert cells[2].startswith("[[Obsidian") and cells[2].endswith("…#Properties view]]"), cells
        # the path keeps the note's file name
        assert lst.render_line(1).text[: columns["path"]].rstrip().endswith("/Kakano.md:3")

        await pilot.resize_terminal(220, 50)
        await settle(app)
        await pilot.pause()
        wider = lst.scrollable_content_region.width
        assert wider > width
        grown = lst.column_widths(wider)
        assert grown["problem"] > columns["problem"]
        assert problem_cells(lst)[0].startswith("[[Obsidian Core Plugins#Bookmarks]]")


def kepano_like_vault(root: Path) -> Path:
    """Links to notes not yet written, as in kepano's vault: long note names, short links in most
    notes, one long one."""
    long_name = "Notes/Evergreen notes turn ideas into objects that you can manipulate.md"
    links = ["Published", "Composability", "Emergence", "Japan", "Remix", "Calm"]
    notes = {
        "Categories/Evergreen.md": "# Evergreen\n\na\nb\n[[Composability]]\n",
        "Clippings/Buy wisely.md": "# Buy wisely\n" + "x\n" * 9 + "[[Published]]\n",
        "Notes/2023-09-12 Meeting with Steph.md": "# Meeting\n" + "x\n" * 11 + "[[Emergence]]\n",
        long_name: "# Evergreen notes\n\n" + "".join(f"[[{link}]]\n" for link in links),
        "Notes/Superorganism.md": "# S\n\n[[A company is a superorganism of many small notes]]\n",
    }
    for path, text in notes.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


@pytest.mark.parametrize(
    ("size", "whole"),
    [((120, 40), "Categories/Evergreen.md:5"), ((80, 40), "/2023-09-12 Meeting with Steph.md:13")],
)
async def test_the_path_column_takes_the_room_one_long_link_left_it(tmp_path: Path, size, whole: str) -> None:
    """At 120 columns the path column was 16 wide (`…/Evergreen.md:5`, `2023-09-12 M…:13`): the
    longest link, on one row, held the Problem column's room for every row."""
    app = app_on(kepano_like_vault(tmp_path / "vault"))
    async with app.run_test(size=size) as pilot:
        lst = await broken_tab(app, pilot)
        columns = lst.column_widths(lst.scrollable_content_region.width)
        paths = [lst.render_line(y).text[: columns["path"]].rstrip() for y in range(1, len(lst.rows) + 1)]
        assert any(p.endswith(whole) for p in paths), (columns, paths)
        # the short links stay whole beside it; the long one is cut inside its brackets
        cells = problem_cells(lst)
        assert any(c.startswith("[[Published]]") for c in cells), cells
        assert any(c.startswith("[[A comp") and c.endswith("…]]") for c in cells), cells


def help_like_vault(root: Path) -> Path:
    """As in Obsidian's help vault: most problems in one note deep in a long folder name, one long
    embed in another folder."""
    notes = {
        "Linking notes and files/Internal links.md": "# Internal links\n"
        + "".join("x\n[[Example]]\n[[Example#Details]]\n(see [e](Example.md))\n" for _ in range(3)),
        "Extending Obsidian/Obsidian CLI.md": "# CLI\n\n![[obsidian-cli.mp4#interface]]\n",
        "Start.md": "# Start\n",
    }
    for path, text in notes.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


async def test_the_path_keeps_its_folder_at_120_before_the_one_long_link(tmp_path: Path) -> None:
    """Finding: at 120 columns the rows read `…/Internal links.md:4`, their folder gone, while the
    Problem column held room for the one long embed; at 80 they read `Linking …/Internal links.md:4`.
    The folder most rows sit in claims room before the one longest link does."""
    app = app_on(help_like_vault(tmp_path / "vault"))
    async with app.run_test(size=(120, 40)) as pilot:
        lst = await broken_tab(app, pilot)
        columns = lst.column_widths(lst.scrollable_content_region.width)
        paths = [lst.render_line(y).text[: columns["path"]].rstrip() for y in range(1, len(lst.rows) + 1)]
        internal = [p for p in paths if "Internal links.md" in p]
        assert internal and all(p.startswith("Link") for p in internal), (columns, paths)
        cells = problem_cells(lst)
        assert any(c.startswith("[[Example#Details]]") for c in cells), cells  # the rows' links whole

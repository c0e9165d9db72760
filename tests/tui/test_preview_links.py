"""The preview's Links box lists the note's links as the index has them (`vaultwatch links`,
the agents' `get_links`): links written in properties too, which the rendered body has not
(kepano's template vault keeps a reference note's every link in its properties)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from textual.widgets import OptionList
from tui_helpers import open_loaded, pin_mtimes

from tests.template_vault import make_template_vault
from vaultwatch.core.query import problems
from vaultwatch.tui.idle import settle
from vaultwatch.tui.widgets.notehead import note_meta

FILM = """---
categories:
  - "[[Movies]]"
director: "[[Ridley Scott|Scott]]"
cast:
  - "[[Harrison Ford]]"
year: 1982
---
A film with [[Replicants]] in it.
"""


def film_vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    (root / "People").mkdir(parents=True)
    (root / "Blade Runner.md").write_text(FILM)
    (root / "Movies.md").write_text("# Movies\n")
    (root / "People" / "Ridley Scott.md").write_text("# Ridley Scott\n")
    (root / "Replicants.md").write_text("# Replicants\n")
    return pin_mtimes(root)


async def test_the_links_box_lists_the_links_in_properties(tmp_path: Path, app_for) -> None:
    root = film_vault(tmp_path)
    app = app_for(root)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app)
        app.main.open_note("Blade Runner.md")
        await settle(app)
        await pilot.pause()
        box = app.query_one("#preview-links", OptionList)
        shown = [o.id for o in box.options]
        # the core's outgoing links of the note, each target once (the unwritten one has none)
        report = app.session.vault.links("Blade Runner.md")
        expected = list(dict.fromkeys(f"to:{r.target}" for r in report.outgoing if r.target))
        assert shown == expected == ["to:Movies.md", "to:People/Ridley Scott.md", "to:Replicants.md"]
        assert box.display and str(box.border_title).startswith("Links 3 ")


def test_a_property_link_shows_as_its_name(tmp_path: Path) -> None:
    """Obsidian's properties show `"[[Movies]]"` as the link Movies (an alias by its alias)."""
    entry = open_loaded(film_vault(tmp_path)).snapshot.get("Blade Runner.md")
    console = Console(width=60, color_system=None, record=True)
    console.print(note_meta(entry))
    rows = {line.split()[0]: " ".join(line.split()[1:]) for line in console.export_text().splitlines() if line.strip()}
    assert rows["categories"] == "Movies" and rows["director"] == "Scott" and rows["cast"] == "Harrison Ford"


def test_a_templates_frontmatter_is_no_error_in_the_preview(tmp_path: Path) -> None:
    """A template's `{{date}}` is not YAML until the template is applied: the Broken tab and the lists
    do not call it broken, and the preview's properties say it is a template, not an error; a note
    elsewhere with the same frontmatter is an error."""
    root = make_template_vault(tmp_path / "vault")
    (root / "Inbox").mkdir(exist_ok=True)
    template = "Templates/Trip Template.md"
    (root / "Inbox" / "copy.md").write_bytes((root / template).read_bytes())
    snapshot = open_loaded(root).snapshot
    folders = problems.template_folders(str(root))

    def meta(rel: str) -> str:
        console = Console(width=100, color_system=None, record=True)
        entry = snapshot.get(rel)
        assert entry is not None and entry.frontmatter_error
        console.print(note_meta(entry, template=problems.in_folders(rel, folders)))
        return console.export_text()

    assert "template" in meta(template) and "error" not in meta(template)
    assert "frontmatter error" in meta("Inbox/copy.md")


async def test_the_preview_of_a_template_says_so(tmp_path: Path, app_for) -> None:
    root = make_template_vault(tmp_path / "vault")
    app = app_for(root)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app)
        app.main.open_note("Templates/Trip Template.md")
        await settle(app)
        await pilot.pause()
        shown = " ".join(str(w.render()) for w in app.main.query("Static"))
        assert "filled in when the template is applied" in shown and "frontmatter error" not in shown


async def test_the_preview_draws_a_missing_heading_as_the_broken_tab_lists_it(tmp_path: Path, app_for) -> None:
    """`[[Kyoto#Top]]` and `![[Kyoto#Nope]]` to a Kyoto without those headings are "missing
    heading" in the Broken tab; the preview drew them as valid links. Each link is now drawn
    broken exactly when the Broken tab lists it."""
    from vaultwatch.tui.widgets.notebody import NoteBody

    root = tmp_path / "v"
    root.mkdir()
    (root / "Kyoto.md").write_text("# Kyoto\n\n## Sights\n\nTemples. ^temples\n")
    (root / "Trip.md").write_text(
        "[[Kyoto#Top]]\n\n![[Kyoto#Nope]]\n\n[[Kyoto#Sights]]\n\n[[Kyoto#^temples]]\n\n[[Kyoto#^gone]]\n"
    )
    app = app_for(pin_mtimes(root))
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app)
        app.main.open_note("Trip.md")
        await settle(app)
        await pilot.pause()
        lines = [line for line in app.query_one(NoteBody).lines if line.plain.strip()]
        vault = app.session.vault
        listed = {p.link.heading for p in problems.vault_problems(vault.snapshot, vault.root) if p.path == "Trip.md"}
    assert listed == {"Top", "Nope", "^gone"}
    for line, heading in zip(lines, ("Top", "Nope", "Sights", "^temples", "^gone"), strict=True):
        at = line.plain.index(f"Kyoto › {heading}")
        struck = any(s.start <= at < s.end and s.style.strike for s in line.spans if not isinstance(s.style, str))
        assert struck == (heading in listed), (heading, line.plain)

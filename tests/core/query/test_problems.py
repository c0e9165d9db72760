"""The vault's problems, one a row (core.query.problems: the Broken tab's and `links --broken`'s
one query), on a vault shaped like kepano's template vault: templates folders exempt, links to
notes not yet written a kind of their own, each problem at its line."""

from __future__ import annotations

from pathlib import Path

from tests.template_vault import EXPECTED, FILES, TEMPLATE_FOLDERS, make_template_vault
from vaultwatch.core.query import problems
from vaultwatch.core.vault import Vault


def loaded(root: Path) -> Vault:
    vault = Vault(root)
    vault.load()
    return vault


def test_template_folders_come_from_obsidians_settings(tmp_path: Path) -> None:
    root = make_template_vault(tmp_path / "v")
    assert problems.template_folders(str(root)) == TEMPLATE_FOLDERS
    (root / ".obsidian" / "templates.json").write_text("{not json")
    assert problems.template_folders(str(root)) == ("Meta/Templater",)  # a bad file names none
    (root / ".obsidian" / "templates.json").write_text('{"folder": "/"}')
    assert problems.template_folders(str(root)) == ("Meta/Templater",)  # never the whole vault


def test_every_problem_is_a_row_by_kind_at_its_line(tmp_path: Path) -> None:
    root = make_template_vault(tmp_path / "v")
    vault = loaded(root)
    try:
        found = problems.locate(vault.root_real, problems.vault_problems(vault.snapshot, vault.root))
    finally:
        vault.stop()
    got: dict[str, list[tuple[str, int | None]]] = {}
    for p in found:
        got.setdefault(p.kind, []).append((p.path, p.line))
    assert got == EXPECTED
    assert list(got) == [k for k in problems.KINDS if k in EXPECTED]  # grouped, real breakage first
    # no template note is judged, though their placeholders are neither YAML nor links
    assert not [p for p in found if p.path.startswith(TEMPLATE_FOLDERS)]
    # each line really holds what the row names
    for p in found:
        if p.link is not None:
            assert p.link.target in FILES[p.path].splitlines()[p.line - 1]
    unwritten = [p for p in found if p.kind == problems.UNWRITTEN]
    assert [p.link.target for p in unwritten] == ["Japan", "Osaka", "Japan"]
    assert not any(p.broken for p in unwritten) and all(p.broken for p in found if p not in unwritten)
    assert problems.counts(found) == {"heading": 1, "block": 1, "embed": 1, "frontmatter": 1, "unwritten": 3}


def test_without_templates_settings_the_template_notes_are_problems(tmp_path: Path) -> None:
    """The exemption comes from the settings, not from a folder's name."""
    root = make_template_vault(tmp_path / "v")
    (root / ".obsidian" / "templates.json").unlink()
    vault = loaded(root)
    try:
        found = problems.vault_problems(vault.snapshot, vault.root)
    finally:
        vault.stop()
    assert {p.path for p in found if p.path.startswith("Templates/")} == {
        "Templates/Daily Note Template.md",
        "Templates/Trip Template.md",
    }
    assert not [p for p in found if p.path.startswith("Meta/Templater/")]


# Notes whose links a search by text would place on the wrong line: a longer link that starts
# the same (`[[Nintendo Switch]]`, `[[Ghost#Part]]`, `[[Folder/Target]]`), two links on one line,
# the same text in code first, a Markdown link written percent-encoded and in `<...>`. Each
# comment is the line the link is on.
TRICKY = {
    "Folder/Target.md": "# Target\n",
    "Zelda.md": (
        "---\n"
        'system: "[[Nintendo Switch]]"\n'  # 2
        'maker: "[[Nintendo]]"\n'  # 3
        "---\n"
        "[[Nintendo Switch]] is where [[Nintendo]] sells it.\n"  # 5
    ),
    "Lines.md": "[[Ghost]] and again [[Ghost]]\n\nlater [[Ghost]] and [[Ghost#Part]]\n",  # 1, 3
    "Main.md": (
        "[[Folder/Target]] is written.\n"  # 1
        "```\n"
        "[[Folder]] and [[Ghost Town]] in a fence\n"  # 3: code, no link
        "```\n"
        "`[[Ghost Town]]` and `[v](<Ghost Town.md>)` in code spans\n"  # 5: code, no link
        "[[Ghost Town|the town]] [[ghost town]]\n"  # 6
        "[w](Ghost%20Town.md) and [v](<Ghost Town.md>)\n"  # 7
        "[[Folder]] at last\n"  # 8
    ),
}
TRICKY_LINES = [
    ("Lines.md", "[[Ghost]]", 1),
    ("Lines.md", "[[Ghost]]", 1),
    ("Lines.md", "[[Ghost]]", 3),
    ("Lines.md", "[[Ghost#Part]]", 3),
    ("Main.md", "[[Ghost Town]]", 6),
    ("Main.md", "[[ghost town]]", 6),
    ("Main.md", "(Ghost Town.md)", 7),
    ("Main.md", "(Ghost Town.md)", 7),
    ("Main.md", "[[Folder]]", 8),
    ("Zelda.md", "[[Nintendo Switch]]", 2),
    ("Zelda.md", "[[Nintendo]]", 3),
    ("Zelda.md", "[[Nintendo Switch]]", 5),
    ("Zelda.md", "[[Nintendo]]", 5),
]


def test_each_link_is_at_its_own_line_not_where_its_text_first_appears(tmp_path: Path) -> None:
    root = tmp_path / "v"
    for rel, text in TRICKY.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    vault = loaded(root)
    try:
        found = problems.locate(vault.root_real, problems.vault_problems(vault.snapshot, vault.root))
    finally:
        vault.stop()
    assert [(p.path, p.message.split(":")[0], p.line) for p in found] == TRICKY_LINES
    assert {p.kind for p in found} == {problems.UNWRITTEN}

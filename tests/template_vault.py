"""A small vault shaped like the public ones people keep (kepano's vault template, Obsidian's
help vault): a templates folder named in `.obsidian/templates.json` whose notes hold `{{date}}`
placeholders, a Templater folder, links to notes not written yet, a broken heading link, a
missing block, a missing embed, invalid frontmatter, no OKF index.

`make_template_vault(root)` writes it and returns `root`. The constants say what a correct
report of its problems holds (tests compare with them, and with the files' own lines).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

FILES: dict[str, str] = {
    "Templates/Daily Note Template.md": (
        "---\ncreated: {{date}}\ntags: [daily]\n---\n\n# {{title}}\n\n[[{{date:YYYY-MM-DD}}]] · [[Daily Notes]]\n"
    ),
    "Templates/Trip Template.md": '---\ncategories:\n  - "[[Trips]]"\nstart: {{date}}\n---\n![[{{title}}.png]]\n',
    "Meta/Templater/Meeting.md": "---\ndate: <% tp.date.now() %>\n---\n[[<% tp.file.title %>]]\n",
    "Trips/Kyoto 2023.md": (
        '---\ncategories:\n  - "[[Trips]]"\n---\n'
        "# Kyoto 2023\n"
        "\n"
        "We flew to [[Japan]] in spring.\n"  # line 7: a note not written yet
        "See [[Packing List#Shoes]] before leaving.\n"  # line 8: no such heading
        "![[kyoto-temple.jpg]]\n"  # line 9: missing embed
        "Rail pass: [[Packing List#^railpass]]\n"  # line 10: no such block
        "Then [[Osaka]] and [[Japan]] again.\n"  # line 11: two notes not written yet
    ),
    "Trips/Packing List.md": "# Packing List\n\n## Clothes\n\nSocks and a coat. ^clothes\n",
    "Trips.md": "# Trips\n\n[[Kyoto 2023]] and [[Packing List#Clothes]]\n",
    "Inbox/Broken frontmatter.md": "---\ntitle: [unclosed\nstatus: draft\n---\n\nThe YAML above does not parse.\n",
    "Readme.md": "# Readme\n\nStart at [[Trips]].\n",
}
# the kinds, with their (path, line) pairs, in the order a correct report lists them
EXPECTED: dict[str, list[tuple[str, int]]] = {
    "heading": [("Trips/Kyoto 2023.md", 8)],
    "block": [("Trips/Kyoto 2023.md", 10)],
    "embed": [("Trips/Kyoto 2023.md", 9)],
    "frontmatter": [("Inbox/Broken frontmatter.md", 3)],  # where the YAML parser stops
    "unwritten": [("Trips/Kyoto 2023.md", 7), ("Trips/Kyoto 2023.md", 11), ("Trips/Kyoto 2023.md", 11)],
}
TEMPLATE_FOLDERS = ("Templates", "Meta/Templater")


def make_template_vault(root: Path) -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    obsidian = root / ".obsidian"
    (obsidian / "plugins" / "templater-obsidian").mkdir(parents=True, exist_ok=True)
    (obsidian / "templates.json").write_text(json.dumps({"folder": "Templates"}))
    (obsidian / "plugins" / "templater-obsidian" / "data.json").write_text(
        json.dumps({"templates_folder": "Meta/Templater", "trigger_on_file_creation": False})
    )
    for n, path in enumerate(sorted(root.rglob("*.md"))):  # fixed times: listings and snapshots agree
        os.utime(path, ns=(1_764_000_000_000_000_000 + n, 1_764_000_000_000_000_000 + n))
    return root

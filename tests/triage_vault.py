"""A small vault that is no OKF bundle, shaped like the ones people keep, with what triage has to
judge there: a templates folder whose frontmatter holds placeholders, links to notes not yet
written, `status: archived` and friends, `#deprecated` tags, `deprecated: true`, `review_by` and
`expires` dates on both sides of today (AS_OF).

`make_triage_vault(root)` writes it and returns `root`; the constants say what the default rules
select (tests compare with them).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

AS_OF = "2026-11-29"

FILES: dict[str, str] = {
    "Templates/Project Template.md": (
        "---\nstatus: {{status}}\nreview_by: {{date}}\ntags: [project]\n---\n\n# {{title}}\n"
    ),
    "Projects/Old Website.md": "---\nstatus: archived\n---\n\n# Old Website\n\nSee [[Website Redesign]].\n",
    "Projects/Legacy API.md": "# Legacy API\n\nReplaced by the new one. #deprecated\n",
    "Projects/Roadmap.md": "---\nreview_by: 2026-11-01\n---\n\n# Roadmap\n\nNext: [[Q1 Plan]].\n",
    "Projects/Launch.md": "---\nreview_by: 2027-03-01\nstatus: active\n---\n\n# Launch\n",
    "Reference/Vendor Terms.md": "---\nexpires: 2026-06-30\n---\n\n# Vendor Terms\n",
    "Reference/Superseded Guide.md": "---\ndeprecated: true\n---\n\n# Superseded Guide\n",
    "Reference/Style.md": "---\nstatus: Obsolete\ntags: [writing]\n---\n\n# Style\n",
    "Notes/Ideas.md": "# Ideas\n\nLinks to [[Not Yet Written]] and #archived-ideas (no rule: another tag).\n",
    "Notes/Agent Draft.md": "# Agent Draft\n\nAn agent will change this.\n",
    "Home.md": "# Home\n\n[[Projects/Roadmap]] · [[Ideas]]\n",
}

DEPRECATED = [
    "Projects/Legacy API.md",
    "Projects/Old Website.md",
    "Reference/Style.md",
    "Reference/Superseded Guide.md",
]
STALE = ["Projects/Roadmap.md", "Reference/Vendor Terms.md"]  # review_by / expires reached by AS_OF
BASE_MTIME = 1_795_860_000  # 2026-11-28 10:00 UTC


def make_triage_vault(root: Path) -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / ".obsidian").mkdir(parents=True, exist_ok=True)
    (root / ".obsidian" / "templates.json").write_text(json.dumps({"folder": "Templates"}))
    for n, path in enumerate(sorted(root.rglob("*.md"))):  # fixed times: listings and snapshots agree
        stamp = BASE_MTIME - n * 86400 * 20  # a note 20 days older than the one before
        os.utime(path, (stamp, stamp))
    return root

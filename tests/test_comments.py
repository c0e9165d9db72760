"""Product code says why, not when: issue numbers belong in commit messages and the docs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ISSUE = re.compile(r"\bissue\s*#?\d+", re.IGNORECASE)


def product_files() -> list[Path]:
    files = []
    for package in ("core", "mcp_server", "tui"):
        files += [p for p in (ROOT / package).rglob("*.py") if "demo_vault" not in p.parts]
    return sorted(files)


def test_product_code_names_no_issue_numbers() -> None:
    found = [
        f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
        for p in product_files()
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if ISSUE.search(line)
    ]
    assert product_files(), "no product modules found"
    assert not found, "issue numbers in product code (put them in the commit message):\n" + "\n".join(found)

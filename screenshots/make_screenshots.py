"""Regenerate the SVG screenshots in screenshots/ from the bundled demo vault.

    python3 dev.py screenshots        (or: .venv/bin/python screenshots/make_screenshots.py)

Each screen is driven headlessly with Textual's Pilot on a private copy of the demo vault,
with the clock at 2026-11-29 and a frozen wall clock, so the images only change when the
app does. Agent activity is published on the core bus as the MCP layer would publish it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from vaultwatch.core.clock import parse_as_of  # noqa: E402
from vaultwatch.core.events import AgentAccess  # noqa: E402
from vaultwatch.core.vault import Vault, demo_vault_path  # noqa: E402
from vaultwatch.tui.app import VaultwatchApp, make_app  # noqa: E402
from vaultwatch.tui.config import FIXED_WALL, fixed_config  # noqa: E402
from vaultwatch.tui.idle import settle  # noqa: E402

BASE_MTIME = 1_795_860_000  # 2026-11-28 10:00 UTC; each file a little older than the last
Step = Callable[[VaultwatchApp, object], Awaitable[None]]


def demo_copy(folder: Path) -> Path:
    """The demo vault copied to `folder` with fixed, distinct modification times."""
    root = folder / "demo-vault"
    shutil.copytree(demo_vault_path(), root, symlinks=True)
    for i, path in enumerate(sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())):
        os.utime(path, (BASE_MTIME - i * 190_000,) * 2)
    return root


def agent_calls(app: VaultwatchApp) -> None:
    """Two agents at work, as the activity layer reports them."""
    calls = [
        (
            "claude-desktop/0.9",
            "list_documents",
            'folder="Areas/Engineering"',
            (
                "Areas/Engineering/Deploy Runbook.md",
                "Areas/Engineering/Oncall Handbook.md",
                "Areas/Engineering/Incident Template.md",
                "Areas/Engineering/Code Review Guidelines.md",
                "Areas/Engineering/Old Postmortem Format.md",
            ),
            44,
            2.3,
            None,
        ),
        ("cursor/1.4", "search", 'query="postgres 16 cutover"', ("Projects/Atlas Migration.md",), 31, 6.9, None),
        (
            "claude-desktop/0.9",
            "read",
            'path="Areas/Engineering/Deploy Runbook.md"',
            ("Areas/Engineering/Deploy Runbook.md",),
            22,
            1.2,
            None,
        ),
        ("cursor/1.4", "read", 'path="../secrets.env"', (), 9, 0.3, "path traversal blocked: '..' leaves the vault"),
        ("cursor/1.4", "read", 'path="Projects/Atlas Migration.md"', ("Projects/Atlas Migration.md",), 4, 1.6, None),
        (
            "claude-desktop/0.9",
            "triage",
            'kind="stale"',
            ("Projects/Archive/Retired/Q3 2024 Roadmap.md", "Projects/Archive/Billing Rewrite 2024.md"),
            2,
            3.4,
            None,
        ),
    ]
    for agent, tool, summary, paths, ago, ms, error in calls:
        app.session.vault.bus.publish(
            AgentAccess(
                agent=agent,
                session=f"s-{agent}",
                tool=tool,
                summary=summary,
                paths=paths,
                result_count=None if error else len(paths),
                duration_ms=ms,
                error=error,
                at=FIXED_WALL - ago,
            )
        )


async def keys(app: VaultwatchApp, pilot, *presses: str) -> None:
    for key in presses:
        await pilot.press(key)
        await settle(app)


SHOTS: list[tuple[str, tuple[int, int], Callable]] = [
    ("main", (160, 50), lambda app, pilot: keys(app, pilot)),
    ("agents", (160, 50), None),
    ("stale", (160, 50), lambda app, pilot: keys(app, pilot, "3")),
    (
        "filter",
        (160, 50),
        lambda app, pilot: keys(app, pilot, "slash", *"tag:ops", "space", *"-status:deprecated", "enter"),
    ),
    ("preview", (160, 50), None),
    ("help", (120, 44), lambda app, pilot: keys(app, pilot, "question_mark")),
    ("narrow", (80, 24), lambda app, pilot: keys(app, pilot)),
]


async def shoot(root: Path, name: str, size: tuple[int, int], step, out: Path) -> Path:
    vault = Vault(root, clock=parse_as_of("2026-11-29"))
    vault.load()
    app = make_app(vault, config=fixed_config())
    async with app.run_test(size=size) as pilot:
        await settle(app)
        if name == "agents":
            agent_calls(app)
            await pilot.pause()
            await settle(app)
        elif name == "preview":
            app.main.open_note("Areas/Engineering/Deploy Runbook.md")
            await settle(app)
            await keys(app, pilot, "p", "pagedown")
        else:
            await step(app, pilot)
        await pilot.pause()
        target = out / f"{name}.svg"
        app.save_screenshot(filename=target.name, path=str(out))
    return target


async def main(out: Path) -> int:
    os.environ.pop("NO_COLOR", None)
    os.environ.pop("TEXTUAL_THEME", None)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="vaultwatch-shots-") as tmp:
        os.environ["XDG_CACHE_HOME"] = os.path.join(tmp, "cache")  # keep the user's cache clean
        root = demo_copy(Path(tmp))
        for name, size, step in SHOTS:
            target = await shoot(root, name, size, step, out)
            print(f"wrote {target.relative_to(HERE.parent) if target.is_relative_to(HERE.parent) else target}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)))

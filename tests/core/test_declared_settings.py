"""One declaration of every setting (core/settings.py): the product code reads no VAULTWATCH_
variable that is not declared, values are parsed by their declared type, bad values are said,
and docs/settings.md is the declarations' own page."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from vaultwatch.core import settings

ROOT = Path(__file__).resolve().parents[2]
NAME = re.compile(r"VAULTWATCH_[A-Z][A-Z_]*[A-Z]")


def test_every_variable_the_product_names_is_declared() -> None:
    files = [f for top in ("core", "mcp_server", "tui") for f in (ROOT / top).rglob("*.py")]
    declaration = ROOT / "core" / "settings.py"  # names the development prefixes it leaves to others
    named = {m for f in files if f != declaration for m in NAME.findall(f.read_text())}
    assert named, "the scan found nothing: the pattern or the folders are wrong"
    assert named - {s.name for s in settings.ENV} == set()


def test_the_settings_page_is_generated_from_the_declarations() -> None:
    assert (ROOT / "docs" / "settings.md").read_text() == settings.markdown(), "regenerate docs/settings.md"


@pytest.mark.parametrize(
    ("name", "raw", "want"),
    [
        ("VAULTWATCH_CACHE", None, True),
        ("VAULTWATCH_CACHE", "0", False),
        ("VAULTWATCH_CACHE", "off", False),
        ("VAULTWATCH_CACHE", "yes", True),
        ("VAULTWATCH_CACHE", "maybe", True),  # does not parse: the default (and problems() says so)
        ("VAULTWATCH_NO_FORK", "1", True),
        ("VAULTWATCH_BRIDGE_DRAIN", "2.5", 2.5),
        ("VAULTWATCH_BRIDGE_DRAIN", "soon", 5.0),
        ("VAULTWATCH_JOURNAL_MAX_CHANGES", "500", 500),
        ("VAULTWATCH_JOURNAL_MAX_MB", None, None),
    ],
)
def test_values_are_read_by_their_declared_type(name: str, raw: str | None, want: object) -> None:
    environ = {} if raw is None else {name: raw}
    assert settings.env(name, environ) == want


def test_unknown_and_unparsable_variables_are_said() -> None:
    said = settings.problems({"VAULTWATCH_CACHE": "maybe", "VAULTWATCH_CAHCE": "0", "VAULTWATCH_TEST_WORKERS": "2"})
    assert len(said) == 2
    assert any("VAULTWATCH_CACHE='maybe'" in p for p in said) and any("VAULTWATCH_CAHCE is not" in p for p in said)
    with pytest.raises(KeyError):
        settings.env("VAULTWATCH_NOT_DECLARED")


def test_the_command_line_says_a_mistyped_variable_at_start(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "vaultwatch.tui.commands.cli", "stats", "--json"],
        env={
            "PATH": "/usr/bin:/bin",
            "VAULTWATCH_CAHCE": "0",
            "XDG_CACHE_HOME": str(tmp_path),
            "XDG_STATE_HOME": str(tmp_path),
            "XDG_CONFIG_HOME": str(tmp_path),
        },
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "VAULTWATCH_CAHCE is not a vaultwatch setting" in done.stderr

"""An agent cannot make a folder or note that looks like an existing one (a `Private` beside the
gated `Private`, holding its own `secret.md`), through the real server on a real socket and the
real `mcp` client; names in other scripts, emoji sequences and accented names in NFD are still
created, and a name already on disk, however odd, stays readable, editable and deletable.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import unicodedata
from pathlib import Path

import pytest
from mcp_testing import serving, uds_client
from test_gate_effects import tree

from vaultwatch.core.review import approval
from vaultwatch.core.vault import Vault

SETTINGS = '[approve.folders]\n"Private/**" = "writes"\n'

# each looks like `Private` (or like `Pub/plan.md`) to a person reading a listing
LOOKALIKES = {
    "U+034F COMBINING GRAPHEME JOINER": "Private\u034f/secret.md",
    "U+FE0F VARIATION SELECTOR-16": "Private\ufe0f/secret.md",
    "U+E0020 TAG SPACE": "Private\U000e0020/secret.md",
    "U+115F HANGUL CHOSEONG FILLER": "Private\u115f/secret.md",
    "U+2800 BRAILLE PATTERN BLANK": "Private\u2800/secret.md",
    "U+00A0 NO-BREAK SPACE": "Private\u00a0/secret.md",
    "U+2007 FIGURE SPACE": "Private\u2007/secret.md",
    "U+3000 IDEOGRAPHIC SPACE": "Private\u3000/secret.md",
    "U+0420 CYRILLIC CAPITAL LETTER ER": "\u0420rivate/secret.md",
    "'Private'": "\uff30rivate/secret.md",  # fullwidth P: the existing folder is named
    "U+2215 DIVISION SLASH": "Private\u2215secret.md",
    "U+034F COMBINING GRAPHEME JOINER ": "Pub/plan\u034f.md",
    "U+00A0 NO-BREAK SPACE ": "Pub/plan\u00a0.md",
}
RUSSIAN = "Pub/Заметки о встрече.md"
EMOJI = "Pub/\U0001f468\u200d\U0001f469\u200d\U0001f467 family \u2764\ufe0f.md"
ACCENTED_NFD = unicodedata.normalize("NFD", "Pub/Résumé.md")
ODD = "Pub/odd\u2800name.md"  # put on disk by someone else: not the agent's to name


def _vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Vault:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    settings = tmp_path / "config" / "vaultwatch" / "settings.toml"
    settings.parent.mkdir(parents=True)
    settings.write_text(SETTINGS)
    root = tmp_path / "v"
    (root / "Private").mkdir(parents=True)
    (root / "Private" / "secret.md").write_text("# Secret\n")
    (root / "Pub").mkdir()
    (root / "Pub" / "plan.md").write_text("# Plan\n")
    (root / ODD).write_text("# Odd\n")
    v = Vault(root)
    v.load()
    approval.configure(v, None)  # as `vaultwatch serve` does: the settings file's rules, headless
    return v


async def test_an_agent_cannot_make_a_lookalike_of_a_gated_folder_but_makes_ordinary_names(tmp_path, monkeypatch):
    vault = _vault(tmp_path, monkeypatch)
    root = Path(vault.root)
    folder = tempfile.mkdtemp(prefix="vwn", dir="/tmp")
    try:
        async with serving(vault, folder + "/s.sock") as host, uds_client(host.socket_path) as client:
            before = tree(root)
            for named, path in LOOKALIKES.items():
                for tool, arguments in (
                    ("write", {"path": path, "content": "# looks like the gated note\n"}),
                    ("rename", {"path": "Pub/plan.md", "new_path": path}),
                ):
                    result = await client.call_tool(tool, arguments)
                    text = result.content[0].text
                    assert result.is_error, f"{tool} {path!r} was accepted: {text}"
                    assert "unsafe name" in text or "confusable name" in text, text
                    assert named.strip() in text, text
            assert tree(root) == before
            folders = await client.call_tool("list_folders", {})
            assert [row[0] for row in json.loads(folders.content[0].text)["result"]["rows"]] == ["Private", "Pub"]

            for path in (RUSSIAN, EMOJI, ACCENTED_NFD):
                result = await client.call_tool("write", {"path": path, "content": "# ordinary\n"})
                assert not result.is_error, result.content[0].text
            assert {RUSSIAN, EMOJI, ACCENTED_NFD} - {p for p in tree(root) if isinstance(p, str)} == set()

            read = await client.call_tool("read", {"path": ODD})
            assert not read.is_error and "# Odd" in read.content[0].text, read.content[0].text
            edited = await client.call_tool("edit", {"path": ODD, "old_text": "# Odd", "new_text": "# Odder"})
            assert not edited.is_error, edited.content[0].text
            assert (root / ODD).read_text() == "# Odder\n"
            deleted = await client.call_tool("delete", {"path": ODD})
            assert not deleted.is_error, deleted.content[0].text
            assert not (root / ODD).exists()
    finally:
        vault.stop()
        shutil.rmtree(folder, ignore_errors=True)

"""A rule that keeps agents out of a folder holds it however the agent spells the folder's name.

One folder of a vault may sit on a disk that folds case (an ext4 casefold folder, a vfat, exFAT or
NTFS mount, a Windows share) while the vault's root does not: there `Shared/secret` and
`Shared/Secret.` are the folder `Shared/Secret`, and the path a change names keeps the agent's
spelling. Here the vault's disk does not fold case, so the person's own folders `Shared/secret` and
`PRIVATE` stand in for those spellings: a "never" rule, an agent's `deny` and a "deletes" rule's
move out of protection hold them as they hold the names written.

Real parts: the real server on a real socket and the real `mcp` client.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from mcp_testing import serving, uds_client

from vaultwatch.core.review import approval
from vaultwatch.core.vault import Vault

SETTINGS = (
    "[approve]\n"
    'mode = "none"\n'
    "[approve.folders]\n"
    '"Shared/Secret/**" = "never"\n'
    '"Shared/Open/**" = "none"\n'
    '"Shared/**" = "deletes"\n'
    "[agents.default]\n"
    'deny = ["Private/**"]\n'
)

# (tool, arguments, what the answer says): each went through before, spelled in another case
HELD = [
    ("write", {"path": "Shared/secret/evil.md", "content": "x\n"}, "refuses every agent's change"),
    ("write", {"path": "Shared/secret/s.md", "content": "x\n", "overwrite": True}, "refuses every agent's change"),
    ("rename", {"path": "Notes/n.md", "new_path": "Shared/secret/n.md"}, "refuses every agent's change"),
    ("delete", {"path": "Shared/secret/s.md"}, "refuses every agent's change"),
    ("write", {"path": "PRIVATE/evil.md", "content": "x\n"}, "denies changes"),
    ("edit", {"path": "PRIVATE/p.md", "old_text": "# P", "new_text": "# Q"}, "denies changes"),
    # into the "none" folder spelled otherwise: out of delete protection, so it waits for the person
    ("rename", {"path": "Shared/Keep/k.md", "new_path": "Shared/open/k.md"}, "awaits the person's approval"),
]


@pytest.mark.asyncio
@pytest.mark.parametrize("tool, arguments, said", HELD, ids=[f"{t}-{i}" for i, (t, _a, _s) in enumerate(HELD)])
async def test_a_rule_holds_its_folder_in_any_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool: str, arguments: dict, said: str
) -> None:
    config = tmp_path / "config" / "vaultwatch"
    config.mkdir(parents=True)
    (config / "settings.toml").write_text(SETTINGS)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "v"
    for folder, name in [
        ("Shared/Secret", "s.md"),
        ("Shared/secret", "s.md"),
        ("Shared/Open", "o.md"),
        ("Shared/open", "o.md"),
        ("Shared/Keep", "k.md"),
        ("Private", "p.md"),
        ("PRIVATE", "p.md"),
        ("Notes", "n.md"),
    ]:
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / name).write_text(f"# {name[0].upper()}\n")
    before = {p: p.read_bytes() for p in root.rglob("*.md")}
    vault = Vault(root)
    vault.load()
    approval.configure(vault, None)  # as `vaultwatch serve` does: the settings file's rules, headless
    folder = tempfile.mkdtemp(prefix="vwo", dir="/tmp")
    try:
        async with serving(vault, folder + "/s.sock") as host, uds_client(host.socket_path) as client:
            result = await client.call_tool(tool, arguments)
    finally:
        vault.stop()
        shutil.rmtree(folder, ignore_errors=True)
    text = result.content[0].text
    assert result.is_error and said in text, text
    assert {p: p.read_bytes() for p in root.rglob("*.md")} == before

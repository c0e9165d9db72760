"""A change a rule refuses outright (a "never" folder, an agent's `deny`, a read-only agent) puts none
of its bytes on disk, not even the hidden temporary file a change the person may approve writes
ahead: a folder kept from agents sees no file come and go, and a crash at that moment leaves nothing.

Real parts: the real server on a real socket and the real `mcp` client; the write path's own
fault_hook (the crash tests' seam) says whether a temporary file was made.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from mcp_testing import serving, uds_client

from vaultwatch.core.edit import writes
from vaultwatch.core.review import approval, refusals
from vaultwatch.core.vault import Vault

SETTINGS = (
    "[approve]\n"
    'mode = "none"\n'
    "[approve.folders]\n"
    '"Templates/**" = "never"\n'
    "[agents.default]\n"
    'deny = ["Private/**"]\n'
    "[agents.reader]\n"
    "read_only = true\n"
)

# (agent, tool, arguments)
REFUSED = [
    ("pytest-agent", "write", {"path": "Templates/t.md", "content": "agent bytes\n", "overwrite": True}),
    ("pytest-agent", "write", {"path": "Templates/new.md", "content": "agent bytes\n"}),
    ("pytest-agent", "edit", {"path": "Templates/t.md", "old_text": "# T", "new_text": "# agent"}),
    ("pytest-agent", "update_frontmatter", {"path": "Templates/t.md", "set": {"by": "agent"}}),
    ("pytest-agent", "edit", {"path": "Private/p.md", "old_text": "# P", "new_text": "# agent"}),
    ("reader", "write", {"path": "Notes/n.md", "content": "agent bytes\n", "overwrite": True}),
]


@pytest.mark.asyncio
@pytest.mark.parametrize("agent, tool, arguments", REFUSED, ids=[f"{a}-{t}-{x['path']}" for a, t, x in REFUSED])
async def test_a_change_a_rule_refuses_writes_no_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str, tool: str, arguments: dict
) -> None:
    config = tmp_path / "config" / "vaultwatch"
    config.mkdir(parents=True)
    (config / "settings.toml").write_text(SETTINGS)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "v"
    for folder, name, text in [
        ("Templates", "t.md", "# T\n"),
        ("Private", "p.md", "# P\n"),
        ("Notes", "n.md", "# N\n"),
    ]:
        (root / folder).mkdir(parents=True)
        (root / folder / name).write_text(text)
    stages: list[str] = []
    init = writes.Writer.__init__

    def seen(self: writes.Writer, vault: Vault, **options: object) -> None:
        options.setdefault("fault_hook", stages.append)
        init(self, vault, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(writes.Writer, "__init__", seen)
    vault = Vault(root)
    vault.load()
    approval.configure(vault, None)  # as `vaultwatch serve` does: the settings file's rules, headless
    folder = tempfile.mkdtemp(prefix="vwr", dir="/tmp")
    try:
        async with serving(vault, folder + "/s.sock") as host, uds_client(host.socket_path, name=agent) as client:
            result = await client.call_tool(tool, arguments)
    finally:
        vault.stop()
        shutil.rmtree(folder, ignore_errors=True)
    text = result.content[0].text
    assert result.is_error and "the person's rule" in text, text
    assert "temp_created" not in stages, f"{tool} made a temporary file before its rule refused it: {stages}"
    assert [p.name for p in root.rglob(".vaultwatch-*")] == []
    [kept] = refusals.kept(vault.root_real)  # still kept in the vault's record of refusals, once
    assert kept.kind == refusals.REFUSED and kept.agent.startswith(agent), kept

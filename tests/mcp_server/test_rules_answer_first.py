"""A change a rule refuses outright (a "never" folder, an agent's `deny`, a read-only agent) gets the
rule's refusal first: not "already exists: pass overwrite=true", "not found", "destination exists" or
a revision conflict, which tell the agent what a folder kept from it holds (and, for the first, teach
it the flag to retry with). Every operation: write, edit, update_frontmatter, rename, delete.

Real parts: the real server on a real socket and the real `mcp` client.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from mcp_testing import serving, uds_client

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

WRONG = "0" * 64

# (agent, tool, arguments): each answered today by something other than the rule
REFUSED = [
    ("pytest-agent", "write", {"path": "Private/p.md", "content": "x\n"}),  # already exists
    ("pytest-agent", "write", {"path": "Private/p.md", "content": "x\n", "create_only": True}),
    ("pytest-agent", "write", {"path": "Private/p.md", "content": "x\n", "if_match": WRONG}),  # conflict
    ("pytest-agent", "write", {"path": "Private/gone.md", "content": "x\n", "if_match": WRONG}),
    ("pytest-agent", "write", {"path": "Templates/t.md", "content": "x\n"}),
    ("reader", "write", {"path": "Notes/n.md", "content": "x\n"}),
    ("pytest-agent", "edit", {"path": "Private/gone.md", "old_text": "a", "new_text": "b"}),  # not found
    ("pytest-agent", "edit", {"path": "Private/p.md", "old_text": "# P", "new_text": "b", "if_match": WRONG}),
    ("pytest-agent", "update_frontmatter", {"path": "Private/gone.md", "set": {"by": "agent"}}),
    ("reader", "update_frontmatter", {"path": "Notes/n.md", "set": {"by": "agent"}, "if_match": WRONG}),
    ("pytest-agent", "rename", {"path": "Private/gone.md", "new_path": "Notes/x.md"}),  # not found
    ("pytest-agent", "rename", {"path": "Notes/n.md", "new_path": "Private/p.md"}),  # destination exists
    ("pytest-agent", "rename", {"path": "Private/p.md", "new_path": "Notes/x.md", "if_match": WRONG}),
    ("pytest-agent", "delete", {"path": "Private/gone.md"}),  # not found
    ("pytest-agent", "delete", {"path": "Private/p.md", "if_match": WRONG}),
    ("pytest-agent", "delete", {"path": "Templates/t.md", "permanent": True}),  # confirm_path missing
]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "agent, tool, arguments", REFUSED, ids=[f"{a}-{t}-{i}" for i, (a, t, _x) in enumerate(REFUSED)]
)
async def test_the_rule_answers_before_existence_and_etags(
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
    before = {p: p.read_bytes() for p in root.rglob("*.md")}
    vault = Vault(root)
    vault.load()
    approval.configure(vault, None)  # as `vaultwatch serve` does: the settings file's rules, headless
    folder = tempfile.mkdtemp(prefix="vwo", dir="/tmp")
    try:
        async with serving(vault, folder + "/s.sock") as host, uds_client(host.socket_path, name=agent) as client:
            result = await client.call_tool(tool, arguments)
    finally:
        vault.stop()
        shutil.rmtree(folder, ignore_errors=True)
    text = result.content[0].text
    assert result.is_error and "the person's rule" in text, text
    for leak in ("overwrite", "already exists", "not found", "does not exist", "etag", "destination exists"):
        assert leak not in text, f"{leak!r} in the refusal: {text}"
    assert {p: p.read_bytes() for p in root.rglob("*.md")} == before
    [kept] = refusals.kept(vault.root_real)  # kept in the vault's record of refusals, once
    assert kept.kind == refusals.REFUSED and kept.agent.startswith(agent), kept

"""The approval gate on a file system that compares names without case (issue 29), through a real
headless `vaultwatch serve` process and the real `mcp` client.

No case-insensitive file system can be mounted on the test machine (its kernel is built without
CONFIG_UNICODE: tmpfs `casefold=utf8` and an ext4 image made with `mkfs.ext4 -O casefold` are
refused; there is no vfat driver, no `ciopfs`, no `fusermount`), so the server runs with the
probe forced (VAULTWATCH_PLATFORM_FOLDS_CASE=1, core.platform): it compares names as macOS's
file system does. The rules are typed in another case than the folders on disk (`"PRIVATE/**"`
for `Private`, `"team/secret/**"` for `Team/Secret`), and the agent spells paths in every case:
every route must come back held for the person (declined, headless) or refused, with the vault byte for byte as it was.
"""

from __future__ import annotations

import asyncio

from reliability_helpers import gated_server, uds_client
from test_gate_effects import EDIT, FM, REPLACE, make_vault

HELD = "awaits the person's approval as pending change"
SETTINGS = '[approve.folders]\n"PRIVATE/**" = "writes"\n"team/secret/**" = "deletes"\n'

# (tool, arguments, must the gate decline it, naming the rule, rather than refuse it otherwise)
CASES = [
    ("write", {"path": "Private/secret.md", **REPLACE}, True),
    ("edit", {"path": "Private/secret.md", **EDIT}, True),
    ("update_frontmatter", {"path": "Private/secret.md", **FM}, True),
    ("write", {"path": "Private/new.md", "content": "x\n"}, True),
    ("write", {"path": "private/secret.md", **REPLACE}, False),
    ("write", {"path": "PRIVATE/x.md", "content": "x\n"}, False),
    ("edit", {"path": "pRIVATE/secret.md", **EDIT}, False),
    ("update_frontmatter", {"path": "private/secret.md", **FM}, False),
    ("rename", {"path": "Private", "new_path": "private2"}, True),
    # (a case-only rename: here the forced probe refuses the name as confusable; on a real
    # folding file system it is the same entry and goes to the gate as a move of the folder)
    ("rename", {"path": "Private", "new_path": "PRIVATE"}, False),
    ("rename", {"path": "Private/secret.md", "new_path": "Pub/s.md"}, True),
    ("rename", {"path": "Pub/c.md", "new_path": "Private/c.md"}, True),
    ("rename", {"path": "Pub/c.md", "new_path": "private/c.md"}, False),
    ("delete", {"path": "Private/secret.md"}, True),
    ("delete", {"path": "Private"}, True),
    ("delete", {"path": "Team/Secret/plan.md"}, True),
    ("delete", {"path": "Team/Secret"}, True),
    ("delete", {"path": "team/secret/plan.md"}, False),
    ("rename", {"path": "Team", "new_path": "Crew"}, True),
    ("rename", {"path": "Team/Secret", "new_path": "Loose"}, True),
    ("write", {"path": "Pub/alias.md", **REPLACE}, True),
    ("write", {"path": "Pub/dirlink/secret.md", **REPLACE}, True),
    ("rename", {"path": "Pub/a.md", "new_path": "Pub/b.md"}, True),  # rewrites [[a]] in Private/secret.md
]


def test_on_a_case_folding_file_system_every_spelling_of_a_gated_folder_is_declined(monkeypatch, figure):
    # the vault is byte for byte as it was after (gated_server asserts it)
    with gated_server(monkeypatch, "vwc", SETTINGS, make_vault, VAULTWATCH_PLATFORM_FOLDS_CASE="1") as sock:
        outcomes = asyncio.run(_agent(sock))
    accepted = [(tool, args, text) for tool, args, _, err, text in outcomes if not err]
    assert accepted == [], accepted
    undeclined = [
        (tool, args, text)
        for tool, args, gated, _, text in outcomes
        if gated and not (HELD in text and ('rule "PRIVATE/**"' in text or 'rule "team/secret/**"' in text))
    ]
    # the gate itself held each one for the person (headless: as a pending change, nothing
    # written), naming the rule typed in another case than the folder
    assert undeclined == [], undeclined
    figure("case_calls", len(outcomes))
    figure("case_held_by_the_gate", sum(HELD in text for *_, text in outcomes))


async def _agent(sock: str) -> list[tuple[str, dict, bool, bool, str]]:
    out = []
    async with uds_client(sock, name="case-adversary") as client:
        for tool, args, gated in CASES:
            result = await client.call_tool(tool, args)
            out.append((tool, args, gated, bool(result.is_error), result.content[0].text))
    return out

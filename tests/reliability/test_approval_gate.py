"""The approval gate against an agent that tries to get around it (issue 29): a real headless
`vaultwatch serve` process with per-folder rules in its settings file, and a real `mcp` client
on its socket playing the adversary. Every route into a gated folder (the route matrix of
tests/mcp_server/test_gate_effects.py, plus the adversary's multi-step plays) must come back
declined or refused, naming the rule, with the vault byte for byte as it was."""

from __future__ import annotations

import asyncio

from reliability_helpers import gated_server, uds_client
from test_gate_effects import EDIT, MATRIX, SETTINGS, make_vault

# multi-step plays: each step must be refused (the first refusal stops the play in practice;
# the later steps are tried anyway, as an agent would)
PLAYS = [
    (
        "move the gated folder away, edit it there, move it back",
        [
            ("rename", {"path": "Private", "new_path": "Open"}),
            ("edit", {"path": "Open/secret.md", **EDIT}),
            ("rename", {"path": "Open", "new_path": "Private"}),
        ],
    ),
    (
        "move the parent away, then delete what a deletes rule protects",
        [
            ("rename", {"path": "Team", "new_path": "Crew"}),
            ("delete", {"path": "Crew/Secret"}),
        ],
    ),
    (
        "move a note out of delete protection, then delete it",
        [
            ("rename", {"path": "Team/Secret/plan.md", "new_path": "Pub/plan.md"}),
            ("delete", {"path": "Pub/plan.md"}),
        ],
    ),
]

FIXED = [
    "renaming a gated folder (Private -> Open), editing it there and renaming it back were all accepted: the "
    "glob 'Private/**' did not match the folder 'Private' itself and a folder's rename or delete never checked "
    "the files under it; core/edit/effects.py now expands a folder rename or delete to every file and folder "
    "under it (both ends of a move) and core/review/policy.py lets a rule on X/** cover X",
    "write, edit and update_frontmatter through a symlinked note (Pub/alias.md -> ../Private/secret.md) "
    "rewrote the gated note: the gate was asked about the path as spelled; it is now asked about the "
    "note's real target",
    "renaming an ungated note rewrote [[links]] inside a gated note without approval: after one check decided "
    "'no approval needed', every later check in the call was skipped; an approval now covers exactly the "
    "effects it was asked about, and the rename's link rewrites are part of its effect set",
    "a rule typed in NFC ('Privé/**') did not match the folder stored in NFD (a vault synced from macOS): "
    "rules and paths are now compared in NFC, and case-folded where the vault's file system folds case",
    "deleting through a folder link (Pub/dirlink/secret.md -> Private) went to the trash without approval",
]


def test_an_adversarial_agent_gets_no_change_past_a_headless_gate(monkeypatch, figure):
    # the vault is byte for byte as it was after (gated_server asserts it)
    with gated_server(monkeypatch, "vwg", SETTINGS, make_vault) as sock:
        outcomes = asyncio.run(_adversary(sock))
    accepted = [(tool, args, text) for tool, args, err, text in outcomes if not err]
    assert accepted == [], accepted
    unnamed = [
        (tool, args, text)
        for tool, args, _, text in outcomes
        if "the person declined this change" in text and 'rule "' not in text
    ]
    assert unnamed == []  # every decline names the rule that decided
    declined = sum("the person declined this change" in text for *_, text in outcomes)
    figure("gate_calls", len(outcomes))
    figure("gate_declined", declined)
    figure("gate_refused_otherwise", len(outcomes) - declined)
    figure("gate_accepted", len(accepted))
    for line in FIXED:
        figure("fixed_bug", line)


async def _adversary(sock: str) -> list[tuple[str, dict, bool, str]]:
    out: list[tuple[str, dict, bool, str]] = []
    async with uds_client(sock, name="adversary") as client:
        for _route, tool, args, _rule in MATRIX:
            result = await client.call_tool(tool, args)
            out.append((tool, args, bool(result.is_error), result.content[0].text))
        for _name, steps in PLAYS:
            for tool, args in steps:
                result = await client.call_tool(tool, args)
                out.append((tool, args, bool(result.is_error), result.content[0].text))
    return out

"""A rename the person approved rewrites each linking note only into the bytes they were shown: a
note edited after the answer's re-check (as soon as the moved note appears, or while its rewrite is
being written) is left as it is, the answer names it, and the rename otherwise completes. Asked
through the agent's own client (both forms) and approved later with `vaultwatch approve`.

Real parts: the Python `mcp` client with an elicitation callback and a real `serve --stdio`
process, `vaultwatch approve` as a process, `vaultwatch changes --json`. The outside edit is made
by the serving (or approving) process itself at a stage of the rename (Writer's fault_hook,
installed before the command line runs), the way an editor replaces a note: no timing."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import test_pending
from killed_cli import cli
from mcp import Client, StdioServerParameters
from mcp_testing import ROOT
from mcp_types import ElicitResult, Implementation

place = test_pending.place  # the vault, settings and environment of the pending-change tests

# `vaultwatch ARGS` whose Writers replace one note, once, at one stage of a change (as an editor
# saves: a new file renamed over it, taking none of vaultwatch's locks)
EDITING = textwrap.dedent("""
    import os, sys
    from vaultwatch.core.edit import writes

    stage_at, note, text = sys.argv[1], sys.argv[2], sys.argv[3]
    done = []

    def hook(stage):
        if stage == stage_at and not done:
            done.append(stage)
            spare = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(note))), "editor.tmp")
            with open(spare, "w") as fh:
                fh.write(text)
            os.replace(spare, note)

    init = writes.Writer.__init__

    def editing(self, vault, **options):
        options.setdefault("fault_hook", hook)
        init(self, vault, **options)

    writes.Writer.__init__ = editing
    from vaultwatch.tui.entry import main
    sys.exit(main(sys.argv[4:]))
""")

EDITED = "# Other\nsee [[plan]]\nADDED AFTER THE ANSWER: [[plan|wire the money]]\n"
LEFT = "Notes/other.md: changed after the person approved this rename: its links were left as they are"


def editing(root: Path, env: dict[str, str], stage: str, *args: str) -> list[str]:
    """The command line of `vaultwatch ARGS` that replaces Notes/other.md with EDITED at `stage`."""
    return ["-c", EDITING, stage, str(root / "Notes" / "other.md"), EDITED, *args]


def renames(root: Path, env: dict[str, str]) -> list[tuple[str, list[str]]]:
    """How each journaled rename was approved, and the files it rewrote (the move is in no file)."""
    done = cli("changes", str(root), "--json", env=env)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    return [(r["approved_via"], [f["path"] for f in r["files"]]) for r in rows if r["operation"] == "rename"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("stage", ["moved", "temp_written"])
async def test_a_linking_note_edited_after_the_answer_is_left_as_it_is(place, mode: str, stage: str) -> None:
    """`moved`: edited once the moved note is at its new path, before its rewrite reads it;
    `temp_written`: edited after its rewrite read it, before the switch (a conflict, not retried)."""
    root, env = place
    (Path(env["XDG_CONFIG_HOME"]) / "vaultwatch" / "settings.toml").write_text(
        '[approve]\nmode = "writes"\nask_client = true\n'
    )
    env = {**env, "PYTHONPATH": str(ROOT)}
    server = StdioServerParameters(
        command=sys.executable, args=editing(root, env, stage, "serve", str(root), "--stdio"), env=env
    )
    asked: list[str] = []

    async def accept(context, params) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"approve": True})

    async with Client(
        server, mode=mode, elicitation_callback=accept, client_info=Implementation(name="scribe", version="1")
    ) as client:
        got = await client.call_tool("rename", {"path": "Notes/plan.md", "new_path": "Notes/done.md"})
    said = got.content[0].text
    assert not got.is_error, said
    [question] = asked  # the person approved this rewrite of the note, and no other
    assert "-see [[plan]]" in question and "+see [[done]]" in question, question
    assert LEFT in said and "rewrote 0 links in 0 notes; links in 1 note left as they were" in said, said
    assert (root / "Notes" / "other.md").read_text() == EDITED  # no link the person never saw
    assert (root / "Notes" / "done.md").exists() and not (root / "Notes" / "plan.md").exists()
    assert renames(root, env) == [("agent-client", [])]  # the journal holds no rewrite of the note left alone


@pytest.mark.parametrize("stage", ["moved", "temp_written"])
async def test_a_linking_note_edited_while_vaultwatch_approve_applies_a_rename_is_left_as_it_is(
    place, stage: str
) -> None:
    """The person approved the rewrite `vaultwatch pending` showed, fingerprinted when proposed: a
    linking note edited after `approve` checked the fingerprints is not rewritten."""
    root, env = place
    env = {**env, "PYTHONPATH": str(ROOT)}
    # this client cannot be asked (no elicitation): the rename waits for the person
    server = StdioServerParameters(
        command=sys.executable, args=editing(root, env, "none", "serve", str(root), "--stdio"), env=env
    )
    async with Client(server, client_info=Implementation(name="scribe", version="1")) as client:
        pid = test_pending.pending_id(
            await client.call_tool("rename", {"path": "Notes/plan.md", "new_path": "Notes/done.md"})
        )
    shown = cli("pending", str(root), env=env)
    assert shown.returncode == 0 and "+see [[done]]" in shown.stdout.replace("+ ", "+"), shown.stdout
    done = subprocess.run(
        [sys.executable, *editing(root, env, stage, "approve", str(pid), str(root))],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "but: Notes/other.md: changed after the person approved this rename" in done.stdout, done.stdout
    assert (root / "Notes" / "other.md").read_text() == EDITED
    assert (root / "Notes" / "done.md").exists() and not (root / "Notes" / "plan.md").exists()
    assert renames(root, env) == [("approve-command", [])]

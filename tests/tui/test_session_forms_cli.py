"""One session, one short form: `vaultwatch changes`, `refusals` and the agents' `history` rows show
a stateless client's session `NAME@stateless-HEX` as `NAME@` and enough of HEX to be unique, never
a cut inside `stateless-` (two sessions read `scribe@state`), and `revert --session` takes that
form back. Real `vaultwatch` processes over a real journal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.review import refusals
from vaultwatch.core.review.journal import Caller, calling, journal_for
from vaultwatch.core.vault import Vault
from vaultwatch.mcp_server.history_tool import change_row

ROOT = Path(__file__).resolve().parents[2]
FIRST = "scribe@stateless-a6c7e1f2"  # as core.review.idlesessions names a stateless client's sessions
SECOND = "scribe@stateless-d0112233"


def run(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "vaultwatch.tui.commands.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_two_stateless_sessions_read_apart_and_revert_session_takes_the_form(make_vault, tmp_path, monkeypatch):
    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    root = make_vault({"a.md": "# A\n", "b.md": "# B\n"})
    vault = Vault(root)
    vault.load()
    writer = Writer(vault)
    with calling(Caller("scribe/1.0", FIRST, "write")):
        writer.write("a.md", "# A by the first\n", overwrite=True, actor="agent:scribe")
    with calling(Caller("scribe/1.0", SECOND, "write")):
        writer.write("b.md", "# B by the second\n", overwrite=True, actor="agent:scribe")
    refusals.note(
        vault.root_real,
        refusals.Refusal(at=1.0, kind=refusals.REFUSED, agent="scribe/1.0", session=SECOND, tool="write",
                         operation="write", paths=["x.md"], reason="no"),
    )  # fmt: skip
    journal = journal_for(vault)
    rows = {c.session: change_row(c)["session"] for c in journal.changes()}
    journal.close()
    vault.stop()
    # the agents' history: the label and a little of the random part, apart, never the whole id
    assert rows == {FIRST: "scribe@a6", SECOND: "scribe@d0"}, rows
    env = {**os.environ, "XDG_STATE_HOME": str(state), "PYTHONPATH": str(ROOT)}
    listed = run("changes", str(root), env=env)
    assert listed.returncode == 0, listed.stderr
    assert "[scribe@a6c7e1f2]" in listed.stdout and "[scribe@d0112233]" in listed.stdout, listed.stdout
    assert "scribe@state" not in listed.stdout
    said = run("refusals", str(root), env=env)
    assert "[scribe@d0112233]" in said.stdout, said.stdout
    done = run("revert", "--session", "scribe@d0112233", str(root), "--yes", env=env)
    assert done.returncode == 0, done.stderr
    assert (root / "b.md").read_text() == "# B\n" and (root / "a.md").read_text() == "# A by the first\n"
    both = run("revert", "--session", "scribe@", str(root), "--yes", env=env)
    assert both.returncode != 0 and "names 2 sessions (scribe@a6c7e1f2, scribe@d0112233)" in both.stderr, both.stderr

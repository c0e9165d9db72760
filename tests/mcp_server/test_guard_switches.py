"""No switch of server loosens the guard the person set (mcp_server/guardflags.py), with real
processes: the agent's `vaultwatch bridge` (spoken to as a client speaks to it), the real TUI in a
pseudo-terminal, the person's `vaultwatch serve`, and the headless servers a hand-back or the
bridge starts. Whatever serves the vault after a switch (the TUI quit, the person's server stopped
or killed with -9), the agent's write is refused or kept pending as it was before the switch."""

from __future__ import annotations

import asyncio
import json
import os
import signal

import pytest
from mcp_testing import ROOT
from test_handover import Tui, wait_for
from test_lifecycle import Bridge, Serve, client_env, short_dir, stop_holder

from vaultwatch.core.disk.vaultlock import holder, vault_key
from vaultwatch.mcp_server.bridge import MAYBE_APPLIED

WRITE = {"path": "Agent/after-the-switch.md", "content": "# written by the agent\n"}
READ_ONLY = "Unknown tool: 'write'"  # a read-only server offers no write tool
PENDING = "awaits the person's approval"  # under --approve writes, with nobody attending


def env_for(tmp_path) -> dict[str, str]:
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)  # no settings file: the person's rules are only what the command lines say
    # PYTHONPATH: the servers a hand-back or a bridge starts (cwd /, `python -P`) run this checkout too
    return client_env(short_dir("vwg"), tmp_path / "state", XDG_CONFIG_HOME=str(config), PYTHONPATH=str(ROOT))


def tui_env(env: dict[str, str]) -> dict[str, str]:
    return {**env, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}


def said(reply: dict) -> str:
    if "error" in reply:
        return reply["error"]["message"]
    return " ".join(c.get("text", "") for c in reply["result"].get("content", []))


async def write_after_switch(bridge: Bridge) -> str:
    """The agent's write once the bridge has followed the vault to its next server (a call in flight
    during the switch is answered MAYBE_APPLIED: the agent tries again, as it is told to)."""
    for _ in range(50):
        reply = await bridge.call("write", WRITE, timeout=60)
        if said(reply) != MAYBE_APPLIED:
            return said(reply)
        await asyncio.sleep(0.2)
    raise AssertionError("the bridge never reached a server after the switch")


def guard_file(tmp_path, vault) -> str:
    return str(tmp_path / "state" / "vaultwatch" / "guards" / f"{vault_key(os.path.realpath(vault))}.json")


def kept_mode(tmp_path, vault) -> str | None:
    try:
        with open(guard_file(tmp_path, vault)) as fh:
            return json.load(fh).get("approve")
    except (OSError, ValueError):
        return None


def log_of(tmp_path, vault) -> str:
    """The log of the headless servers started for `vault` (the hand-back's, a bridge's)."""
    path = tmp_path / "state" / "vaultwatch" / "logs" / f"{vault_key(os.path.realpath(vault))}.log"
    return path.read_text() if path.exists() else ""


@pytest.mark.parametrize(
    ("options", "refusal", "words"),
    [
        (["--read-only"], READ_ONLY, "read-only: agents can read the vault but change nothing"),
        (["--approve", "writes"], PENDING, "approval mode writes: every change an agent makes waits for your approval"),
    ],
    ids=["read-only", "approve"],
)
async def test_quitting_the_tui_hands_the_vault_back_under_its_guard(demo_vault, tmp_path, options, refusal, words):
    root = str(demo_vault.resolve())
    env = env_for(tmp_path)
    tui = Tui([root, *options], tui_env(env))
    bridge = None
    try:
        assert await wait_for(lambda: (h := holder(root)) is not None and h.pid == tui.proc.pid, 60, tui.drain)
        bridge = await Bridge.start(demo_vault, env)
        await bridge.handshake()
        assert (await bridge.call("list_documents", {"limit": 1}))["result"]["structuredContent"]["total"] == 43
        assert tui.quit() == 0
        assert await wait_for(lambda: (h := holder(root)) is not None and h.pid != tui.proc.pid, 60)
        assert refusal in await write_after_switch(bridge)
        # the log says, in plain words, who holds the vault now and under which guard
        served = holder(root)
        assert served is not None
        log = log_of(tmp_path, demo_vault)
        assert f"the TUI (pid {tui.proc.pid}) is quitting and hands the vault to a headless server" in log, log
        assert f"this headless server (pid {served.pid}) holds {root} now and serves its agents; {words}" in log, log
        assert "started by a bridge" not in log, log
    finally:
        if tui.proc.poll() is None:
            tui.proc.kill()
        if bridge is not None:
            await bridge.close()
        stop_holder(demo_vault)
    assert not (demo_vault / WRITE["path"]).exists()


async def test_the_mode_chosen_with_g_in_the_tui_is_kept_through_the_hand_back(demo_vault, tmp_path):
    root = str(demo_vault.resolve())
    env = env_for(tmp_path)
    tui = Tui([root], tui_env(env))
    bridge = None
    try:
        assert await wait_for(lambda: (h := holder(root)) is not None and h.pid == tui.proc.pid, 60, tui.drain)
        bridge = await Bridge.start(demo_vault, env)
        await bridge.handshake()
        assert (await bridge.call("list_documents", {"limit": 1}))["result"]["structuredContent"]["total"] == 43
        os.write(tui.master, b"g")  # approval mode none -> writes
        assert await wait_for(lambda: kept_mode(tmp_path, demo_vault) == "writes", 60, tui.drain)
        assert tui.quit() == 0
        assert await wait_for(lambda: (h := holder(root)) is not None and h.pid != tui.proc.pid, 60)
        assert PENDING in await write_after_switch(bridge)
    finally:
        if tui.proc.poll() is None:
            tui.proc.kill()
        if bridge is not None:
            await bridge.close()
        stop_holder(demo_vault)
    assert not (demo_vault / WRITE["path"]).exists()


async def test_a_bridge_restarts_no_looser_server_than_the_persons_until_they_start_another(demo_vault, tmp_path):
    """The person's `serve --read-only` stops: the server the agent's bridge starts is read-only too.
    Once the person serves the vault without --read-only, the next one the bridge starts is not."""
    root = str(demo_vault.resolve())
    env = env_for(tmp_path)
    serve = Serve(demo_vault, env, "--read-only")
    bridge = await Bridge.start(demo_vault, env)
    try:
        await bridge.handshake()
        serve.stop()
        assert READ_ONLY in await write_after_switch(bridge)
        assert not (demo_vault / WRITE["path"]).exists()
        stop_holder(demo_vault)  # the read-only server the bridge started
        plain = Serve(demo_vault, env)  # the person's newest word: no --read-only
        plain.stop()
        assert await write_after_switch(bridge) and (demo_vault / WRITE["path"]).is_file()
        assert holder(root) is not None
    finally:
        serve.stop()
        await bridge.close()
        stop_holder(demo_vault)


async def test_a_kill_9_of_the_persons_gated_server_leaves_its_guard(demo_vault, tmp_path):
    env = env_for(tmp_path)
    serve = Serve(demo_vault, env, "--approve", "writes")
    bridge = await Bridge.start(demo_vault, env)
    try:
        await bridge.handshake()
        os.kill(serve.proc.pid, signal.SIGKILL)
        serve.proc.wait(10)
        assert PENDING in await write_after_switch(bridge)
    finally:
        serve.stop()
        await bridge.close()
        stop_holder(demo_vault)
    assert not (demo_vault / WRITE["path"]).exists()


async def test_a_read_only_tui_over_a_plain_headless_server_stays_read_only_after_a_kill_9(demo_vault, tmp_path):
    """A TUI opened with --read-only over a headless server started without it (stricter: the TUI's
    guard is the person's word); a second TUI opened without it meanwhile serves nothing, so its
    options change nothing; the first is killed with -9 (no hand-back): the server the bridge starts
    then is read-only."""
    root = str(demo_vault.resolve())
    env = env_for(tmp_path)
    bridge = await Bridge.start(demo_vault, env)
    first = second = None
    try:
        await bridge.handshake()
        assert (await bridge.call("list_documents", {"limit": 1}))["result"]["structuredContent"]["total"] == 43
        headless = holder(root).pid
        first = Tui([root, "--read-only"], tui_env(env))
        assert await wait_for(lambda: (h := holder(root)) is not None and h.pid == first.proc.pid, 60, first.drain)
        assert await wait_for(lambda: os.path.exists(guard_file(tmp_path, demo_vault)), 60, first.drain)
        second = Tui([root], tui_env(env))
        assert second.quit() == 0  # it could not take the vault from a TUI: it served nothing
        assert holder(root).pid == first.proc.pid
        first.proc.kill()
        first.proc.wait(10)
        assert READ_ONLY in await write_after_switch(bridge)
        assert holder(root).pid not in (headless, first.proc.pid)
    finally:
        for tui in (first, second):
            if tui is not None and tui.proc.poll() is None:
                tui.proc.kill()
        await bridge.close()
        stop_holder(demo_vault)
    assert not (demo_vault / WRITE["path"]).exists()


@pytest.mark.parametrize("how", ["a link to a file in the vault", "another user's"])
async def test_a_kept_guard_someone_else_may_have_written_is_read_as_the_strictest(demo_vault, tmp_path, how):
    """A guard file that says "no guard" but that is not a private file of the person's (a link to a
    file the agent can write, a file another local user owns) is not believed: the headless server
    the bridge starts serves read-only and says why in its log."""
    if how == "another user's" and os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    env = env_for(tmp_path)
    path = guard_file(tmp_path, demo_vault)
    os.makedirs(os.path.dirname(path), mode=0o700)
    loose = json.dumps({"read_only": False, "approve": "none", "audit_log": None})
    if how == "another user's":
        with open(path, "w") as fh:
            fh.write(loose)
        os.chown(path, 65534, 65534)
    else:
        (demo_vault / "guard.json").write_text(loose)
        os.symlink(demo_vault / "guard.json", path)
    bridge = await Bridge.start(demo_vault, env)
    try:
        await bridge.handshake()
        assert READ_ONLY in await write_after_switch(bridge)
    finally:
        await bridge.close()
        stop_holder(demo_vault)
    assert not (demo_vault / WRITE["path"]).exists()
    log = tmp_path / "state" / "vaultwatch" / "logs" / f"{vault_key(str(demo_vault.resolve()))}.log"
    assert "is not a private file of yours" in log.read_text()


def test_a_kept_guard_is_believed_only_as_written_and_combines_to_the_stricter(tmp_path, monkeypatch):
    """guardflags on real files: what it keeps it reads back; a record that does not parse, or names
    an approval mode or audit log vaultwatch would not write, reads as the strictest guard; and the
    stricter of two guards never drops what either asks for."""
    from vaultwatch.mcp_server.guardflags import STRICTEST, Guard, guard_path, keep, kept

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    vault = tmp_path / "vault"
    vault.mkdir()
    root = str(vault)
    assert kept(root) == (Guard(), None)  # never served
    keep(root, Guard(approve="deletes", audit_log="/var/log/agents.jsonl"), kind="serve")
    assert kept(root) == (Guard(approve="deletes", audit_log="/var/log/agents.jsonl"), None)
    assert os.stat(guard_path(root)).st_mode & 0o777 == 0o600
    for text in (
        "{",
        "[]",
        '{"read_only": "no"}',
        '{"read_only": false, "approve": "later"}',
        '{"read_only": false, "audit_log": "relative.jsonl"}',
    ):
        with open(guard_path(root), "w") as fh:
            fh.write(text)
        guard, doubt = kept(root)
        assert guard == STRICTEST and doubt, text
    person = Guard(approve="none")
    assert Guard().stricter(person) == person  # the person's chosen mode is kept over the file's
    assert Guard(approve="writes").stricter(Guard(read_only=True, approve="deletes")) == Guard(True, "writes")
    assert Guard(audit_log="/a").stricter(Guard(audit_log="/b")).audit_log == "/a"
    assert Guard().stricter(Guard(audit_log="/b")).audit_log == "/b"


def test_a_mode_kept_from_before_the_person_edited_the_settings_files_mode_is_dropped(tmp_path, monkeypatch):
    """As in a running server, an edit of the settings file's [approve] mode wins over a mode chosen
    earlier: `serve --approve none`, stopped; the person then sets `mode = "writes"` in the file; the
    server a bridge starts next applies the file's mode, not the kept `none`. Left unedited, the
    person's chosen mode is kept."""
    from vaultwatch.mcp_server.guardflags import Guard, keep, kept

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    settings = tmp_path / "config" / "vaultwatch" / "settings.toml"
    settings.parent.mkdir(parents=True)
    settings.write_text('[approve]\nmode = "deletes"\n')
    vault = tmp_path / "vault"
    vault.mkdir()
    keep(str(vault), Guard(approve="none"), kind="serve")
    assert kept(str(vault)) == (Guard(approve="none"), None)  # the file's mode as it was: the choice stands
    settings.write_text('[approve]\nmode = "writes"\n')
    assert kept(str(vault)) == (Guard(), None)  # the file's mode edited since: it applies

"""Approval with no TUI open, for a client that cannot be asked (no elicitation): the gated change
becomes a pending change the person decides later from the command line.

Real parts only: the Python `mcp` client runs the bridge command `mcp-config` writes, the bridge
starts the headless server (which reads `[approve] mode = "writes"` from settings.toml), and
the person runs `vaultwatch pending / approve / decline` as processes."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp_testing import ROOT, VAULTWATCH, serving, stop_headless_servers, uds_client
from mcp_types import Implementation
from waiting import await_until

from vaultwatch.core.review import pending
from vaultwatch.core.vault import Vault
from vaultwatch.mcp_server.locations import default_socket_path, http_token
from vaultwatch.mcp_server.wire import DESK_PATH

NOTE = "# Plan\r\nkeep these bytes: é\r\n"


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def place(tmp_path: Path, sock_dir: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    root = tmp_path / "vault"
    (root / "Notes").mkdir(parents=True)
    (root / "Notes" / "plan.md").write_bytes(NOTE.encode())
    (root / "Notes" / "other.md").write_text("# Other\nsee [[plan]]\n")
    config = tmp_path / "config"
    (config / "vaultwatch").mkdir(parents=True)
    (config / "vaultwatch" / "settings.toml").write_text('[approve]\nmode = "writes"\n')
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(config),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_RUNTIME_DIR": str(sock_dir),
    }
    yield root, env
    stop_headless_servers(root)  # the one the bridge started


def vaultwatch(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*VAULTWATCH, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def bridged(root: Path, env: dict[str, str], agent: str = "scribe") -> StdioServerParameters:
    out = vaultwatch(env, "mcp-config", str(root), "--client", "cursor", "--agent", agent)
    assert out.returncode == 0, out.stderr
    entry = json.loads(out.stdout)["mcpServers"]["vaultwatch"]
    return StdioServerParameters(command=entry["command"], args=entry["args"], env={**env, **entry.get("env", {})})


ISO_TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00"  # the journal's rows' times


def pending_id(result) -> int:
    assert result.is_error, "a change that was not applied must not read as done"
    text = result.content[0].text
    found = re.search(r"pending change (\d+)", text)
    assert found and "awaits the person" in text, text
    return int(found.group(1))


async def history_of(client: Client, path: str) -> dict:
    got = await client.call_tool("history", {"path": path})
    assert not got.is_error, got.content
    return got.structured_content


async def listed_paths(client: Client) -> list[str]:
    got = await client.call_tool("list_documents", {"folder": "Notes"})
    assert not got.is_error, got.content
    return [row["path"] for row in got.structured_content["result"]]


async def test_a_gated_write_waits_and_the_person_approves_it_byte_exact(place) -> None:
    root, env = place
    wanted = "# Plan\r\nrewritten by the agent: ü\r\n\r\n"
    async with Client(bridged(root, env)) as client:
        before = tree(root)
        pid = pending_id(
            await client.call_tool("write", {"path": "Notes/plan.md", "content": wanted, "overwrite": True})
        )
        assert tree(root) == before  # nothing written while it waits
        seen = (await history_of(client, "Notes/plan.md"))["pending"]
        assert [(p["id"], p["state"], p["agent"].split("/")[0]) for p in seen] == [(pid, "pending", "scribe")]
        assert re.fullmatch(ISO_TIME, seen[0]["at"]), seen  # as every other time is shown, not an epoch float

        listed = vaultwatch(env, "pending", str(root), "--json")
        assert listed.returncode == 0, listed.stderr
        rows = [json.loads(line) for line in listed.stdout.splitlines()]
        assert [(r["id"], r["path"], r["agent"].split("/")[0], r["tool"]) for r in rows] == [
            (pid, "Notes/plan.md", "scribe", "write")
        ]
        assert re.fullmatch(ISO_TIME, rows[0]["at"]), rows
        assert "-keep these bytes: é" in rows[0]["diff"] and "+rewritten by the agent: ü" in rows[0]["diff"]

        done = vaultwatch(env, "approve", str(pid), str(root))
        assert done.returncode == 0, done.stderr
        assert (root / "Notes" / "plan.md").read_bytes() == wanted.encode()

        row = (await history_of(client, "Notes/plan.md"))["pending"][0]
        assert row["state"] == "approved" and row["change_ids"], row
        assert vaultwatch(env, "approve", str(pid), str(root)).returncode != 0  # one approval, once
    changes = vaultwatch(env, "changes", str(root), "--json")
    journaled = [json.loads(line) for line in changes.stdout.splitlines()]
    assert [(c["id"], c["agent"].split("/")[0], c["tool"]) for c in journaled if c["id"] in row["change_ids"]] == [
        (row["change_ids"][0], "scribe", "write")
    ]
    assert all(re.fullmatch(ISO_TIME, c["at"]) for c in journaled)  # the same form as the journal's
    # the person read it in `vaultwatch pending` and approved it: reviewed, as an approval in the TUI
    assert [c["reviewed"] for c in journaled if c["id"] in row["change_ids"]] == [True]


async def test_an_outside_edit_in_between_makes_the_approval_refuse(place) -> None:
    root, env = place
    async with Client(bridged(root, env)) as client:
        pid = pending_id(
            await client.call_tool("edit", {"path": "Notes/plan.md", "old_text": "# Plan", "new_text": "# Agent"})
        )
        outside = b"# Plan\nthe person edited this meanwhile\n"
        (root / "Notes" / "plan.md").write_bytes(outside)
        before = tree(root)
        refused = vaultwatch(env, "approve", str(pid), str(root))
        assert refused.returncode == 1
        assert "Notes/plan.md changed since the change was proposed" in refused.stderr, refused.stderr
        assert tree(root) == before
        row = (await history_of(client, "Notes/plan.md"))["pending"][0]
        assert row["state"] == "refused" and "changed since" in row["reason"], row


async def test_decline_leaves_every_byte_and_the_agent_sees_the_reason(place) -> None:
    root, env = place
    async with Client(bridged(root, env)) as client:
        before = tree(root)
        # a rename: its effects reach the note whose link it would rewrite
        pid = pending_id(await client.call_tool("rename", {"path": "Notes/plan.md", "new_path": "Notes/done.md"}))
        listed = vaultwatch(env, "pending", str(root))
        assert "rewrites links in Notes/other.md" in listed.stdout, listed.stdout
        out = vaultwatch(env, "decline", str(pid), str(root), "--reason", "keep the name")
        assert out.returncode == 0, out.stderr
        assert tree(root) == before
        row = (await history_of(client, "Notes/plan.md"))["pending"][0]
        assert (row["state"], row["reason"]) == ("declined", "keep the name")
        # in the words `vaultwatch pending` showed the person, not the effects' `move_from` lines
        assert "rewrites links in Notes/other.md" in row["effects"], row
        assert "moves Notes/plan.md → Notes/done.md" in row["effects"], row
        assert "creates Notes/done.md" not in row["effects"], row  # the move's arrival goes with it
        assert vaultwatch(env, "pending", str(root)).stdout == ""


async def test_a_pending_rename_approved_moves_and_relinks(place) -> None:
    root, env = place
    async with Client(bridged(root, env)) as client:
        pid = pending_id(await client.call_tool("rename", {"path": "Notes/plan.md", "new_path": "Notes/done.md"}))
    done = vaultwatch(env, "approve", str(pid), str(root))  # the server has gone: the CLI applies it
    assert done.returncode == 0, done.stderr
    assert (root / "Notes" / "done.md").read_bytes() == NOTE.encode()
    assert not (root / "Notes" / "plan.md").exists()
    assert (root / "Notes" / "other.md").read_text() == "# Other\nsee [[done]]\n"


def waiting(env: dict[str, str], root: Path) -> list[tuple[str, str]]:
    """(agent, path) of every change waiting for the person, as `vaultwatch pending` lists them."""
    listed = vaultwatch(env, "pending", str(root), "--json")
    assert listed.returncode == 0, listed.stderr
    return [(r["agent"].split("/")[0], r["path"]) for r in map(json.loads, listed.stdout.splitlines())]


def refused_as_flood(result, agent: str) -> str:
    assert result.is_error, "a change that was not kept must not read as done"
    text = result.content[0].text
    assert f"too many of {agent}" in text and "share (50%)" in text and "Wait until the person" in text, text
    assert not re.search(r"pending change \d", text), text  # no id: nothing was kept
    return text


async def test_a_flood_of_gated_changes_is_refused_by_its_share_while_others_are_kept(place) -> None:
    """One agent may have half of the changes waiting for the person: past that its gated change is
    refused (nothing written, nothing kept), another agent's is still kept, what waits stays, and
    once the person declines the flood the agent may propose again."""
    root, env = place
    env = {**env, "VAULTWATCH_PENDING_MAX_CHANGES": "6"}  # one agent may have 3 waiting
    before = tree(root)
    async with Client(bridged(root, env, agent="flooder")) as flooder:
        flood = [
            pending_id(await flooder.call_tool("write", {"path": f"Notes/n{i}.md", "content": f"# {i}\n"}))
            for i in range(3)
        ]
        text = refused_as_flood(
            await flooder.call_tool("write", {"path": "Notes/n3.md", "content": "# 3\n"}), "flooder"
        )
        assert "3 pending changes" in text and "VAULTWATCH_PENDING_MAX_CHANGES" in text
        # the share is the agent's name's: another session sending another version has no share of its own
        async with Client(
            bridged(root, env, agent="flooder"), client_info=Implementation(name="x", version="9")
        ) as again:
            refused_as_flood(await again.call_tool("write", {"path": "Notes/n9.md", "content": "# 9\n"}), "flooder")
        async with Client(bridged(root, env, agent="scribe")) as other:
            pending_id(await other.call_tool("write", {"path": "Notes/mine.md", "content": "# mine\n"}))
        assert tree(root) == before
        assert waiting(env, root) == [("flooder", f"Notes/n{i}.md") for i in range(3)] + [("scribe", "Notes/mine.md")]
        said = vaultwatch(env, "pending", str(root)).stderr  # the person hears whom the store refuses
        assert "flooder's pending changes fill its share (3 pending changes" in said and "scribe's" not in said
        for pid in flood:
            assert vaultwatch(env, "decline", str(pid), str(root)).returncode == 0
        pending_id(await flooder.call_tool("write", {"path": "Notes/n3.md", "content": "# 3\n"}))
    assert waiting(env, root) == [("scribe", "Notes/mine.md"), ("flooder", "Notes/n3.md")]


async def test_a_proposal_counts_the_content_it_stores_against_the_agents_share(place) -> None:
    """A pending write keeps its content twice (the note's bytes after it, and the call to re-run):
    both count, so with a 1 MiB store an agent's half holds one 200 KB write, not two."""
    root, env = place
    env = {**env, "VAULTWATCH_PENDING_MAX_MB": "1"}
    body = "# Big\n" + "lorem ipsum " * 17_000
    async with Client(bridged(root, env, agent="flooder")) as flooder:
        pending_id(await flooder.call_tool("write", {"path": "Notes/big0.md", "content": body}))
        text = refused_as_flood(await flooder.call_tool("write", {"path": "Notes/big1.md", "content": body}), "flooder")
        assert "1 pending change holding 0.4 MB" in text and "VAULTWATCH_PENDING_MAX_MB" in text
        async with Client(bridged(root, env, agent="scribe")) as other:
            pending_id(await other.call_tool("write", {"path": "Notes/small.md", "content": "# small\n"}))
    assert waiting(env, root) == [("flooder", "Notes/big0.md"), ("scribe", "Notes/small.md")]
    assert not (root / "Notes" / "big1.md").exists()


async def test_approve_and_decline_go_through_the_running_server(place, sock_dir, monkeypatch) -> None:
    """A headless `vaultwatch serve --approve writes` serves the vault; the agent (the Python `mcp`
    client, no elicitation) proposes a new note and an edit; `vaultwatch approve` and `decline` run
    as processes of their own and hand the decisions to the server: the note lands byte-exact, the
    server's listing and the agent's history show it the moment approve returns, and the journal
    holds it once, as the agent's change in the agent's session (never an outside edit)."""
    root, env = place
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(sock_dir))
    sock = default_socket_path(os.path.realpath(root))
    server = subprocess.Popen(
        [*VAULTWATCH, "serve", str(root), "--approve", "writes"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        await await_until(lambda: os.path.exists(sock) or server.poll() is not None, what="the server's socket")
        assert server.poll() is None, server.stderr.read().decode() if server.stderr else ""
        async with uds_client(sock, name="scribe") as client:
            wanted = "# New\r\nmade by the agent: ü\r\n"
            pid = pending_id(await client.call_tool("write", {"path": "Notes/new.md", "content": wanted}))
            assert "Notes/new.md" not in await listed_paths(client)
            proposed = (await history_of(client, "Notes/new.md"))["pending"][0]

            done = vaultwatch(env, "approve", str(pid), str(root))
            assert done.returncode == 0, done.stderr
            assert f"by the vaultwatch serving the vault (pid {server.pid};" in done.stdout, done.stdout
            assert (root / "Notes" / "new.md").read_bytes() == wanted.encode()
            # at once, from the server's own index and journal (no wait for its watcher)
            assert "Notes/new.md" in await listed_paths(client)
            seen = await history_of(client, "Notes/new.md")
            assert seen["pending"][0]["state"] == "approved", seen
            assert [(c["kind"], c["tool"], c["who"].split("/")[0], c.get("session")) for c in seen["changes"]] == [
                ("change", "write", "agent scribe", proposed["session"])
            ]
            assert seen["pending"][0]["change_ids"] == [seen["changes"][0]["id"]]

            before = tree(root)
            other = pending_id(
                await client.call_tool("edit", {"path": "Notes/plan.md", "old_text": "# Plan", "new_text": "# Agent"})
            )
            out = vaultwatch(env, "decline", str(other), str(root), "--reason", "not this one")
            assert out.returncode == 0, out.stderr
            assert tree(root) == before
            row = (await history_of(client, "Notes/plan.md"))["pending"][0]
            assert (row["state"], row["reason"]) == ("declined", "not this one")
            again = vaultwatch(env, "approve", str(other), str(root))
            assert again.returncode != 0 and "already declined" in again.stderr, again.stderr
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(30)


async def _post_desk(reader, writer, host_header: str, body: bytes, token: str | None = None) -> bytes:
    auth = f"authorization: Bearer {token}\r\n" if token else ""
    writer.write(
        f"POST {DESK_PATH} HTTP/1.1\r\nhost: {host_header}\r\n{auth}content-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode()
        + body
    )
    await writer.drain()
    answer = await reader.read()
    writer.close()
    return answer


async def test_the_persons_desk_is_served_on_the_unix_socket_only(tmp_path, sock_dir, monkeypatch) -> None:
    """An agent reaching the server over loopback HTTP (with the bearer token) cannot decide pending
    changes: the desk answers on the Unix socket alone, and never as an MCP tool."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "v"
    root.mkdir()
    (root / "a.md").write_text("# a\n")
    vault = Vault(str(root))
    vault.load()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    body = json.dumps(
        {"action": "decline", "id": 1, "by": "human:x", "store": pending.pending_path(vault.root_real)}
    ).encode()
    async with serving(vault, sock_dir / "v.sock", http=f"127.0.0.1:{port}") as host:
        over_http = await _post_desk(
            *await asyncio.open_connection("127.0.0.1", port), f"127.0.0.1:{port}", body, http_token(vault.root_real)
        )
        over_socket = await _post_desk(*await asyncio.open_unix_connection(host.socket_path), "localhost", body)
        async with uds_client(host.socket_path) as agent:
            tools = {t.name for t in (await agent.list_tools()).tools}
    assert over_http.startswith(b"HTTP/1.1 404"), over_http[:200]
    assert over_socket.startswith(b"HTTP/1.1 200") and b"no pending change 1 in this vault" in over_socket
    assert not {name for name in tools if "approve" in name or "decline" in name or "pending" in name}
    vault.stop()


async def test_what_an_agent_wrote_reaches_the_persons_terminal_as_text(place) -> None:
    """An agent's name and its change's text are the agent's to write: printed raw, `ESC[1A ESC[2K`
    erased the diff's line the person was asked to approve, and a newline in the name printed a
    line of the agent's making. `pending`, `approve` and `changes` show each as an escape."""
    root, env = place
    name = "evil\x1b]0;title\x07\nFAKE LINE  human  approved"
    content = "# Plan\n+harmless typo fix\nrm -rf important\x1b[1A\x1b[2K\x9b2K\u202eright-to-left\n"
    stdio = StdioServerParameters(command=VAULTWATCH[0], args=[*VAULTWATCH[1:], "serve", "--stdio", str(root)], env=env)
    async with Client(stdio, client_info=Implementation(name=name, version="1\x1b[2K")) as client:
        pid = pending_id(
            await client.call_tool("write", {"path": "Notes/plan.md", "content": content, "overwrite": True})
        )
    listed = vaultwatch(env, "pending", str(root))
    assert listed.returncode == 0, listed.stderr
    printed = listed.stdout + listed.stderr
    for raw in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert raw not in printed, repr(raw)
    head = next(line for line in listed.stdout.splitlines() if line.startswith(f"pending change {pid}"))
    assert "evil\\u001b]0;title\\u0007\\u000aFAKE LINE" in head  # the name stays on its own line
    assert "+rm -rf important\\u001b[1A\\u001b[2K\\u009b2K\\u202eright-to-left" in listed.stdout
    as_json = vaultwatch(env, "pending", str(root), "--json")
    assert json.loads(as_json.stdout.splitlines()[0])["agent"].startswith(name)  # JSON keeps the data
    assert vaultwatch(env, "approve", str(pid), str(root)).returncode == 0
    changes = vaultwatch(env, "changes", str(root))
    assert "\x1b" not in changes.stdout + changes.stderr and "FAKE LINE" not in changes.stdout.splitlines()[0][:5]
    # the name's line break escaped: no line of the agent's making (the column cuts the name short)
    assert all("FAKE LINE" not in line for line in changes.stdout.splitlines())
    assert [line for line in changes.stdout.splitlines() if "agent evil" in line][0].lstrip().split()[0].isdigit()


async def test_pending_shows_marks_that_could_disguise_a_line_as_escapes(place) -> None:
    """A stroke drawn through `1` (U+0336), a circle around a name's letter, a stack of marks and a
    mark with nothing under it are escaped in `vaultwatch pending` as the question through the
    agent's client escapes them; the accents and points of real text print as they are."""
    root, env = place
    real = "cafe\u0301 Tie\u0302\u0301ng Vie\u0323\u0302t \u0939\u093f\u0928\u094d\u0926\u0940 \u05e9\u05c1\u05b8\u05dc\u05d5\u05b9\u05dd \u0645\u064f\u062d\u064e\u0645\u0651\u064e\u062f"
    content = f"# Plan\napproved: 1\u0336 1\u0336 paid\no\u0301\u0302\u0303\u0304\u0306\u0307\n{real}\n\u0301 alone\n"
    stdio = StdioServerParameters(command=VAULTWATCH[0], args=[*VAULTWATCH[1:], "serve", "--stdio", str(root)], env=env)
    async with Client(stdio, client_info=Implementation(name="scribe\u0338", version="1")) as client:
        pid = pending_id(await client.call_tool("write", {"path": "Notes/ledger\u20dd.md", "content": content}))
    listed = vaultwatch(env, "pending", str(root))
    assert listed.returncode == 0, listed.stderr
    out = listed.stdout
    head = next(line for line in out.splitlines() if line.startswith(f"pending change {pid}"))
    assert "scribe\\u0338" in head and "Notes/ledger\\u20dd.md" in head
    assert "creates Notes/ledger\\u20dd.md" in out  # the effects
    assert "+approved: 1\\u0336 1\\u0336 paid" in out
    assert "+o\\u0301\\u0302\\u0303\\u0304\\u0306\\u0307" in out
    assert "+\\u0301 alone" in out
    assert f"+{real}" in out
    for raw in ("\u0336", "\u0338", "\u20dd", "\u0307"):
        assert raw not in out, repr(raw)
    row = json.loads(vaultwatch(env, "pending", str(root), "--json").stdout.splitlines()[0])
    assert "+approved: 1\\u0336 1\\u0336 paid" in row["diff"]


async def test_pending_spells_out_letters_swapped_for_lookalikes_of_other_scripts(place) -> None:
    """A Cyrillic `а` in `paypal` and a Cyrillic `В` in `[[Budget]]`: the '-' and '+' lines read the
    same unless those letters print as escapes; and a tag letter past U+FFFF prints as `\\U000e0041`,
    not as `\\ue004` and a `1`. A lone lookalike in a token with ASCII letters or digits prints as an
    escape too: a Cyrillic `х` (`https://х.com`), a Cyrillic `О` between digits (`2О24`), a Latin
    alpha `ɑ` (`pɑypal`), a Devanagari zero (`2०24`), an NKo zero (`g߀ogle`), a small capital `ꜱ`,
    the click `ǀ` drawn as an `l` (`paypaǀ`). `--json` stays JSON, with the escapes in its diff."""
    root, env = place
    before = "# Pay\nPay invoices at https://paypal.com/acme only. See [[Budget]].\n"
    after = before.replace("paypal", "p\u0430ypal").replace("[[Budget]]", "[[\u0412udget]]") + "tag\U000e0041\n"
    after += "Log in at https://\u0445.com/login, see [[Report 2\u041e24]], pay at https://p\u0251ypal.com\n"
    after += "See [[Report 2\u096624]], https://g\u07c0ogle.com, https://\ua731ecure.com, https://paypa\u01c0.com\n"
    (root / "Notes" / "pay.md").write_text(before)
    async with Client(bridged(root, env)) as client:
        pending_id(await client.call_tool("write", {"path": "Notes/pay.md", "content": after, "overwrite": True}))
    listed = vaultwatch(env, "pending", str(root))
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert "  -Pay invoices at https://paypal.com/acme only. See [[Budget]]." in lines
    assert "  +Pay invoices at https://p\\u0430ypal.com/acme only. See [[\\u0412udget]]." in lines
    assert "  +tag\\U000e0041" in lines
    assert "  +Log in at https://\\u0445.com/login, see [[Report 2\\u041e24]], pay at https://p\\u0251ypal.com" in lines
    shown = "See [[Report 2\\u096624]], https://g\\u07c0ogle.com, https://\\ua731ecure.com, https://paypa\\u01c0.com"
    assert f"  +{shown}" in lines
    row = json.loads(vaultwatch(env, "pending", str(root), "--json").stdout.splitlines()[0])
    assert "+Pay invoices at https://p\\u0430ypal.com/acme only. See [[\\u0412udget]]." in row["diff"]
    assert "+tag\\U000e0041" in row["diff"]
    assert f"+{shown}" in row["diff"]


async def test_pending_shows_what_each_link_a_waiting_rename_rewrites_becomes(place) -> None:
    """The rename has not happened, so nothing stores its link rewrites: `vaultwatch pending`
    computes them as approving it now would make them, for a note's rename and a folder's."""
    root, env = place
    (root / "Top.md").write_text("# Top\nsee [[Notes/plan]] and [[Notes/other]]\n")
    async with Client(bridged(root, env)) as client:
        note = pending_id(await client.call_tool("rename", {"path": "Notes/plan.md", "new_path": "Notes/done.md"}))
        folder = pending_id(await client.call_tool("rename", {"path": "Notes", "new_path": "Kept"}))
    listed = vaultwatch(env, "pending", str(root))
    assert listed.returncode == 0, listed.stderr
    shown = {int(part.split()[0]): part for part in listed.stdout.split("pending change ")[1:]}
    assert "links rewritten in Notes/other.md: +1 -1 lines" in shown[note]
    assert "  -see [[plan]]\n  +see [[done]]" in shown[note]
    assert "links rewritten in Top.md: +1 -1 lines" in shown[note]
    assert "  +see [[Notes/done]] and [[Notes/other]]" in shown[note]
    assert "links rewritten in Top.md: +1 -1 lines" in shown[folder]
    assert "  -see [[Notes/plan]] and [[Notes/other]]\n  +see [[Kept/plan]] and [[Kept/other]]" in shown[folder]
    rows = [json.loads(line) for line in vaultwatch(env, "pending", str(root), "--json").stdout.splitlines()]
    assert "+see [[done]]" in next(r["diff"] for r in rows if r["id"] == note)
    assert (root / "Notes" / "plan.md").exists() and not (root / "Kept").exists()  # shown, not done
    done = vaultwatch(env, "approve", str(note), str(root))
    assert done.returncode == 0, done.stderr
    assert (root / "Notes" / "other.md").read_text() == "# Other\nsee [[done]]\n"  # what it showed
    after = vaultwatch(env, "pending", str(root), "--all")
    assert "links rewritten in Notes/other.md" not in after.stdout  # decided: nothing would be rewritten


async def test_pending_marks_the_changes_approving_would_refuse_and_says_why(place) -> None:
    """A note edited since, a rule added since: `vaultwatch pending` says each can no longer be
    approved as shown, and why; `approve` then refuses it for that reason."""
    root, env = place
    async with Client(bridged(root, env)) as client:
        edited = pending_id(
            await client.call_tool("write", {"path": "Notes/plan.md", "content": "# Plan v2\n", "overwrite": True})
        )
        ruled = pending_id(await client.call_tool("write", {"path": "Notes/new.md", "content": "# New\n"}))
        fine = pending_id(await client.call_tool("write", {"path": "Inbox.md", "content": "# Inbox\n"}))
    listed = vaultwatch(env, "pending", str(root))
    assert listed.returncode == 0 and "CANNOT BE APPROVED" not in listed.stdout, listed.stdout
    (root / "Notes" / "plan.md").write_text("# Plan\nthe person's own line\n")
    settings = Path(env["XDG_CONFIG_HOME"]) / "vaultwatch" / "settings.toml"
    settings.write_text('[approve]\nmode = "writes"\n[agents.scribe]\ndeny = ["Notes/new.md"]\n')

    listed = vaultwatch(env, "pending", str(root))
    assert listed.returncode == 0, listed.stderr
    blocks = {int(b.split()[0]): b for b in listed.stdout.split("pending change ")[1:]}
    assert (
        "CANNOT BE APPROVED AS SHOWN: Notes/plan.md changed since it was proposed; approving it will be "
        "refused: decline it"
    ) in blocks[edited], blocks[edited]
    assert 'CANNOT BE APPROVED AS SHOWN: the person\'s rule [agents."scribe"] denies' in blocks[ruled].replace(
        "\n", " "
    ), blocks[ruled]
    assert "CANNOT BE APPROVED" not in blocks[fine], blocks[fine]
    rows = {r["id"]: r for r in map(json.loads, vaultwatch(env, "pending", str(root), "--json").stdout.splitlines())}
    assert "changed since it was proposed" in rows[edited]["cannot_apply"] and "cannot_apply" not in rows[fine]

    refused = vaultwatch(env, "approve", str(edited), str(root))
    assert refused.returncode == 1 and "changed since" in refused.stderr, refused.stderr


async def test_pending_shows_a_session_as_changes_and_revert_take_it_back(place) -> None:
    """`vaultwatch pending` names an agent's session as `changes` and `revert --session` show and
    take it (core.review.sessionids: the label and 8 or more unique digits), never by a fixed 8-character
    cut, which for a bridge's `bridge-<12 hex>` is `bridge-` and one digit, shared by sessions."""
    root, env = place
    async with Client(bridged(root, env)) as client:
        pending_id(await client.call_tool("write", {"path": "Notes/new.md", "content": "# New\n"}))
        listed = vaultwatch(env, "pending", str(root), "--json")
        session = json.loads(listed.stdout.splitlines()[0])["session"]
        assert session.startswith("bridge-") and len(session) > 12, session
        text = vaultwatch(env, "pending", str(root)).stdout
        assert f"[{session[:15]}]" in text, text  # bridge- and 8 of its 12 hex digits

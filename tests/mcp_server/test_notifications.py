"""Server-initiated messages over the socket and the bridge: resource subscriptions and progress.

Through the real server on its socket with the real Python client (both protocol eras), and the
official TypeScript SDK client spawning `vaultwatch bridge`:
- a subscribed note's change (the write tool, an outside edit the watcher sees) sends
  notifications/resources/updated; a note appearing sends notifications/resources/list_changed;
  nothing after unsubscribing; the capabilities say so;
- a call with a progress token hears progress (a first search while the full-text index builds);
  a call without one is still one plain JSON answer.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_testing import CLIENT_DIR, VAULTWATCH, serving
from mcp_types import Implementation, ResourceListChangedNotification, ResourceUpdatedNotification

from vaultwatch.mcp_server import resources

PLAN = resources.uri_of("Plan.md")
ZED = resources.uri_of("Zed.md")


@pytest.fixture
def vault(make_vault, open_vault):
    """A vault whose watcher runs (outside edits reach the index, and so the subscribers)."""
    opened = open_vault(make_vault({"Plan.md": "# Plan\n", "Home.md": "See [[Plan]].\n"}))
    opened.start_watching()
    assert opened.wait_watching(10)
    yield opened
    opened.stop()


def client_for(socket_path, heard: list, mode: str = "legacy") -> Client:
    async def on_message(message) -> None:
        root = getattr(message, "root", message)
        if isinstance(root, ResourceUpdatedNotification):
            heard.append(("updated", str(root.params.uri)))
        elif isinstance(root, ResourceListChangedNotification):
            heard.append(("list_changed", None))

    http = httpx2.AsyncClient(
        transport=httpx2.AsyncHTTPTransport(uds=os.fspath(socket_path)), timeout=httpx2.Timeout(30, read=60)
    )
    return Client(
        streamable_http_client("http://localhost/mcp", http_client=http),
        mode=mode,
        client_info=Implementation(name="notified", version="1"),
        message_handler=on_message,
    )


async def until(test, seconds: float = 10.0) -> bool:
    for _ in range(int(seconds / 0.02)):
        if test():
            return True
        await asyncio.sleep(0.02)
    return test()


async def test_subscribed_note_changes_reach_a_python_client_on_the_socket(vault, sock_dir):
    # a marker for the end: updates of one flush go out sorted by path, so its update comes after
    # any of Plan.md's; made before the server runs, so no notification of its own is pending
    marker_note = Path(vault.root) / "Zed.md"
    marker_note.write_text("# Zed\n", encoding="utf-8")
    assert await until(lambda: vault.snapshot.get("Zed.md") is not None)
    heard: list = []
    async with serving(vault, sock_dir / "v.sock") as host, client_for(host.socket_path, heard) as client:
        caps = client.server_capabilities.resources
        await client.subscribe_resource(PLAN)
        await client.call_tool("write", {"path": "Plan.md", "content": "# Plan\nagent\n", "overwrite": True})
        by_tool = await until(lambda: ("updated", PLAN) in heard)
        heard.clear()
        (Path(vault.root) / "Plan.md").write_text("# Plan\neditor\n", encoding="utf-8")
        outside = await until(lambda: ("updated", PLAN) in heard)
        heard.clear()
        await client.call_tool("write", {"path": "New.md", "content": "# New\n"})
        listed = await until(lambda: ("list_changed", None) in heard)
        await client.unsubscribe_resource(PLAN)
        await client.subscribe_resource(ZED)
        heard.clear()
        later = "# Plan\nlater\n"
        (Path(vault.root) / "Plan.md").write_text(later, encoding="utf-8")
        indexed = await until(lambda: vault.snapshot.get("Plan.md").size_bytes == len(later))
        # edited once the index took Plan's edit: the marker's update comes after whatever that sent
        marker_note.write_text("# Zed\nlater\n", encoding="utf-8")
        marker = await until(lambda: ("updated", ZED) in heard)
        after = list(heard)
    assert caps is not None and caps.subscribe and caps.list_changed
    assert by_tool, "no resources/updated after the write tool changed the subscribed note"
    assert outside, "no resources/updated after an outside edit of the subscribed note"
    assert listed, "no resources/list_changed after a note appeared"
    assert indexed and marker, "the outside edits after the unsubscribe never reached the index and the client"
    assert ("updated", PLAN) not in after


async def test_a_2026_client_hears_the_same_on_its_listen_stream(vault, sock_dir):
    async with serving(vault, sock_dir / "v.sock") as host, client_for(host.socket_path, [], mode="auto") as client:
        events: list = []
        async with client.listen(resources_list_changed=True, resource_subscriptions=[PLAN]) as sub:

            async def collect() -> None:
                async for event in sub:
                    events.append(type(event).__name__)

            task = asyncio.create_task(collect())
            (Path(vault.root) / "Plan.md").write_text("# Plan\neditor\n", encoding="utf-8")
            updated = await until(lambda: "ResourceUpdated" in events)
            (Path(vault.root) / "Other.md").write_text("# Other\n", encoding="utf-8")
            listed = await until(lambda: "ResourcesListChanged" in events)
            task.cancel()
    assert updated and listed, events


async def test_typescript_sdk_client_subscribes_through_the_bridge(ts_sdk, vault, sock_dir):  # noqa: F811
    async with serving(vault, sock_dir / "v.sock") as host:
        proc = await asyncio.create_subprocess_exec(
            str(ts_sdk),
            "events.mjs",
            "resources",
            str(vault.root),
            *VAULTWATCH,
            "bridge",
            "--socket",
            host.socket_path,
            cwd=str(CLIENT_DIR),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 90)
    report = json.loads(out)
    assert report["ok"], report.get("error") or err.decode()[-2000:]
    assert report["capabilities"]["resources"] == {"subscribe": True, "listChanged": True}
    steps = report["steps"]
    assert ["updated", PLAN] in steps["write"]
    assert ["updated", PLAN] in steps["outside"]
    assert ["list_changed"] in steps["create"]
    assert ["updated", PLAN] not in steps["after_unsubscribe"]
    assert report["read"] == "# Plan\nagain\n"


NOTES = 4000


@pytest.fixture
def big(make_vault, open_vault):
    files = {
        f"F{i % 20}/Note {i:05d}.md": f"---\ntitle: Note {i}\n---\n# Note {i}\n\nalpha beta {i} gamma\n"
        for i in range(NOTES)
    }
    return open_vault(make_vault(files))


async def test_progress_of_a_first_search_through_the_bridge_and_the_socket(ts_sdk, big, sock_dir):  # noqa: F811
    """The full-text index builds on the first search: a TS SDK client (through the bridge) that gave
    a progress token hears how far it got; the same server answers calls without a token as one JSON body."""
    async with serving(big, sock_dir / "v.sock") as host:
        proc = await asyncio.create_subprocess_exec(
            str(ts_sdk),
            "events.mjs",
            "progress",
            "search",
            json.dumps({"query": "gamma"}),
            *VAULTWATCH,
            "bridge",
            "--socket",
            host.socket_path,
            cwd=str(CLIENT_DIR),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 120)
        async with httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(uds=host.socket_path)) as http:
            plain = await http.post(
                "http://localhost/mcp",
                json={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "c", "version": "1"},
                    },
                },
                headers={"accept": "application/json, text/event-stream"},
            )
        streamed = host.streaming.streamed
    report = json.loads(out)
    assert report["ok"], report.get("error") or err.decode()[-2000:]
    progress = report["progress"]
    assert progress, "no progress notification during the first search"
    values = [p["progress"] for p in progress]
    assert values == sorted(set(values))  # strictly increasing, as the spec wants
    assert any(p.get("total") == NOTES and "full-text index" in (p.get("message") or "") for p in progress), progress
    assert not report["isError"] or "still building" in report["text"]
    assert streamed == 1  # only the call with a token was answered as a stream
    assert plain.headers["content-type"].startswith("application/json") and plain.json()["result"]["serverInfo"]

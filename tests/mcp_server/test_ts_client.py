"""A client nobody here wrote: the official MCP TypeScript SDK (@modelcontextprotocol/sdk, run with
node) spawns `vaultwatch bridge` and calls tools on a vaultwatch serving the demo vault.

The SDK is installed from npm into tests/mcp_server/ts_client/node_modules on first use
(`npm install`, pinned in package.json; skipped when already there).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

from mcp_testing import CLIENT_DIR, VAULTWATCH, serving


async def test_typescript_sdk_client_through_the_bridge(ts_sdk, demo, sock_dir):
    async with serving(demo, sock_dir / "v.sock", compat=frozenset({"vault-cortex"})) as host:
        proc = await asyncio.create_subprocess_exec(
            str(ts_sdk),
            "client.mjs",
            *VAULTWATCH,
            "bridge",
            "--socket",
            host.socket_path,
            cwd=str(CLIENT_DIR),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        agents_during = host.agents()
    report = json.loads(out)
    assert report["ok"], report.get("error") or err.decode()
    assert report["server"]["name"] == "vaultwatch"
    tools = {t["name"]: t for t in report["tools"]}
    assert {"list_documents", "read", "triage", "vault_list_notes"} <= set(tools)
    assert all(tools[n]["readOnly"] and tools[n]["hasOutputSchema"] for n in ("list_documents", "read", "triage"))
    calls = report["calls"]
    listing = calls["list"]["structured"]
    assert not calls["list"]["isError"] and listing["total"] == 7 and len(listing["result"]) == 3
    assert calls["list"]["meta"]["index_stale"] is False
    assert calls["deprecated"]["structured"]["total"] == 7
    assert calls["read"]["structured"]["content"].startswith("## Work")
    assert json.loads(calls["paths"]["text"]) == [
        "Projects/Atlas Migration.md",
        "Projects/Bold Ideas Spec.md",
        "Projects/Onboarding Revamp.md",
        "Projects/Search Relevance v2.md",
    ]
    assert calls["hidden"]["isError"] and "hidden path blocked" in calls["hidden"]["text"]
    assert calls["badArgs"]["isError"] and calls["badArgs"]["text"].startswith("Error: invalid arguments")
    assert agents_during == []  # the TS client closed its session when it was done


async def test_typescript_sdk_client_first_the_bridge_starts_the_server(ts_sdk, demo_vault, tmp_path):
    """Client first, app later: the client spawns the bridge with a trimmed environment while no
    vaultwatch runs; the bridge starts a headless server and the tools appear (no 'Connection closed')."""
    from test_lifecycle import client_env, short_dir, stop_holder

    from vaultwatch.core.disk.vaultlock import holder

    # the TypeScript SDK hands the bridge HOME but no XDG folder: a home of the test's own keeps the
    # headless server's cache out of the developer's ~/.cache
    env = client_env(short_dir("vwt"), tmp_path / "state", HOME=str(tmp_path / "home"))
    try:
        proc = await asyncio.create_subprocess_exec(
            str(ts_sdk),
            "client.mjs",
            *VAULTWATCH,
            "bridge",
            "--vault",
            str(demo_vault),
            "--idle-exit",
            "30",
            cwd=str(CLIENT_DIR),
            env={**env, "PATH": os.environ["PATH"]},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        report = json.loads(out)
        assert report["ok"], report.get("error") or err.decode()
        assert {"list_documents", "read", "triage"} <= {t["name"] for t in report["tools"]}
        assert report["calls"]["list"]["structured"]["total"] == 7
        served = holder(str(demo_vault.resolve()))
        assert served is not None  # (its record is in the client's state folder, not ours: ask /proc)
        assert b"--headless" in Path(f"/proc/{served.pid}/cmdline").read_bytes().split(b"\0")
    finally:
        stop_holder(demo_vault)

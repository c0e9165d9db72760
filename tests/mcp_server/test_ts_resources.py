"""What clients that show a server's resources see, through the official TypeScript SDK client over
`vaultwatch bridge` (ts_client/resources_first.mjs): on a cold start (no index cache, no server running),
`resources/list` as the very first request is never an incomplete list passed off as complete. It is
either complete, or says the index is loading (`_meta.index_loading`, a cursor to come back with) and
is followed by `notifications/resources/list_changed`, after which the listing is complete."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest
from mcp_testing import CLIENT_DIR, ROOT, VAULTWATCH
from test_lifecycle import short_dir, stop_holder

NOTES = 20_000


@pytest.fixture(scope="module")
def big_vault(tmp_path_factory):
    sys.path.insert(0, str(ROOT))
    from bench.vaultgen import generate

    root = tmp_path_factory.mktemp("cold") / "vault"
    manifest = generate(root, NOTES)
    yield root, manifest["notes"] + manifest["attachments"]
    stop_holder(root)


@pytest.mark.long
async def test_a_cold_start_lists_every_resource_or_says_it_is_loading(ts_sdk, big_vault, tmp_path):  # noqa: F811
    root, files = big_vault
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(tmp_path / "cache"),  # no index cache: the server loads the vault from scratch
        "XDG_RUNTIME_DIR": str(short_dir("vwr")),
        "PYTHONPATH": str(ROOT),  # the bridge and the server it starts run this checkout
    }
    proc = await asyncio.create_subprocess_exec(
        str(ts_sdk),
        "resources_first.mjs",
        "60",
        *VAULTWATCH,
        "bridge",
        "--vault",
        str(root),
        "--idle-exit",
        "5",
        cwd=str(CLIENT_DIR),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 240)
    report = json.loads(out)
    assert report["ok"], report.get("error") or err.decode()[-2000:]
    assert report["total"] == files
    first = report["first"]
    if first["loading"]:  # paged and notified: the rest came with list_changed
        assert report["listChanged"] >= 1 and report["again"]["count"] == files, report
    else:
        assert first["count"] == first["listed"] == files, report  # complete at once

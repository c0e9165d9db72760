"""A folder a thousand levels deep: no walk recurses on the disk's depth.

Through real parts: the start-up temp-file clean-up of a real `vaultwatch serve` process (a killed
write's temp file at the bottom of the tree is removed, the clean-up thread does not die), and
`rename` and `delete` of the whole tree through the real server on its socket with the real `mcp`
client (done, not "internal error (RecursionError)", and weighed as a heavy call that takes the
lane). The tree is made with os.mkdir beneath folder descriptors (os.makedirs recurses too) and
removed with `rm -rf` (shutil.rmtree recurses).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from reliability_helpers import serve_process, serving, short_dir, uds_client

from vaultwatch.core.vault import Vault
from vaultwatch.mcp_server import lane

DEPTH = 1000
TEMP = ".vaultwatch-0123456789abcdef.tmp"  # the write path's temp-file name (core.edit.atomic)
HOUR_AGO = time.time() - 3600


def make_deep(root: Path, top: str, depth: int = DEPTH) -> Path:
    """`root/top/d/d/...` (`depth` folders), a note every 100 levels, a killed write's temp file
    (an hour old) at the bottom and beside the top. Returns the bottom folder's path."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.mkdir(top, dir_fd=fd)
        rel = [top]
        for level in range(depth):
            child = os.open(rel[-1] if level == 0 else "d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
            if level % 100 == 0:
                note = os.open(f"n{level}.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
                os.write(note, f"# level {level}\n".encode())
                os.close(note)
            if level < depth - 1:
                os.mkdir("d", dir_fd=fd)
                rel.append("d")
        os.close(os.open(TEMP, os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))
        os.utime(TEMP, (HOUR_AGO, HOUR_AGO), dir_fd=fd)
    finally:
        os.close(fd)
    (root / TEMP).write_bytes(b"")
    os.utime(root / TEMP, (HOUR_AGO, HOUR_AGO))
    return root.joinpath(*rel)


@pytest.fixture
def deep_vault():
    base = Path(short_dir("vwdeep"))
    root = base / "vault"
    root.mkdir()
    (root / "Home.md").write_text("# Home\n")
    bottom = make_deep(root, "deep")
    assert len(str(bottom)) < 4000 and (bottom / TEMP).exists()  # the paths stay usable
    yield root, bottom
    subprocess.run(["rm", "-rf", str(base)], check=False)


def test_start_up_clean_up_reaches_the_bottom_of_a_deep_folder(deep_vault, figure):
    root, bottom = deep_vault
    sock_dir = short_dir("vwds")
    proc = serve_process(root, os.path.join(sock_dir, "v.sock"))
    try:
        end = time.monotonic() + 60
        while ((bottom / TEMP).exists() or (root / TEMP).exists()) and proc.poll() is None:
            if time.monotonic() > end:
                break
            time.sleep(0.05)
        left = [str(p)[len(str(root)) :][:80] for p in (root / TEMP, bottom / TEMP) if p.exists()]
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        subprocess.run(["rm", "-rf", sock_dir], check=False)
    assert "RecursionError" not in err, err[-2000:]
    assert left == [], f"temp files a killed write left were not removed: {left}; {err[-1500:]}"
    assert (bottom.parents[98] / "n900.md").exists()  # only the temp files went
    figure("deep_folder_levels", DEPTH)
    figure(
        "fixed_bug",
        "a folder 1,000 levels deep killed the start-up temp-file clean-up thread (RecursionError in "
        "os.fwalk) and killed writes' temp files stayed; fixed by core/disk/walk.py (iterative, one descriptor)",
    )


async def test_rename_and_delete_of_a_deep_folder_through_the_server(deep_vault, figure):
    root, _bottom = deep_vault
    vault = Vault(str(root), cache=False)
    vault.load()
    indexed = [e.path for e in vault.snapshot.entries if e.path.startswith("deep/")]
    assert len(indexed) > 300  # the index holds the tree as deep as its path length allows
    sock_dir = short_dir("vwds")
    try:
        async with serving(vault, os.path.join(sock_dir, "v.sock")) as host, uds_client(host.socket_path) as client:
            heavy = lane.stats["heavy"]
            moved = await client.call_tool("rename", {"path": "deep", "new_path": "moved"})
            took_lane = lane.stats["heavy"] - heavy
            on_disk = sorted(os.listdir(root)), (root / "moved" / "n0.md").exists()
            listed = await client.call_tool("list_documents", {"folder": "moved", "limit": 100})
            heavy = lane.stats["heavy"]
            deleted = await client.call_tool("delete", {"path": "moved"})
            took_lane_delete = lane.stats["heavy"] - heavy
            after = await client.call_tool("list_documents", {"folder": "moved", "limit": 100})
    finally:
        subprocess.run(["rm", "-rf", sock_dir], check=False)
    assert not moved.is_error, moved.content[0].text[:500]
    assert "renamed folder deep -> moved" in moved.structured_content["diff_summary"]
    assert on_disk == ([TEMP, "Home.md", "moved"], True), on_disk
    assert took_lane == 1, "a move of hundreds of entries is a heavy call: it takes the lane"
    paths = [row["path"] for row in listed.structured_content["result"]]
    assert "moved/n0.md" in paths and "moved/d/n1.md" not in paths and any(p.count("/") > 300 for p in paths)
    assert not deleted.is_error, deleted.content[0].text[:500]
    assert took_lane_delete == 1
    assert not (root / "moved").exists() and (root / ".trash" / "moved" / "n0.md").exists()
    assert after.is_error or after.structured_content["total"] == 0
    figure("deep_entries_moved", len(indexed))
    figure(
        "fixed_bug",
        "rename of a 1,000-deep folder answered 'internal error (RecursionError)', and a deep move's "
        "index refresh cost the cube of the depth; fixed by core/disk/walk.py, a shared folder memo in "
        "refresh_paths (core/index/scan.py walked_folder) and the lane weighing folder moves",
    )

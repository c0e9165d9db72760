"""`vaultwatch search` answers from the running vaultwatch when one serves the vault (issue 17)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess

import pytest
from mcp_testing import ROOT, VAULTWATCH

from vaultwatch.core.search import semantic
from vaultwatch.core.vault import demo_vault_path


def test_search_asks_the_running_server_then_answers_locally_when_it_is_gone(sock_dir, tmp_path):
    vault = tmp_path / "demo"
    shutil.copytree(demo_vault_path(), vault, symlinks=True)
    env = {
        **os.environ,
        "XDG_RUNTIME_DIR": str(sock_dir),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "VAULTWATCH_SEMANTIC": "0",
    }

    def search(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*VAULTWATCH, "search", str(vault), "deploy runbook", "--json", *extra],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    proc = subprocess.Popen(
        [*VAULTWATCH, "serve", str(vault)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().startswith("vaultwatch: serving ")
        remote = search()
        assert remote.returncode == 0, remote.stderr
        assert "answered by the running vaultwatch" in remote.stderr
        local = search("--local")
        assert local.returncode == 0 and "answered by" not in local.stderr
        paths = [json.loads(line)["path"] for line in remote.stdout.splitlines()]
        assert paths and paths == [json.loads(line)["path"] for line in local.stdout.splitlines()]
        assert paths[0] == "Areas/Engineering/Deploy Runbook.md"
        bad = subprocess.run(
            [*VAULTWATCH, "search", str(vault), "--", "-only"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert bad.returncode != 0 and "only excludes" in bad.stderr  # the server's error, said plainly
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(15)
    after = search()
    assert after.returncode == 0 and "answered by" not in after.stderr
    assert [json.loads(line)["path"] for line in after.stdout.splitlines()] == paths


needs_extra = pytest.mark.skipif(
    not semantic.available(), reason="the semantic extra is not installed (pip install 'vaultwatch[semantic]')"
)


@needs_extra
def test_similar_asks_the_running_server_and_answers_the_same_locally(sock_dir, tmp_path):
    vault = tmp_path / "demo"
    shutil.copytree(demo_vault_path(), vault, symlinks=True)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(sock_dir), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("VAULTWATCH_SEMANTIC", None)
    note = "Areas/Engineering/Deploy Runbook.md"

    def similar(*extra: str, environ=env) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*VAULTWATCH, "similar", str(vault), note, "--json", "--limit", "5", *extra],
            cwd=ROOT,
            env=environ,
            capture_output=True,
            text=True,
            timeout=180,
        )

    proc = subprocess.Popen(
        [*VAULTWATCH, "serve", str(vault)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().startswith("vaultwatch: serving ")
        remote = similar()
        assert remote.returncode == 0, remote.stderr
        assert "answered by the running vaultwatch" in remote.stderr
        paths = [json.loads(line)["path"] for line in remote.stdout.splitlines()]
        assert len(paths) == 5 and note not in paths
        local = similar("--local")
        assert local.returncode == 0 and "answered by" not in local.stderr, local.stderr
        assert [json.loads(line)["path"] for line in local.stdout.splitlines()] == paths
        missing = subprocess.run(
            [*VAULTWATCH, "similar", str(vault), "No/Such note.md"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert missing.returncode != 0 and "No/Such note.md" in missing.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(15)
    off = similar("--local", environ={**env, "VAULTWATCH_SEMANTIC": "0"})
    assert off.returncode != 0 and "vaultwatch[semantic]" in off.stderr

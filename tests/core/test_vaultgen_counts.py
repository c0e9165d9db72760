"""Counts on a generated vault (../shared/vaultgen.py) checked against its manifest.

The manifest's "status" and "trust_tier" counts cover the generated notes only; the root
index.md (which declares okf_version) is one more note, stable and unverified under OKF.
Manifest status "none" (missing status, no frontmatter, broken YAML) is OKF's implicit stable.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.clock import FixedClock
from core.query import Query
from core.vault import Vault

VAULTGEN = Path(__file__).resolve().parents[3] / "shared" / "vaultgen.py"
NOTES = 1500

pytestmark = pytest.mark.skipif(not VAULTGEN.is_file(), reason=f"vaultgen not found at {VAULTGEN}")


def generate(base: Path, name: str, *args: str) -> tuple[Path, dict]:
    out = base / name  # vaultgen writes OUT and OUT/../<name>.manifest.json: both in a writable tmp dir
    subprocess.run([sys.executable, str(VAULTGEN), str(out), *args], check=True, capture_output=True, timeout=120)
    manifest = json.loads((base / f"{name}.manifest.json").read_text())
    return out, manifest


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Vault, dict]:
    root, manifest = generate(tmp_path_factory.mktemp("vaultgen"), "gen", "--notes", str(NOTES))
    assert manifest["today"] == "2026-11-29"
    vault = Vault(root, clock=FixedClock.at_date(dt.date.fromisoformat(manifest["today"])))
    vault.load()
    return vault, manifest


def total(vault: Vault, **kw) -> int:
    return vault.list(Query(**kw)).total


def test_notes_and_attachments(generated) -> None:
    vault, m = generated
    s = vault.stats()
    assert m["notes"] == NOTES + 1
    assert s["notes"] == m["notes"] == total(vault) == total(vault, pattern="**/*.md")
    assert s["attachments"] == m["attachments"] == total(vault, include_notes=False, include_attachments=True)
    assert total(vault, folder="") == m["root_notes"] == total(vault, pattern="*.md")
    assert s["skipped"] == 0 and s["okf_bundle"] is True


def test_status_counts(generated) -> None:
    vault, m = generated
    expected = {"draft": m["status"]["draft"], "deprecated": m["status"]["deprecated"],
                "stable": m["status"]["stable"] + m["status"]["none"] + 1}
    assert vault.stats()["status"] == expected
    for status, count in expected.items():
        assert total(vault, filters=(("status", status),)) == count, status


def test_stale_counts(generated) -> None:
    vault, m = generated
    assert vault.stats()["stale"] == m["stale_true"] == total(vault, filters=(("stale", "true"),))
    assert total(vault, filters=(("stale", "false"),)) == m["notes"] - m["stale_true"]


def test_trust_tier_counts(generated) -> None:
    vault, m = generated
    expected = dict(m["trust_tier"])
    expected["unverified"] += 1  # index.md
    assert vault.stats()["trust_tier"] == expected
    for tier, count in expected.items():
        assert total(vault, filters=(("trust_tier", tier),)) == count, tier


def test_tags_broken_yaml_and_no_frontmatter(generated) -> None:
    vault, m = generated
    assert total(vault, filters=(("tags", "craft"),)) == m["tag_craft"]
    assert vault.stats()["frontmatter_errors"] == m["broken_yaml"] == total(vault, problems_only=True)
    bare = [e for e in vault.snapshot.entries if e.kind == "note" and not e.frontmatter and not e.frontmatter_error]
    assert len(bare) == m["no_frontmatter"]


def test_per_top_folder_with_name_boundary(generated) -> None:
    vault, m = generated
    for top, count in m["per_top_folder"].items():
        assert total(vault, folder=top) == count, top or "(root)"
    # Projects and ProjectsOld share a prefix: neither leaks into the other
    assert total(vault, folder="Projects") + total(vault, folder="ProjectsOld") == \
        m["per_top_folder"]["Projects"] + m["per_top_folder"]["ProjectsOld"]
    assert total(vault, pattern="Projects*/**/*.md") == \
        m["per_top_folder"]["Projects"] + m["per_top_folder"]["ProjectsOld"]


def test_hidden_files_exist_on_disk_and_are_never_listed(generated) -> None:
    vault, m = generated
    on_disk = [p for p in (".obsidian/workspace.md", ".trash/old note.md", "Projects/.secret/plan.md",
                           ".hidden-note.md") if os.path.isfile(os.path.join(vault.root, p))]
    assert len(on_disk) == m["hidden_files"] == 4
    every = vault.list(Query(include_attachments=True, include_folders=True)).entries
    assert not [e.path for e in every if any(seg.startswith(".") for seg in e.path.split("/"))]


def test_folders_match_the_disk(generated) -> None:
    vault, _ = generated
    on_disk = set()
    for dirpath, dirnames, _files in os.walk(vault.root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        rel = os.path.relpath(dirpath, vault.root)
        if rel != ".":
            on_disk.add(rel.replace(os.sep, "/"))
    assert {e.path for e in vault.list(Query(include_folders=True, include_notes=False)).entries} == on_disk
    assert vault.stats()["folders"] == len(on_disk)
    assert any("café" in p for p in on_disk)


def test_unicode_and_mixed_case_names_sort_by_code_point(generated) -> None:
    vault, _ = generated
    got = [e.path for e in vault.list(Query()).entries]
    assert got == sorted(got)
    assert any("résumé" in p for p in got)


def test_paging_the_generated_vault(generated) -> None:
    vault, m = generated
    seen, cursor = [], None
    while True:
        res = vault.list(Query(limit=400, cursor=cursor, filters=(("status", "stable"),)))
        seen.extend(e.path for e in res.entries)
        cursor = res.next_cursor
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == m["status"]["stable"] + m["status"]["none"] + 1


def test_without_okf_the_keys_are_plain_frontmatter(tmp_path: Path) -> None:
    root, m = generate(tmp_path, "plain", "--notes", "200", "--no-okf")
    vault = Vault(root, clock=FixedClock.at_date(dt.date(2026, 11, 29)))
    vault.load()
    assert vault.snapshot.is_bundle is False and m["okf"] is False
    assert total(vault) == m["notes"]
    for status in ("draft", "stable", "deprecated"):
        assert total(vault, filters=(("status", status),)) == m["status"][status], status
    assert total(vault, filters=(("stale", "true"),)) == 0  # no such frontmatter key

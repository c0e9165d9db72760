"""Counts on generated vaults (bench/vaultgen.py, the project's own generator) checked twice:
the manifest against an independent count made here from the files on disk (PyYAML and a few
regular expressions, no core code), and the index against the manifest.

The manifest's "status" and "trust_tier" counts cover the generated notes only; the root
index.md (which declares okf_version) is one more note, stable and unverified under OKF.
Manifest status "none" (missing status, no frontmatter, broken YAML) is OKF's implicit stable.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from bench.vaultgen import TODAY, generate, manifest_path
from vaultwatch.core.clock import FixedClock
from vaultwatch.core.query.listing import Query
from vaultwatch.core.vault import Vault

# one worker builds the module-scoped vaults once (tests split over workers built them on each)
pytestmark = pytest.mark.xdist_group("vaultgen_counts")

NOTES = 1500
MIDNIGHT = dt.datetime(TODAY.year, TODAY.month, TODAY.day, tzinfo=dt.UTC)
_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.S | re.M)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_TAG = re.compile(r"(?:(?<=\s)|^)#([\w/-]*[^\W\d][\w/-]*)", re.M)


def recount(root: Path) -> dict:
    """The manifest's counts, computed from the files on disk without the generator or core."""
    c: dict = {
        "notes": 0,
        "root_notes": 0,
        "attachments": 0,
        "status": Counter(),
        "trust_tier": Counter(),
        "stale_true": 0,
        "tag_craft": 0,
        "broken_yaml": 0,
        "no_frontmatter": 0,
        "per_top_folder": Counter(),
        "keys": Counter(),
    }
    for dirpath, dirnames, files in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        top = "" if rel_dir == "." else rel_dir.split("/")[0]
        for name in files:
            if name.startswith("."):
                continue
            if not name.endswith(".md"):
                c["attachments"] += 1
                continue
            c["notes"] += 1
            c["root_notes"] += top == ""
            c["per_top_folder"][top] += 1
            if rel_dir == "." and name == "index.md":
                continue  # the OKF declaration, not a generated note
            text = Path(dirpath, name).read_text(encoding="utf-8")
            fm: dict = {}
            body = text
            if text.startswith("---\n"):
                block, _, body = text[4:].partition("\n---\n")
                try:
                    fm = yaml.safe_load(block) or {}
                except yaml.YAMLError:
                    c["broken_yaml"] += 1
            else:
                c["no_frontmatter"] += 1
            c["keys"].update(list(fm))
            status = fm.get("status")
            c["status"][status.strip() if isinstance(status, str) and status.strip() else "none"] += 1
            ver = fm.get("verified")
            ver = [ver] if isinstance(ver, dict) else ver if isinstance(ver, list) else []
            c["trust_tier"][
                "human-reviewed"
                if any(str(v.get("by", "")).startswith("human:") for v in ver)
                else "machine-confirmed"
                if ver
                else "unverified"
            ] += 1
            stale = fm.get("stale_after")
            if isinstance(stale, str):
                stale = dt.date.fromisoformat(stale)
            if isinstance(stale, dt.datetime):
                c["stale_true"] += stale <= MIDNIGHT
            elif isinstance(stale, dt.date):
                c["stale_true"] += stale <= TODAY
            tags = fm.get("tags") or []
            if isinstance(tags, str):
                tags = re.split(r"[,\s]+", tags)
            prose = _INLINE_CODE.sub(" ", _FENCE.sub(" ", body))
            tags = {str(t).casefold() for t in tags} | {t.casefold() for t in _TAG.findall(prose)}
            c["tag_craft"] += "craft" in tags
    return c


def assert_manifest_matches_disk(root: Path, m: dict) -> None:
    c = recount(root)
    for key in ("notes", "root_notes", "attachments", "stale_true", "tag_craft", "broken_yaml", "no_frontmatter"):
        assert m[key] == c[key], key
    assert m["status"] == {k: c["status"][k] for k in m["status"]} and sum(m["status"].values()) == NOTES
    assert m["trust_tier"] == dict(c["trust_tier"])
    assert m["per_top_folder"] == dict(c["per_top_folder"])
    assert m["keys"] == dict(c["keys"])


def load(root: Path) -> Vault:
    vault = Vault(root, clock=FixedClock.at_date(TODAY))
    vault.load()
    return vault


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Vault, dict]:
    root = tmp_path_factory.mktemp("vaultgen") / "gen"
    manifest = generate(root, NOTES)
    assert json.loads(manifest_path(root).read_text(encoding="utf-8")) == manifest
    assert manifest["today"] == TODAY.isoformat() == "2026-11-29"
    return load(root), manifest


@pytest.fixture(scope="module")
def realistic(tmp_path_factory: pytest.TempPathFactory) -> tuple[Vault, dict]:
    root = tmp_path_factory.mktemp("vaultgen") / "real"
    manifest = generate(root, NOTES, realistic=True)
    return load(root), manifest


def total(vault: Vault, **kw) -> int:
    return vault.list(Query(**kw)).total


def test_manifest_agrees_with_an_independent_count_of_the_files(generated) -> None:
    vault, m = generated
    assert_manifest_matches_disk(Path(vault.root), m)


def test_same_arguments_give_the_same_bytes(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    ma, mb = generate(a, 120, realistic=True), generate(b, 120, realistic=True)
    assert ma == mb
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert all((a / f).read_bytes() == (b / f).read_bytes() for f in files)
    other = generate(tmp_path / "c", 120, realistic=True, seed=8)
    assert other != ma


def test_notes_and_attachments(generated) -> None:
    vault, m = generated
    s = vault.stats()
    assert m["notes"] == NOTES + 1
    assert s["notes"] == m["notes"] == total(vault) == total(vault, pattern="**/*.md")
    assert s["attachments"] == m["attachments"] == NOTES // 20
    assert m["attachments"] == total(vault, include_notes=False, include_attachments=True)
    assert total(vault, folder="") == m["root_notes"] == total(vault, pattern="*.md")
    assert s["skipped"] == 0 and s["okf_bundle"] is True


def test_status_counts(generated) -> None:
    vault, m = generated
    expected = {
        "draft": m["status"]["draft"],
        "deprecated": m["status"]["deprecated"],
        "stable": m["status"]["stable"] + m["status"]["none"],
    }
    assert vault.stats()["status"] == expected  # OKF's index.md is the bundle's, not a note to count
    for status, count in expected.items():  # a listing still finds index.md (stable)
        assert total(vault, filters=(("status", status),)) == count + (status == "stable"), status


def test_stale_counts(generated) -> None:
    vault, m = generated
    assert 0 < m["stale_true"] < m["keys"]["stale_after"]
    assert vault.stats()["stale"] == m["stale_true"] == total(vault, filters=(("stale", "true"),))
    assert total(vault, filters=(("stale", "false"),)) == m["notes"] - m["stale_true"]


def test_trust_tier_counts(generated) -> None:
    vault, m = generated
    expected = dict(m["trust_tier"])
    assert vault.stats()["trust_tier"] == expected  # OKF's index.md is not counted
    for tier, count in expected.items():
        assert count > 0
        assert total(vault, filters=(("trust_tier", tier),)) == count + (tier == "unverified"), tier


def test_tags_broken_yaml_and_no_frontmatter(generated) -> None:
    vault, m = generated
    assert total(vault, filters=(("tags", "craft"),)) == m["tag_craft"] > 0
    assert vault.stats()["frontmatter_errors"] == m["broken_yaml"] == total(vault, problems_only=True) > 0
    bare = [e for e in vault.snapshot.entries if e.kind == "note" and not e.frontmatter and not e.frontmatter_error]
    assert len(bare) == m["no_frontmatter"] > 0


def test_per_top_folder_with_name_boundary(generated) -> None:
    vault, m = generated
    for top, count in m["per_top_folder"].items():
        assert total(vault, folder=top) == count, top or "(root)"
    # Projects and ProjectsOld share a prefix: neither leaks into the other
    both = m["per_top_folder"]["Projects"] + m["per_top_folder"]["ProjectsOld"]
    assert total(vault, folder="Projects") + total(vault, folder="ProjectsOld") == both
    assert total(vault, pattern="Projects*/**/*.md") == both
    assert total(vault, pattern="**/meetings/*.md") > 0  # the benchmarks' pattern query finds notes


def test_hidden_files_exist_on_disk_and_are_never_listed(generated) -> None:
    vault, m = generated
    on_disk = [
        p
        for p in (".obsidian/workspace.md", ".trash/old note.md", "Projects/.secret/plan.md", ".hidden-note.md")
        if os.path.isfile(os.path.join(vault.root, p))
    ]
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
    assert any(p.count("/") >= 3 for p in on_disk)


def test_unicode_and_mixed_case_names_sort_by_code_point(generated) -> None:
    vault, _ = generated
    got = [e.path for e in vault.list(Query()).entries]
    assert got == sorted(got)
    assert any("résumé" in p for p in got) and any("naïve" in p for p in got)
    stems = [p.rsplit("/", 1)[-1] for p in got]
    assert any(s[0].isupper() for s in stems) and any(s[0].islower() for s in stems)


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
    m = generate(tmp_path / "plain", 200, okf=False)
    vault = load(tmp_path / "plain")
    assert vault.snapshot.is_bundle is False and m["okf"] is False
    assert total(vault) == m["notes"] == 201
    for status in ("draft", "stable", "deprecated"):
        assert total(vault, filters=(("status", status),)) == m["status"][status], status
    assert total(vault, filters=(("stale", "true"),)) == 0  # no such frontmatter key


# -- realistic mode ------------------------------------------------------------------------------


def test_realistic_manifest_agrees_with_an_independent_count(realistic) -> None:
    vault, m = realistic
    assert_manifest_matches_disk(Path(vault.root), m)


def test_realistic_notes_are_2_to_20_kb_with_rich_markdown(realistic) -> None:
    vault, m = realistic
    sizes, seen = [], Counter()
    checks = {
        "fence": re.compile(r"^(```|~~~)\w+$", re.M),
        "table": re.compile(r"^\| --- \|", re.M),
        "callout": re.compile(r"^> \[!\w+\][-+]? ", re.M),
        "task": re.compile(r"^- \[[ x]\] ", re.M),
        "numbered": re.compile(r"^\d+\. ", re.M),
        "nested": re.compile(r"^    - ", re.M),
        "embed": re.compile(r"!\[\[[^\]]+\]\]"),
        "alias": re.compile(r"\[\[[^\]|]+\|[^\]]+\]\]"),
        "heading_link": re.compile(r"[^!]\[\[[^\]#]+#[^\]]+\]\]"),
        "md_link": re.compile(r"\]\([^)]+\.md\)"),
        "inline_tag": re.compile(r" #[a-z]"),
    }
    for e in vault.snapshot.entries:
        if e.kind != "note" or e.path == "index.md":
            continue
        data = Path(vault.root, e.path).read_bytes()
        sizes.append(len(data))
        text = data.decode()
        seen.update(k for k, rx in checks.items() if rx.search(text))
    assert 2 * 1024 <= min(sizes) and max(sizes) <= 20 * 1024, (min(sizes), max(sizes))
    assert m["bytes"]["min"] == min(sizes) and m["bytes"]["max"] == max(sizes) and m["bytes"]["total"] == sum(sizes)
    assert sorted(sizes)[len(sizes) // 2] > 4 * 1024  # not all at the bottom of the range
    for kind in checks:  # every construct is common, not a one-off
        assert seen[kind] >= NOTES // 20, (kind, seen[kind])


def test_realistic_frontmatter_keys_with_dots_and_spaces_are_filterable(realistic) -> None:
    vault, m = realistic
    for key in ("ms.date", "ms.topic", "external help file", "Module Name", "aliases"):
        assert m["keys"][key] >= NOTES // 10, key
        assert sum(1 for e in vault.snapshot.entries if key in e.frontmatter) == m["keys"][key], key
    for topic, count in m["values"]["ms.topic"].items():
        assert total(vault, filters=(("ms.topic", topic),)) == count > 0, topic


def test_realistic_counts_through_the_index(realistic) -> None:
    vault, m = realistic
    s = vault.stats()
    assert s["notes"] == m["notes"] and s["attachments"] == m["attachments"]
    assert s["stale"] == m["stale_true"] and s["frontmatter_errors"] == m["broken_yaml"]
    assert s["status"]["deprecated"] == m["status"]["deprecated"]
    assert total(vault, filters=(("tags", "craft"),)) == m["tag_craft"]
    assert total(vault, filters=(("tags", "notatag"),)) == 0  # the word only appears inside code
    broken = vault.broken_links()
    targets = {r.link.target for r in broken}
    assert len(broken) == m["links"]["broken"] > 0
    assert all(t.startswith("Missing ") for t in targets)  # every other link resolves, "not a link" is code

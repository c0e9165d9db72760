"""Listing rows kept in the entry cache (readcalls.row_cache, Vault.keep_rows): a `serve --stdio` process
writes each row and its resource_link block beside its entry, and a warm start's listings take them from
there; byte for byte what a start without them answers, a clock that moves a note's `stale` between the two
included. Real processes, raw JSON-RPC lines."""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import sqlite3
import sys
import time
from pathlib import Path

from test_early_calls import call, result_bytes
from test_stdio_front import EARLY, INIT, INITIALIZED, by_id, exchange

from vaultwatch.core.index.entrycache import decode_bucket, vault_cache_dir
from vaultwatch.core.model import NOTE, make_entry
from vaultwatch.mcp_server.answers import LINK_FORM, _Cell, note_link_json

CALLS = [
    {},
    {"include_attachments": True},
    {"folder": "Projects", "limit": 2},
    {"filters": {"status": "deprecated"}},
    {"include_frontmatter": True},
]


def serve(vault: Path, as_of: str) -> list[str]:
    return [sys.executable, "-c", EARLY, "serve", str(vault), "--stdio", "--as-of", as_of]


def listings(vault: Path, env: dict, as_of: str) -> list[bytes]:
    """Each of CALLS' answers (its `result`, as the line says it), from one process."""
    calls = [call(10 + i, args) for i, args in enumerate(CALLS)]
    lines, err = exchange(serve(vault, as_of), env, INIT, INITIALIZED, *calls)
    answers = by_id(lines)
    return [result_bytes(answers[10 + i])[: -len(b"}")] for i in range(len(CALLS))]


def backdated(vault: Path) -> Path:
    """Every file an hour old: the cache distrusts a file modified just before it was written."""
    an_hour_ago = time.time() - 3600
    for path in vault.rglob("*"):
        if not path.is_symlink():
            os.utime(path, (an_hour_ago, an_hour_ago))
    return vault


def cache_rows(vault: Path, env: dict) -> dict[str, tuple]:
    """What the vault's entry cache keeps beside each entry, by path."""
    folder = Path(env["XDG_CACHE_HOME"]) / "vaultwatch" / vault_cache_dir(os.path.realpath(vault)).name
    con = sqlite3.connect(folder / "entries.sqlite")
    try:
        return {t[0]: t[18] for (data,) in con.execute("SELECT data FROM buckets") for t in decode_bucket(data)[1]}
    finally:
        con.close()


def test_a_warm_start_lists_from_the_rows_its_cache_kept_as_a_start_without_them(demo_vault, env, tmp_path):
    vault = backdated(demo_vault)
    listings(vault, env, "2025-06-01")  # a first start: every note parsed, the cache written with its rows
    kept = cache_rows(vault, env)
    assert kept and all(row is not None for row in kept.values())
    assert kept["Projects/Onboarding Revamp.md"][:2] == (True, False)  # on a bundle, stale_after 2026-11-29
    assert all(row[4][0] == LINK_FORM and row[4][1].startswith(b'{"name":') for row in kept.values())
    warm = listings(vault, env, "2026-11-29")  # the clock has moved on: some kept rows are no longer right
    fresh_env = {**env, "XDG_CACHE_HOME": str(tmp_path / "another-cache")}
    assert warm == listings(vault, fresh_env, "2026-11-29")  # a start with nothing kept
    stale = {r["path"]: r["stale"] for r in rows(warm[0])}
    assert stale["Projects/Onboarding Revamp.md"] is True


def test_the_rows_a_warm_start_serves_are_the_ones_its_cache_kept(demo_vault, env):
    """The kept rows are what the warm start answers from (the cache file is the person's own, 0600): one
    row changed in the file is what the listing says."""
    vault = backdated(demo_vault)
    first = listings(vault, env, "2026-11-29")
    folder = Path(env["XDG_CACHE_HOME"]) / "vaultwatch" / vault_cache_dir(os.path.realpath(vault)).name
    con = sqlite3.connect(folder / "entries.sqlite")
    try:
        for bucket, data in con.execute("SELECT id, data FROM buckets").fetchall():
            written, stored = decode_bucket(data)
            for at, t in enumerate(stored):
                if t[0] == "People/Ben Okafor.md":
                    row = t[18]
                    stored[at] = (*t[:18], (*row[:2], row[2].replace(b'"title":"', b'"title":"Kept '), *row[3:]))
                    blob = marshal.dumps((written, stored), 4)
                    con.execute("UPDATE buckets SET data = ? WHERE id = ?", (blob, bucket))
        con.commit()
    finally:
        con.close()
    warm = listings(vault, env, "2026-11-29")
    titles = first_titles(warm[0])
    assert titles["People/Ben Okafor.md"] == "Kept " + first_titles(first[0])["People/Ben Okafor.md"]


def rows(answer: bytes) -> list[dict]:
    return json.loads(answer)["structuredContent"]["result"]


def first_titles(answer: bytes) -> dict[str, str]:
    return {r["path"]: r["title"] for r in rows(answer)}


def test_link_form_names_what_note_link_json_writes():
    """A kept resource_link block is served again only while LINK_FORM is the same: a change to the bytes
    note_link_json writes must come with a new LINK_FORM (then change both numbers below)."""
    entries = [
        make_entry("Plain note.md", NOTE, 1, 0, "t"),
        make_entry("Ünïcode/naïve #1?.md", NOTE, 1, 0, "t"),
        make_entry('quote " and \\ back.md', NOTE, 1, 0, "t"),
        make_entry("pics/a b.png", "attachment", 1, 0, "t", mime_type="image/png"),
        make_entry("odd.bin", "attachment", 1, 0, "t"),
    ]
    digest = hashlib.sha256(b"\n".join(note_link_json(e)[0] for e in entries)).hexdigest()[:16]
    assert (LINK_FORM, digest) == (1, "339c0ac8273e204c")


def test_a_kept_link_of_another_form_is_made_again():
    entry = make_entry("n.md", NOTE, 1, 0, "t")
    made = note_link_json(entry)[0]
    kept = b'{"name":"kept"}'
    assert _Cell(entry, (), b"{}", b"[]", (LINK_FORM, kept)).link_json == kept
    for other in ((LINK_FORM + 1, kept), (LINK_FORM, "text"), kept, None, (LINK_FORM,)):
        assert _Cell(entry, (), b"{}", b"[]", other).link_json == made, other

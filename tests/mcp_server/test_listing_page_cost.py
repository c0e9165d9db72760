"""A listing page's cost is its own rows', cached or not: the answers' table row and resource link of a
row are made from the row's dict as RowCache makes the row (`RowCache.rows_with`), never by parsing the
row's JSON back; and a page made so says exactly what the plain definitions say (answers.table over
entry_json rows, note_link with urllib's quote, budget's sizes), cold or warm, for every kind of row."""

from __future__ import annotations

import datetime as dt
import json
import random
from urllib.parse import quote

import pytest

from vaultwatch.core.clock import FixedClock
from vaultwatch.core.query.listing import Query
from vaultwatch.core.serialize import RowCache, entry_json, row_bytes
from vaultwatch.core.vault import Vault
from vaultwatch.mcp_server import answers, budget

NAMES = ["Note", "Café naïve", "a b", "x~y_z.-", "q'uote", "100% sure", "semi;colon", "emoji 🦊", "tab\tname"]


def make_vault(root, seed: int) -> Vault:
    """Notes of every row shape (clean, broken YAML, undecodable bytes, frontmatter whose keys look like the
    row's own), attachments and folders, under paths urllib has to quote and paths it has not."""
    rnd = random.Random(seed)
    for i in range(160):
        folder = rnd.choice(["", "Area", "Área 2/Sub", "Deep/er/still"])
        name = f"{rnd.choice(NAMES)} {i:03d}"
        path = root / folder / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        shape = rnd.random()
        if shape < 0.1:
            path.write_text("---\ntitle: [unclosed\n---\nbroken\n", encoding="utf-8")
        elif shape < 0.15:
            path.write_bytes(b"# bad \xff\xfe bytes\n")
        else:
            front = {
                "title": rnd.choice([f'He said "{i}" \\ ok', f"plain {i}", "Straße ✓"]),
                "tags": [f"t{rnd.randrange(5)}"],
                "nested": {"size_bytes": i, ',"modified_at":': "x", "kind": ["a", {"b": None}]},
            }
            path.write_text(f"---\n{json.dumps(front, ensure_ascii=False)}\n---\nbody {i}\n", encoding="utf-8")
        if rnd.random() < 0.2:
            (root / folder / f"{name}.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(rnd.randrange(50)))
    vault = Vault(root, clock=FixedClock.at_date(dt.date(2026, 11, 29)), attachment_exts=["png"])
    vault.load()
    return vault


def expected_page(res, q: Query, clock, rest: dict, *, budget_bytes: int, explicit: bool, frontmatter: bool) -> dict:
    """The page by the plain definitions: what listing_page made before rows carried their table rows."""
    dicts = [entry_json(e, clock, res.is_bundle, frontmatter=frontmatter) for e in res.entries]
    columns: dict[str, None] = {}
    for d in dicts:
        for key in d:
            columns.setdefault(key)
    cols = list(columns)
    links = []
    for e in res.entries:
        mime = "text/markdown" if e.kind == "note" else (e.mime_type or "application/octet-stream")
        links.append(
            {
                "name": e.path,
                "uri": "vault://note/" + quote(e.path, safe="/"),
                "mimeType": mime,
                "type": "resource_link",
            }
        )
    rows = [row_bytes(d) for d in dicts]
    values = [
        json.dumps([d.get(k) for k in cols], ensure_ascii=False, separators=(",", ":")).encode(
            "utf-8", "backslashreplace"
        )
        for d in dicts
    ]
    if explicit:
        n = len(rows)
    else:
        shares = [
            len(r) + budget.escaped_len(v) + 1 + len(budget.encoded(link)) + 1
            for r, v, link in zip(rows, values, links, strict=True)
        ]
        n = budget.fit_message(shares, budget_bytes)
    return {
        "rows": rows[:n],
        "values": values[:n],
        "escaped": [v.replace(b"\\", b"\\\\").replace(b'"', b'\\"') for v in values[:n]],
        "links": tuple(links[:n]),
        "columns": cols if n else None,
    }


def made_page(cache: RowCache, res, q: Query, clock, rest: dict, **kw) -> dict:
    page = answers.listing_page(cache, res, q, clock, rest, escape=True, **kw)
    assert not isinstance(page, str), page
    columns = json.loads(page.head + "]}}")["result"]["columns"] if page.rows else None
    assert page.links == ()  # a spliced page carries its blocks' JSON, never the dicts
    links = tuple(json.loads(block) for block in page.link_json)
    return {"rows": page.rows, "values": page.values, "escaped": page.escaped, "links": links, "columns": columns}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_page_cold_or_warm_says_what_the_plain_definitions_say(tmp_path, seed):
    vault = make_vault(tmp_path / "vault", seed)
    rnd = random.Random(seed)
    warm = RowCache()
    try:
        for _ in range(25):
            frontmatter = rnd.random() < 0.5
            q = Query(
                folder=rnd.choice([None, None, "Area", "Área 2", "Deep"]),
                include_attachments=rnd.random() < 0.5,
                include_folders=rnd.random() < 0.3,
                pattern=rnd.choice([None, None, "**/*a*"]),
                limit=rnd.choice([1, 7, 40, 1000]),
            )
            explicit = rnd.random() < 0.5
            budget_bytes = rnd.choice([4096, 8192, budget.DEFAULT_ANSWER_BYTES])
            cursor = None
            while True:
                res = vault.list(Query(**{**{f: getattr(q, f) for f in q.__slots__}, "cursor": cursor}))
                rest = {"total": res.total, "next_cursor": res.next_cursor}
                kw = dict(budget_bytes=budget_bytes, explicit=explicit, frontmatter=frontmatter)
                want = expected_page(res, q, vault.clock, rest, **kw)
                assert made_page(RowCache(), res, q, vault.clock, rest, **kw) == want  # every row made now
                assert made_page(warm, res, q, vault.clock, rest, **kw) == want  # rows kept from earlier pages
                if not res.next_cursor:
                    break
                cursor = res.next_cursor
    finally:
        vault.stop()


def test_a_cold_page_parses_no_row_back(tmp_path, monkeypatch):
    """Making a page's rows, their table rows and links costs the page's rows only: no row's JSON is parsed
    back to find its keys or values (a page of a big vault is nearly always made cold: the row cache holds
    fewer rows than the vault has), also on pages where notes with broken YAML add a column to the others."""
    root = tmp_path / "vault"
    for i in range(300):
        path = root / f"Area {i % 3}" / f"Note {i:03d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        front = "title: [unclosed\n" if i % 7 == 3 else f'title: Harbour "{i}" \\ log\ntags: [t{i}]\n'
        path.write_text(f"---\n{front}---\n# Note {i}\n", encoding="utf-8")
    vault = Vault(root, clock=FixedClock.at_date(dt.date(2026, 11, 29)))
    vault.load()
    parsed = []
    real_loads = json.loads

    def counting_loads(text, *args, **kwargs):
        parsed.append(text)
        return real_loads(text, *args, **kwargs)

    try:
        q = Query(limit=1000)
        res = vault.list(q)
        assert any(e.frontmatter_error for e in res.entries) and not all(e.frontmatter_error for e in res.entries)
        monkeypatch.setattr(json, "loads", counting_loads)
        page = answers.listing_page(
            RowCache(),
            res,
            q,
            vault.clock,
            {"total": res.total},
            budget_bytes=budget.DEFAULT_ANSWER_BYTES,
            explicit=True,
            escape=True,
        )
    finally:
        monkeypatch.undo()
        vault.stop()
    assert not isinstance(page, str) and len(page.rows) == len(res.entries)
    assert parsed == []


def compact(value) -> bytes:
    """Compact JSON as the wire carries it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def test_a_note_links_size_is_its_encoded_size(tmp_path):
    vault = make_vault(tmp_path / "vault", 5)
    try:
        entries = vault.snapshot.entries
    finally:
        vault.stop()
    odd = [e for e in entries if not e.path.isascii() or "\t" in e.path or "%" in e.path]
    assert odd and any(e.kind == "attachment" for e in entries)
    for e in entries:
        link = answers.note_link(e)
        assert link["uri"] == "vault://note/" + quote(e.path, safe="/")
        data, size = answers.note_link_json(e)
        assert json.loads(data) == link and data == compact(link), e.path
        assert size == answers.link_bytes(link), e.path


def test_a_default_pages_columns_look_at_few_entries_one_by_one(tmp_path, monkeypatch):
    """A default page asks core for 1,000 entries and its table's columns are those of all of them, yet only
    the first entry of each distinct (kind, frontmatter_error, decode_error) is looked at one by one: nearly
    every run of 1,000 notes holds one with broken YAML, and a Python step for each of them was most of the
    columns' cost. The columns stay those of every entry (the plain definition, above), here with the first
    broken note after many clean ones and two broken notes that fail alike."""
    root = tmp_path / "vault"
    for i in range(400):
        path = root / f"Note {i:03d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        front = "title: [unclosed\n" if i in (250, 251, 390) else f"title: Note {i}\n"
        path.write_text(f"---\n{front}---\n# Note {i}\n", encoding="utf-8")
    (root / "Note 300.md").write_bytes(b"# bad \xff\xfe bytes\n")
    vault = Vault(root, clock=FixedClock.at_date(dt.date(2026, 11, 29)))
    vault.load()
    looked = []
    real_shape = answers.row_shape

    def counting_shape(entry):
        looked.append(entry.path)
        return real_shape(entry)

    try:
        q = Query(limit=1000)
        res = vault.list(q)
        errors = {e.frontmatter_error for e in res.entries if e.frontmatter_error}
        monkeypatch.setattr(answers, "row_shape", counting_shape)
        kw = dict(budget_bytes=budget.DEFAULT_ANSWER_BYTES, explicit=False, frontmatter=False)
        rest = {"total": res.total, "next_cursor": res.next_cursor}
        made = made_page(RowCache(), res, q, vault.clock, rest, **kw)
        monkeypatch.undo()
        assert made == expected_page(res, q, vault.clock, rest, **kw)
    finally:
        monkeypatch.undo()
        vault.stop()
    assert len(made["rows"]) < len(res.entries) == 400  # the budget cut the page: columns of rows not on it
    assert "frontmatter_error" in made["columns"] and "decode_error" in made["columns"]
    # one clean note, each distinct YAML error, the undecodable note: not every entry
    assert sorted(looked) == sorted(set(looked)) and len(looked) <= 2 + len(errors)

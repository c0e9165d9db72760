"""core.disk.reader on real files: selections, paging, etags, attachments, and every refusal."""

from __future__ import annotations

import base64
import hashlib
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vaultwatch.core.disk import reader as reader_mod
from vaultwatch.core.disk import textmap
from vaultwatch.core.disk.reader import ReadError, read
from vaultwatch.core.errors import (
    AbsolutePathError,
    HiddenPathError,
    NotFoundError,
    SymlinkEscapeError,
    TraversalError,
    VaultError,
)
from vaultwatch.core.markdown import parse as parse_mod

NOTE = """---
title: Plan
status: deprecated
stale_after: 2026-01-01
verified:
  - by: human:ana
tags: [work]
---
# Plan

Intro line.

## Tasks

- one
- two

### Done

- zero

## Notes

```
## not a heading
```

Last line.
"""


@pytest.fixture
def vault(make_vault, open_vault):
    root = make_vault(
        {
            "Projects/Plan.md": NOTE,
            "Projects/Twice.md": "# A\n## Same\none\n# B\n## Same\ntwo\n",
            "crlf.md": "---\r\ntitle: Windows\r\n---\r\nline one\r\nline two\r\n",
            "bom.md": b"\xef\xbb\xbf# Bommed\nbody\n",
            "latin1.md": b"caf\xe9 au lait\n",
            "broken.md": "---\ntitle: [unclosed\n---\nStill readable.\n",
            "long.md": "".join(f"line {i:04d} " + "x" * 60 + "\n" for i in range(400)),
            "pic.png": b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4,
            "big.pdf": b"%PDF-1.4\n" + b"0" * (1024 * 1024 + 10),
            ".obsidian/app.json": "{}",
        },
        okf=True,
    )
    return open_vault(root)


def test_whole_note_with_etag_and_okf_fields(vault):
    raw = vault.root_real + "/Projects/Plan.md"
    data = open(raw, "rb").read()
    r = read(vault, "Projects/Plan.md")
    assert r.etag == hashlib.sha256(data).hexdigest() and r.size_bytes == len(data)
    assert r.content == NOTE and r.selection == "whole" and not r.truncated and r.marker() is None
    assert (r.start_line, r.end_line, r.total_lines) == (1, NOTE.count("\n"), NOTE.count("\n"))
    assert (r.status, r.stale, r.trust_tier) == ("deprecated", True, "human-reviewed")
    assert r.title == "Plan" and r.tags == ("work",) and r.frontmatter["stale_after"] == "2026-01-01"
    assert r.modified_at.endswith("Z")
    out = r.as_json()
    assert out["okf_bundle"] is True and out["content"] == NOTE and out["next_offset"] is None


def test_frontmatter_only(vault):
    r = read(vault, "Projects/Plan.md", frontmatter_only=True)
    out = r.as_json()
    assert r.content is None and "content" not in out and out["frontmatter"]["title"] == "Plan"
    assert out["etag"] == read(vault, "Projects/Plan.md").etag  # always the whole file's bytes


def test_section_includes_children_and_skips_code(vault):
    r = read(vault, "Projects/Plan.md", section="Tasks")
    assert r.content == "## Tasks\n\n- one\n- two\n\n### Done\n\n- zero\n"
    assert r.selection == "section" and (r.start_line, r.end_line) == (13, 20)
    notes = read(vault, "Projects/Plan.md", section="## Notes").content
    assert "## not a heading" in notes and notes.endswith("Last line.\n")
    assert read(vault, "Projects/Plan.md", section="done").content == "### Done\n\n- zero\n"
    assert read(vault, "Projects/Twice.md", section="B#Same").content == "## Same\ntwo\n"


def test_section_errors_list_the_headings(vault):
    with pytest.raises(ReadError, match=r"section not found.*## Tasks") as missing:
        read(vault, "Projects/Plan.md", section="Budget")
    assert "line 13" in str(missing.value)
    with pytest.raises(ReadError, match=r"section is ambiguous.*'Parent#Heading'"):
        read(vault, "Projects/Twice.md", section="Same")
    with pytest.raises(ReadError, match="empty heading"):
        read(vault, "Projects/Plan.md", section="  ")


def test_line_ranges(vault):
    assert read(vault, "Projects/Plan.md", lines=(1, 2)).content == "---\ntitle: Plan\n"
    last = NOTE.count("\n")
    tail = read(vault, "Projects/Plan.md", lines=(last, 999))
    assert tail.content == "Last line.\n" and (tail.start_line, tail.end_line) == (last, last)
    with pytest.raises(ReadError, match=f"has {last} lines"):
        read(vault, "Projects/Plan.md", lines=(last + 1, last + 5))
    with pytest.raises(ReadError, match="not a range"):
        read(vault, "Projects/Plan.md", lines=(0, 3))
    with pytest.raises(ReadError, match="cannot be combined"):
        read(vault, "Projects/Plan.md", lines=(1, 2), section="Tasks")


def test_paging_reassembles_the_note_at_line_ends(vault):
    whole = read(vault, "long.md").content
    parts, offset, pages = [], 0, 0
    while True:
        page = read(vault, "long.md", offset=offset, max_chars=5000)
        pages += 1
        parts.append(page.content)
        assert page.content.endswith("\n")  # cut at a line end when one is near
        if page.next_offset is None:
            break
        assert f"offset={page.next_offset}" in page.marker() and page.start_line <= page.end_line
        offset = page.next_offset
    assert "".join(parts) == whole and pages >= 5
    second = read(vault, "long.md", offset=len(parts[0]), max_chars=5000)
    assert second.start_line == parts[0].count("\n") + 1
    with pytest.raises(ReadError, match="past the end"):
        read(vault, "long.md", offset=len(whole) + 1)
    with pytest.raises(ReadError, match="max_chars"):
        read(vault, "long.md", max_chars=0)


def test_encodings_and_broken_frontmatter(vault):
    assert read(vault, "crlf.md").content == "---\ntitle: Windows\n---\nline one\nline two\n"
    assert read(vault, "crlf.md").title == "Windows"
    assert read(vault, "bom.md").content == "# Bommed\nbody\n"
    latin = read(vault, "latin1.md")
    assert latin.decode_error and "\ufffd" in latin.content and latin.as_json()["decode_error"] is True
    broken = read(vault, "broken.md")
    assert broken.frontmatter_error and broken.content.endswith("Still readable.\n")


def test_attachments(vault):
    pic = read(vault, "pic.png")
    data = open(vault.root_real + "/pic.png", "rb").read()
    assert pic.kind == "attachment" and pic.mime_type == "image/png"
    assert base64.b64decode(pic.content_base64) == data and pic.etag == hashlib.sha256(data).hexdigest()
    assert read(vault, "pic.png", attachment_content=False).content_omitted == "content not requested"
    big = read(vault, "big.pdf")
    assert big.content_base64 is None and "above the" in big.content_omitted
    assert "content_base64" not in big.as_json()
    with pytest.raises(ReadError, match="notes only"):
        read(vault, "pic.png", section="x")


@pytest.mark.parametrize(
    "path, error, needle",
    [
        ("/etc/passwd", AbsolutePathError, "absolute path blocked"),
        ("../outside.md", TraversalError, "path traversal blocked"),
        (".obsidian/app.json", HiddenPathError, "hidden path blocked"),
        ("projects/plan.md", NotFoundError, "did you mean 'Projects/Plan.md'"),
        ("Projects/Plan", NotFoundError, "did you mean 'Projects/Plan.md'"),
        ("nothing.md", NotFoundError, "list_documents shows what exists"),
        ("Projects", ReadError, "is a folder"),
    ],
)
def test_refusals(vault, path, error, needle):
    with pytest.raises(error, match=needle):
        read(vault, path)


def test_symlink_escape_is_refused_and_inside_links_are_read(vault, tmp_path):
    outside = tmp_path / "secret.md"
    outside.write_text("# secret\n")
    os.symlink(outside, os.path.join(vault.root_real, "leak.md"))
    os.symlink(os.path.join(vault.root_real, "Projects", "Plan.md"), os.path.join(vault.root_real, "alias.md"))
    with pytest.raises(SymlinkEscapeError, match="symlink escapes vault"):
        read(vault, "leak.md")
    assert read(vault, "alias.md").content == NOTE


def test_reads_what_is_on_disk_now_and_updates_the_index(vault):
    path = os.path.join(vault.root_real, "fresh.md")
    with open(path, "w") as fh:
        fh.write("---\ntitle: Fresh\n---\n")
    assert read(vault, "fresh.md").title == "Fresh"  # created after the scan: found anyway
    assert vault.snapshot.get("fresh.md") is not None
    with open(path, "w") as fh:
        fh.write("# Changed\nmore text\n")
    r = read(vault, "fresh.md")
    assert r.content == "# Changed\nmore text\n"
    assert vault.snapshot.get("fresh.md").size_bytes == r.size_bytes


def test_a_fifo_is_refused_without_blocking(vault):
    os.mkfifo(os.path.join(vault.root_real, "pipe.md"))
    with pytest.raises((ReadError, NotFoundError)):
        read(vault, "pipe.md")


def test_okf_fields_are_null_outside_a_bundle(make_vault, open_vault):
    v = open_vault(make_vault({"a.md": "---\nstatus: deprecated\n---\n# A\n"}))
    r = read(v, "a.md").as_json()
    assert (r["okf_bundle"], r["status"], r["stale"], r["trust_tier"]) == (False, None, None, None)
    assert r["frontmatter"] == {"status": "deprecated"}


# --- big notes: the windowed path (core.disk.textmap) answers exactly what the whole path answers -------

FRAGMENTS = [
    "---",
    "...",
    "\r",
    "\n",
    "\r\n",
    "é",
    "€",
    "😀",
    b"\xff",
    b"\xc3",
    b"\xe2\x82",
    b"\xf0\x9f",
    "# ",
    "#tag ",
    "[[x]]",
    "`",
    " ",
    "\t",
    "a",
    "title: T\n",
    "## H\n",
    "# Top\n",
    "```\n",
    "status: deprecated\n",
    "\ufeff",
    "verified:\n  - by: human:ana\n",
    "stale_after: 2026-01-01\n",
]


def _bytes(parts) -> bytes:
    return b"".join(p if isinstance(p, bytes) else p.encode() for p in parts)


def _requests(text_len: int, lines: int) -> list[dict]:
    reqs: list[dict] = [
        {},
        {"frontmatter_only": True},
        {"section": "H"},
        {"section": "H", "offset": 3, "max_chars": 5},
        {"section": "Top"},
        {"section": "nope"},
    ]
    for offset in sorted({0, 1, 2, text_len // 3, text_len // 2, max(text_len - 1, 0), text_len, text_len + 1}):
        for max_chars in (1, 2, 7, 40, 10_000):
            reqs.append({"offset": offset, "max_chars": max_chars})
    for first in sorted({1, 2, max(lines // 2, 1), lines, lines + 1}):
        for span in (0, 1, 5, 1000):
            reqs.append({"lines": (first, first + span)})
            reqs.append({"lines": (first, first + span), "offset": 2, "max_chars": 9})
    return reqs


def _outcome(vault, **kw):
    try:
        return read(vault, "n.md", **kw).as_json()
    except VaultError as exc:
        return (type(exc).__name__, exc.message)


def _compare(vault, monkeypatch, chunks=(4, 5, 7, 64)) -> int:
    """Every request answered through the whole path and the windowed path (at several chunk
    sizes, cold and warm page map); returns the number of requests compared."""
    data = open(vault.root_real + "/n.md", "rb").read()
    text, _ = parse_mod.decode(data)
    reqs = _requests(len(text), text.count("\n") + 1)
    monkeypatch.setattr(reader_mod, "WINDOWED_MIN_BYTES", 1 << 62)
    want = [_outcome(vault, **r) for r in reqs]
    monkeypatch.setattr(reader_mod, "WINDOWED_MIN_BYTES", 0)
    for chunk in chunks:
        monkeypatch.setattr(textmap, "CHUNK", chunk)
        reader_mod._MAPS.clear()
        for _warm in range(2):
            got = [_outcome(vault, **r) for r in reqs]
            diff = [(r, w, g) for r, w, g in zip(reqs, want, got, strict=True) if w != g]
            assert not diff, (chunk, data[:300], diff[:3])
    return len(reqs)


BIG_CASES = {
    "plain": NOTE,
    "crlf and lone cr": "---\r\ntitle: Win\r\n---\r\n# H1\r\nline\rnext\r\n\r\n## H\r\nbody\r\n",
    "bom twice": b"\xef\xbb\xbf\xef\xbb\xbf---\ntitle: x\n---\nbody\n",
    "invalid bytes everywhere": b"---\ntitle: caf\xe9\n---\n\xff\xfe# H\n\xe2\x82 half\n\xf0\x9f\x98",
    "no final newline": "# Top\n\n## H\ntext without end",
    "fence as last line": "---\ntitle: last\n---",
    "dots close the block": "---\ntitle: dots\n...   \n# Top\n",
    "never closed": "---\ntitle: open\n# Top\n## H\n",
    "opening with spaces": "---  \t\ntitle: spaced\n---\n# Top\n",
    "four dashes": "----\ntitle: no\n---\n# Top\n",
    "empty": "",
    "only newlines": "\n\n\n",
    "multibyte at every byte": "😀é€a\n" * 50,
    "code and tags": "# Top\n```\n## not H\n```\n#tag #other [[link]]\n## H\n`#nottag`\n",
}


@pytest.mark.parametrize("name", list(BIG_CASES))
def test_windowed_reads_answer_exactly_like_whole_reads(name, make_vault, open_vault, monkeypatch):
    v = open_vault(make_vault({"n.md": BIG_CASES[name]}, okf=True))
    misses = reader_mod.WINDOW_MISSES
    assert _compare(v, monkeypatch) > 30
    assert reader_mod.WINDOW_MISSES == misses, "a page plan missed a chunk the answer needed"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.sampled_from(FRAGMENTS), max_size=80), bom=st.booleans(), fm=st.booleans())
def test_windowed_reads_match_on_generated_notes(parts, bom, fm, make_vault, open_vault, monkeypatch):
    data = (b"\xef\xbb\xbf" if bom else b"") + (b"---\n" if fm else b"") + _bytes(parts)
    v = open_vault(make_vault({"n.md": data}))
    misses = reader_mod.WINDOW_MISSES
    _compare(v, monkeypatch, chunks=(4, 6))
    assert reader_mod.WINDOW_MISSES == misses


@pytest.mark.parametrize(
    "name, text",
    [
        ("fence far past the scan limit", "---\ntitle: far\n" + "k: v\n" * 40 + "---\n# Far title\n#t1 " + "x " * 80),
        ("block over the frontmatter cap", "---\n" + "a: 1\n" * 60 + "---\n# After a huge block\n#late"),
        ("body longer than the scan limit", "---\ntags: [a]\n---\n" + "#early " * 5 + "y" * 200 + "\n# Late H1\n#late"),
        ("no block, long body", "text #one\n" + "z" * 300 + "\n# Late\n"),
        ("a cut line that looks like a fence", "---\n" + "b" * 92 + "\n-----x\nmore\n# Title\n"),
        ("first line of spaces", "---" + " " * 300 + "\ntitle: spaced\n---\n# Spaced\n"),
    ],
    ids=lambda x: x if len(x) < 40 else "",
)
def test_facts_at_the_scan_and_frontmatter_caps(name, text, make_vault, open_vault, monkeypatch):
    """With the parser's caps made small, the page map's facts (from the block and the body's
    head only) still equal parse_note's on the whole text, including the fallback cases."""
    for mod in (parse_mod, textmap):
        monkeypatch.setattr(mod, "MAX_SCAN_CHARS", 100)
        monkeypatch.setattr(mod, "MAX_FRONTMATTER_CHARS", 120)
    v = open_vault(make_vault({"n.md": text}, okf=True))
    _compare(v, monkeypatch, chunks=(4, 9, 64))
    if name == "a cut line that looks like a fence":  # the head alone would mislead: whole text used
        with open(v.root_real + "/n.md", "rb") as fh:
            assert textmap.build(fh.fileno(), 64).facts("n") is None


def test_a_late_page_of_a_big_note_decodes_a_few_chunks(make_vault, open_vault, monkeypatch):
    line = "Lorem ipsum [[Target]] dolor #tag sit, déjà vu 😀.\n"
    body = line * 60_000  # ~3.2 MB
    v = open_vault(make_vault({"n.md": "---\ntitle: Big\n---\n" + body}))
    assert os.path.getsize(v.root_real + "/n.md") >= reader_mod.WINDOWED_MIN_BYTES
    reader_mod._MAPS.clear()
    late = read(v, "n.md", offset=2_500_000, max_chars=5000)
    fd = os.open(v.root_real + "/n.md", os.O_RDONLY)
    try:
        st_ = os.fstat(fd)
        tmap = reader_mod._MAPS.get((st_.st_dev, st_.st_ino, st_.st_size, st_.st_mtime_ns, st_.st_ctime_ns))
    finally:
        os.close(fd)
    assert tmap is not None and len(tmap.points) >= 12
    ask = reader_mod._Ask(None, None, False, 2_500_000, 5000)
    assert len(reader_mod._plan(tmap, "n.md", ask)) <= 2  # of 13 chunks: the page's, not the note's
    lines_ask = reader_mod._Ask(None, (50_000, 50_010), False, 0, 40_000)
    assert len(reader_mod._plan(tmap, "n.md", lines_ask)) <= 3
    whole_text = v.root_real + "/n.md"
    data = open(whole_text, "rb").read()
    text = data.decode()
    assert late.content == text[2_500_000 : 2_500_000 + len(late.content)]
    assert late.etag == hashlib.sha256(data).hexdigest() and late.title == "Big"
    assert late.start_line == text.count("\n", 0, 2_500_000) + 1
    lines = read(v, "n.md", lines=(50_000, 50_002))
    assert lines.content == line * 3 and lines.start_line == 50_000


def test_a_stale_page_map_is_never_trusted(make_vault, open_vault, monkeypatch):
    """A map cached under the file's identity but made from other bytes (an in-place rewrite
    within one timestamp tick) is caught by the etag of the bytes just read, and rebuilt."""
    monkeypatch.setattr(reader_mod, "WINDOWED_MIN_BYTES", 0)
    root = make_vault({"n.md": "---\ntitle: Old\n---\n" + "old line\n" * 100})
    v = open_vault(root)
    reader_mod._MAPS.clear()
    assert read(v, "n.md").title == "Old"
    old_map = next(iter(reader_mod._MAPS._maps.values()))
    (root / "n.md").write_text("---\ntitle: New\n---\n" + "new text\n" * 100)
    fd = os.open(root / "n.md", os.O_RDONLY)
    st_ = os.fstat(fd)
    os.close(fd)
    reader_mod._MAPS.put((st_.st_dev, st_.st_ino, st_.st_size, st_.st_mtime_ns, st_.st_ctime_ns), old_map)
    r = read(v, "n.md", offset=10, max_chars=30)
    data = (root / "n.md").read_bytes()
    assert r.etag == hashlib.sha256(data).hexdigest() and r.title == "New"
    assert r.content == data.decode()[10 : 10 + len(r.content)] and r.content.startswith(" New\n---\nnew text")

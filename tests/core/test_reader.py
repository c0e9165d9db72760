"""core.reader on real files: selections, paging, etags, attachments, and every refusal."""
from __future__ import annotations

import base64
import hashlib
import os

import pytest

from core.errors import HiddenPathError, NotFoundError, SymlinkEscapeError, TraversalError, AbsolutePathError
from core.reader import ReadError, read

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
    root = make_vault({
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
    }, okf=True)
    return open_vault(root)


def test_whole_note_with_etag_and_okf_fields(vault):
    raw = (vault.root_real + "/Projects/Plan.md")
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


@pytest.mark.parametrize("path, error, needle", [
    ("/etc/passwd", AbsolutePathError, "absolute path blocked"),
    ("../outside.md", TraversalError, "path traversal blocked"),
    (".obsidian/app.json", HiddenPathError, "hidden path blocked"),
    ("projects/plan.md", NotFoundError, "did you mean 'Projects/Plan.md'"),
    ("Projects/Plan", NotFoundError, "did you mean 'Projects/Plan.md'"),
    ("nothing.md", NotFoundError, "list_documents shows what exists"),
    ("Projects", ReadError, "is a folder"),
])
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
        fh.write("# Fresh\n")
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

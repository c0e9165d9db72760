"""Parsing one note's bytes: frontmatter (malformed, bombs, JSON-safe values), encodings,
title precedence, tags and links. Pure functions, then one pass through a real vault."""

from __future__ import annotations

import json
import time
import tracemalloc

import pytest

from vaultwatch.core.markdown.parse import (
    body_links,
    decode,
    json_safe,
    link_lines,
    parse_note,
    split_frontmatter,
)
from vaultwatch.core.model import Link


def parse(text: str | bytes, stem: str = "stem"):
    return parse_note(text.encode() if isinstance(text, str) else text, stem)


# --- decoding -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "text", "bad"),
    [
        (b"plain", "plain", False),
        (b"\xef\xbb\xbfwith bom", "with bom", False),
        (b"a\r\nb\r\n", "a\nb\n", False),
        (b"old\rmac\r", "old\nmac\n", False),
        ("café".encode(), "café", False),
        (b"bad \xff byte", "bad \ufffd byte", True),
        (b"latin-1 caf\xe9", "latin-1 caf\ufffd", True),
        (b"\xef\xbb\xbf\xff", "\ufffd", True),
        (b"", "", False),
    ],
)
def test_decode(data: bytes, text: str, bad: bool) -> None:
    assert decode(data) == (text, bad)


def test_non_utf8_note_is_indexed_with_flag_and_replacement() -> None:
    facts = parse(b"---\ntitle: Caf\xe9\nstatus: draft\n---\n# H\nbody \xff\xfe\n")
    assert facts.decode_error is True
    assert facts.frontmatter["title"] == "Caf\ufffd"
    assert facts.title == "Caf\ufffd"
    assert facts.okf_status == "draft"
    assert facts.frontmatter_error is None


def test_bom_and_crlf_frontmatter() -> None:
    facts = parse(b"\xef\xbb\xbf---\r\ntitle: T\r\ntags:\r\n  - a\r\n---\r\n# Heading\r\nbody #b\r\n")
    assert facts.frontmatter == {"title": "T", "tags": ["a"]}
    assert facts.title == "T"
    assert facts.tags == ("a", "b")
    assert facts.decode_error is False and facts.frontmatter_error is None


# --- frontmatter blocks ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "block", "body"),
    [
        ("---\na: 1\n---\nbody", "a: 1\n", "body"),
        ("---\na: 1\n...\nbody", "a: 1\n", "body"),
        ("---\n---\nbody", "", "body"),
        ("---   \na: 1\n---  \nbody", "a: 1\n", "body"),
        ("---\na: 1\n---", "a: 1\n", ""),
        ("no frontmatter\n---\na: 1\n---\n", None, "no frontmatter\n---\na: 1\n---\n"),
        ("---\na: 1\nnever closed\n", None, "---\na: 1\nnever closed\n"),
        ("--- a\nb\n---\n", None, "--- a\nb\n---\n"),
        ("----\na: 1\n----\n", None, "----\na: 1\n----\n"),
        ("", None, ""),
    ],
)
def test_split_frontmatter(text: str, block, body: str) -> None:
    assert split_frontmatter(text) == (block, body)


@pytest.mark.parametrize(
    "text",
    [
        "---\ntitle: [unclosed\nstatus: draft\n---\n# Kept\n",
        "---\na: b: c\n---\n# Kept\n",
        "---\n\tindented: tab\n---\n# Kept\n",
        "---\nkey: 'unterminated\n---\n# Kept\n",
        "---\n- a list\n- not a mapping\n---\n# Kept\n",
        "---\njust a string\n---\n# Kept\n",
        "---\n? [complex, key]\n: value\n---\n# Kept\n",
    ],
)
def test_malformed_yaml_is_an_error_message_not_an_exception(text: str) -> None:
    facts = parse(text)
    if facts.frontmatter_error is None:  # the complex key is valid YAML: it must still be JSON-safe
        json.dumps(facts.frontmatter)
    else:
        assert isinstance(facts.frontmatter_error, str) and facts.frontmatter_error
        assert facts.frontmatter == {}
        assert facts.okf_status == "stable"
    assert facts.title == "stem"  # Obsidian: the file name, never a heading


def test_malformed_yaml_error_names_the_file_line() -> None:
    facts = parse("---\ntitle: ok\nbad: [unclosed\n---\n")
    assert facts.frontmatter_error.startswith("invalid YAML frontmatter at line ")


@pytest.mark.timing
def test_yaml_alias_bomb_is_refused_quickly_without_memory_blowup() -> None:
    levels = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for prev, cur in zip("abcdefgh", "bcdefghi", strict=True):
        levels.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    bomb = "---\n" + "\n".join(levels) + "\ntitle: boom\n---\n# After the bomb\n"
    tracemalloc.start()
    started = time.perf_counter()
    try:
        facts = parse(bomb)
        elapsed = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert facts.frontmatter_error and "alias bomb" in facts.frontmatter_error
    assert facts.frontmatter == {}
    assert facts.title == "stem"
    assert elapsed < 2.0
    assert peak < 50 * 1024 * 1024


def test_deeply_nested_frontmatter_is_refused() -> None:
    deep = "---\nk: " + "[" * 200 + "]" * 200 + "\n---\n# Deep\n"
    facts = parse(deep)
    assert facts.frontmatter_error is not None
    assert facts.title == "stem"


def test_huge_frontmatter_is_not_parsed() -> None:
    big = "---\n" + "".join(f"k{i}: {'x' * 100}\n" for i in range(4000)) + "---\n# Big\n"
    facts = parse(big)
    assert facts.frontmatter_error and "larger than" in facts.frontmatter_error
    assert facts.title == "stem"


@pytest.mark.parametrize(
    ("yaml_text", "expected"),
    [
        ("d: 2026-11-29", {"d": "2026-11-29"}),
        ("d: '2026-11-29'", {"d": "2026-11-29"}),
        ("t: 2026-06-01T09:00:00+02:00", {"t": "2026-06-01T09:00:00+02:00"}),
        ("t: 2026-11-20T21:14:00", {"t": "2026-11-20T21:14:00"}),
        ("b: true", {"b": True}),
        ("b: false", {"b": False}),
        ("b: 'true'", {"b": "true"}),
        ("n: 3", {"n": 3}),
        ("f: 1.5", {"f": 1.5}),
        ("f: .inf", {"f": "inf"}),
        ("f: .nan", {"f": "nan"}),
        ("z: null", {"z": None}),
        ("z:", {"z": None}),
        ("l: [a, 2, true, 2026-01-01]", {"l": ["a", 2, True, "2026-01-01"]}),
        ("m: {by: human:ana, at: 2026-01-01}", {"m": {"by": "human:ana", "at": "2026-01-01"}}),
        ("2026-01-01: date key", {"2026-01-01": "date key"}),
        ("1: int key", {"1": "int key"}),
        ("s: !!binary aGVsbG8=", {"s": "aGVsbG8="}),
        ("set: !!set {a: null}", {"set": ["a"]}),
    ],
)
def test_frontmatter_values_become_json_safe(yaml_text: str, expected: dict) -> None:
    facts = parse(f"---\n{yaml_text}\n---\n")
    assert facts.frontmatter_error is None
    assert facts.frontmatter == expected
    assert json.loads(json.dumps(facts.frontmatter, allow_nan=False)) == expected


def test_json_safe_passes_through_plain_data() -> None:
    data = {"a": [1, "x", None, {"b": False}], "c": 2.5}
    assert json_safe(data) == data


def test_unsafe_yaml_tags_are_refused() -> None:
    facts = parse("---\nx: !!python/object/apply:os.system ['echo pwned']\n---\n# Safe\n")
    assert facts.frontmatter_error is not None
    assert facts.title == "stem"


# --- title precedence -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "title"),
    [
        # Obsidian shows the file name as the note's name; vaultwatch shows a frontmatter
        # `title` string where one is set; a heading, first line or not, is never the title.
        ("---\ntitle: From FM\n---\n# From H1\n", "From FM"),
        ("---\ntitle: '  padded  '\n---\n", "padded"),
        ("---\ntitle: ''\n---\n# From H1\n", "stem"),
        ("---\ntitle: 42\n---\n# From H1\n", "stem"),  # not a string
        ("---\ntitle: [a, b]\n---\n# From H1\n", "stem"),
        ("---\nother: x\n---\n# From H1\n", "stem"),
        ("# First\n# Second\n", "stem"),
        ("intro\n\n## Not H1\n\n# Clippings\n", "stem"),  # a section H1 halfway down
        ("#NotAHeading\n", "stem"),
        ("no heading at all\n", "stem"),
        ("", "stem"),
        ("---\ntitle: [unclosed\n---\n# Broken YAML H1\n", "stem"),
    ],
)
def test_title_precedence(text: str, title: str) -> None:
    assert parse(text).title == title


# --- tags ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tags"),
    [
        ("---\ntags: [a, b]\n---\n", ("a", "b")),
        ("---\ntags:\n  - a\n  - '#b'\n---\n", ("a", "b")),
        ("---\ntags: a, b c\n---\n", ("a", "b", "c")),
        ("---\ntags: '#x'\n---\n", ("x",)),
        ("---\ntag: single\n---\n", ()),  # Obsidian 1.9 dropped the singular `tag` key
        ("---\ntags: [null, true, [n], craft]\n---\n", ("craft",)),
        ("---\ntags: 5\n---\n", ()),
        ("body #inline and #nested/tag here", ("inline", "nested/tag")),
        ("#start of line", ("start",)),
        ("#123 is an issue number, #2026 too", ()),
        ("#1a is a tag", ("1a",)),
        ("mid#word is not a tag", ()),
        ("see http://x.com/#anchor", ()),
        ("`#code` and\n```\n#fenced\n```\n#real", ("real",)),
        ("# Heading is not a tag\n## neither", ()),
        ("---\ntags: [a]\n---\n#a #b #a", ("a", "b")),  # de-duplicated, first seen order
        ("#trailing/ slash", ("trailing",)),
        ("#kebab-case_and_snake", ("kebab-case_and_snake",)),
        ("#café", ("café",)),
    ],
)
def test_tags(text: str, tags: tuple[str, ...]) -> None:
    assert parse(text).tags == tags


# --- links ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "links"),
    [
        ("[[Note]]", [Link("Note", "wiki")]),
        ("[[Note|Alias]]", [Link("Note", "wiki", None, "Alias")]),
        ("[[Note#Heading]]", [Link("Note", "wiki", "Heading")]),
        ("[[Note#Heading|Alias]]", [Link("Note", "wiki", "Heading", "Alias")]),
        ("[[Folder/Note.md]]", [Link("Folder/Note.md", "wiki")]),
        ("[[#Local heading]]", [Link("", "wiki", "Local heading")]),
        ("![[image.png]]", [Link("image.png", "embed")]),
        ("![[Note#Section]]", [Link("Note", "embed", "Section")]),
        ("[[ spaced ]]", [Link("spaced", "wiki")]),
        ("[[]]", []),
        ("[text](Other%20Note.md)", [Link("Other Note.md", "markdown")]),
        ("[text](Folder/Other.md#Sec%20tion)", [Link("Folder/Other.md", "markdown", "Sec tion")]),
        ("[t](<Spaced.md>)", [Link("Spaced.md", "markdown")]),
        ('[t](Note.md "a title")', [Link("Note.md", "markdown")]),
        ("![alt](img/pic.png)", [Link("img/pic.png", "embed")]),
        ("[ext](https://example.com/x.md)", []),
        ("[mail](mailto:a@b.c)", []),
        ("[anchor](#local)", []),
        ("`[[in code]]` and\n```\n[[fenced]]\n```\n[[real]]", [Link("real", "wiki")]),
        (
            "[[A]] then [b](B.md) then ![[C]]",
            [Link("A", "wiki"), Link("B.md", "markdown"), Link("C", "embed")],
        ),  # text order
    ],
)
def test_links(body: str, links: list[Link]) -> None:
    assert list(parse(body).links) == links


def test_body_links_is_the_same_extractor() -> None:
    assert body_links("[[A|b]] [c](D.md)") == (Link("A", "wiki", None, "b"), Link("D.md", "markdown"))


def test_link_lines_are_the_parsers_links_each_at_its_line() -> None:
    """The links parse_note finds, in its order, each with the line of the file it is on (a BOM and
    CRLF line breaks as on disk; a link in code is none)."""
    data = (
        '\ufeff---\r\nup: "[[Plan]]"\r\n---\r\n'  # lines 1-3
        "```\r\n[[Plan]] [[Code]]\r\n```\r\n"  # lines 4-6: a fence
        "[[Plan]] and [[Plan#Goals|goals]]\r\n\r\n"  # line 7
        "[see](Plan%20B.md)\r\n"  # line 9
    ).encode()
    found = link_lines(data)
    assert [link for link, _ in found] == list(parse_note(data, "n").links)
    assert [line for _, line in found] == [2, 7, 7, 9]


# --- okf fields from parsing ----------------------------------------------------------------------


def test_parse_derives_okf_fields_from_raw_yaml() -> None:
    facts = parse("---\nstatus: ' draft '\nstale_after: 2026-11-29\nverified: {by: 'human:x'}\n---\n")
    assert facts.okf_status == "draft"
    assert facts.okf_trust == "human-reviewed"
    assert str(facts.stale_date) == "2026-11-29" and facts.stale_instant is None
    facts = parse("---\nstale_after: 2026-06-01T09:00:00+02:00\n---\n")
    assert facts.stale_date is None and facts.stale_instant.utcoffset().total_seconds() == 7200


def test_content_chars_counts_the_body_only() -> None:
    assert parse("---\na: 1\n---\nhello").content_chars == 5
    assert parse("hello world").content_chars == 11


# --- through a real vault -------------------------------------------------------------------------


def test_broken_and_undecodable_notes_are_still_indexed(make_vault, open_vault) -> None:
    root = make_vault(
        {
            "broken.md": "---\ntitle: [unclosed\n---\n# Broken\n",
            "latin1.md": "---\ntitle: Café\n---\n".encode("latin-1"),
            "bom.md": b"\xef\xbb\xbf---\r\ntitle: Bom\r\n---\r\n",
            "binary.md": bytes(range(256)) * 4,
        }
    )
    vault = open_vault(root)
    entries = {e.path: e for e in vault.snapshot.entries}
    assert set(entries) == {"binary.md", "bom.md", "broken.md", "latin1.md"}
    assert entries["broken.md"].frontmatter_error and entries["broken.md"].title == "broken"  # the file name
    assert entries["latin1.md"].decode_error and entries["latin1.md"].title == "Caf\ufffd"
    assert entries["bom.md"].title == "Bom" and not entries["bom.md"].decode_error
    assert entries["binary.md"].decode_error
    s = vault.stats()
    assert s["frontmatter_errors"] == 1 and s["decode_errors"] == 2
    from vaultwatch.core.query.listing import Query

    problems = [e.path for e in vault.list(Query(problems_only=True)).entries]
    assert problems == ["binary.md", "broken.md", "latin1.md"]

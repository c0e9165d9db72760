"""Surgical frontmatter edits (core.edit.fmedit): only the touched key's lines change, byte for byte.

The corpus holds the frontmatter shapes real vaults have (Obsidian properties, comments, flow
lists, block scalars, quoted and unquoted dates, CRLF, BOM-bearing files, tabs in the body,
OKF notes, indentless and 4-space lists, odd keys). Every operation runs on every note and is
checked against an oracle written independently of fmedit: the bytes before and after the
key's lines are identical, and core.markdown.parse reads back exactly the intended mapping and body.
"""

from __future__ import annotations

import datetime as dt
import re

import pytest
import yaml

from vaultwatch.core.edit.fmedit import FrontmatterEditError, update
from vaultwatch.core.markdown.parse import decode, load_yaml, parse_note, split_frontmatter

OBSIDIAN = """---
title: Weekly review
aliases:
  - review
  - weekly
tags:
  - journal
  - review/weekly
created: 2024-01-05
cssclasses: []
publish: false
---
# Weekly review

- [ ] tidy inbox
"""

COMMENTS = """---
# Managed by hand; keep the comments!
title: "Comments everywhere"   # the display title
status: draft # draft|stable|deprecated
# owner: someone-old
owner: priya  # current owner

# spacing above is intentional
priority: 2
---
Body with a # hash and [[Link]].
"""

FLOW = """---
tags: [craft, "two words", 'single']
aliases: ["Flow note"]
rating: 4.5
---
Flow lists only.
"""

MULTILINE = """---
title: Multi-line strings
description: |
  First line of a literal block.
    Indented more.

  After a blank line.
summary: >
  Folded text that
  continues here.
plain: this plain scalar
  continues on the next line
after: kept
---
Body.
"""

DATES = """---
created: 2024-01-05
updated: "2024-02-01"
due: '2024-03-01'
stamp: 2024-01-05T10:20:30Z
naive: 2024-01-05 10:20:30
offset: 2024-01-05T10:20:30+02:00
text_date: January 5, 2024
---
Dates in every spelling.
"""

OKF = """---
title: Atlas migration plan
status: stable
stale_after: 2026-03-01
owner: ben
verified:
  - by: machine:linkcheck
    at: 2026-01-10T09:00:00Z
  - by: agent:claude
    at: 2026-01-12
tags: [project, atlas]
---
## Plan
Steps.
"""

NESTED = """---
title: Nested and empty
meta:
  source: import
  counts:
    words: 120
empty:
tilde: ~
yes_word: yes
number: 0x1F
big: 1_000
---
Body
"""

INDENTLESS = """---
title: Indentless
tags:
- a
- b
links:
- "[[Other]]"
---
Body
"""

FOUR_SPACES = """---
title: Four spaces
tags:
    - alpha
    - beta
---
Body
"""

UNICODE = """---
title: Café ☕ notes
auteur: Zoë
emoji: 🚀
tags: [café, naïve]
---
Unicode body ✓
"""

ODD_KEYS = """---
"quoted key": value
'single key': 1
key with spaces: plain
dashed-key: x
under_score: y
---
Body
"""

DOTS_FENCE = """---
title: Closed with dots
status: draft
...
Body after a YAML end marker.
"""

TABS_BODY = (
    "---\ntitle: Tabs\nstatus: draft\n---\n\tindented with a tab\n---\nnot: frontmatter\n---\n\ttrailing\ttabs\t\n"
)

EMPTY_BLOCK = "---\n---\nOnly a body.\n"

BLANK_LINES = "---\n\ntitle: Blank lines\n\n\nstatus: draft\n\n---\n\nBody\n"

NO_FINAL_NEWLINE_BODY = "---\ntitle: x\n---\nbody without final newline"

CORPUS = {
    "obsidian": OBSIDIAN,
    "comments": COMMENTS,
    "flow": FLOW,
    "multiline": MULTILINE,
    "dates": DATES,
    "okf": OKF,
    "nested": NESTED,
    "indentless": INDENTLESS,
    "four_spaces": FOUR_SPACES,
    "unicode": UNICODE,
    "odd_keys": ODD_KEYS,
    "dots_fence": DOTS_FENCE,
    "tabs_body": TABS_BODY,
    "empty_block": EMPTY_BLOCK,
    "blank_lines": BLANK_LINES,
    "no_final_newline": NO_FINAL_NEWLINE_BODY,
    "crlf_obsidian": OBSIDIAN.replace("\n", "\r\n"),
    "crlf_comments": COMMENTS.replace("\n", "\r\n"),
    "crlf_multiline": MULTILINE.replace("\n", "\r\n"),
    "crlf_okf": OKF.replace("\n", "\r\n"),
}


# --- an oracle independent of fmedit ------------------------------------------------------


def _lines(text: str) -> list[str]:
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def _fence_lines(text: str) -> tuple[int, int]:
    """(index of the opening fence line, index of the closing fence line)."""
    lines = _lines(text)
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            return 0, i
    raise AssertionError("no closing fence")


def _key_line(line: str, key: str) -> bool:
    for spelled in (key, f'"{key}"', f"'{key}'"):
        if line.startswith(spelled) and line[len(spelled) :].lstrip(" ").startswith(":"):
            return True
    return False


def key_span(text: str, key: str) -> tuple[int, int]:
    """Character span of a top-level key's lines: its line, continuation lines, no trailing blanks/comments."""
    lines = _lines(text)
    _, close = _fence_lines(text)
    offsets = [0]
    for ln in lines:
        offsets.append(offsets[-1] + len(ln))
    start = next(i for i in range(1, close) if _key_line(lines[i], key))
    end = start + 1
    while end < close and (lines[end][:1] in (" ", "\t", "-", "#") or lines[end].strip() == ""):
        end += 1
    while end - 1 > start and (lines[end - 1].strip() == "" or lines[end - 1].startswith("#")):
        end -= 1
    return offsets[start], offsets[end]


def closing_fence_offset(text: str) -> int:
    lines = _lines(text)
    _, close = _fence_lines(text)
    return sum(len(ln) for ln in lines[:close])


def parsed(text: str) -> tuple[dict, str]:
    """(raw frontmatter mapping, LF body) as core.markdown.parse reads them."""
    folded, _ = decode(text.encode("utf-8"))
    block, body = split_frontmatter(folded)
    assert block is not None
    raw, error = load_yaml(block)
    assert error is None, error
    return raw, body


def top_keys(text: str) -> list[str]:
    raw, _ = parsed(text)
    return [k for k in raw if isinstance(k, str)]


def assert_line_endings(text: str, new: str) -> None:
    if "\r\n" in text:
        assert new.count("\n") == new.count("\r\n"), "a CRLF note gained a bare LF"
    else:
        assert "\r" not in new


def _same_json(a, b) -> bool:
    import json

    from vaultwatch.core.markdown.parse import json_safe

    return json.dumps(json_safe(a), sort_keys=True) == json.dumps(json_safe(b), sort_keys=True)


NEW_VALUES = ["changed value", 7, True, None, ["x", "y z"], "2031-12-24", {"by": "agent:test", "at": "2026-01-01"}]


# --- every operation on every corpus note -------------------------------------------------


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_set_existing_key_touches_only_its_lines(name):
    text = CORPUS[name]
    keys = top_keys(text)
    for key in keys:
        a, b = key_span(text, key)
        for value in NEW_VALUES:
            raw_before, body_before = parsed(text)
            result = update(text, set={key: value})
            if _same_json(raw_before[key], value):
                assert not result.changed and result.text == text
                continue
            new = result.text
            assert result.changed
            assert new.startswith(text[:a]), (name, key, value)
            assert new.endswith(text[b:]), (name, key, value)
            assert_line_endings(text, new)
            raw, body = parsed(new)
            assert body == body_before
            assert list(raw) == list(raw_before)
            assert _same_json(raw[key], value)
            for other in raw_before:
                if other != key:
                    assert _same_json(raw[other], raw_before[other])


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_delete_key_removes_exactly_its_lines(name):
    text = CORPUS[name]
    for key in top_keys(text):
        a, b = key_span(text, key)
        result = update(text, delete=[key])
        assert result.changed
        assert result.text == text[:a] + text[b:], (name, key)
        raw, body = parsed(result.text)
        assert key not in raw
        assert body == parsed(text)[1]


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_new_key_is_appended_at_the_end_of_the_block(name):
    text = CORPUS[name]
    close = closing_fence_offset(text)
    for value in NEW_VALUES:
        result = update(text, set={"added_key": value})
        new = result.text
        assert new.startswith(text[:close]) and new.endswith(text[close:]), (name, value)
        inserted = new[close : len(new) - len(text) + close]
        assert inserted.startswith("added_key:")
        assert_line_endings(text, new)
        raw, body = parsed(new)
        assert list(raw)[-1] == "added_key"
        assert _same_json(raw["added_key"], value)
        assert body == parsed(text)[1]


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_append_to_lists_inserts_only_new_lines_or_rewrites_only_that_key(name):
    text = CORPUS[name]
    raw_before, _ = parsed(text)
    lists = [k for k, v in raw_before.items() if isinstance(v, list)]
    for key in lists:
        a, b = key_span(text, key)
        for item in ("new-item", {"by": "agent:x", "at": "2026-02-02"}):
            new = update(text, append={key: item}).text
            assert new.startswith(text[:a]) and new.endswith(text[b:]), (name, key)
            raw, _ = parsed(new)
            assert _same_json(raw[key], [*raw_before[key], item])
            if text[a:b].count("\n") > 1 and "[" not in text[a:b]:  # block list: pure insertion
                assert new == text[:b] + new[b : len(new) - len(text) + b] + text[b:]


@pytest.mark.parametrize("name", sorted(n for n in CORPUS if len(top_keys(CORPUS[n])) >= 2))
def test_combined_set_delete_append_in_one_call(name):
    text = CORPUS[name]
    keys = top_keys(text)
    result = update(text, set={keys[0]: "first", "brand_new": [1, 2]}, delete=[keys[-1]], append={"fresh_list": "x"})
    raw, body = parsed(result.text)
    assert raw[keys[0]] == "first" and keys[-1] not in raw
    assert raw["brand_new"] == [1, 2] and raw["fresh_list"] == ["x"]
    assert body == parsed(text)[1]
    assert_line_endings(text, result.text)


# --- specific behaviour ---------------------------------------------------------------------


def test_inline_replacement_keeps_trailing_comment_and_quote_style():
    new = update(COMMENTS, set={"title": "Renamed", "status": "stable", "owner": "marta"}).text
    assert '\ntitle: "Renamed"   # the display title\n' in new
    assert "\nstatus: stable # draft|stable|deprecated\n" in new
    assert "\nowner: marta  # current owner\n" in new
    assert "# Managed by hand; keep the comments!\n" in new and "# owner: someone-old\n" in new
    new = update(DATES, set={"due": "2025-01-01"}).text
    assert "\ndue: '2025-01-01'\n" in new  # a quoted date stays a quoted string


def test_date_strings_are_written_as_yaml_dates_but_other_types_stay_strings():
    new = update(OKF, set={"stale_after": "2026-09-01", "note": "2026-09-01"}).text
    assert "\nstale_after: 2026-09-01\n" in new and "\nnote: 2026-09-01\n" in new
    raw, _ = parsed(new)
    assert raw["stale_after"] == dt.date(2026, 9, 1)
    new = update(OKF, set={"flag": "true", "count": "12", "nothing": "null", "t": "2026-09-01T10:00:00Z"}).text
    raw, _ = parsed(new)
    assert raw["flag"] == "true" and raw["count"] == "12" and raw["nothing"] == "null"
    assert raw["t"] == "2026-09-01T10:00:00Z"  # would read back as +00:00: kept a string


def test_python_dates_and_datetimes_are_written_natively():
    when = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    new = update(
        OKF, set={"stale_after": dt.date(2027, 1, 1)}, append={"verified": {"by": "human:ana", "at": when}}
    ).text
    assert "\nstale_after: 2027-01-01\n" in new
    assert "  - by: human:ana\n    at: 2026-01-02T03:04:05+00:00\n" in new
    raw, _ = parsed(new)
    assert raw["verified"][-1]["at"] == when


def test_setting_the_same_value_is_a_no_op():
    assert not update(OKF, set={"status": "stable", "stale_after": "2026-03-01"}).changed
    assert not update(OKF, delete=["absent"]).changed


def test_new_lists_follow_the_files_style():
    assert "\nnew:\n  - a\n  - b\n" in update(OBSIDIAN, set={"new": ["a", "b"]}).text
    assert "\nnew: [a, b]\n" in update(FLOW, set={"new": ["a", "b"]}).text
    assert "\nnew:\n- a\n- b\n" in update(INDENTLESS, set={"new": ["a", "b"]}).text
    assert "\nnew:\n    - a\n" in update(FOUR_SPACES, set={"new": ["a"]}).text
    assert "\nnew:\n  - a\n" in update("---\ntitle: x\n---\n", set={"new": ["a"]}).text


def test_multiline_value_becomes_a_literal_block():
    new = update(OBSIDIAN, set={"summary": "line one\nline two"}).text
    assert "\nsummary: |-\n  line one\n  line two\n---\n" in new


def test_note_without_frontmatter_gets_a_new_block():
    body = "# Title\n\nText with --- dashes\n"
    new = update(body, set={"status": "draft", "tags": ["a"]}).text
    assert new == "---\nstatus: draft\ntags:\n  - a\n---\n" + body
    crlf = body.replace("\n", "\r\n")
    assert update(crlf, set={"a": 1}).text == "---\r\na: 1\r\n---\r\n" + crlf
    assert not update(body, delete=["x"]).changed


def test_the_new_block_is_read_by_core_parse():
    facts = parse_note(update("Just text\n", set={"title": "T", "status": "deprecated"}).text.encode(), "x")
    assert facts.frontmatter == {"title": "T", "status": "deprecated"} and facts.frontmatter_error is None


MALFORMED = {
    "bad_indent": "---\ntitle: x\n  bad: indent\n---\nbody\n",
    "unclosed_quote": '---\ntitle: "unclosed\n---\nbody\n',
    "tab_indent": "---\ntags:\n\t- a\n---\nbody\n",
    "not_a_mapping": "---\n- just\n- a list\n---\nbody\n",
    "scalar": "---\njust a string\n---\nbody\n",
    "unclosed_block": "---\ntitle: x\nno closing fence\n",
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_yaml_is_refused_never_a_second_block(name):
    with pytest.raises(FrontmatterEditError) as info:
        update(MALFORMED[name], set={"status": "draft"})
    assert info.value.code in ("invalid_frontmatter", "unsupported_frontmatter")
    assert "fix it by hand" in info.value.message or "by hand" in info.value.message


def test_flow_mapping_block_and_duplicates_are_refused_with_clear_codes():
    with pytest.raises(FrontmatterEditError) as info:
        update("---\n{title: x, status: draft}\n---\n", set={"status": "stable"})
    assert info.value.code == "unsupported_frontmatter"
    dup = "---\nstatus: draft\nstatus: stable\ntitle: x\n---\n"
    with pytest.raises(FrontmatterEditError) as info:
        update(dup, set={"status": "x"})
    assert info.value.code == "duplicate_key" and "2 times" in info.value.message
    assert "title: y" in update(dup, set={"title": "y"}).text  # other keys stay editable


def test_anchor_that_would_dangle_is_refused_by_verification():
    text = "---\nbase: &b hello\ncopy: *b\n---\n"
    with pytest.raises(FrontmatterEditError) as info:
        update(text, delete=["base"])
    assert info.value.code == "frontmatter_edit_refused"


def test_append_to_a_scalar_and_conflicting_arguments_are_errors():
    with pytest.raises(FrontmatterEditError) as info:
        update(OKF, append={"title": "x"})
    assert info.value.code == "not_a_list"
    with pytest.raises(FrontmatterEditError):
        update(OKF, set={"a": 1}, delete=["a"])
    with pytest.raises(FrontmatterEditError):
        update(OKF, set={"": 1})
    with pytest.raises(FrontmatterEditError):
        update(OKF, set={"a\nb": 1})


def test_single_mapping_verified_becomes_a_list_on_append():
    text = "---\nverified:\n  by: machine:x\n  at: 2026-01-01\ntitle: t\n---\n"
    raw, _ = parsed(update(text, append={"verified": {"by": "agent:y"}}).text)
    assert raw["verified"] == [{"by": "machine:x", "at": dt.date(2026, 1, 1)}, {"by": "agent:y"}]


def test_summary_names_each_change():
    result = update(OKF, set={"status": "deprecated", "x": 1}, delete=["owner"], append={"tags": "z"})
    assert result.summary == ("status: stable -> deprecated", "add x: 1", "delete owner", "append to tags: z")
    assert result.before["status"] == "stable" and result.after["status"] == "deprecated"


def test_summary_quotes_values_exactly_as_the_file_writes_them():
    text = '---\nstatus: draft\nq: "kept"  # note\ntags: [a]\nverified:\n  - by: human:x\ndue: 2026-01-01\n---\nbody\n'
    result = update(
        text,
        set={"status": "stable", "q": "new", "due": "2026-02-02", "flag": "yes", "who": "a:b"},
        append={"tags": "c:d", "verified": {"by": "human:root", "at": "2026-03-01"}},
    )
    new = result.text
    assert result.summary == (
        "status: draft -> stable",
        'q: "kept" -> "new"',
        "due: 2026-01-01 -> 2026-02-02",
        "add flag: 'yes'",
        "add who: a:b",
        "append to tags: 'c:d'",
        "append to verified: {by: human:root, at: 2026-03-01}",
    )
    # each summary value is the file's own text
    for line in (
        "status: stable",
        'q: "new"',
        "due: 2026-02-02",
        "flag: 'yes'",
        "who: a:b",
        "tags: [a, 'c:d']",
        "  - by: human:root",
    ):
        assert line in new.splitlines() or any(ln.startswith(line) for ln in new.splitlines()), (line, new)


def test_yaml_dump_never_emits_document_markers_into_the_block():
    new = update(OBSIDIAN, set={"k": "plain", "l": "x" * 300}).text
    block, _ = split_frontmatter(new)
    assert "..." not in block and yaml.safe_load(block)["l"] == "x" * 300


# --- properties: any JSON an agent can send either applies exactly or is refused cleanly --------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
)
_json_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)
_keys = st.one_of(
    st.sampled_from(["title", "status", "tags", "created", "description", "verified", "new"]),
    st.text(min_size=1, max_size=20),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(CORPUS)),
    sets=st.dictionaries(_keys, _json_values, max_size=3),
    deletes=st.lists(_keys, max_size=2),
)
def test_any_json_edit_applies_exactly_or_is_refused(name, sets, deletes):
    text = CORPUS[name]
    deletes = [k for k in deletes if k not in sets]
    try:
        result = update(text, set=sets, delete=deletes)
    except FrontmatterEditError as exc:
        assert exc.message and exc.code
        return
    raw, body = parsed(result.text)
    assert body == parsed(text)[1]
    for key, value in sets.items():
        assert _same_json(raw[key], value)
    for key in deletes:
        assert key not in raw
    assert_line_endings(text, result.text)


def test_alias_bomb_and_deep_nesting_are_refused_cleanly():
    bomb = (
        "---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
        "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n---\n"
    )
    with pytest.raises(FrontmatterEditError):
        update(bomb, set={"status": "x"})
    deep: object = "leaf"
    for _ in range(3000):
        deep = [deep]
    with pytest.raises(FrontmatterEditError):
        update(OKF, set={"deep": deep})

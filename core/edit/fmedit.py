"""Surgical frontmatter edits: set, delete or append to one key and leave every other byte alone.

Peers re-serialise the whole YAML block on every edit, which drops comments, reorders keys
and rewrites dates. Here each top-level key is located with PyYAML's node marks and only
that key's lines (or, for a one-line scalar, only the value's characters) are replaced:
comments, key order, quoting, date formats, blank lines, the body, the BOM and the line
endings (CRLF stays CRLF) stay byte-identical.

Rules:
- A one-line scalar value is replaced in place, keeping its quote style and any trailing
  comment; other values have their lines rewritten (the key text is kept as written).
- A new key is appended at the end of the block, at the column of the existing keys.
- Lists follow the file: block style with the file's dash indentation when the file has a
  block list, flow style (`[a, b]`) when it only has flow lists, else Obsidian's own style
  (block, two spaces). Appending to a block list adds lines after its last item.
- Strings that read back as the same YAML date (`2026-03-01`) are written unquoted, as
  Obsidian writes dates; every other string that YAML would read as another type is quoted.
- Malformed YAML, a flow-mapping block or duplicate keys are refused with a clear error;
  an unclosed `---` block is refused rather than adding a second block; a note without
  frontmatter gets a new block at the top.
- The result is re-parsed with core.markdown.parse and must equal the old mapping with exactly the
  requested change and the same body; otherwise nothing is returned but an error.

About 510 lines, one job: locating a key and writing its new value share one reading of the
file's own style (`_Style`: quotes, list style, indentation, line endings), and the check
that re-parses the result is what makes the splice safe; split apart they would pass that
style and the key's marks back and forth.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from vaultwatch.core.errors import VaultError
from vaultwatch.core.markdown.parse import FrontmatterTooBig, json_safe, load_yaml, split_frontmatter
from vaultwatch.core.markdown.sections import (
    FrontmatterSpan,
    frontmatter_span,
    lines_with_offsets,
    newline_of,
    opens_unclosed_frontmatter,
)

_STR_TAG = "tag:yaml.org,2002:str"
_TS_TAG = "tag:yaml.org,2002:timestamp"
_TIMESTAMPISH = re.compile(r"^\d{4}-\d\d?-\d\d?([Tt ].*)?$")
_WIDTH = 1_000_000


class FrontmatterEditError(VaultError):
    """The frontmatter cannot be edited safely (malformed YAML, duplicate keys, ...)."""

    code = "invalid_frontmatter"

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code


@dataclass(frozen=True, slots=True)
class FrontmatterEdit:
    """The outcome of `update`: the new note text and what changed."""

    text: str
    changed: bool
    summary: tuple[str, ...]  # one phrase per effective change, e.g. "status: draft -> stable"
    before: dict[str, Any]  # JSON-safe mapping before the edit
    after: dict[str, Any]  # JSON-safe mapping after the edit


# --- rendering -------------------------------------------------------------------------


def _iso(value: dt.date) -> str:
    return value.isoformat()


def _repr_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if "\n" in data:
        return dumper.represent_scalar(_STR_TAG, data, style="|")
    if dumper.default_style is None and _TIMESTAMPISH.match(data):
        try:
            loaded = yaml.safe_load(data)
        except yaml.YAMLError:
            loaded = None
        if isinstance(loaded, (dt.date, dt.datetime)) and _iso(loaded) == data:
            return dumper.represent_scalar(_TS_TAG, data)
    return dumper.represent_str(data)


def _repr_datetime(dumper: yaml.SafeDumper, data: dt.datetime) -> yaml.ScalarNode:
    return dumper.represent_scalar(_TS_TAG, data.isoformat())


class _Dumper(yaml.SafeDumper):
    """Block sequences indented under their key (`k:\\n  - a`), as Obsidian writes them."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        return super().increase_indent(flow, False)


class _IndentlessDumper(yaml.SafeDumper):
    """PyYAML's default: block sequences at the key's column (`k:\\n- a`)."""


for _cls in (_Dumper, _IndentlessDumper):
    _cls.add_representer(str, _repr_str)
    _cls.add_representer(dt.datetime, _repr_datetime)


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool, dt.date))


@dataclass(frozen=True, slots=True)
class _Style:
    list_style: str  # "block" or "flow"
    dash_indent: int  # columns between the key and its block list's dashes
    key_column: int
    nl: str

    def dumper(self) -> type[yaml.SafeDumper]:
        return _IndentlessDumper if self.dash_indent == 0 else _Dumper

    def indent(self) -> int:
        return self.dash_indent if 2 <= self.dash_indent <= 9 else 2


def _dump(value: Any, style: _Style, **kw: Any) -> str:
    try:
        return yaml.dump(
            value, Dumper=style.dumper(), allow_unicode=True, sort_keys=False, width=_WIDTH, indent=style.indent(), **kw
        )
    except yaml.representer.RepresenterError as exc:
        raise FrontmatterEditError(f"value cannot be written as YAML: {exc}", "invalid_value") from exc
    except RecursionError as exc:
        raise FrontmatterEditError("value is nested too deeply to write as frontmatter", "invalid_value") from exc


def _flow_scalar(value: Any, style: _Style, quote: str | None = None) -> str | None:
    """A scalar as it would appear after `key: ` on one line, or None if it needs several lines."""
    out = _dump([value], style, default_flow_style=True, **({"default_style": quote} if quote else {}))
    out = out.rstrip("\n")
    if "\n" in out or not (out.startswith("[") and out.endswith("]")):
        return None
    return out[1:-1]


def _render_value(value: Any, style: _Style, prefer: str | None = None) -> str:
    """The text after `key:` (a leading space for inline values, a line break for block ones), LF-separated."""
    list_style = prefer or style.list_style
    if isinstance(value, list) and value and list_style == "flow" and all(_is_scalar(v) for v in value):
        out = _dump(value, style, default_flow_style=True).rstrip("\n")
        if "\n" not in out:
            return " " + out
    out = _dump({"k": value}, style, default_flow_style=False)
    if not out.startswith("k:"):
        raise FrontmatterEditError("value cannot be written as YAML", "invalid_value")
    return out[2:].rstrip("\n")


def _render_key(key: str, style: _Style) -> str:
    out = _flow_scalar(key, style)
    if out is None:
        raise FrontmatterEditError(f"key {key!r} cannot be written on one line: use a plain key", "invalid_key")
    return out


def _place(text: str, style: _Style) -> str:
    """LF-separated rendered lines moved to the key column and the note's line-break style."""
    lines = text.split("\n")
    pad = " " * style.key_column
    out = [lines[0]] + [pad + ln if ln else ln for ln in lines[1:]]
    return style.nl.join(out)


# --- locating keys ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Entry:
    key: str
    is_str: bool
    key_node: yaml.Node
    value_node: yaml.Node
    start: int  # offset (in the whole text) of the key's first line
    end: int  # offset just after the entry's last line (trailing blanks and comments excluded)


def _entries(text: str, y0: int, block: str) -> list[_Entry]:
    try:
        root = yaml.compose(block, Loader=yaml.SafeLoader)
    except RecursionError as exc:
        raise FrontmatterEditError(
            "the frontmatter is nested too deeply to edit safely; edit it by hand", "unsupported_frontmatter"
        ) from exc
    except yaml.YAMLError as exc:
        raise FrontmatterEditError(
            f"the frontmatter YAML is malformed ({exc}); fix it by hand first", "invalid_frontmatter"
        ) from exc
    if root is None:
        return []
    if not isinstance(root, yaml.MappingNode):
        raise FrontmatterEditError("the frontmatter is not a mapping of keys to values; fix it by hand first")
    if root.flow_style:
        raise FrontmatterEditError(
            "the frontmatter is written as one flow mapping ({...}); vaultwatch edits "
            "only block mappings (one `key: value` per line): rewrite it by hand first",
            "unsupported_frontmatter",
        )
    rows = lines_with_offsets(block)
    out: list[_Entry] = []
    pairs = root.value
    for i, (k, v) in enumerate(pairs):
        if not isinstance(k, yaml.ScalarNode):
            raise FrontmatterEditError(
                "the frontmatter has a complex (non-scalar) key; fix it by hand first", "unsupported_frontmatter"
            )
        first = k.start_mark.line
        nxt = pairs[i + 1][0].start_mark.line if i + 1 < len(pairs) else len(rows)
        last = nxt - 1
        while last > first and (rows[last][1].strip() == "" or rows[last][1].startswith("#")):
            last -= 1
        start = y0 + rows[first][0]
        end = y0 + rows[last][0] + len(rows[last][1])
        out.append(_Entry(k.value, k.tag == _STR_TAG, k, v, start, end))
    return out


def _style_of(block: str, entries: list[_Entry], nl: str) -> _Style:
    list_style, dash = "block", 2
    for e in entries:
        v = e.value_node
        if isinstance(v, yaml.SequenceNode) and v.value:
            if v.flow_style:
                list_style = "flow"
                continue
            list_style, dash = "block", max(0, v.start_mark.column - e.key_node.start_mark.column)
            break
    column = entries[0].key_node.start_mark.column if entries else 0
    return _Style(list_style, dash, column, nl)


_PLAIN = _Style("flow", 2, 0, "\n")  # a value shown on its own, away from any note's layout


def _find(entries: list[_Entry], key: str) -> _Entry | None:
    hits = [e for e in entries if e.key == key]
    if len(hits) > 1:
        raise FrontmatterEditError(
            f"key {key!r} appears {len(hits)} times in the frontmatter; remove the duplicates by hand first",
            "duplicate_key",
        )
    if hits and not hits[0].is_str:
        raise FrontmatterEditError(
            f"key {key!r} is not a plain string key in YAML (it reads as another type); quote it by hand first",
            "unsupported_frontmatter",
        )
    return hits[0] if hits else None


# --- the edit --------------------------------------------------------------------------


def _same(a: Any, b: Any) -> bool:
    try:
        return json.dumps(json_safe(a), sort_keys=True) == json.dumps(json_safe(b), sort_keys=True)
    except (FrontmatterTooBig, RecursionError, TypeError, ValueError):
        return False


def _short(value: Any) -> str:
    try:
        out = json.dumps(json_safe(value), ensure_ascii=False)
    except (FrontmatterTooBig, RecursionError, TypeError, ValueError):
        out = "..."
    return _clip(out)


def _clip(out: str) -> str:
    return out if len(out) <= 60 else out[:57] + "..."


def _written(value: Any, style: _Style, flow: bool = False, shown: bool = False) -> str:
    """A value as YAML writes it into the file (`stable`, `'2026-03-01'`, `human:root`), for the
    summary: what the file says, not a JSON rendering of it. Scalars as a block entry writes them
    (or, `flow`, as inside a [flow, list]); a list as [a, b], a mapping as {key: value}; cut at 60
    characters. `shown`: whole, and quoted values in double quotes (`shown`)."""
    cut = str if shown else _clip
    try:
        if isinstance(value, list):
            return cut("[" + ", ".join(_written(x, style, True, shown) for x in value) + "]")
        if isinstance(value, dict):
            return cut(
                "{"
                + ", ".join(
                    f"{_written(k, style, True, shown)}: {_written(v, style, flow, shown)}" for k, v in value.items()
                )
                + "}"
            )
        if flow:
            out = _flow_scalar(value, style)
        else:
            out = _dump({"k": value}, style, default_flow_style=False).rstrip("\n")
            out = out[3:] if out.startswith("k: ") and "\n" not in out else None
    except (FrontmatterEditError, RecursionError):
        out = None
    if out is None:
        return _short(value)
    return _double_quoted(out) if shown else _clip(out)


def _double_quoted(out: str) -> str:
    """A scalar YAML single-quoted (`'[[Sci-fi]]'`) in double quotes, as Obsidian writes quoted values
    (`"[[Sci-fi]]"`): a list of such in single quotes reads as a Python list, not as the note. JSON's
    escapes are YAML's, so the text is the same YAML value."""
    if len(out) >= 2 and out[0] == out[-1] == "'":
        return json.dumps(out[1:-1].replace("''", "'"), ensure_ascii=False)
    return out


def shown(value: Any) -> str:
    """A frontmatter value as a person reads it in their note, whole, on one line (`stable`,
    `[idea]`, `"[[Science fiction]]"`, `{a: 1}`): what a frontmatter diff shows of a parsed value (a
    change's summary shows the characters written, `_source` and `_written`)."""
    return _written(value, _PLAIN, shown=True)


def _source(text: str, entry: _Entry, value: Any, style: _Style) -> str:
    """An entry's value as the file writes it: its own characters when it sits on the key's line."""
    k, v = entry.key_node, entry.value_node
    if v.start_mark.line == k.start_mark.line == v.end_mark.line and v.end_mark.index > v.start_mark.index:
        at = entry.start + k.start_mark.column - k.start_mark.index
        raw = text[at + v.start_mark.index : at + v.end_mark.index].strip()
        if raw and "\n" not in raw:
            return _clip(raw)
    return _written(value, style, bool(getattr(v, "flow_style", False)))


def _check_key(key: Any) -> str:
    if not isinstance(key, str) or not key.strip():
        raise FrontmatterEditError(f"frontmatter keys must be non-empty strings, got {key!r}", "invalid_key")
    if any(c in key for c in "\r\n\x00"):
        raise FrontmatterEditError(f"frontmatter key {key!r} contains a line break or NUL", "invalid_key")
    return key


def update(
    text: str, set: Mapping[str, Any] | None = None, delete: Iterable[str] = (), append: Mapping[str, Any] | None = None
) -> FrontmatterEdit:
    """`_update` on any line endings: a note with CR-only line breaks (old Mac style, which the
    parser reads) is edited on LF and written back with CR, byte for byte elsewhere. A block the
    parser sees but the line-based editor cannot (mixed lone-CR breaks) is refused rather than
    shadowed by a second block."""
    if "\r" in text and "\n" not in text:
        edit = _update(text.replace("\r", "\n"), set, delete, append)
        return dataclasses.replace(edit, text=edit.text.replace("\n", "\r"))
    if frontmatter_span(text) is None and "\r" in text:
        folded = text.replace("\r\n", "\n").replace("\r", "\n")
        if split_frontmatter(folded)[0] is not None:
            raise FrontmatterEditError(
                "the note's frontmatter block uses lone CR line breaks mixed with others; "
                "vaultwatch never adds a second block: normalise the note's line breaks "
                "(rewrite it with write) first",
                "invalid_frontmatter",
            )
    return _update(text, set, delete, append)


def _update(
    text: str, set: Mapping[str, Any] | None = None, delete: Iterable[str] = (), append: Mapping[str, Any] | None = None
) -> FrontmatterEdit:
    """Apply `set` (key -> value), `delete` (keys) and `append` (key -> item added to a list)
    to the frontmatter of note `text` (BOM removed, original line endings).

    Setting a key to the value it already has, or deleting an absent key, changes nothing.
    A key may appear in only one of the three. Raises FrontmatterEditError when the block is
    malformed or the edit cannot be made without touching other keys.
    """
    set = dict(set or {})
    append = dict(append or {})
    delete = list(dict.fromkeys(delete or ()))
    for key in [*set, *delete, *append]:
        _check_key(key)
    clash = (set.keys() & append.keys()) | (set.keys() & {*delete}) | (append.keys() & {*delete})
    if clash:
        raise FrontmatterEditError(
            f"key {sorted(clash)[0]!r} is named in more than one of set/delete/append; name each key once",
            "invalid_arguments",
        )
    span = frontmatter_span(text)
    nl = newline_of(text)
    if span is None:
        if opens_unclosed_frontmatter(text):
            raise FrontmatterEditError(
                "the note starts with '---' but its frontmatter block never closes; add "
                "the closing '---' line by hand first (vaultwatch never adds a second block)",
                "invalid_frontmatter",
            )
        y0 = y1 = 0
        block = ""
        old_raw: dict[str, Any] = {}
    else:
        y0, y1 = span.yaml_start, span.yaml_end
        block = text[y0:y1]
        old_raw, error = load_yaml(block)
        if error:
            raise FrontmatterEditError(
                f"the frontmatter YAML is malformed ({error}); fix it by hand or rewrite "
                "the note with write (vaultwatch never adds a second block)"
            )
    entries = _entries(text, y0, block) if span is not None else []
    style = _style_of(block, entries, nl)
    expected = dict(old_raw)
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement) in whole-text offsets
    tail: list[str] = []  # new entries appended at the end of the block
    summary: list[str] = []

    for key, value in set.items():
        entry = _find(entries, key)
        if entry is None:
            expected[key] = value
            tail.append(_render_key(key, style) + ":" + _render_value(value, style))
            summary.append(f"add {key}: {_written(value, style)}")  # as the tail writes it
            continue
        old = old_raw.get(key)
        if _same(old, value):
            continue
        expected[key] = value
        edit = _replace_value(text, entry, value, style)
        edits.append(edit)
        # in place on the key's line: the summary shows the very characters written
        new = (
            _clip(edit[2].strip()) if edit[0] > entry.start and "\n" not in edit[2].strip() else _written(value, style)
        )
        summary.append(f"{key}: {_source(text, entry, old, style)} -> {new}")

    for key in delete:
        entry = _find(entries, key)
        if entry is None:
            continue
        expected.pop(key, None)
        edits.append((entry.start, entry.end, ""))
        summary.append(f"delete {key}")

    for key, item in append.items():
        entry = _find(entries, key)
        if entry is None:
            expected[key] = [item]
            tail.append(_render_key(key, style) + ":" + _render_value([item], style))
            summary.append(f"add {key}: [{_written(item, style)}]")
            continue
        old = old_raw.get(key)
        if isinstance(old, dict):
            new_value: list[Any] = [old, item]
        elif isinstance(old, list):
            new_value = [*old, item]
        elif old is None:
            new_value = [item]
        else:
            raise FrontmatterEditError(
                f"cannot append to {key!r}: it holds a {type(old).__name__}, not a list; use set to replace it",
                "not_a_list",
            )
        expected[key] = new_value
        edits.append(_replace_value(text, entry, new_value, style, old_list=old if isinstance(old, list) else None))
        flow = isinstance(entry.value_node, yaml.SequenceNode) and bool(entry.value_node.flow_style)
        summary.append(f"append to {key}: {_written(item, style, flow)}")

    if not edits and not tail:
        same = _json(old_raw)
        return FrontmatterEdit(text, False, (), same, same)

    if span is None:
        new_text = "---" + nl + nl.join(_place(t, style) for t in tail) + nl + "---" + nl + text
    else:
        pieces: list[str] = []
        pos = 0
        for start, end, repl in sorted(edits):
            pieces.append(text[pos:start])
            pieces.append(repl)
            pos = end
        if tail:
            pieces.append(text[pos:y1])
            if y1 > y0 and not text[y0:y1].endswith("\n"):
                pieces.append(nl)
            pieces.append("".join(" " * style.key_column + _place(t, style) + nl for t in tail))
            pos = y1
        pieces.append(text[pos:])
        new_text = "".join(pieces)
    after = _verify(text, new_text, span, expected)
    return FrontmatterEdit(new_text, True, tuple(summary), _json(old_raw), after)


def _json(raw: dict[str, Any]) -> dict[str, Any]:
    try:
        return json_safe(raw)
    except (FrontmatterTooBig, RecursionError) as exc:
        raise FrontmatterEditError(
            "the frontmatter is too large or too deeply nested (a YAML alias bomb?) to edit safely; fix it by hand",
            "unsupported_frontmatter",
        ) from exc


def _replace_value(
    text: str, entry: _Entry, value: Any, style: _Style, old_list: list | None = None
) -> tuple[int, int, str]:
    """The splice that gives `entry` the new `value`, touching as little as possible."""
    k, v = entry.key_node, entry.value_node
    one_line = v.start_mark.line == k.start_mark.line == v.end_mark.line
    v_start = entry.start + (v.start_mark.index - k.start_mark.index) + k.start_mark.column
    v_end = entry.start + (v.end_mark.index - k.start_mark.index) + k.start_mark.column
    # one-line scalar -> one-line scalar: replace only the value's characters (keeps a trailing comment)
    if (
        one_line
        and isinstance(v, yaml.ScalarNode)
        and v.style in (None, "'", '"')
        and v_end > v_start
        and _is_scalar(value)
    ):
        quote = v.style if v.style in ("'", '"') and isinstance(value, str) else None
        rendered = _flow_scalar(value, style, quote) or (_flow_scalar(value, style) if quote else None)
        if rendered is not None:
            return v_start, v_end, rendered
    # one-line flow list -> flow list
    if (
        one_line
        and isinstance(v, yaml.SequenceNode)
        and v.flow_style
        and isinstance(value, list)
        and all(_is_scalar(x) for x in value)
    ):
        rendered = _render_value(value, style, prefer="flow")
        if not rendered.startswith("\n") and "\n" not in rendered:
            return v_start, v_end, rendered.lstrip(" ")
    block_value = (
        isinstance(v, (yaml.SequenceNode, yaml.MappingNode))
        and not v.flow_style
        and v.start_mark.line > k.start_mark.line
    )
    key_line_end = text.find("\n", entry.start)
    key_line_end = len(text) if key_line_end < 0 else key_line_end + 1
    # block list that only grows at its end: add the new items after the last one
    if (
        old_list is not None
        and isinstance(v, yaml.SequenceNode)
        and block_value
        and isinstance(value, list)
        and value[: len(old_list)] == old_list
    ):
        dash = v.start_mark.column
        extra = _dump(value[len(old_list) :], style, default_flow_style=False).rstrip("\n")
        lines = [(" " * dash + ln) if ln else ln for ln in extra.split("\n")]
        return entry.end, entry.end, "".join(ln + style.nl for ln in lines)
    key_text = text[entry.start : entry.start + (k.end_mark.index - k.start_mark.index) + k.start_mark.column]
    rendered = _render_value(value, style)
    if block_value and rendered.startswith("\n"):
        # keep the key line as written (with its comment), rewrite the lines under it
        body = _place(rendered[1:], style)
        pad = " " * style.key_column
        return key_line_end, entry.end, pad + body + style.nl
    return entry.start, entry.end, key_text + ":" + _place(rendered, style) + style.nl


def _verify(old_text: str, new_text: str, span: FrontmatterSpan | None, expected: dict[str, Any]) -> dict[str, Any]:
    """Re-parse the result with core.markdown.parse: exactly the intended mapping, the same body and fences."""

    def fail(why: str) -> FrontmatterEditError:
        return FrontmatterEditError(
            f"the edit could not be made surgically ({why}); nothing was changed. "
            "Edit the frontmatter by hand or use write",
            "frontmatter_edit_refused",
        )

    new_span = frontmatter_span(new_text)
    if new_span is None:
        raise fail("the result has no frontmatter block")
    old_body = old_text[span.body_start :] if span is not None else old_text
    if new_text[new_span.body_start :] != old_body:
        raise fail("the body would change")
    if span is not None and new_text[: new_span.yaml_start] != old_text[: span.yaml_start]:
        raise fail("the opening fence would change")
    folded = new_text.replace("\r\n", "\n").replace("\r", "\n")
    block, _ = split_frontmatter(folded)
    if block is None:
        raise fail("the result does not parse as frontmatter")
    raw, error = load_yaml(block)
    if error:
        raise fail(error)
    try:
        got, want = json_safe(raw), json_safe(expected)
    except (FrontmatterTooBig, RecursionError) as exc:
        raise fail("the frontmatter is too large or too deeply nested") from exc
    if json.dumps(got, sort_keys=True) != json.dumps(want, sort_keys=True) or list(got) != list(want):
        raise fail("the re-parsed frontmatter differs from the intended change")
    return got

"""Turn one note's bytes into index facts: frontmatter, title, tags, links, OKF fields.

Never raises on bad content: malformed YAML, non-UTF-8 bytes, YAML bombs and odd types
become a `frontmatter_error` message or a `decode_error` flag on an otherwise indexed note.
"""

from __future__ import annotations

import base64
import datetime as dt
import math
import re
from typing import Any, NamedTuple

from vaultwatch.core.markdown import mdlex, okf
from vaultwatch.core.markdown.fastyaml import FALLBACK, parse_simple
from vaultwatch.core.model import Link

MAX_FRONTMATTER_CHARS = 256 * 1024
MAX_FRONTMATTER_NODES = 20_000
MAX_DEPTH = 64
# Per-note caps on what the index keeps: a hostile note repeating "[[x]] #t" over 50 MB would
# otherwise pin ~100 MB of Link records in memory for as long as it exists.
MAX_LINKS = 10_000
MAX_TAGS = 1_000
# Title, tags and links are looked for in the first 4 M characters of a body: beyond that a note is
# data, not a note, and scanning it whole cost a 50 MB note ~0.5 GB of transient memory.
MAX_SCAN_CHARS = 4_000_000
_yaml_handler: Any = None  # python-frontmatter's YAMLHandler, made at the first note that needs it


def _full_yaml() -> Any:
    """python-frontmatter's YAML handler (it picks libyaml's CSafeLoader when present). Imported at the
    first block the fast parser leaves to it: a warm start parses no note, so its first answer need not
    wait for them."""
    global _yaml_handler
    if _yaml_handler is None:
        import frontmatter  # noqa: PLC0415

        _yaml_handler = frontmatter.YAMLHandler()
    return _yaml_handler


class NoteFacts(NamedTuple):
    """What parsing one note yields (the scanner adds path, size and times).

    A named tuple: built once per note on the scan's hot path, where a frozen dataclass's
    __init__ costs more than some of the parsing."""

    frontmatter: dict[str, Any]
    title: str
    tags: tuple[str, ...]
    links: tuple[Link, ...]
    content_chars: int
    frontmatter_error: str | None
    decode_error: bool
    okf_status: str
    okf_trust: str
    stale_date: dt.date | None
    stale_instant: dt.datetime | None
    anchors: str  # headings, then block ids as "^id", one a line (Entry.anchors)


_PLAIN = frozenset({str, int, bool, type(None)})


def _scalar(v: Any) -> Any:
    cls = v.__class__
    if cls in _PLAIN:
        return v
    if cls is dt.date or cls is dt.datetime:
        return v.isoformat()
    raise FrontmatterTooBig  # anything else: let the general walk decide


def _flat(value: dict) -> dict | None:
    """JSON-safe copy of a mapping of scalars, lists of scalars and lists of flat mappings; None if deeper."""
    try:
        out = {}
        for k, v in value.items():
            if k.__class__ is not str:
                return None
            cls = v.__class__
            if cls is list:
                out[k] = [
                    {kk: _scalar(vv) for kk, vv in x.items() if kk.__class__ is str}
                    if x.__class__ is dict and all(kk.__class__ is str for kk in x)
                    else _scalar(x)
                    for x in v
                ]
            else:
                out[k] = _scalar(v)
        return out
    except FrontmatterTooBig:
        return None


class FrontmatterTooBig(Exception):
    """Frontmatter with more nodes or deeper nesting than `json_safe` walks (MAX_FRONTMATTER_NODES,
    MAX_DEPTH); raised by json_safe, which its callers catch to keep such a note readable."""


def decode(data: bytes) -> tuple[str, bool]:
    """Decode note bytes: strip a UTF-8 BOM, replace invalid bytes (flagged), and fold CRLF/CR to LF."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text, bad = data.decode("utf-8"), False
    except UnicodeDecodeError:
        text, bad = data.decode("utf-8", errors="replace"), True
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, bad


_FENCE_END = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """Split LF text into (frontmatter YAML or None, body). The block must open on line 1 and close."""
    if not text.startswith("---"):
        return None, text
    first_end = text.find("\n")
    if first_end < 0 or text[3:first_end].strip() != "":
        return None, text
    m = _FENCE_END.search(text, first_end + 1)
    if m is None:
        return None, text
    return text[first_end + 1 : m.start()], text[m.end() + 1 :]


def json_safe(value: Any) -> Any:
    """Convert a YAML value to JSON-safe data (dates to ISO 8601), with size and depth budgets."""
    if value.__class__ is dict and len(value) < 200:
        fast = _flat(value)  # the common shape, without the general walk's per-node calls
        if fast is not None:
            return fast
    budget = [MAX_FRONTMATTER_NODES]

    def conv(v: Any, depth: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0 or depth > MAX_DEPTH:
            raise FrontmatterTooBig
        if v is None or isinstance(v, (bool, int, str)):
            return v
        if isinstance(v, float):
            return v if math.isfinite(v) else str(v)
        if isinstance(v, (dt.date, dt.datetime)):
            return v.isoformat()
        if isinstance(v, dict):
            return {k if isinstance(k, str) else str(conv(k, depth + 1)): conv(x, depth + 1) for k, x in v.items()}
        if isinstance(v, (list, tuple, set, frozenset)):
            return [conv(x, depth + 1) for x in v]
        if isinstance(v, bytes):
            return base64.b64encode(v).decode("ascii")
        return str(v)

    return conv(value, 0)


def load_yaml(block: str) -> tuple[dict[str, Any], str | None]:
    """Parse a frontmatter block to a raw (not yet JSON-safe) mapping, or ({}, error message)."""
    if len(block) > MAX_FRONTMATTER_CHARS:
        return {}, f"frontmatter is larger than {MAX_FRONTMATTER_CHARS // 1024} KiB and was not parsed"
    raw = parse_simple(block)
    if raw is FALLBACK:
        import yaml  # noqa: PLC0415  (loaded with the handler: see _full_yaml)

        try:
            raw = _full_yaml().load(block)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark
            where = f" at line {mark.line + 2}, column {mark.column + 1}" if mark is not None else ""
            return {}, f"invalid YAML frontmatter{where}: {exc.problem or exc.context}"
        except (yaml.YAMLError, RecursionError, ValueError, TypeError, OverflowError) as exc:
            return {}, f"invalid YAML frontmatter: {exc}"
    if raw is None:
        return {}, None
    if not isinstance(raw, dict):
        return {}, f"frontmatter is a {type(raw).__name__}, not a mapping of keys to values"
    return raw, None


def frontmatter_tags(value: Any) -> list[str]:
    """Tags from a frontmatter `tags` value: a list, or a comma/space separated string; '#' stripped."""
    if isinstance(value, str):
        items: list[Any] = re.split(r"[,\s]+", value)
    elif isinstance(value, list):
        items = value
    else:
        return []
    out = []
    for item in items:
        if isinstance(item, (str, int, float)) and not isinstance(item, bool):
            tag = str(item).strip().lstrip("#")
            if tag:
                out.append(tag)
    return out


def _links(toks: list[mdlex.LinkTok]) -> list[Link]:
    return [Link(t.target, t.kind, t.heading, t.alias) for t in toks if t.target or t.heading]


def body_links(body: str) -> tuple[Link, ...]:
    """Wiki links, embeds, local Markdown links and reference definitions of a note body
    (code and comments excluded: core.markdown.mdlex's rules)."""
    return tuple(_links(mdlex.links(mdlex.masked(body))))


def property_links(fm: dict[str, Any]) -> list[Link]:
    """Wiki links in frontmatter property values (`up: "[[Plan]]"`, `related: ["[[A]]", "[[B]]"]`):
    Obsidian shows them as backlinks and in the graph. Strings at any depth of lists and mappings."""
    out: list[Link] = []
    stack: list[Any] = list(reversed(fm.values()))  # popped from the end: in property order
    while stack and len(out) < MAX_LINKS:
        v = stack.pop()
        cls = v.__class__
        if cls is str:
            if "[[" in v:
                out.extend(_links(mdlex.wiki_links(v)))
        elif cls is list:
            stack.extend(reversed(v))
        elif cls is dict:
            stack.extend(reversed(list(v.values())))
    return out


def link_lines(data: bytes) -> list[tuple[Link, int]]:
    """Each link of a note's bytes with the 1-based line its target is written on, in note order:
    frontmatter first, then the body, as `parse_note` lists them.

    The index keeps no line per link (a line in every Link would cost every parse and every
    comparison of links), so a caller that shows lines reads the note again here, with the
    parser's own rules: a link in code or a comment is none, and two links on one line both
    get that line. Frontmatter links are read from the YAML text as written, so a link the
    YAML spells with escapes is not found there."""
    text, _ = decode(data)
    block, body = split_frontmatter(text)
    found: list[tuple[int, Link]] = []
    if block is not None and "[[" in block:
        at = text.find("\n") + 1
        found.extend((at + t.start, Link(t.target, t.kind, t.heading, t.alias)) for t in mdlex.wiki_links(block))
    part = body if len(body) <= MAX_SCAN_CHARS else body[:MAX_SCAN_CHARS]
    if "[" in part:
        at = len(text) - len(body)
        found.extend(
            (at + t.start, Link(t.target, t.kind, t.heading, t.alias))
            for t in mdlex.links(mdlex.masked(part))
            if t.target or t.heading
        )
    out: list[tuple[Link, int]] = []
    line, pos = 1, 0
    for offset, link in found:  # in text order: the line is counted on from the previous link's
        line += text.count("\n", pos, offset)
        pos = offset
        out.append((link, line))
    return out


def anchor_lines(scan: str, body: str | None = None) -> str:
    """A masked body's headings and block ids ("^id"), one a line: what a link's #part can name.
    Heading texts are read from `body` (the text `scan` masks) when given."""
    found = mdlex.heading_texts(scan, body)
    if "^" in scan:
        found.extend("^" + b for b in mdlex.block_ids(scan))
    return "\n".join(found) if found else ""


def parse_note(data: bytes, stem: str) -> NoteFacts:
    """Parse a note's bytes. `stem` (file name without .md) is the title of last resort."""
    text, bad = decode(data)
    block, body = split_frontmatter(text)
    raw: dict[str, Any] = {}
    error = None
    fm: dict[str, Any] = {}
    if block is not None:
        raw, error = load_yaml(block)
        try:
            fm = json_safe(raw)
        except (FrontmatterTooBig, RecursionError):
            raw, fm = {}, {}
            error = "frontmatter is too large or too deeply nested (possibly a YAML alias bomb) and was ignored"
    part = body if len(body) <= MAX_SCAN_CHARS else body[:MAX_SCAN_CHARS]
    scan = mdlex.masked(part)  # once: each pass copies
    # Obsidian's rule: a note's name is its file name; a frontmatter `title` is shown where set.
    # A heading is never the title (a section H1 halfway down is no name for the note).
    title = fm.get("title")
    title = title.strip() if isinstance(title, str) and title.strip() else stem
    # `tags` only: Obsidian 1.9 dropped the singular `tag` key (it is an ordinary property now)
    tags = frontmatter_tags(fm.get("tags"))
    if "#" in scan:
        tags = list(dict.fromkeys(tags + mdlex.tags(scan, MAX_TAGS)))
    links = _links(mdlex.links(scan)) if "[" in scan else []
    anchors = anchor_lines(scan, part)
    if block is not None and "[[" in block and fm:
        links = property_links(fm) + links
    stale_date, stale_instant = okf.parse_stale_after(raw.get("stale_after"))
    return NoteFacts(
        frontmatter=fm,
        title=title,
        tags=tuple(dict.fromkeys(t for t in tags[:MAX_TAGS] if t)),
        links=tuple(links[:MAX_LINKS]),
        content_chars=len(body),
        frontmatter_error=error,
        decode_error=bad,
        okf_status=okf.derive_status(raw.get("status")),
        okf_trust=okf.derive_trust(raw.get("verified")),
        stale_date=stale_date,
        stale_instant=stale_instant,
        anchors=anchors,
    )

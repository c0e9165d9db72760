"""How big one tool answer may be: the byte budget of a default answer and the hard cap of any.

Agents pay for every byte in context tokens, and clients have hard limits: the MCP TypeScript
SDK's stdio transport drops a message over 10 MiB and the connection with it; Claude Code caps
tool output at 25k tokens. So:

- a call that does not choose its own size (no `limit`, no `max_chars`) gets a message of at
  most the server's budget (`--max-answer-bytes`, default 64 KiB), and a cursor for the rest.
  The whole message counts: its text content (a JSON string, so escaped) and its structured
  content, since clients that hand structured content to the model pay for both;
- no answer, whatever its arguments, carries more than HARD_ANSWER_BYTES of text. The wire
  message holds that text twice at most (the text content, escaped, and structuredContent),
  so it stays under 6 MiB, well inside the 10 MiB a TS SDK client reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

DEFAULT_ANSWER_BYTES = 64 * 1024
HARD_ANSWER_BYTES = 2 * 1024 * 1024
MIN_ANSWER_BYTES = 4 * 1024
MAX_DEFAULT_ROWS = 1000  # rows a default page asks core for before the byte budget cuts it
TAIL_BYTES = 400  # room for the fields around the rows (total, next_cursor, counts...)
# room in a whole message for what is not rows: the JSON-RPC envelope, the content block, _meta, and the
# fields around the rows (total, next_cursor, counts...) in both copies
MESSAGE_TAIL_BYTES = 1024
TS_SDK_LIMIT = "10 MiB"


def encoded(data: Any) -> bytes:
    """`data` as the compact UTF-8 JSON of a text content block."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8", "surrogatepass")


def escaped_len(text: bytes) -> int:
    """The bytes of `text` (compact JSON) once it is the text content: a JSON string, its quotes and
    backslashes escaped (control characters are escapes already, so backslashes)."""
    return len(text) + text.count(b'"') + text.count(b"\\")


def row_bytes(row: Any, values: bytes | None = None) -> int:
    """One row's share of a whole message: its JSON in the structured content, and its copy in the text
    (`values`: a table row of an object's values, answers.table), escaped. Without `values` the row's own
    JSON stands for the copy, which a table row never passes: one encoding a row where that matters."""
    raw = encoded(row)
    return len(raw) + escaped_len(raw if values is None else values) + 1


def row_share(raw: bytes, row: dict[str, Any]) -> int:
    """`row_bytes(row, encoded(list(row.values())))` from `raw`, the row's own `encoded`: its values' table
    row is the same JSON less each `"key":` (and `[]` where it has `{}`), so that copy's size and its
    quotes and backslashes are counted from `raw`, not encoded again."""
    less = quotes = slashes = 0
    for key in row:
        part = _KEY_PARTS.get(key) if isinstance(key, str) else None
        if part is None:
            if not isinstance(key, str):  # JSON spells such a key its own way: encode the values after all
                return row_bytes(row, encoded(list(row.values())))
            text = encoded(key)
            part = (len(text) + 1, text.count(b'"'), text.count(b"\\"))
            if len(_KEY_PARTS) < 4096:
                _KEY_PARTS[key] = part
        less += part[0]
        quotes += part[1]
        slashes += part[2]
    values = len(raw) - less
    return len(raw) + values + raw.count(b'"') - quotes + raw.count(b"\\") - slashes + 1


_KEY_PARTS: dict[str, tuple[int, int, int]] = {}  # a row key's `"key":` bytes, its quotes and its backslashes


def message_bytes(structured: Any) -> int:
    """What an answer costs on the wire: its structured content and its text (counted as the JSON of the
    structured content, which the text's tables never pass), escaped, with MESSAGE_TAIL_BYTES."""
    raw = encoded(structured)
    return len(raw) + escaped_len(raw) + MESSAGE_TAIL_BYTES


def fit_message(sizes: Iterable[int], budget: int) -> int:
    """`fit` for rows measured by `row_bytes`, against a whole message's budget."""
    return fit(sizes, budget - MESSAGE_TAIL_BYTES + TAIL_BYTES)


def check(max_answer_bytes: int) -> int:
    """Validate a server's `--max-answer-bytes`; ValueError says the accepted range."""
    if (
        not isinstance(max_answer_bytes, int)
        or isinstance(max_answer_bytes, bool)
        or not MIN_ANSWER_BYTES <= max_answer_bytes <= HARD_ANSWER_BYTES
    ):
        raise ValueError(
            f"--max-answer-bytes must be between {MIN_ANSWER_BYTES} and {HARD_ANSWER_BYTES} "
            f"(the hard cap of one answer, well under the {TS_SDK_LIMIT} MCP clients accept)"
        )
    return max_answer_bytes


def default_rows(budget: int) -> int:
    """How many rows a default page asks for: more than the budget can hold, cut by `fit` afterwards."""
    return max(1, min(MAX_DEFAULT_ROWS, budget // 64))


def fit(sizes: Iterable[int], budget: int) -> int:
    """How many of the leading rows (their byte sizes) fit in `budget` with their separators and
    the answer's other fields; at least one when there is any, so a page always moves on. Takes
    sizes from an iterator only as far as it needs them (one past the last row that fits)."""
    room = budget - TAIL_BYTES
    used = count = 0
    for size in sizes:
        used += size + 1
        if used > room:
            return max(count, 1)
        count += 1
    return count


def over_cap(size: int, what: str) -> str:
    """The error text for an answer of `size` bytes that would pass the hard cap."""
    return (
        f"this answer would carry {size:,} bytes, over the {HARD_ANSWER_BYTES:,} bytes one answer may hold "
        f"(MCP clients drop messages over {TS_SDK_LIMIT}): {what}"
    )

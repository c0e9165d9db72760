"""Building tool results: structured content plus its text, and errors an agent can act on.

The results are the SDK's CallToolResult, made from answers.py's plain `Answer`s (which the
stdio front also writes itself before the SDK is imported); the text content's shape (rows as
tables) is described there.
"""

from __future__ import annotations

import contextvars
import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from mcp_types import CallToolResult, ResourceLink, TextContent, ToolAnnotations

from vaultwatch.core.clock import Clock
from vaultwatch.core.errors import VaultError
from vaultwatch.core.query.listing import Query, QueryResult
from vaultwatch.core.serialize import RowCache

from . import answers
from .answers import Answer, as_json, page_rows, table, tabled, text_of
from .elicit import InputNeeded

log = logging.getLogger("vaultwatch.mcp")
F = TypeVar("F", bound=Callable[..., Any])

# destructiveHint and idempotentHint are "meaningful only when readOnlyHint == false" (MCP spec,
# ToolAnnotations): a read tool leaves them out (12 x ~46 bytes of the tool list)
READ_ONLY = dict(read_only_hint=True, open_world_hint=False)
__all__ = [
    "as_json",
    "fail",
    "listing",
    "ok",
    "page_rows",
    "read_only",
    "result_of",
    "table",
    "tabled",
    "text_of",
    "vault_errors",
]


def read_only(title: str) -> ToolAnnotations:
    """Annotations of a read tool: read-only, closed world."""
    return ToolAnnotations(title=title, **READ_ONLY)


# While the server's fast path serves a call (server.VaultMCPServer.fast_path), the plain answer behind each
# result a tool makes, by the result's id: the fast path writes the answer to the wire as it is
# (answers.wire_result) instead of dumping the SDK's content models back to what they were made from.
_answers: contextvars.ContextVar[dict[int, tuple[CallToolResult, Answer]] | None] = contextvars.ContextVar(
    "vaultwatch_answers", default=None
)


def keep_answers(kept: dict[int, tuple[CallToolResult, Answer]]) -> contextvars.Token:
    """Keep the plain answer of every result made in this context in `kept` (the tools run in worker
    threads, with a copy of the context: the dict is shared); pass the token to `forget_answers`."""
    return _answers.set(kept)


def forget_answers(token: contextvars.Token) -> None:
    """Undo `keep_answers`."""
    _answers.reset(token)


def answer_of(result: Any, kept: dict[int, tuple[CallToolResult, Answer]]) -> Answer | None:
    """The plain answer `result` was made from in a `keep_answers` context, or None."""
    hit = kept.get(id(result))
    return hit[1] if hit is not None and hit[0] is result else None


def result_of(answer: Answer) -> CallToolResult:
    """The CallToolResult of a plain answer (answers.py). Where the fast path keeps the answer to write
    it itself, the result leaves out the resource_link blocks: only the fast path reads its content."""
    if answer.is_error:
        return CallToolResult(content=[TextContent(type="text", text=answer.text)], is_error=True)
    kept = _answers.get()
    result = CallToolResult(
        content=[TextContent(type="text", text=answer.text), *(links_of(answer.links) if kept is None else ())],
        structured_content=answer.structured,
        _meta=answer.meta,
    )
    if kept is not None:
        kept[id(result)] = (result, answer)
    return result


def links_of(links: Any) -> list[ResourceLink]:
    """The SDK's ResourceLink blocks of answers.note_link dicts."""
    return [ResourceLink.model_validate(link) for link in links]


ASK_FOR_LESS = answers.ASK_FOR_LESS


def ok(
    structured: dict[str, Any],
    *,
    text: str | None = None,
    meta: dict[str, Any] | None = None,
    too_big: str = ASK_FOR_LESS,
    links: Any = (),
) -> CallToolResult:
    """A successful result (answers.ok_answer: refused with an error past the hard cap)."""
    return result_of(answers.ok_answer(structured, text=text, meta=meta, too_big=too_big, links=links))


def listing(
    cache: RowCache,
    res: QueryResult,
    q: Query,
    clock: Clock,
    rest: dict[str, Any],
    *,
    budget_bytes: int,
    explicit: bool,
    frontmatter: bool = False,
    meta: dict[str, Any] | None = None,
) -> CallToolResult:
    """A listing result, `{"result": [entry_json rows...], **rest}`, from rows `cache` keeps as JSON text.

    The page is cut to `budget_bytes` of text when the caller did not choose its size
    (`explicit` False): `returned` and `next_cursor` then say where the rest starts, so every
    row stays reachable, in order, exactly once. No page passes the hard cap in either copy
    (the structured rows are the bigger one); a page the caller sized past it is an error
    naming a limit that fits.

    The text content is the rows as a table (answers.py), its values joined from cached JSON,
    never dumped again. On the socket and on stdio, the rows and the text go onto the wire as they
    are (splice.py); elsewhere the structured rows are built (answers.listing_answer).
    """
    return result_of(
        answers.listing_answer(
            cache,
            res,
            q,
            clock,
            rest,
            budget_bytes=budget_bytes,
            explicit=explicit,
            frontmatter=frontmatter,
            meta=meta,
        )
    )


def fail(message: str) -> CallToolResult:
    """A tool error (is_error) whose text is `Error: <message>`."""
    return result_of(answers.failure(message))


def vault_errors(fn: F) -> F:
    """Turn core's VaultError (and ValueError from argument parsing) into `fail(...)` results."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except InputNeeded as exc:  # the person answers through the client; it calls again (elicit.py)
            return exc.result()
        except VaultError as exc:
            return fail(exc.message)
        except ValueError as exc:
            return fail(str(exc))

    return wrapper  # type: ignore[return-value]

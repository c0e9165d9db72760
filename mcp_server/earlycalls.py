"""Tool calls the stdio front answers itself: a plain `list_documents`, `read`, search by words or
`write`, before the MCP SDK is imported and once it runs.

A client that spawns `vaultwatch serve --stdio` and asks for a listing waits for the SDK's
import (more CPU than the warm index load and the listing together) before its first page,
unless the front answers it; and a session whose calls the front answers never imports the SDK
at all, nor keeps its memory (stdiofront.py). Once the SDK runs, its per-call chain
(line validation, a dispatcher task, the runner, tracing middleware, argument validation and a hop
to a worker thread, the answer's dump) is most of a small read's time: our own code is a small
share. So the front answers these calls itself, on one worker thread of its own, in the order they
came, by the very functions the SDK's tools call (readcalls.list_documents, readcalls.read_document,
readcalls.search, writecalls.write), shaped for the wire as the server's fast path shapes them
(answers.wire_result) and serialised as the SDK serialises its replies (answers.wire_json): the
client gets the same bytes either way (tests/mcp_server/test_early_calls.py and test_front_calls.py
compare them). Each call is attributed and published on the bus as the SDK's middleware does
(Activity.call_early), so the activity panel, the audit log and the journal's caller see it alike.

The front takes a call only when nothing can tell the difference (stdiofront.py checks the
session: its initialize answered by the front, `notifications/initialized` received, no earlier
request of the client still waiting for the SDK, no client log level set). Here the call itself
must be plain: no `_meta` (a progress token), arguments the SDK's argument model would accept
exactly as they are (`plain_arguments`), no person's input going first (`Foreground`: the SDK's
path waits for it), and light (a read or write the lane would weigh as heavy runs in the lane,
through the SDK). A search only by words (mode keyword, or no mode while no query by meaning has
started the note vectors: a query by meaning embeds it, slower than a read); one that comes before
the full-text index is built waits for the build as the SDK's path waits for a call without a
progress token, on a thread of its own, so that the calls behind it are answered meanwhile. A write
goes through the same Writer, journal and approval gate as the SDK's; the gate decides on the
change's effects, and one that needs the person (who is asked through the client, or waited for)
is handed to the SDK before anything is written (core.edit.hooks.HandOver): the front's worker
neither waits nor asks. Anything else goes to the SDK, which says what is wrong. A
`notifications/cancelled` for a call taken here drops its answer (`cancel`), as the SDK drops a
cancelled request's.

A client that walks a listing through its cursor asks for the next page as soon as it has read one, and
waits for it. So once a page with a `next_cursor` is answered and nothing else waits, the worker makes
the next page while the client reads: its rows first (readcalls.warm_next_page: a chunk at a time,
stopping when a call comes; the row cache checks each row against the index again when a page uses it),
then, if still nothing waits, the whole answer (readcalls.listing_ahead). That answer is served only to
the call with exactly those arguments, and only while it is what the call would get: the same index
snapshot, the same index freshness and the same day, no note of the page past the instant it goes
stale at, and no filter (a filter may read the clock). The call is attributed and published when it
comes, with what making the answer recorded; anything else (another call first, a changed vault)
makes the answer anew, as ever.

`VAULTWATCH_STDIO_FRONT_CALLS=0` leaves every tool call to the SDK (for A/B
figures and tests).
"""

from __future__ import annotations

import collections
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from vaultwatch.core import settings
from vaultwatch.core.edit.hooks import HandOver
from vaultwatch.core.errors import VaultError
from vaultwatch.core.vault import Vault

from . import answers, handshake, readcalls, splice
from .activity import Activity, CallRecord, current_call

if TYPE_CHECKING:
    from vaultwatch.core.edit.writes import Writer

log = logging.getLogger("vaultwatch.stdio")

ENV_SWITCH = "VAULTWATCH_STDIO_FRONT_CALLS"  # "0": every tool call goes to the SDK (A/B figures, tests)
MAX_CURSOR_CHARS = 4096  # as tools.list_documents' Field(max_length=...)
MAX_LIMIT = 100_000  # as its Field(le=...)
MAX_PATH_CHARS = 1024  # as tools.read's Field(max_length=...) of path and section
MAX_QUERY_CHARS = 1024  # as tools.search's Field(max_length=...) of query
MAX_SEARCH_LIMIT = 1000  # as its Field(le=...) of limit
MAX_IF_MATCH_CHARS = 128  # as write_tools.write's Field(max_length=...) of if_match
MAX_QUEUED = 1024  # calls waiting for the front's worker; more go to the SDK (a client's burst stays bounded)
MAX_ASIDE = 8  # searches waiting for the first full-text build on threads of their own (`_serve`)
_STRINGS = frozenset({"folder", "pattern", "cursor"})
_BOOLS = frozenset({"include_attachments", "include_frontmatter", "wait_for_pending_writes"})


def enabled() -> bool:
    """Whether the stdio front answers the tool calls it can (module doc)."""
    return bool(settings.env(ENV_SWITCH))


def _json_in_string(value: str) -> bool:
    """Whether the SDK would replace this string argument by the JSON it holds (its pre_parse_json:
    a string for a field that is not plain `str` is parsed, and kept unless it held a str, int or float)."""
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return False
    return not isinstance(parsed, (str, int, float))


def plain_arguments(arguments: Any) -> dict[str, Any] | None:
    """list_documents' arguments when the SDK's validation would pass them on unchanged; else None
    (the call is left to the SDK: it coerces or refuses them, and says why)."""
    if arguments is None:
        return {}
    if not isinstance(arguments, dict):
        return None
    for key, value in arguments.items():
        if key in _BOOLS:
            if not isinstance(value, bool):
                return None
        elif not _plain_scope_argument(key, value, MAX_LIMIT):
            return None  # a value the SDK would change, or an unknown argument: the SDK names the ones it takes
    return dict(arguments)


def _plain_scope_argument(key: str, value: Any, most: int) -> bool:
    """Whether one of the scope and page arguments list_documents and search share (folder, pattern,
    cursor, limit up to `most`, filters) passes the SDK's validation unchanged; False for any other key."""
    if key in _STRINGS:
        return value is None or (
            type(value) is str
            and not _json_in_string(value)
            and not (key == "cursor" and len(value) > MAX_CURSOR_CHARS)
        )
    if key == "limit":
        return value is None or (type(value) is int and 1 <= value <= most)
    if key == "filters":
        return _plain_filters(value)
    return False


def _plain_filters(value: Any) -> bool:
    """Whether a `filters` argument passes the SDK's validation unchanged (None, or a dict of str keys to
    str, bool or int values: a float the front leaves to the SDK)."""
    return value is None or (
        isinstance(value, dict) and all(isinstance(k, str) and type(v) in (str, bool, int) for k, v in value.items())
    )


def plain_search_arguments(arguments: Any) -> dict[str, Any] | None:
    """search's arguments when the SDK's validation would pass them on unchanged; else None (as
    `plain_arguments`). `query` is a plain `str` field (never parsed as JSON); folder, pattern and cursor
    are not; `mode` must be one of its literals."""
    if not isinstance(arguments, dict):
        return None
    query = arguments.get("query")
    if type(query) is not str or not 1 <= len(query) <= MAX_QUERY_CHARS:
        return None
    for key, value in arguments.items():
        if key == "query":
            continue
        if key == "mode":
            if value not in (None, "keyword", "hybrid", "semantic"):
                return None
        elif not _plain_scope_argument(key, value, MAX_SEARCH_LIMIT):
            return None
    return dict(arguments)


def plain_read_arguments(arguments: Any) -> dict[str, Any] | None:
    """read's arguments when the SDK's validation would pass them on unchanged; else None (as
    `plain_arguments`). `path` is a plain `str` field (never parsed as JSON); `section` is not."""
    if not isinstance(arguments, dict):
        return None
    path = arguments.get("path")
    if type(path) is not str or not 1 <= len(path) <= MAX_PATH_CHARS:
        return None
    from vaultwatch.core.disk.reader import MAX_CHARS_LIMIT

    for key, value in arguments.items():
        if key == "path":
            continue
        if key == "section":
            if value is not None and (type(value) is not str or len(value) > MAX_PATH_CHARS or _json_in_string(value)):
                return None
        elif key == "lines":
            if value is not None and (
                type(value) is not list or len(value) != 2 or any(type(v) is not int for v in value)
            ):
                return None
        elif key == "frontmatter_only":
            if type(value) is not bool:
                return None
        elif key == "include_attachment_content":
            if value is not None and type(value) is not bool:
                return None
        elif key == "offset":
            if type(value) is not int or value < 0:
                return None
        elif key == "max_chars":
            if value is not None and (type(value) is not int or not 1 <= value <= MAX_CHARS_LIMIT):
                return None
        else:
            return None
    return dict(arguments)


def plain_write_arguments(arguments: Any) -> dict[str, Any] | None:
    """write's arguments when the SDK's validation would pass them on unchanged; else None (as
    `plain_arguments`). `path` and `content` are plain `str` fields (never parsed as JSON); `if_match`
    is not."""
    if not isinstance(arguments, dict):
        return None
    path, content = arguments.get("path"), arguments.get("content")
    if type(path) is not str or not 1 <= len(path) <= MAX_PATH_CHARS or type(content) is not str:
        return None
    for key, value in arguments.items():
        if key in ("path", "content"):
            continue
        if key == "if_match":
            if value is not None and (
                type(value) is not str or len(value) > MAX_IF_MATCH_CHARS or _json_in_string(value)
            ):
                return None
        elif key in ("overwrite", "create_only"):
            if type(value) is not bool:
                return None
        else:
            return None
    return dict(arguments)


class _Call:
    """One tools/call taken by the front, waiting for (or on) its worker."""

    __slots__ = ("agent", "arguments", "client_name", "give_back", "id_text", "modern", "send", "tool")

    def __init__(
        self,
        tool: str,
        arguments: dict[str, Any],
        id_text: str,
        agent: str,
        send: Callable[[str, bytes], None],
        give_back: Callable[[], None],
        client_name: Any = None,
        modern: bool = False,
    ) -> None:
        self.tool, self.arguments, self.id_text, self.agent = tool, arguments, id_text, agent
        self.send, self.give_back, self.client_name, self.modern = send, give_back, client_name, modern


def _key(arguments: Mapping[str, Any], modern: bool) -> str:
    return ("modern:" if modern else "") + json.dumps(arguments, sort_keys=True, separators=(",", ":"))


def _shaped(wire: dict[str, Any], modern: bool) -> dict[str, Any]:
    """The wire result as the call's protocol era gets it (a 2026-07-28-era request: resultType and the
    server's name under _meta, as server.VaultMCPServer._wire adds them)."""
    return answers.modern_result(wire, handshake.server_info()) if modern else wire


def _served(record: CallRecord, wire: dict[str, Any]) -> dict[str, Any]:
    """A result made ahead, served by the call now running: what it recorded becomes the call's."""
    current_call().take(record)
    return wire


def _wire_bytes(wire: dict[str, Any], parked: dict[bytes, tuple[bytes, ...]]) -> bytes:
    """The result's JSON as mcp_types.JSONRPCResponse.model_dump_json writes its `result: dict[str, Any]`, the
    parked JSON filled in (a lone surrogate raises: the SDK cannot write it either)."""
    data = answers.wire_json(wire).encode("utf-8")
    return splice.fill(data, parked) if parked else data


def _next_page(arguments: dict[str, Any], wire: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    """The arguments and cursor of the listing page after the one `wire` answers, if there is one."""
    structured = wire.get("structuredContent")
    cursor = structured.get("next_cursor") if isinstance(structured, dict) and not wire.get("isError") else None
    if not isinstance(cursor, str):
        return None
    return {k: v for k, v in arguments.items() if k != "cursor"}, cursor


class EarlyCalls:
    """The calls the stdio front answers itself (see module doc)."""

    def __init__(
        self,
        vault: Vault,
        activity: Activity,
        *,
        max_answer_bytes: int,
        tool_prefix: str = "",
        writes: bool = False,
    ) -> None:
        """`writes`: the server has a `write` tool (it is not read-only); its plain calls are answered here."""
        self.vault = vault
        self.activity = activity
        self.max_answer_bytes = max_answer_bytes
        self.tool = tool_prefix + "list_documents"
        self.read_tool = tool_prefix + "read"
        self.search_tool = tool_prefix + "search"
        self.write_tool = tool_prefix + "write" if writes else None
        self._writer: Writer | None = None  # made by the first write (a listing's start never imports it)
        self.row_cache = readcalls.row_cache(vault)
        self._lock = threading.Lock()
        self._work = threading.Condition(self._lock)
        self._queue: collections.deque[_Call] = collections.deque()
        self._busy = 0  # calls taken and not yet answered (or given back)
        self._waiting: dict[str, int] = {}  # id -> calls of that id taken and not yet answered
        self._cancelled: set[str] = set()  # ids the client cancelled while taken here
        self._worker: threading.Thread | None = None
        self._aside = threading.BoundedSemaphore(MAX_ASIDE)  # searches waiting for the build beside the worker
        self.idle = threading.Event()  # no call taken and unanswered
        self.idle.set()
        self._idle_since = time.monotonic()
        self.answered = 0
        self.taken = 0
        self.dropped = 0  # answers not sent: the client cancelled the call
        # the listing page a client walking the cursor asks for next: (its call's arguments, the cursor,
        # whether the call was a 2026-07-28-era request); its rows are made while the worker has nothing
        # to answer (`_serve`)
        self._ahead: tuple[dict[str, Any], str, bool] | None = None
        # that page's whole answer once made: (its arguments' key, wire result, bytes, activity record, the
        # check that it is still the answer); only the worker sets and takes it
        self._made: tuple[str, dict[str, Any], bytes, CallRecord, Callable[[], bool]] | None = None
        self.warmed = 0  # rows of next pages looked at ahead of their call (diagnostics and tests)
        self.made_ahead = 0  # answers made ahead (diagnostics and tests)
        self.served_ahead = 0  # of those, served (diagnostics and tests)

    def take(
        self,
        params: Any,
        id_text: str,
        agent: str,
        send: Callable[[str, bytes], None],
        give_back: Callable[[], None],
        client_name: Any = None,
        modern: bool = False,
    ) -> bool:
        """Take a tools/call with these params to answer it on the worker (True), or leave it to the SDK
        (False). `send(id_text, result_json)` writes the answer; `give_back()` hands the call to the SDK after
        all, when its answer cannot be written as the SDK would (a value JSON cannot carry), or a write
        needs the person (core.edit.hooks.HandOver). `client_name`: the clientInfo name of the session's
        initialize (or of a 2026-07-28-era request's `_meta`), which names a write's author in the journal
        (writecalls.actor). `modern`: the request is a 2026-07-28-era one (its `_meta`, which the
        front checked, already taken off `params`): its answer is shaped for that era, and its agent
        attributed as the SDK attributes a sessionless client (activity.Activity.call_early)."""
        if not isinstance(params, Mapping) or set(params) - {"name", "arguments"}:
            return False
        name = params.get("name")
        if type(name) is not str:
            return False  # (never None: a read-only server's write_tool is None)
        if name == self.tool:
            arguments = plain_arguments(params.get("arguments"))
        elif name == self.read_tool:
            arguments = plain_read_arguments(params.get("arguments"))
            if arguments is not None and self._heavy(arguments, name):
                return False  # the lane runs it, one heavy call at a time (lane.py)
        elif name == self.search_tool:
            arguments = plain_search_arguments(params.get("arguments"))
            if arguments is not None and not self._by_words(arguments.get("mode")):
                return False
        elif name == self.write_tool:
            arguments = plain_write_arguments(params.get("arguments"))
            if arguments is not None and self._heavy(arguments, name):
                return False  # the lane runs it, one heavy call at a time (lane.py)
        else:
            return False
        foreground = self.activity.foreground
        if arguments is None or foreground is not None and foreground.remaining():
            return False  # the SDK's path waits for the person's turn (activity.py)
        with self._lock:
            if len(self._queue) >= MAX_QUEUED:
                return False
            self.taken += 1
            self._busy += 1
            self._waiting[id_text] = self._waiting.get(id_text, 0) + 1
            self.idle.clear()
            self._queue.append(_Call(name, arguments, id_text, agent, send, give_back, client_name, modern))
            if self._worker is None:  # named apart from the index's vaultwatch-* threads: it answers calls
                self._worker = threading.Thread(target=self._serve, name="stdio-front-calls", daemon=True)
                self._worker.start()
            self._work.notify()
        return True

    def _write_path(self) -> Writer:
        """The write tool's write path (called on the worker alone: the one thread that writes here)."""
        if self._writer is None:
            from vaultwatch.core.edit.writes import Writer  # noqa: PLC0415  (a write's, never a first listing's)

            self._writer = Writer(self.vault)  # every Writer in the process shares the note locks
        return self._writer

    def _heavy(self, arguments: dict[str, Any], tool: str) -> bool:
        from .lane import HEAVY_BYTES, weight  # noqa: PLC0415  (a read's or write's, never a first listing's)

        return weight(self.vault, arguments, tool) >= HEAVY_BYTES

    def _by_words(self, mode: Any) -> bool:
        """Whether a search in `mode` runs on the full-text index alone (module doc)."""
        if mode not in (None, "keyword"):
            return False
        return not (mode is None and self.vault.vectors_started())  # hybrid once the vectors are ready

    def quiet(self, seconds: float) -> bool:
        """Whether no call has been taken or answered here for `seconds` (the client paused)."""
        with self._lock:
            return not self._busy and time.monotonic() - self._idle_since >= seconds

    def cancel(self, id_text: str) -> bool:
        """The client cancelled request `id_text`: True when it is a call taken here (its answer is
        dropped; one not yet begun is not run), False when the SDK has it, or nobody."""
        with self._lock:
            if id_text not in self._waiting:
                return False
            self._cancelled.add(id_text)
            return True

    def _serve(self) -> None:
        """The worker: the taken calls, one at a time, in the order they came. A search that would wait
        for the first full-text build is answered on a thread of its own, as the SDK's path answers
        calls side by side: the calls after it need not wait for the build. At most MAX_ASIDE wait so
        (a flood of searches then waits on the worker, in order, holding the calls behind it)."""
        while True:
            with self._lock:
                while not self._queue and self._ahead is None:
                    self._work.wait()
                if self._queue:
                    call, ahead = self._queue.popleft(), None
                else:  # nothing to answer: the next page of a listing walked through its cursor
                    call, ahead, self._ahead = None, self._ahead, None
            if ahead is not None:
                self._warm(*ahead)
                continue
            assert call is not None
            if call.tool == self.search_tool and not self.vault.search_ready() and self._aside.acquire(blocking=False):
                threading.Thread(
                    target=self._finish_aside, args=(call,), name="stdio-front-search", daemon=True
                ).start()
            else:
                self._finish(call)

    def _warm(self, arguments: dict[str, Any], cursor: str, modern: bool) -> None:
        """Make the next listing page ahead of its call: its rows, until a call comes, then the whole answer
        if none came (module doc)."""
        queue = self._queue
        try:
            self.warmed += readcalls.warm_next_page(
                self.vault, self.row_cache, self.max_answer_bytes, cursor, lambda: bool(queue), **arguments
            )
            if not queue:
                self._make_ahead({**arguments, "cursor": cursor}, modern)
        except Exception:  # only kept for later: the call itself makes its answer, or says what is wrong
            log.debug("making the next listing page ahead failed", exc_info=True)

    def _make_ahead(self, arguments: dict[str, Any], modern: bool) -> None:
        """The whole answer to a list_documents call with `arguments`, made now and kept with the check that
        says whether it is still that call's answer (readcalls.listing_ahead)."""
        parked: dict[bytes, tuple[bytes, ...]] = {}
        made = readcalls.listing_ahead(self.vault, arguments, lambda: self._run(self.tool, arguments, None, parked))
        if made is None or made[0].get("isError"):
            return
        wire, record, still = made
        wire = _shaped(wire, modern)
        self._made = (_key(arguments, modern), wire, _wire_bytes(wire, parked), record, still)
        self.made_ahead += 1

    def _made_for(self, call: _Call) -> tuple[dict[str, Any], bytes, CallRecord] | None:
        """The answer made ahead for `call`, if it is one and still its answer (it is used once)."""
        if call.tool != self.tool or self._made is None:
            return None
        made, self._made = self._made, None
        key, wire, data, record, still = made
        if key != _key(call.arguments, call.modern) or not still():
            return None
        return wire, data, record

    def _finish_aside(self, call: _Call) -> None:
        try:
            self._finish(call)
        finally:
            self._aside.release()

    def _finish(self, call: _Call) -> None:
        """Answer one taken call (unless the client cancelled it), then count it done."""
        try:
            with self._lock:
                skip = call.id_text in self._cancelled
                self.dropped += skip  # (counted under the lock: searches waiting aside answer on their threads)
            if not skip:
                self._answer(call)
        finally:
            with self._lock:
                self._busy -= 1
                left = self._waiting.get(call.id_text, 1) - 1
                if left:
                    self._waiting[call.id_text] = left
                else:
                    self._waiting.pop(call.id_text, None)
                    self._cancelled.discard(call.id_text)
                if not self._busy:
                    self._idle_since = time.monotonic()
                    self.idle.set()

    def _run(
        self, tool: str, arguments: dict[str, Any], client_name: Any, parked: dict[bytes, tuple[bytes, ...]]
    ) -> dict[str, Any]:
        """The call's answer in wire form, made as the SDK's tool makes it (tools.py; results.vault_errors
        turns core's errors into tool errors; server.VaultMCPServer.call_tool an unexpected one). A listing's
        cached JSON is parked in `parked` (splice.py), as the SDK's fast path parks it."""
        try:
            if tool == self.tool:
                token = splice.enable(parked)
                try:
                    answer = readcalls.list_documents(
                        self.vault, self.row_cache, self.max_answer_bytes, answers.listing_answer, **arguments
                    )
                finally:
                    splice.reset(token)
            elif tool == self.search_tool:
                answer = readcalls.search(self.vault, self.max_answer_bytes, **arguments)
            elif tool == self.write_tool:
                from . import writecalls  # noqa: PLC0415  (imports the write path: a write's, never a first listing's)

                answer = writecalls.write(self._write_path(), actor=writecalls.actor(client_name), **arguments)
            else:
                out = readcalls.read_document(self.vault, self.max_answer_bytes, **arguments)
                answer = answers.ok_answer(out, meta=readcalls.untrusted({}, readcalls.READ_TEXT))
        except HandOver:
            raise  # nothing was written: the SDK runs the call again (`_answer`)
        except VaultError as exc:
            answer = answers.failure(exc.message)
        except ValueError as exc:
            answer = answers.failure(str(exc))
        except Exception as exc:
            log.error("tool %s failed unexpectedly", tool, exc_info=exc)
            answer = answers.failure(
                f"internal error in {tool} ({type(exc).__name__}); the vault was not changed by "
                "this call; try again, and report it if it repeats"
            )
        return answers.wire_result(answer)

    def _answer(self, call: _Call) -> None:
        try:
            made = self._made_for(call)
            if made is not None:  # made ahead, and still what the call would get (`_make_ahead`)
                wire, data, record = made
                self.activity.call_early(
                    call.agent,
                    call.tool,
                    call.arguments,
                    lambda: _served(record, wire),
                    sessionless=call.client_name if call.modern else None,
                )
                self.served_ahead += 1
            else:
                parked: dict[bytes, tuple[bytes, ...]] = {}
                try:
                    wire = self.activity.call_early(
                        call.agent,
                        call.tool,
                        call.arguments,
                        lambda: self._run(call.tool, call.arguments, call.client_name, parked),
                        sessionless=call.client_name if call.modern else None,
                    )
                except HandOver:  # a write that needs the person: the SDK's path waits for them, or asks them
                    call.give_back()
                    return
                wire = _shaped(wire, call.modern)
                try:
                    data = _wire_bytes(wire, parked)
                except (ValueError, UnicodeError) as exc:  # PydanticSerializationError is a ValueError
                    log.warning("an early %s answer cannot be written (%s); the SDK answers it", call.tool, exc)
                    call.give_back()
                    return
            with self._lock:
                if call.id_text in self._cancelled:  # as the SDK: a cancelled request is never answered
                    self.dropped += 1
                    return
            call.send(call.id_text, data)
            with self._lock:
                self.answered += 1
                if call.tool == self.tool:
                    page = _next_page(call.arguments, wire)
                    self._ahead = None if page is None else (*page, call.modern)
        except Exception:  # never the process: the SDK answers the call instead
            log.exception("answering %s in the stdio front failed; the SDK answers it", call.tool)
            call.give_back()

    def ended(self) -> None:
        """The client's session ended: its agent is reported gone (as the SDK's session end does; a
        session whose every request the front answered never told the SDK who it was)."""
        if self.activity.session is not None:
            self.activity.forget(self.activity.session)

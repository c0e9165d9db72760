"""Every MCP call becomes an `AgentAccess` event on the core bus, attributed to its agent.

`Activity.middleware` wraps each inbound request. For `tools/call` it first lets a person's
input in the TUI go first (core.live.foreground: a bounded wait), then times the call,
gives the tool a `CallRecord` (through a context variable, which also reaches the worker
thread a sync tool runs in) to note the paths it listed or read and how many results it
returned, and publishes the event when the call ends, error or not. The agent is named
from the client's handshake (`clientInfo` name/version; on 2026-07-28 connections, the
same fields from each request's `_meta`) and the session from the transport, or from the
bridge that relays it (one agent run keeps one session across the servers the bridge follows). The calls the
stdio front answers before the SDK runs (earlycalls.py) come through `call_early`, published
the same way, in the session the SDK's calls get later (`Activity(session=...)`).

`AuditLog` appends every AgentAccess event on a bus to a file as JSON lines.
"""

from __future__ import annotations

import contextvars
import datetime as dt
import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vaultwatch.core.edit.hooks import HandOver
from vaultwatch.core.events import AgentAccess, AgentConnected, Event, EventBus
from vaultwatch.core.live.foreground import Foreground
from vaultwatch.core.review.agentrules import agent_label
from vaultwatch.core.review.idlesessions import IdleSessions
from vaultwatch.core.review.journal import Caller, calling

from . import elicit, sdk
from .wire import SESSION_HEADER

MODERN_IDLE_SECONDS = 300.0  # a 2026-07-28 client has no session: it counts as connected while active
MAX_ARG_CHARS = 400
MAX_SUMMARY_CHARS = 160
AUDIT_MAX_PATHS = 200
FOREGROUND_MAX_WAIT = 0.25  # seconds a tool call may wait while a person's input is answered


@dataclass
class CallRecord:
    """What a tool tells the activity layer about the call it is serving."""

    paths: list[str] = field(default_factory=list)
    result_count: int | None = None
    write: bool = False
    diff_summary: str | None = None

    def listed(self, paths: Iterable[str], count: int | None = None) -> None:
        """Record the paths a listing returned (and its result count, default their number)."""
        self.paths.extend(paths)
        self.result_count = len(self.paths) if count is None else count

    def take(self, other: CallRecord) -> None:
        """Record what `other` recorded: the call serves a result made ahead of it (`recorded`)."""
        self.paths.extend(other.paths)
        if other.result_count is not None:
            self.result_count = other.result_count
        self.write = self.write or other.write
        self.diff_summary = other.diff_summary or self.diff_summary


_current: contextvars.ContextVar[CallRecord | None] = contextvars.ContextVar("vaultwatch_call", default=None)


def current_call() -> CallRecord:
    """The record of the tool call being served (a throwaway one outside a call)."""
    return _current.get() or CallRecord()


def recorded(run: Callable[[], Any]) -> tuple[Any, CallRecord]:
    """run() outside any call, with a record of its own: what it tells the activity layer is kept for the
    call that serves its result later (`CallRecord.take`), which is attributed and published then."""
    record = CallRecord()
    token = _current.set(record)
    try:
        return run(), record
    finally:
        _current.reset(token)


def _clip(value: Any, depth: int = 0) -> Any:
    """A JSON-safe, size-bounded copy of caller arguments for events and the audit log."""
    if isinstance(value, str):
        return value if len(value) <= MAX_ARG_CHARS else value[:MAX_ARG_CHARS] + f"…(+{len(value) - MAX_ARG_CHARS})"
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if depth >= 4:
        return "…"
    if isinstance(value, Mapping):
        items = list(value.items())
        out = {str(k)[:80]: _clip(v, depth + 1) for k, v in items[:30]}
        if len(items) > 30:
            out["…"] = f"{len(items) - 30} more keys"
        return out
    if isinstance(value, (list, tuple)):
        out_list = [_clip(v, depth + 1) for v in value[:30]]
        if len(value) > 30:
            out_list.append(f"…{len(value) - 30} more")
        return out_list
    return str(value)[:MAX_ARG_CHARS]


def summarize(arguments: Mapping[str, Any]) -> str:
    """One line for the activity panel: `key=value` pairs, long values shortened."""
    parts = []
    for key, value in arguments.items():
        if value is None or value is False or value == {} or value == []:
            continue
        if isinstance(value, Mapping):
            text = "{" + ", ".join(f"{k}: {v}" for k, v in list(value.items())[:6]) + "}"
        elif isinstance(value, str):
            text = repr(value)
        else:
            text = json.dumps(value, ensure_ascii=False, default=str)
        text = text.replace("\n", " ")
        if len(text) > 60:
            text = text[:57] + "…"
        parts.append(f"{key}={text}")
    line = " ".join(parts)
    return line if len(line) <= MAX_SUMMARY_CHARS else line[: MAX_SUMMARY_CHARS - 1] + "…"


_modern_versions: frozenset[str] | None = None  # looked up once, at the first request (every call asks)


def _modern(version: str | None) -> bool:
    """Whether a request's protocol version is a 2026-07-28-era one (the SDK is imported by then:
    this module is not, so the stdio front can use it before the SDK is)."""
    global _modern_versions
    if _modern_versions is None:
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        _modern_versions = frozenset(MODERN_PROTOCOL_VERSIONS)
    return version in _modern_versions


def _error_text(result: Any) -> str | None:
    # a plain dict first: the fast path's wire result, every read's (the ABC check costs more)
    if not (type(result) is dict or isinstance(result, Mapping)) or not result.get("isError"):
        return None
    for block in result.get("content") or ():
        if isinstance(block, Mapping) and block.get("type") == "text":
            return str(block.get("text", ""))[:500]
    return "tool error"


@dataclass
class _Agent:
    agent: str
    modern: bool
    last_seen: float
    hooked: bool = False  # its session's end reports it gone (registered on the session's exit stack)


class Activity:
    """Attributes MCP calls to agents and publishes them on `bus` (see module doc)."""

    def __init__(
        self,
        bus: EventBus,
        *,
        clock: Callable[[], float] = time.time,
        foreground: Foreground | None = None,
        session: str | None = None,
        sessions: IdleSessions | None = None,
    ) -> None:
        self.bus = bus
        # the working sessions of agents that bring none (stateless HTTP without the bridge)
        self.sessions = sessions or IdleSessions()
        # a stdio server's one session, named before the SDK runs: the stdio front's early calls and the SDK's share it
        self.session = session
        self._clock = clock
        self.foreground = foreground
        self.tool_prefix = ""  # what starts every tool's name (`--tool-prefix`; server.add_prefix sets it)
        self._lock = threading.Lock()
        self._agents: dict[str, _Agent] = {}

    def agents(self) -> list[tuple[str, str]]:
        """Connected (agent, session) pairs, in order of connection."""
        self.prune()
        with self._lock:
            return [(a.agent, session) for session, a in self._agents.items()]

    def prune(self) -> None:
        """Report 2026-07-28 clients idle for MODERN_IDLE_SECONDS as gone (they never say goodbye)."""
        cutoff = self._clock() - MODERN_IDLE_SECONDS
        with self._lock:
            gone = [(s, a) for s, a in self._agents.items() if a.modern and a.last_seen < cutoff]
            for s, _ in gone:
                del self._agents[s]
        for s, a in gone:
            self.bus.publish(AgentConnected(a.agent, s, False))

    def forget(self, session: str) -> None:
        """Report the agent of `session` as gone (its session ended)."""
        with self._lock:
            gone = self._agents.pop(session, None)
        if gone is not None:
            self.bus.publish(AgentConnected(gone.agent, session, False))

    def disconnect_all(self) -> None:
        """Report every agent as gone (the server is stopping)."""
        with self._lock:
            gone, self._agents = self._agents, {}
        for session, a in gone.items():
            self.bus.publish(AgentConnected(a.agent, session, False))

    def _identify(self, ctx: Any) -> tuple[str, str] | None:
        """(agent, session) of a request, registering the agent on first sight; None before the handshake."""
        session_obj = ctx.session
        params = session_obj.client_params
        if params is None:
            return None
        info = params.client_info
        agent = agent_label(info.name, info.version)
        conn = sdk.connection(session_obj)  # the SDK exposes no public handle on it
        modern = _modern(ctx.protocol_version)
        request = ctx.request
        header = request.headers.get(SESSION_HEADER) if request is not None and hasattr(request, "headers") else None
        if modern:
            session = header[:80] if header else self.sessions.session_for(info.name)
        elif header and conn is not None:
            # a bridge names its client's session: the same across the servers it follows (the TUI
            # opening or quitting), where each new server gives the replayed handshake a new
            # transport session; taken on the same trust as a 2026-07-28 client's header above
            session = header[:80]
        elif conn is not None and conn.session_id:
            session = conn.session_id
        elif conn is not None:
            session = conn.state.setdefault("vaultwatch.session", self.session or uuid.uuid4().hex)
        else:
            session = header or "unknown"
        hook = self._register(agent, session, modern) and not modern and conn is not None
        if hook:
            conn.exit_stack.callback(self.forget, session)
        return agent, session

    def _register(self, agent: str, session: str, modern: bool, *, hook: bool = True) -> bool:
        """Note the agent of `session` as seen now (AgentConnected on first sight); True when its
        session's end is still to be hooked (and `hook` says the caller hooks it now)."""
        now = self._clock()
        with self._lock:
            known = self._agents.get(session)
            fresh = known is None
            if known is None:
                known = self._agents[session] = _Agent(agent, modern, now)
            known.last_seen = now
            unhooked = not known.hooked
            known.hooked = known.hooked or hook
        if fresh:
            self.bus.publish(AgentConnected(agent, session, True))
        return unhooked and hook

    def call_early(
        self,
        agent: str,
        tool: str,
        arguments: Mapping[str, Any],
        run: Callable[[], Any],
        *,
        sessionless: str | None = None,
    ) -> Any:
        """A tools/call the stdio front answers before the SDK runs (earlycalls.py): attributed and
        published as `middleware` does for the SDK's calls; `run()` gives the wire result. `sessionless`:
        the clientInfo name of a 2026-07-28-era request, which has no session: its working session is
        the name's, as `_identify` gives the SDK's calls of such a client."""
        if sessionless is not None:
            who = (agent, self.sessions.session_for(sessionless))
            self._register(*who, True, hook=False)
        else:
            who = (agent, self.session or "stdio")
            self._register(*who, False, hook=False)  # the SDK's first request hooks the session's end
        return self._attributed(who, tool, arguments, run, cannot_wait=True)

    def _attributed(
        self,
        who: tuple[str, str],
        tool: str,
        arguments: Mapping[str, Any],
        run: Callable[[], Any],
        *,
        cannot_wait: bool = False,
    ) -> Any:
        """run() (sync) as the call of `who` to `tool`: CallRecord, journal caller, one AgentAccess event
        (none for a call handed over to another path: that path publishes it). `cannot_wait`: a change
        that needs the person is handed over (core.edit.hooks.Caller)."""
        record = CallRecord()
        token = _current.set(record)
        started = time.perf_counter()
        asked = self._clock()
        error: str | None = None
        caller = Caller(who[0], who[1], tool, _clip(dict(arguments)), cannot_wait=cannot_wait)
        handed = False
        try:
            with calling(caller):
                result = run()
            error = _error_text(result)
            return result
        except HandOver:
            handed = True
            raise
        except BaseException as exc:
            error = str(exc or type(exc).__name__)[:500]
            raise
        finally:
            _current.reset(token)
            if not handed:
                self._publish(who, tool, arguments, record, (started, asked), error, caller)

    def _publish(
        self,
        who: tuple[str, str],
        tool: str,
        arguments: Mapping[str, Any],
        record: CallRecord,
        begun: tuple[float, float],
        error: str | None,
        caller: Caller,
    ) -> None:
        """`begun`: the call's start, by the performance counter (its latency) and the clock (the
        activity panel's time: when the agent asked, a wait for the person not counted in it)."""
        started, asked = begun
        self.bus.publish(
            AgentAccess(
                agent=who[0],
                session=who[1],
                tool=tool,
                summary=summarize(arguments),
                arguments=_clip(dict(arguments)),
                paths=tuple(record.paths),
                result_count=record.result_count if error is None else None,
                duration_ms=round((time.perf_counter() - started) * 1000, 3),
                error=error,
                at=self._clock(),
                write=record.write,
                diff_summary=record.diff_summary,
                change_ids=tuple(caller.change_ids),
                asked_at=asked,
            )
        )

    async def middleware(self, ctx: Any, call_next: Callable[[Any], Any]) -> Any:
        """Server middleware: publish one AgentAccess event per tools/call."""
        if ctx.method != "tools/call":
            result = await call_next(ctx)
            if ctx.method != "initialize":
                self._identify(ctx)
            return result
        who = self._identify(ctx) or ("unknown agent", "unknown")
        params = ctx.params if isinstance(ctx.params, Mapping) else {}
        tool = str(params.get("name", "?"))[:100]
        raw_args = params.get("arguments")
        arguments = raw_args if isinstance(raw_args, Mapping) else {}
        record = CallRecord()
        token = _current.set(record)
        started = time.perf_counter()  # the latency shown includes any wait for the person
        asked = self._clock()
        error: str | None = None
        caller = Caller(who[0], who[1], tool, _clip(dict(arguments)))  # names the call's changes in the journal
        gated = elicit.gated(tool, self.tool_prefix)
        if gated:  # with no TUI open, the gate may ask the person through this client
            caller.ask = elicit.asker(ctx, _modern(ctx.protocol_version))
        try:
            if self.foreground is not None:
                await self.foreground.wait_turn(FOREGROUND_MAX_WAIT)
            with calling(caller):
                # while the call waits for the person, its progress heartbeat says so (progress.py)
                result = await call_next(ctx)
            error = _error_text(result)
            return result
        except BaseException as exc:
            message = getattr(getattr(exc, "error", None), "message", None)
            error = str(message or exc or type(exc).__name__)[:500]
            raise
        finally:
            _current.reset(token)
            self._publish(who, tool, arguments, record, (started, asked), error, caller)


class AuditLog:
    """Appends each AgentAccess event on a bus to `path` as one JSON line (file mode 0600)."""

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(os.path.expanduser(path))
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        self._lock = threading.Lock()
        self._unsubscribe: Callable[[], None] | None = None

    def attach(self, bus: EventBus) -> AuditLog:
        """Start logging the bus's AgentAccess events."""
        self._unsubscribe = bus.subscribe(self._on_event)
        return self

    def _on_event(self, event: Event) -> None:
        if not isinstance(event, AgentAccess):
            return
        paths = list(event.paths)
        line: dict[str, Any] = {
            "at": dt.datetime.fromtimestamp(event.at, dt.UTC).isoformat(timespec="milliseconds"),
            "agent": event.agent,
            "session": event.session,
            "tool": event.tool,
            "summary": event.summary,
            "arguments": event.arguments,
            "paths": paths[:AUDIT_MAX_PATHS],
            "result_count": event.result_count,
            "duration_ms": event.duration_ms,
            "error": event.error,
            "write": event.write,
        }
        if len(paths) > AUDIT_MAX_PATHS:
            line["paths_total"] = len(paths)
        if event.diff_summary is not None:
            line["diff_summary"] = event.diff_summary
        if event.change_ids:
            line["change_ids"] = list(event.change_ids)  # the journal's ids (`vaultwatch changes`, revert)
        data = (json.dumps(line, ensure_ascii=False, default=str) + "\n").encode()
        with self._lock:
            if self._fd >= 0:
                os.write(self._fd, data)

    def close(self) -> None:
        """Stop logging and close the file."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

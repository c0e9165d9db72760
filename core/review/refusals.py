"""The record of agents' changes that did not happen: refused by the person's rules, declined by
the person (in the TUI's dialog, through the agent's own client), or left undecided until the
wait timed out. The journal keeps only what was written; this answers, after the TUI is closed,
"did scribe try to write outside Clippings?" and "what did I decline, and why?".

    note(root_real, Refusal(...))            # the approval gate, as it refuses or declines; core.review.pending
    kept(root_real, agent="scribe")          # newest first

Storage: one JSON-lines file per vault under `$XDG_STATE_HOME/vaultwatch/refusals/` (folder
0700, file 0600, named like the vault's journal), apart from the journal so that refusals never
count against the journal's bounds or push its records out. Each record is rewritten whole
under a lock (a sidecar `.lock` file; another process may record at the same time) and
replaced atomically. Bounded: at most `max_records` records, and one agent (by its name, whatever
version it sends) at most `agent_share` of them; past the cap the agent holding the most drops its
oldest: an agent flooding refusals, under one name or several, drops its own ones first, so the
others', and the person's declines of them, stay. A record's text is cut to bounded lengths.
A pending change declined (the pending screen, `vaultwatch decline`) or approved but no longer able to
apply is kept here too, by core.review.pending where it is settled, as well as with the proposal.
One pending change is one record, with its final outcome: a record naming it (`pending`, `proposed`)
replaces the one before (approving it ran the gate, whose rule refused it, before the approval
settled it as refused).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
from collections import deque
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from vaultwatch.core.review.agentrules import agent_name
from vaultwatch.core.review.journal import journal_path, state_dir

DEFAULT_MAX_RECORDS = 2000
DEFAULT_AGENT_SHARE = 0.5
MAX_TEXT = 500  # characters of a reason kept
MAX_PATHS = 20

REFUSED = "refused"  # a rule of the person's refused it
DECLINED = "declined"  # the person said no, or nobody decided in time


@dataclass
class Refusal:
    """One agent change that did not happen, and why."""

    at: float  # wall time
    kind: str  # REFUSED | DECLINED
    agent: str
    session: str | None
    tool: str
    operation: str
    paths: list[str] = field(default_factory=list)
    reason: str = ""
    pending: int | None = None  # the pending change it is the outcome of (core.review.pending), if any
    proposed: float | None = None  # and when that was proposed: with the id, one pending change

    @property
    def where(self) -> str:
        """The paths as one line shows them: the first two (a move's two ends), then how many more."""
        return " -> ".join(self.paths[:2]) + (f" (+{len(self.paths) - 2})" if len(self.paths) > 2 else "")

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["at"] = dt.datetime.fromtimestamp(self.at, dt.UTC).isoformat(timespec="seconds")
        if self.proposed is not None:
            out["proposed"] = dt.datetime.fromtimestamp(self.proposed, dt.UTC).isoformat(timespec="seconds")
        return out


def refusals_path(root_real: str) -> str:
    """The record file of the vault at `root_real` (named like its journal)."""
    name = os.path.splitext(os.path.basename(journal_path(root_real)))[0]
    return os.path.join(state_dir(), "refusals", name + ".jsonl")


@contextlib.contextmanager
def _locked(path: str) -> Iterator[None]:
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    fd = os.open(path + ".lock", os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _read(path: str) -> list[dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return []
    out = []
    for line in lines:
        with contextlib.suppress(ValueError):
            row = json.loads(line)
            if isinstance(row, dict):
                out.append(row)
    return out


def _bounded(rows: list[dict[str, Any]], most: int, share: float) -> list[dict[str, Any]]:
    """`rows` (oldest first) within the bounds: each agent's oldest go first while it holds over its
    share, then, while there are too many, the oldest of the agent holding the most.

    An agent is its name (`agent_name`: a label's version left out), as in the journal's shares: the
    version is the client's to choose, so a share per label let one agent, connecting under a few
    versions, fill the record and push out every other agent's rows. Past the cap the biggest holder
    gives way first, so an agent flooding under several names loses its own rows before an agent
    with fewer loses any (a name is a claim: one that took more names than the record has rows
    could still push them all out)."""
    per_agent = max(1, int(most * share))
    held: dict[str, deque[int]] = {}
    for i, row in enumerate(rows):
        held.setdefault(agent_name(str(row.get("agent"))), deque()).append(i)
    for mine in held.values():
        while len(mine) > per_agent:
            mine.popleft()
    total = sum(len(mine) for mine in held.values())
    while total > most:
        biggest = max(held.values(), key=lambda mine: (len(mine), -mine[0]))  # a tie: the oldest row goes
        biggest.popleft()
        total -= 1
    return [rows[i] for i in sorted(i for mine in held.values() for i in mine)]


def note(
    root_real: str,
    refusal: Refusal,
    *,
    max_records: int = DEFAULT_MAX_RECORDS,
    agent_share: float = DEFAULT_AGENT_SHARE,
) -> None:
    """Keep `refusal` in the vault's record (see module doc); never raises for a record it cannot keep
    (the agent's answer says what happened whatever becomes of the record)."""
    path = refusals_path(root_real)
    row = {
        **asdict(refusal),
        "reason": refusal.reason[:MAX_TEXT],
        "paths": [p[:MAX_TEXT] for p in refusal.paths[:MAX_PATHS]],
        "agent": refusal.agent[:MAX_TEXT],
        "tool": refusal.tool[:100],
    }
    with contextlib.suppress(OSError), _locked(path):
        earlier = _read(path)
        if refusal.pending is not None:  # one pending change, one record: its newest outcome
            earlier = [
                r for r in earlier if (r.get("pending"), r.get("proposed")) != (refusal.pending, refusal.proposed)
            ]
        rows = _bounded([*earlier, row], max(1, max_records), min(1.0, max(0.01, agent_share)))
        data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
        temp = f"{path}.{os.getpid()}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:  # not synced: a record lost to a power cut costs less than a sync on every refusal of a flood
            os.write(fd, data)
        finally:
            os.close(fd)
        os.replace(temp, path)


def kept(
    root_real: str, *, agent: str | None = None, since: float | None = None, limit: int | None = None
) -> list[Refusal]:
    """The vault's kept refusals, newest first, optionally of one agent (its name, with or without
    its version) and since a wall time."""
    out = []
    for row in reversed(_read(refusals_path(root_real))):
        try:
            r = Refusal(
                at=float(row["at"]),
                kind=str(row["kind"]),
                agent=str(row["agent"]),
                session=row.get("session"),
                tool=str(row.get("tool", "")),
                operation=str(row.get("operation", "")),
                paths=[str(p) for p in row.get("paths", [])],
                reason=str(row.get("reason", "")),
                pending=int(row["pending"]) if row.get("pending") is not None else None,
                proposed=float(row["proposed"]) if row.get("proposed") is not None else None,
            )
        except (KeyError, TypeError, ValueError):
            continue
        # one agent: by its name (every version of it) or by its whole label, never by a prefix
        # (`scribe` would take `scribe/evil`'s rows, an agent's name being its own claim)
        if agent is not None and agent not in (r.agent, agent_name(r.agent)):
            continue
        if since is not None and r.at < since:
            continue
        out.append(r)
        if limit is not None and len(out) >= limit:
            break
    return out


__all__ = ["DECLINED", "REFUSED", "Refusal", "kept", "note", "refusals_path"]

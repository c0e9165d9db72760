"""The approval gate: an agent's change waits for the person to approve or deny it.

    gate = ApprovalGate("writes", folders=[("Journal/**", "none")], timeout=120)
    attach(vault, gate)      # every Writer over the vault now asks the gate first
    gate.attend()            # a person is watching (the TUI); without one, see below

Modes: "writes" (every agent write, edit, frontmatter update, rename and delete waits),
"deletes" (only deletes wait), "none". Folder rules (globs on the vault path, first match
wins) override the mode per folder. The person's own changes never wait.

The gate decides on a change's effects, not on the path the agent named: the write path hands
it the change's whole effect set (core.edit.effects: every file a folder rename or delete
moves, a symlinked note's target, every note a rename's link rewriting may touch) and
core.review.policy checks every effect against every rule. What the person approves is that
set: a later write in the same call outside it (or a set that changed meanwhile) is asked
about again, never carried by an earlier "yes" or an earlier "no approval needed".

A waiting change is published as `ApprovalRequested` (with the bytes before and after, so a
view can show its diff) and settled as `ApprovalSettled`; `decide(id, approved, reason)` is
the person's answer. A denial, a timeout (default 120 s) and a change no one can approve raise
`Declined`, whose message starts "the person declined this change: ". With no TUI attending,
an agent's change is asked through its client only when the person's settings let that agent's
client ask (`ask_client`, off unless the person turns it on: an answer through the agent's own
client is only as trustworthy as that client), the client can ask (`Caller.ask`: MCP
elicitation, mcp_server/elicit.py) and the whole change fits in one question
(core.review.question: every effect and every hunk, or no question); else it is kept as a
pending change for the person to decide later (core.review.pending raises `AwaitingPerson` with
its id, and why the client was not asked). Each approval is journaled with how it came
(`Scope.approved_via`: the TUI, `vaultwatch approve`, the agent's client). The write path asks
the gate with the note's lock held, right before the change reaches the disk, so what the
person approves is exactly what is written (an outside edit meanwhile is a conflict).
"""

from __future__ import annotations

import itertools
import os
import threading
import time
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from vaultwatch.core.edit import effects as fx
from vaultwatch.core.edit.effects import Effect, EffectSet, PathForm
from vaultwatch.core.edit.hooks import APPROVED_BY_CLIENT, APPROVED_IN_TUI
from vaultwatch.core.errors import VaultError
from vaultwatch.core.events import Event
from vaultwatch.core.review import agentrules
from vaultwatch.core.review import pending as pending_changes
from vaultwatch.core.review.agentrules import AgentRule, AgentRules, RuleRefused
from vaultwatch.core.review.policy import MODES, Asker, Decision, Policy, Rule
from vaultwatch.core.review.question import question

DEFAULT_TIMEOUT = 120.0


class Declined(VaultError):
    """The person declined the change (or nobody decided in time, or nobody is watching)."""

    code = "declined"

    def __init__(self, reason: str, decision: Decision | None = None) -> None:
        super().__init__(f"the person declined this change: {reason}")
        self.reason = reason
        self.decision = decision  # which rule asked for approval, and for which effect


@dataclass(eq=False)
class Pending:
    """One change waiting for the person."""

    id: int
    actor: str
    agent: str | None
    session: str | None
    operation: str
    path: str
    dest: str | None
    before: bytes | None
    after: bytes | None
    asked_at: float
    timeout: float
    arguments: dict[str, Any] = field(default_factory=dict)
    effects: tuple[Effect, ...] = ()  # every file the change touches: what the person approves
    decision: Decision | None = None  # the rule that asked for approval
    approved: bool | None = None
    reason: str = ""
    _done: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def settled(self) -> bool:
        return self._done.is_set()

    def remaining(self, now: float) -> float:
        return max(0.0, self.asked_at + self.timeout - now)


@dataclass(frozen=True, slots=True)
class ApprovalRequested(Event):
    """An agent's change waits for the person (the TUI shows it with approve / deny keys)."""

    pending: Pending


@dataclass(frozen=True, slots=True)
class ApprovalSettled(Event):
    """A waiting change was approved, denied or timed out."""

    id: int
    approved: bool
    reason: str
    by: str  # person | timeout


@dataclass(frozen=True, slots=True)
class ApprovalFinished(Event):
    """The call of a change that waited has finished its write (or its refusal): a view that
    held its dialog open after the decision may close it now, without taking the interpreter
    from the write the person just approved."""

    id: int


@dataclass(frozen=True, slots=True)
class ApprovalModeChanged(Event):
    mode: str


def settings_path() -> str:
    """`$XDG_CONFIG_HOME/vaultwatch/settings.toml` (default `~/.config/vaultwatch/settings.toml`)."""
    base = os.environ.get("XDG_CONFIG_HOME", "")
    if not base or not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "vaultwatch", "settings.toml")


def _settings(path: str) -> dict[str, Any] | None:
    """The settings file's [approve] table (None: no file)."""
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        return None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise VaultError(f"settings file {path}: {exc}; fix or remove it") from None
    table = data.get("approve") or {}
    if not isinstance(table, dict):
        raise VaultError(f"settings file {path}: [approve] must be a table")
    return table


def load_rules(path: str | None = None) -> tuple[str | None, list[tuple[str, str]], float | None]:
    """(mode, folder rules, timeout) from the settings file's [approve] table; absent file: (None, [], None).

    [approve]
    mode = "writes"            # none | writes | deletes
    timeout = 120              # seconds
    [approve.folders]
    "Journal/**" = "none"
    "Projects/**" = "writes"
    """
    path = path or settings_path()
    table = _settings(path)
    if table is None:
        return None, [], None
    mode = table.get("mode")
    if mode is not None and mode not in MODES:
        raise VaultError(f"settings file {path}: approve.mode must be one of {', '.join(MODES)}, not {mode!r}")
    rules = []
    for pattern, value in (table.get("folders") or {}).items():
        if value not in MODES:
            raise VaultError(f"settings file {path}: approve.folders[{pattern!r}] must be one of {', '.join(MODES)}")
        rules.append((str(pattern), str(value)))
    timeout = table.get("timeout")
    if timeout is not None and (not isinstance(timeout, (int, float)) or timeout <= 0):
        raise VaultError(f"settings file {path}: approve.timeout must be a positive number of seconds")
    return mode, rules, (float(timeout) if timeout is not None else None)


def load_ask_client(path: str | None = None) -> bool:
    """The settings file's `[approve] ask_client`: whether an agent's own client may put a gated
    change to the person (MCP elicitation) when no TUI is open. Off when absent."""
    path = path or settings_path()
    value = (_settings(path) or {}).get("ask_client", False)
    if not isinstance(value, bool):
        raise VaultError(f"settings file {path}: approve.ask_client must be true or false")
    return value


class ApprovalGate:
    """See module doc. Thread-safe: agents' worker threads wait in `check`, the person calls `decide`."""

    def __init__(
        self,
        mode: str = "none",
        *,
        folders: Iterable[tuple[str, str]] = (),
        timeout: float = DEFAULT_TIMEOUT,
        bus: Any = None,
        clock: Callable[[], float] = time.monotonic,
        agents: AgentRules | None = None,
        ask_client: bool = False,
    ) -> None:
        if mode not in MODES:
            raise VaultError(f"--approve must be one of {', '.join(MODES)}, not {mode!r}")
        self.mode = mode
        self.folders = list(folders)
        self.agents = agents or AgentRules({})  # the person's rules per agent (core.review.agentrules)
        self.timeout = float(timeout)
        self.ask_client = ask_client  # an agent's client may ask the person (per agent: its rule's ask_client)
        self.form = PathForm()  # attach() sets the vault's (its file system's name comparison)
        self.root_real = ""  # attach() sets it: where unattended changes are kept (core.review.pending)
        self.wall: Callable[[], float] = time.time
        self.bus = bus
        self._clock = clock
        self._lock = threading.Lock()
        self._pending: dict[int, Pending] = {}
        self._ids = itertools.count(1)
        self._attended = 0

    # --- configuration ---

    def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise VaultError(f"approval mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.mode = mode
        self._publish(ApprovalModeChanged(mode))

    def attend(self) -> Callable[[], None]:
        """A person is watching (the TUI); returns the function to call when they leave."""
        with self._lock:
            self._attended += 1

        def leave() -> None:
            with self._lock:
                self._attended = max(0, self._attended - 1)
                left = self._attended == 0
                waiting = list(self._pending.values()) if left else []
            for p in waiting:
                self._settle(p, False, "the person closed vaultwatch before deciding", "timeout")

        return leave

    @property
    def attended(self) -> bool:
        return self._attended > 0

    @property
    def policy(self) -> Policy:
        return Policy(self.mode, [Rule(pattern, mode) for pattern, mode in self.folders])

    def rule_for(self, agent: str | None) -> AgentRule | None:
        """The person's rule for `agent`, a `name/version` label (None: no agent rules are set)."""
        return self.agents.for_agent(agent) if self.agents else None

    def _asker_rule(self, asker: Asker) -> AgentRule | None:
        """The person's rule for an asking agent, by the name its changes are journaled under
        (`agent:<clientInfo name>`, the name `bridge --agent` gives): never by a label whose other
        half the client chose."""
        if not self.agents:
            return None
        if asker.actor.startswith("agent:"):
            return self.agents.for_name(asker.actor.removeprefix("agent:"))
        return self.agents.for_agent(asker.agent or asker.actor)

    def _agent_policy(self, asker: Asker) -> Policy:
        """The policy for this asker: an agent's own approval mode replaces the vault's."""
        rule = None if asker.is_person else self._asker_rule(asker)
        if rule is None or rule.approve is None:
            return self.policy
        return Policy(rule.approve, [Rule(pattern, mode) for pattern, mode in self.folders])

    def client_may_not_ask(self, asker: Asker) -> str:
        """Why the person's settings do not let this agent's own client ask them ("" when they do):
        the agent's rule's `ask_client`, matched by the name its changes are journaled under (as
        every agent rule is), else `[approve] ask_client`."""
        rule = None if asker.is_person else self._asker_rule(asker)
        if rule is not None and rule.ask_client is not None:
            return "" if rule.ask_client else f"the person's rule {rule.source} sets ask_client = false"
        if self.ask_client:
            return ""
        return "the person's settings do not let an agent's client approve changes ([approve] ask_client)"

    def refuse_by_rule(self, effects: EffectSet, asker: Asker) -> None:
        """Raise RuleRefused when the agent's own rule forbids any effect of the change."""
        if asker.is_person:
            return
        rule = self._asker_rule(asker)
        if rule is None:
            return
        paths = [p for e in effects.effects for p in (e.path, e.via, e.dest) if p]
        said = rule.refusal(effects.operation, paths, lambda pattern, path: Rule(pattern, "").covers(path, self.form))
        if said:
            raise RuleRefused(said)

    def mode_for(self, path: str) -> str:
        return self.policy.mode_for(path, self.form)[0]

    def decide_effects(self, effects: EffectSet, asker: Asker) -> Decision:
        """Would this change wait for the person (and which rule says so)?"""
        return self._agent_policy(asker).decide(effects, asker, self.form)

    def needs(self, operation: str, path: str, dest: str | None = None) -> bool:
        """The decision for a one-file change named by its paths (a note: no folder contents)."""
        if operation == "delete":
            effects = fx.deleted(path, path)
        elif operation == "rename" and dest:
            effects = fx.moved(path, dest)
        else:
            effects = fx.written(path, path, operation=operation)
        return self.decide_effects(effects, Asker("agent:?")).needs_approval

    # --- waiting and deciding ---

    def pending(self) -> list[Pending]:
        with self._lock:
            return sorted(self._pending.values(), key=lambda p: p.id)

    def check(self, scope: Any, effects: EffectSet, old: bytes | None, new: bytes | None) -> None:
        """Block until the person approves (return) or declines (raise Declined); called by the write
        path with the change's whole effect set before any of it reaches the disk."""
        from vaultwatch.core.edit.hooks import HandOver, current_caller  # noqa: PLC0415  (hooks imports nothing from here)

        caller = current_caller()
        asker = Asker(scope.actor, caller.agent if caller else None, caller.session if caller else None)
        self.refuse_by_rule(effects, asker)
        grant = pending_changes.current_grant()
        if grant is not None:  # the person approved this very change while it was pending
            grant.admit(effects, old, self.form)
            scope.approved_via = grant.via
            return
        decision = self.decide_effects(effects, asker)
        if not decision.needs_approval:
            return
        if caller is not None and caller.cannot_wait:
            raise HandOver(f"{scope.operation} needs the person's approval ({decision.why})")
        first = effects.effects[0]
        rel = first.via or first.path
        dest = first.dest
        operation = scope.operation
        if operation == "delete" and old is None and scope.preread is not None and scope.preread[0] == rel:
            old = scope.preread[1]
        not_asked = ""  # why the calling client, which could ask, was not asked
        if not self.attended and caller is not None and caller.ask is not None:
            # nobody at the TUI, but the calling client can ask the person: only when the person lets
            # it, and only with the whole change in the question (else the change waits, pending)
            not_asked = self.client_may_not_ask(asker)
            if not not_asked:
                asked = question(effects, old, new, decision.why, agent=caller.agent)
                not_asked = asked.why_not
                if asked.text is not None:
                    approved, reason = caller.ask(asked.text, self.timeout, pending_changes.binding(effects, old, new))
                    if approved:
                        scope.approved_via = APPROVED_BY_CLIENT
                        return
                    raise Declined(reason, decision)
        if not self.attended and caller is not None and self.root_real:
            # nobody to ask now: the change waits for the person, who decides later
            # (`vaultwatch pending`), and the agent learns its id at once
            raise pending_changes.propose(
                self.root_real, scope, caller, effects, old, new, decision.why, self.wall(), not_asked=not_asked
            )
        if not self.attended:
            raise Declined(
                f"approval is required ({decision.why}) and no one is at vaultwatch's TUI to approve "
                "it; the person can open the TUI on this vault (`vaultwatch VAULT`) and approve it "
                "there, or change the approval mode",
                decision,
            )
        pending = Pending(
            next(self._ids),
            scope.actor,
            caller.agent if caller else scope.actor.removeprefix("agent:"),
            caller.session if caller else None,
            operation,
            rel,
            dest,
            old,
            new,
            self._clock(),
            self.timeout,
            dict(caller.arguments) if caller else dict(scope.arguments),
            effects.effects,
            decision,
        )
        with self._lock:
            self._pending[pending.id] = pending
        if caller is not None:
            caller.waiting = pending
        scope.pending = pending  # the write path calls finished() once the change is written or refused
        self._publish(ApprovalRequested(pending))
        try:
            if not pending._done.wait(self.timeout):
                self._settle(pending, False, f"no decision within {self.timeout:g} s", "timeout")
        finally:
            if caller is not None:
                caller.waiting = None
        if not pending.approved:
            raise Declined(pending.reason or "denied", decision)
        scope.approved_via = APPROVED_IN_TUI

    def decide(self, pending_id: int, approved: bool, reason: str = "") -> bool:
        """The person's answer; False when that change is no longer waiting."""
        with self._lock:
            pending = self._pending.get(pending_id)
        if pending is None:
            return False
        return self._settle(pending, approved, reason.strip() or ("" if approved else "denied in the TUI"), "person")

    def finished(self, pending: Pending) -> None:
        """The call `pending` held has finished (written, refused or declined)."""
        self._publish(ApprovalFinished(pending.id))

    def _settle(self, pending: Pending, approved: bool, reason: str, by: str) -> bool:
        with self._lock:
            if self._pending.pop(pending.id, None) is None:
                return False
            pending.approved = approved
            pending.reason = reason
            pending._done.set()
        self._publish(ApprovalSettled(pending.id, approved, reason, by))
        return True

    def _publish(self, event: Event) -> None:
        if self.bus is not None:
            self.bus.publish(event)


def attach(vault: Any, gate: ApprovalGate | None) -> None:
    """Make every Writer over `vault` ask `gate` (None: no gate)."""
    if gate is not None:
        if gate.bus is None:
            gate.bus = vault.bus
        gate.form = fx.form_of(vault.root_real)
        gate.root_real = vault.root_real
        gate.wall = lambda: vault.clock.now().timestamp()
    vault.approval_gate = gate


def configure(
    vault: Any, mode: str | None = None, *, settings: str | None = None, always: bool = False
) -> ApprovalGate | None:
    """Attach the gate the command line (`--approve MODE`) and the settings file ask for; None: no gate.

    The option wins over the settings file's mode; the file's folder rules apply either way.
    """
    file_mode, rules, timeout = load_rules(settings)
    ask_client = load_ask_client(settings)
    agents = agentrules.load(settings or settings_path(), vault.root_real)
    chosen = mode or file_mode or "none"
    if chosen not in MODES:
        raise VaultError(f"--approve must be one of {', '.join(MODES)}, not {chosen!r}")
    if chosen == "none" and not rules and not agents and not always:  # always: the TUI, where it can be switched on
        return None
    gate = ApprovalGate(
        chosen, folders=rules, timeout=timeout or DEFAULT_TIMEOUT, bus=vault.bus, agents=agents, ask_client=ask_client
    )
    attach(vault, gate)
    return gate


def gate_for(vault: Any) -> ApprovalGate | None:
    return vault.approval_gate


__all__ = [
    "Asker",
    "Decision",
    "Rule",
    "ApprovalFinished",
    "ApprovalGate",
    "ApprovalModeChanged",
    "ApprovalRequested",
    "ApprovalSettled",
    "DEFAULT_TIMEOUT",
    "Declined",
    "MODES",
    "Pending",
    "attach",
    "configure",
    "gate_for",
    "load_ask_client",
    "load_rules",
    "settings_path",
]

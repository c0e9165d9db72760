"""The approval gate: an agent's change waits for the person to approve or decline it.

    gate = ApprovalGate("writes", folders=[("Journal/**", "none")], timeout=120)
    attach(vault, gate)      # every Writer over the vault now asks the gate first
    gate.attend()            # a person is watching (the TUI); without one, see below

Modes: "writes" (every agent write, edit, frontmatter update, rename and delete waits),
"deletes" (only deletes wait), "none". Folder rules (globs on the vault path, first match
wins) override the mode per folder; a folder rule "never" refuses every agent's change there,
whatever that agent's own rule says (the one rule for "no agent at all": `[agents.default]`
covers only agents without a table of their own). The person's own changes never wait.

The gate decides on a change's effects, not on the path the agent named: the write path hands
it the change's whole effect set (core.edit.effects: every file a folder rename or delete
moves, a symlinked note's target, every note a rename's link rewriting may touch) and
core.review.policy checks every effect against every rule. What the person approves is that
set: a later write in the same call outside it (or a set that changed meanwhile) is asked
about again, never carried by an earlier "yes" or an earlier "no approval needed".

A waiting change is published as `ApprovalRequested` (with the bytes before and after, so a
view can show its diff) and settled as `ApprovalSettled`; `decide(id, approved, reason)` is
the person's answer. A denial and a change no one can approve raise `Declined`, whose message
starts "the person declined this change: ". One nobody decided (the dialog's timeout, default
120 s, or the TUI closed first) was not declined: it is kept as a pending change, as it would have
been with no TUI open (or, with no agent's call to answer, raises `Undecided`). With no TUI attending,
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
import stat as stat_mod
import threading
import time
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from vaultwatch.core.edit import effects as fx
from vaultwatch.core.edit.effects import Effect, EffectSet, PathForm, cautions
from vaultwatch.core.edit.hooks import APPROVED_BY_CLIENT, APPROVED_IN_TUI, Relinks
from vaultwatch.core.errors import RulesUnreadable, VaultError
from vaultwatch.core.events import DocumentsChanged, Event, ExcludedGone, IndexProblem
from vaultwatch.core.review import agentrules, refusals, rulefolders, rulespelling, settingkeys
from vaultwatch.core.review import pending as pending_changes
from vaultwatch.core.review.agentrules import AgentRule, AgentRules, RuleRefused
from vaultwatch.core.review.guardenv import settings_path
from vaultwatch.core.review.journal import journal_path
from vaultwatch.core.review.policy import FOLDER_MODES, MODES, NEVER, Asker, Decision, Policy, Rule
from vaultwatch.core.review.question import question

DEFAULT_TIMEOUT = 120.0


class Declined(VaultError):
    """The person declined the change (or no one is watching and no one can be asked)."""

    code = "declined"

    def __init__(self, reason: str, decision: Decision | None = None) -> None:
        super().__init__(f"the person declined this change: {reason}")
        self.reason = reason
        self.decision = decision  # which rule asked for approval, and for which effect


class Undecided(VaultError):
    """Nobody decided the change (the dialog timed out, or the TUI closed first) and it could not be
    kept as a pending change: it was not applied. Never "declined": the person said nothing."""

    code = "not_decided"

    def __init__(self, reason: str, decision: Decision | None = None) -> None:
        super().__init__(f"not applied: {reason}; nothing was written")
        self.reason = reason
        self.decision = decision


# how a waiting change was settled without the person's answer (ApprovalSettled.by): it becomes a
# pending change, as it would have with no TUI open, rather than a decline nobody made
TIMED_OUT = "timeout"
LEFT = "left"  # the person closed the TUI before deciding


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
    # a rename's link rewrites as they will be (each note's path after the move, its bytes before
    # and after): the person approves what each link becomes, not only which notes
    links: tuple[tuple[str, bytes, bytes], ...] = ()
    permanent: bool = False  # a delete for good, not to the trash (EffectSet.permanent)
    stranded: tuple[str, ...] = ()  # notes whose links a rename leaves pointing at nothing (EffectSet.stranded)
    approved: bool | None = None
    reason: str = ""
    by: str = ""  # who settled it: the person, or TIMED_OUT / LEFT (nobody decided)
    newest: int | None = None  # the journal's newest change when it was asked: moves after it moved the note
    _done: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def settled(self) -> bool:
        return self._done.is_set()

    def remaining(self, now: float) -> float:
        return max(0.0, self.asked_at + self.timeout - now)

    @property
    def cautions(self) -> tuple[str, ...]:
        """What the change does beyond its paths, in the words every view of it uses."""
        return cautions(self.permanent, self.stranded)


@dataclass(frozen=True, slots=True)
class ApprovalRequested(Event):
    """An agent's change waits for the person (the TUI shows it with approve / decline keys)."""

    pending: Pending


@dataclass(frozen=True, slots=True)
class ApprovalSettled(Event):
    """A waiting change was approved, declined or timed out."""

    id: int
    approved: bool
    reason: str
    by: str  # person | TIMED_OUT | LEFT (the last two: nobody decided; it becomes a pending change)


@dataclass(frozen=True, slots=True)
class RefusalKept(Event):
    """An agent's change was refused by a rule or declined, and kept in the vault's record of them
    (core.review.refusals): a view listing that record reads it again."""

    kind: str  # refusals.REFUSED | refusals.DECLINED


@dataclass(frozen=True, slots=True)
class ApprovalFinished(Event):
    """The call of a change that waited has finished its write (or its refusal): a view that
    held its dialog open after the decision may close it now, without taking the interpreter
    from the write the person just approved."""

    id: int
    failed: str = ""  # why a change the person approved was not applied after all ("" when it was)


@dataclass(frozen=True, slots=True)
class ApprovalModeChanged(Event):
    mode: str


def load_rules(path: str | None = None) -> tuple[str | None, list[tuple[str, str]], float | None]:
    """(mode, folder rules, timeout) from the settings file's [approve] table; absent file: (None, [], None).

    [approve]
    mode = "writes"            # none | writes | deletes
    timeout = 120              # seconds
    [approve.folders]
    "Journal/**" = "none"
    "Projects/**" = "writes"
    "Templates/**" = "never"   # no agent may change it
    """
    path = path or settings_path()
    data = _settings_data(path)
    return (None, [], None) if data is None else _approve_table(data, path)


def _settings_bytes(path: str) -> tuple[bytes, os.stat_result] | None:
    """The settings file's bytes and the stat of what was read (None: there is none); VaultError
    when it cannot be read or is not a regular file. Opened without blocking: a FIFO put in its
    place must not hold every later decision waiting for a writer."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise VaultError(f"settings file {path}: {exc.strerror or exc}; fix or remove it") from None
    try:
        st = os.fstat(fd)
        if not stat_mod.S_ISREG(st.st_mode):
            raise VaultError(f"settings file {path} is not a regular file (a folder, FIFO or device); fix or remove it")
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks), st
    except OSError as exc:
        raise VaultError(f"settings file {path}: {exc.strerror or exc}; fix or remove it") from None
    finally:
        os.close(fd)


def _parse_settings(raw: bytes, path: str) -> dict[str, Any]:
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise VaultError(f"settings file {path}: {exc}; fix or remove it") from None


def _settings_data(path: str) -> dict[str, Any] | None:
    """The settings file parsed (None: there is none); VaultError when it cannot be read or parsed."""
    got = _settings_bytes(path)
    return None if got is None else _parse_settings(got[0], path)


def _approve_table(data: dict[str, Any], path: str) -> tuple[str | None, list[tuple[str, str]], float | None]:
    table = data.get("approve") or {}
    if not isinstance(table, dict):
        raise VaultError(f"settings file {path}: [approve] must be a table")
    mode = table.get("mode")
    if mode is not None and mode not in MODES:
        raise VaultError(f"settings file {path}: approve.mode must be one of {', '.join(MODES)}, not {mode!r}")
    rules = []
    folders = table.get("folders") or {}
    if not isinstance(folders, dict):
        raise VaultError(f"settings file {path}: [approve.folders] must be a table of folder globs")
    for pattern, value in folders.items():
        if value not in FOLDER_MODES:
            raise VaultError(
                f"settings file {path}: approve.folders[{pattern!r}] must be one of {', '.join(FOLDER_MODES)}"
            )
        rules.append((str(pattern), str(value)))
    timeout = table.get("timeout")
    if timeout is not None and (not isinstance(timeout, (int, float)) or timeout <= 0):
        raise VaultError(f"settings file {path}: approve.timeout must be a positive number of seconds")
    return mode, rules, (float(timeout) if timeout is not None else None)


def _ask_client(data: dict[str, Any], path: str) -> bool:
    table = data.get("approve") or {}
    value = table.get("ask_client", False) if isinstance(table, dict) else False
    if not isinstance(value, bool):
        raise VaultError(f"settings file {path}: approve.ask_client must be true or false")
    return value


def load_ask_client(path: str | None = None) -> bool:
    """The settings file's `[approve] ask_client`: whether an agent's own client may put a gated
    change to the person (MCP elicitation) when no TUI is open. Off when absent."""
    path = path or settings_path()
    data = _settings_data(path)
    return False if data is None else _ask_client(data, path)


@dataclass(frozen=True)
class GateRules:
    """What one reading of the settings file says the gate applies to one vault. `problem`: the file
    could not be read or does not parse, and agents' changes are refused until it does (the rest
    are the last rules that parsed, for the person's views)."""

    mode: str | None = None
    folders: tuple[tuple[str, str], ...] = ()
    timeout: float | None = None
    agents: AgentRules = field(default_factory=lambda: AgentRules({}))
    problem: str | None = None
    ask_client: bool = False  # `[approve] ask_client`: an agent's own client may ask the person
    unknown: tuple[str, ...] = ()  # notices of tables and keys vaultwatch does not read (settingkeys)
    brief: str = ""  # the problem in a few words (Applied.problem_brief)


def read_rules(path: str, vault_root: str | None) -> GateRules:
    """The gate's rules for the vault at `vault_root` in the settings file at `path`, read now (an
    absent file: none). Never raises: a file that cannot be read or parsed gives `problem`."""
    try:
        data = _settings_data(path)
        return GateRules() if data is None else _rules_of(data, path, vault_root)
    except VaultError as exc:
        return GateRules(problem=exc.message)


def _rules_of(data: dict[str, Any], path: str, vault_root: str | None) -> GateRules:
    """The gate's rules in a parsed settings file (see read_rules)."""
    try:
        mode, folders, timeout = _approve_table(data, path)
        ask_client = _ask_client(data, path)
        unknown = settingkeys.judge(data, vault_root, f"settings file {path}")
        agents = agentrules.parse(data, vault_root, origin=f"settings file {path}")
    except settingkeys.UnknownSetting as exc:
        return GateRules(problem=exc.message, brief=exc.brief)
    except VaultError as exc:  # the file parses: a value of the wrong type, or one no rule takes
        return GateRules(problem=exc.message, brief="a setting has a value vaultwatch cannot take")
    return GateRules(mode, tuple(folders), timeout, agents, ask_client=ask_client, unknown=unknown)


# a settings file changed this recently is read again at every decision: two edits within the file
# system's timestamp granularity can leave its size, times and inode as they were. The same window
# covers an editor's save: one that renames the old file away before writing the new one leaves no
# file for a moment, one that truncates before writing leaves an empty one, and neither means
# "no rules"
RACY_NS = 2_000_000_000


class RulesFile:
    """The person's settings file as it is now, for one vault: `current()` costs one stat (device,
    inode, size, modification and change times) and reads the file again only when that changed, so
    every decision uses the file as it is, edited a moment ago or not. A file that no longer parses
    keeps the rules that last did, with its problem (the gate then refuses agents' changes); a file
    gone or emptied keeps them while that may be an editor's save under way (RACY_NS)."""

    def __init__(self, path: str, vault_root: str | None) -> None:
        self.path = path
        self.vault_root = vault_root
        self._lock = threading.Lock()
        self._seen: tuple[int, ...] | None | bool = False  # what the last read saw (False: never read)
        self._rules = GateRules()
        self._racy = True
        self._gone_at: int | None = None  # when the file was first seen gone (a save may be under way)

    def current(self) -> GateRules:
        now = time.time_ns()
        try:
            st = os.stat(self.path)  # (follows a link: a settings file kept in a dotfiles folder)
            seen: tuple[int, ...] | None = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        except FileNotFoundError:
            seen = None
        except OSError as exc:
            seen = (-1, exc.errno or 0)  # read below: its error is the problem
        with self._lock:
            if seen == self._seen and not self._racy:
                return self._rules
            if self._saving(seen, now):
                return self._rules  # (not taken as seen: looked at again at the next decision)
            self._gone_at = None
            rules = self._read(now)
            if rules is None:  # emptied a moment ago by a save under way: its text comes next
                return self._rules  # (not taken as seen: looked at again at the next decision)
            if rules.problem is None and seen is None and os.path.islink(self.path):
                rules = GateRules(
                    problem=f"settings file {self.path} is a symbolic link to nothing; fix or remove it",
                    brief="settings file is a link to nothing",
                )
            if rules.problem is not None:  # the last rules that parsed stay, for the views; agents wait
                rules = replace(self._rules, problem=rules.problem, brief=rules.brief)
            self._seen = seen
            self._racy = seen is not None and len(seen) == 5 and now - max(seen[3], seen[4]) < RACY_NS
            if rules != self._rules:
                self._rules = rules
            return self._rules

    def _read(self, now: int) -> GateRules | None:
        """The file's rules as read now; None when it is empty, rules applied before, and it changed
        within RACY_NS: an in-place save truncates before it writes, and a decision that looked just
        between the stat and the read would otherwise apply no rules at all."""
        try:
            got = _settings_bytes(self.path)
            if got is None:
                return GateRules()
            raw, st = got
            if not raw.strip() and self._rules != GateRules() and now - max(st.st_mtime_ns, st.st_ctime_ns) < RACY_NS:
                return None
            return _rules_of(_parse_settings(raw, self.path), self.path, self.vault_root)
        except VaultError as exc:
            return GateRules(problem=exc.message)

    def _saving(self, seen: tuple[int, ...] | None, now: int) -> bool:
        """Whether the file, gone or empty where rules were, may be an editor's save under way."""
        if self._rules == GateRules():
            return False  # no rules to keep
        if seen is None:
            if self._gone_at is None:
                self._gone_at = now
            return now - self._gone_at < RACY_NS
        return len(seen) == 5 and seen[2] == 0 and now - max(seen[3], seen[4]) < RACY_NS


@dataclass(frozen=True, slots=True)
class RulesChanged(Event):
    """The settings file changed and the gate applies what it says now (`problem`: it does not parse,
    and agents' changes are refused until it does)."""

    mode: str
    problem: str | None


@dataclass(frozen=True, slots=True)
class RuleFoldersChanged(Event):
    """The folders the rules name that the vault does not have changed: one went away (its rules match
    nothing now) or came back. The views that show the rules say it for as long as it lasts."""

    gone: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Applied:
    """What the gate applies at one moment, replaced whole when the settings file changes: one
    decision reads one of these, never the mode of one reading and the rules of another."""

    mode: str
    folders: tuple[tuple[str, str], ...]
    agents: AgentRules
    timeout: float
    problem: str | None = None  # the settings file does not parse: agents' changes are refused
    ask_client: bool = False  # `[approve] ask_client` (an agent's rule may say otherwise for it)
    unknown: tuple[str, ...] = ()  # notices of tables and keys the settings file holds that nothing reads
    brief: str = ""  # the problem in a few words (problem_brief)

    @property
    def problem_brief(self) -> str:
        """The problem in a few words, for a status line: what it is, since a file that parses but
        holds an unknown rules table must not be said not to parse."""
        if self.problem is None:
            return ""
        return self.brief or "settings file does not parse"

    def policy(self, mode: str | None = None, source: str = "") -> Policy:
        return Policy(mode or self.mode, [Rule(pattern, m) for pattern, m in self.folders], source if mode else "")

    def own_modes(self) -> tuple[tuple[str, str], ...]:
        """(agent, its own approval mode) for each agent rule whose `approve` is not the vault's mode:
        its mode replaces the vault's for that agent, so the vault's mode (the TUI's `g`) does not
        cover it. `default` stands for the agents without a table of their own."""
        return tuple(
            (name, rule.approve)
            for name, rule in self.agents.rules.items()
            if rule.approve is not None and rule.approve != self.mode
        )

    def mode_said(self) -> str:
        """What the vault's mode does, in the person's words, saying who it does not cover: the
        agents with an approval mode of their own (the person set it for that agent, and a mode
        chosen for the vault does not overrule it), and the folder rules, which decide their folders."""
        what = {
            "none": "agents' changes go through without asking",
            "writes": "agents' writes wait for your approval",
            "deletes": "agents' deletes wait for your approval",
        }[self.mode]
        own = self.own_modes()
        if own:
            names = ", ".join(f"{_agent_said(name)} ({mode})" for name, mode in own)
            what += f"; not for agents with a mode of their own: {names}"
        if self.folders:
            what += "; folder rules still decide their folders"
        return what

    def nevers(self) -> tuple[str, ...]:
        """The folder rules' globs that refuse every agent's change ("never"), in the file's order."""
        return tuple(pattern for pattern, m in self.folders if m == NEVER)

    def rule_of(self, asker: Asker) -> AgentRule | None:
        """The person's rule for an asking agent, by the name its changes are journaled under
        (`agent:<clientInfo name>`, the name `bridge --agent` gives): never by a label whose other
        half the client chose."""
        if asker.is_person or not self.agents:
            return None
        if asker.actor.startswith("agent:"):
            return self.agents.for_name(asker.actor.removeprefix("agent:"))
        return self.agents.for_agent(asker.agent or asker.actor)

    def policy_for(self, asker: Asker) -> Policy:
        """The policy for this asker: an agent's own approval mode replaces the vault's."""
        rule = self.rule_of(asker)
        if rule is None or rule.approve is None:
            return self.policy()
        return self.policy(rule.approve, rule.source or f'[agents."{rule.name}"]')


def _agent_said(name: str) -> str:
    return "agents without a table of their own" if name == agentrules.DEFAULT else name


class ApprovalGate:
    """See module doc. Thread-safe: agents' worker threads wait in `check`, the person calls `decide`.

    With `rules` (a `RulesFile`: `configure` gives one), every decision reads the person's settings
    file as it is now: its folder rules, agent rules, timeout and mode. A mode chosen here (`mode`,
    from `--approve`, or `set_mode`, the TUI's `g`) holds until the file's `[approve] mode` is
    edited: the person's newest word wins. While the file does not parse, agents' changes are
    refused (RulesUnreadable), never let through under no rules."""

    def __init__(
        self,
        mode: str = "none",
        *,
        folders: Iterable[tuple[str, str]] = (),
        timeout: float = DEFAULT_TIMEOUT,
        bus: Any = None,
        clock: Callable[[], float] = time.monotonic,
        agents: AgentRules | None = None,
        rules: RulesFile | None = None,
        chosen: str | None = None,
        ask_client: bool = False,
    ) -> None:
        if mode not in MODES:
            raise VaultError(f"--approve must be one of {', '.join(MODES)}, not {mode!r}")
        # the person's rules per agent: core.review.agentrules; `ask_client`: an agent's client may ask
        # the person (per agent: its rule's ask_client); with `rules`, the file's say wins
        self._applied = Applied(mode, tuple(folders), agents or AgentRules({}), float(timeout), ask_client=ask_client)
        self._rules_file = rules
        self._read: GateRules | None = None  # the file's rules this gate applies (None: not read yet)
        self._chosen = chosen  # the mode chosen over the file's, until the file's mode is edited
        self.form = PathForm()  # attach() sets the vault's (its file system's name comparison)
        self.root_real = ""  # attach() sets it: where unattended changes are kept (core.review.pending)
        self.history: Callable[[], Any] = lambda: None  # attach() sets it: the vault's change journal
        self.wall: Callable[[], float] = time.time
        self.bus = bus
        self._clock = clock
        self._lock = threading.Lock()
        self._pending: dict[int, Pending] = {}
        self._ids = itertools.count(1)
        self._attended = 0
        self._folder_watch: rulefolders.FolderWatch | None = None  # watch_rule_folders sets it
        self.refresh()

    # --- configuration ---

    def refresh(self) -> bool:
        """Apply the settings file as it is now (one stat when it has not changed); True when what the
        gate applies changed. Every decision does it; the TUI does it now and then, so its views
        follow an edit even while no agent writes."""
        return self._read_file()[1]

    def applied(self) -> Applied:
        """What the gate applies now, the settings file read again first when it changed."""
        return self._read_file()[0]

    def _read_file(self) -> tuple[Applied, bool]:
        source = self._rules_file
        if source is None:
            return self._applied, False
        rules = source.current()
        with self._lock:
            last = self._read
            if rules is last:
                return self._applied, False
            self._read = rules
            if last is not None and rules.problem is None and rules.mode != last.mode:
                self._chosen = None  # the person edited the file's mode: it wins over an earlier choice
            was = self._applied
            now = Applied(
                self._chosen or rules.mode or "none",
                rules.folders,
                rules.agents,
                rules.timeout or DEFAULT_TIMEOUT,
                rules.problem,
                rules.ask_client,
                rules.unknown,
                rules.brief,
            )
            self._applied = now
        if last is None or now == was:
            return now, False
        if now.problem != was.problem:
            if now.problem is not None:
                self._publish(IndexProblem(f"{now.problem} (until it is fixed, agents' changes are refused)", "error"))
            else:
                self._publish(IndexProblem(f"settings file {source.path} parses again: its rules apply", "info"))
        self._publish(RulesChanged(now.mode, now.problem))
        return now, True

    @property
    def mode(self) -> str:
        return self.applied().mode

    @property
    def chosen(self) -> str | None:
        """The mode chosen over the settings file's (`--approve`, `g`), None while the file's applies."""
        self.applied()
        with self._lock:
            return self._chosen

    @property
    def folders(self) -> list[tuple[str, str]]:
        return list(self.applied().folders)

    @property
    def agents(self) -> AgentRules:
        return self.applied().agents

    @property
    def timeout(self) -> float:
        return self.applied().timeout

    @property
    def problem(self) -> str | None:
        """Why agents' changes are refused whatever the rules: the settings file does not parse."""
        return self.applied().problem

    def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise VaultError(f"approval mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.applied()
        with self._lock:
            self._chosen = mode
            self._applied = replace(self._applied, mode=mode)
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
            for p in waiting:  # each waits on as a pending change (check), as with no TUI open
                self._settle(p, False, "they closed vaultwatch's TUI first", LEFT)

        return leave

    @property
    def attended(self) -> bool:
        return self._attended > 0

    @property
    def policy(self) -> Policy:
        return self.applied().policy()

    def rule_for(self, agent: str | None) -> AgentRule | None:
        """The person's rule for `agent`, a `name/version` label (None: no agent rules are set)."""
        agents = self.agents
        return agents.for_agent(agent) if agents else None

    def rules_said(self, agent: str | None) -> str | None:
        """What the person's rules let `agent` do, in a few words, for the person's views: its own
        rule, and the folder rules that refuse every agent (None: no rule concerns it)."""
        now = self.applied()
        rule = now.agents.for_agent(agent) if now.agents else None
        parts = [rule.summary()] if rule is not None else []
        # a rule whose folder went away protects nothing while it lasts: said, not promised
        nevers = [p + (" (no such folder)" if self.matches_nothing(p) else "") for p in now.nevers()]
        if nevers:
            parts.append(f"never {', '.join(nevers)} (every agent)")
        return "; ".join(parts) or None

    def rule_notices(self) -> list[str]:
        """A notice for each rule spelled so that it covers nothing (core.review.rulespelling) and each
        folder the rules name that this vault does not have (core.review.rulefolders): such a rule
        matches nothing, and the person should know, not find out from an agent."""
        if not self.root_real:
            return []
        now = self.applied()
        found = _notices(now.folders, now.agents, self.root_real, self.form, self._origin(), self.history)
        problem = [f"{now.problem} (until it is fixed, agents' changes are refused)"] if now.problem else []
        return [*problem, *now.unknown, *found]

    def matches_nothing(self, pattern: str) -> bool:
        """Whether a rule's folder was missing from the vault when last looked at (at the start, and on
        every change of the vault's folders or the rules): such a rule protects nothing until it is back."""
        watch = self._folder_watch
        return watch is not None and watch.names_gone(pattern)

    def folders_gone(self) -> dict[str, list[str]]:
        """{folder: the rules naming it} for each folder the rules name that was missing when last looked at."""
        watch = self._folder_watch
        return dict(watch.gone) if watch is not None else {}

    def _origin(self) -> str:
        """Where the rules are written, as a notice names it."""
        return f"settings file {self._rules_file.path}" if self._rules_file is not None else "settings"

    def watch_rule_folders(self, bus: Any) -> Callable[[], None]:
        """From now on, say on `bus` (IndexProblem) each folder a rule names that goes away (the index
        keeps folders, empty ones too, so removing one is a DocumentsChanged), and each rule edited in
        that names no folder or is spelled amiss; returns the function that stops it."""
        now = self.applied

        def named() -> list[rulefolders.Named]:
            applied = now()
            spelled = rulespelling.rules_of(applied.folders, applied.agents)
            return rulefolders.named_folders(
                applied.folders, applied.agents, rulespelling.amiss(spelled, self.root_real)
            )

        def say(message: str) -> None:
            self._publish(IndexProblem(message, "warning", lasting=True))

        def misspelled() -> set[str]:
            applied = now()
            spelled = rulespelling.rules_of(applied.folders, applied.agents)
            return set(rulespelling.notices(spelled, self.root_real, self._origin()))

        def here(gone: Mapping[str, list[str]]) -> set[str]:
            return _here(gone, self.history, self.form)

        watch = rulefolders.FolderWatch(self.root_real, self.form, named, say, here)
        self._folder_watch = watch

        def look(*, moved: bool) -> None:
            before = set(watch.gone)
            watch.look(moved=moved)
            if set(watch.gone) != before:  # went away or came back: the views' lasting marks follow
                self._publish(RuleFoldersChanged(tuple(watch.gone)))

        spelled = misspelled()  # said at the start (rule_notices); a rule edited in amiss is said once

        def on_event(event: Event) -> None:
            # additions too: a folder the rules name that is made since (an empty one, say, after the
            # start's notice) must leave the missing ones, or its going later would not be said
            if isinstance(event, DocumentsChanged) and (event.removed or event.added):
                look(moved=True)
            elif isinstance(event, ExcludedGone):  # a folder the ignore rules keep out of the index
                look(moved=True)
            elif isinstance(event, RulesChanged) and event.problem is None:
                look(moved=False)
                now_amiss = misspelled()
                for message in sorted(now_amiss - spelled):
                    say(message)
                spelled.clear()
                spelled.update(now_amiss)

        return bus.subscribe(on_event)

    def client_may_not_ask(self, asker: Asker, applied: Applied | None = None) -> str:
        """Why the person's settings do not let this agent's own client ask them ("" when they do):
        the agent's rule's `ask_client`, matched by the name its changes are journaled under (as
        every agent rule is), else `[approve] ask_client`."""
        now = applied or self.applied()
        rule = now.rule_of(asker)
        if rule is not None and rule.ask_client is not None:
            return "" if rule.ask_client else f"the person's rule {rule.source} sets ask_client = false"
        if now.ask_client:
            return ""
        return "the person's settings do not let an agent's client approve changes ([approve] ask_client)"

    def refuse_by_rule(self, effects: EffectSet, asker: Asker, applied: Applied | None = None) -> None:
        """Raise RuleRefused when the agent's own rule forbids any effect of the change, and
        RulesUnreadable while the settings file does not parse (every agent's change waits for it)."""
        if asker.is_person:
            return
        now = applied or self.applied()
        if now.problem is not None:
            raise RulesUnreadable(
                f"{now.problem}. Agents' changes are refused until the person's settings file is fixed; "
                "nothing was written"
            )
        paths = [p for e in effects.effects for p in (e.path, e.via, e.dest) if p]
        said = now.policy().refusal(paths, self.form)  # "never" folders: every agent, its own rule or not
        if said:
            raise RuleRefused(said)
        rule = now.rule_of(asker)
        if rule is None:
            return
        said = rule.refusal(effects.operation, paths, self.form.key)
        if said:
            raise RuleRefused(said)

    def refuse_first(self, scope: Any, effects: EffectSet) -> None:
        """Raise as `refuse_by_rule` does, before the write path puts any byte on disk: a rule that
        refuses outright asks nobody, so nothing of the change (not even its hidden temporary file,
        which a change the person may approve writes ahead) reaches a folder the rule keeps agents
        out of. The refusal is kept in the vault's record as `check` keeps it."""
        from vaultwatch.core.edit.hooks import current_caller  # noqa: PLC0415  (hooks imports nothing from here)

        caller = current_caller()
        asker = Asker(scope.actor, caller.agent if caller else None, caller.session if caller else None)
        try:
            self.refuse_by_rule(effects, asker)
        except RuleRefused as exc:
            self._keep_refusal(scope, effects, exc)
            raise

    def mode_for(self, path: str) -> str:
        return self.policy.mode_for(path, self.form)[0]

    def decide_effects(self, effects: EffectSet, asker: Asker) -> Decision:
        """Would this change wait for the person (and which rule says so)?"""
        return self.applied().policy_for(asker).decide(effects, asker, self.form)

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

    def check(
        self, scope: Any, effects: EffectSet, old: bytes | None, new: bytes | None, *, relinks: Relinks | None = None
    ) -> None:
        """Block until the person approves (return) or declines (raise Declined); called by the write
        path with the change's whole effect set before any of it reaches the disk (a rename's with
        `relinks`, its link rewrites as they will be). A refusal by rule and a decline are kept in the
        vault's record of them (core.review.refusals), which outlives the TUI."""
        try:
            self._check(scope, effects, old, new, relinks=relinks)
        except (RuleRefused, Declined) as exc:
            self._keep_refusal(scope, effects, exc)
            raise

    def _keep_refusal(self, scope: Any, effects: EffectSet, exc: VaultError) -> None:
        from vaultwatch.core.edit.hooks import current_caller  # noqa: PLC0415  (hooks imports nothing from here)

        caller = current_caller()
        if not self.root_real or caller is None:  # only an agent's call is refused or declined
            return
        paths = list(dict.fromkeys(p for e in effects.effects for p in (e.via or e.path, e.dest) if p))
        # refused while the person's approval of a pending change applies it: that pending change's
        # record, which its settling as refused replaces (one record, the final outcome)
        grant = pending_changes.current_grant()
        kind = refusals.REFUSED if isinstance(exc, RuleRefused) else refusals.DECLINED
        refusals.note(
            self.root_real,
            refusals.Refusal(
                at=self.wall(),
                kind=kind,
                agent=caller.agent,
                session=caller.session,
                tool=caller.tool,
                operation=str(scope.operation),
                paths=paths,
                reason=exc.reason if isinstance(exc, Declined) else exc.message,
                pending=grant.proposal.id if grant is not None else None,
                proposed=grant.proposal.at if grant is not None else None,
            ),
        )
        self._publish(RefusalKept(kind))

    def _check(
        self, scope: Any, effects: EffectSet, old: bytes | None, new: bytes | None, *, relinks: Relinks | None = None
    ) -> None:
        from vaultwatch.core.edit.hooks import HandOver, current_caller  # noqa: PLC0415  (hooks imports nothing from here)

        caller = current_caller()
        asker = Asker(scope.actor, caller.agent if caller else None, caller.session if caller else None)
        now = self.applied()  # the settings file as it is now: one reading for the whole decision
        self.refuse_by_rule(effects, asker, now)
        grant = pending_changes.current_grant()
        if grant is not None:  # the person approved this very change while it was pending
            # the rename's link rewrites as they are now: the write path writes these or nothing
            grant.admit(effects, old, self.form, tuple(relinks()) if relinks is not None else ())
            scope.approved_via = grant.via
            return
        decision = now.policy_for(asker).decide(effects, asker, self.form)
        timeout = now.timeout
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
            not_asked = self.client_may_not_ask(asker, now)
            if not not_asked:
                asked = question(
                    effects, old, new, decision.why, agent=caller.agent, relinks=relinks, operation=operation
                )
                not_asked = asked.why_not
                if asked.text is not None:
                    approved, reason = caller.ask(
                        asked.text, timeout, pending_changes.binding(effects, old, new, asked.links)
                    )
                    if approved:
                        # a rule the person added while it waited still holds, and so does taking
                        # back the client's say
                        self.refuse_by_rule(effects, asker)
                        if self.client_may_not_ask(asker):
                            raise Declined("the person's settings no longer let an agent's client approve", decision)
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
            timeout,
            dict(caller.arguments) if caller else dict(scope.arguments),
            effects.effects,
            decision,
            # read here, in the writer's thread, not by the dialog: the write path compares them
            # with the notes again once the person answers (a note edited meanwhile is a conflict)
            tuple(relinks()) if relinks is not None else (),
            effects.permanent,
            effects.stranded,
        )
        pending.newest = self._newest_change()
        with self._lock:
            self._pending[pending.id] = pending
        if caller is not None:
            caller.waiting = pending
        scope.pending = pending  # the write path calls finished() once the change is written or refused
        self._publish(ApprovalRequested(pending))
        try:
            if not pending._done.wait(timeout):
                self._settle(pending, False, f"no decision within {timeout:g} s in vaultwatch's TUI", TIMED_OUT)
        finally:
            if caller is not None:
                caller.waiting = None
        if not pending.approved and pending.by in (TIMED_OUT, LEFT):
            # nobody decided: it waits for the person as it would have with no TUI open
            if caller is not None and self.root_real:
                raise pending_changes.propose(
                    self.root_real,
                    scope,
                    caller,
                    effects,
                    old,
                    new,
                    decision.why,
                    self.wall(),
                    undecided=pending.reason,
                )
            raise Undecided(pending.reason, decision)
        if not pending.approved:
            raise Declined(pending.reason or "declined", decision)
        self.refuse_by_rule(effects, asker)  # a rule the person added while it waited still holds
        scope.approved_via = APPROVED_IN_TUI

    def decide(self, pending_id: int, approved: bool, reason: str = "") -> bool:
        """The person's answer; False when that change is no longer waiting."""
        with self._lock:
            pending = self._pending.get(pending_id)
        if pending is None:
            return False
        return self._settle(pending, approved, reason.strip() or ("" if approved else "declined in the TUI"), "person")

    def finished(self, pending: Pending, error: BaseException | None = None) -> None:
        """The call `pending` held has finished (written, refused or declined; `error`: what it raised).
        A change the person approved that still failed (the note edited or its folder moved while it
        waited) says why, for the person, who would otherwise believe it applied."""
        failed = ""
        if pending.approved and error is not None:
            failed = error.message if isinstance(error, VaultError) else str(error) or type(error).__name__
            if not isinstance(error, (RuleRefused, Declined)):  # (those `check` kept already)
                self._keep_unapplied(pending, failed)
        self._publish(ApprovalFinished(pending.id, failed))

    def _keep_unapplied(self, pending: Pending, failed: str) -> None:
        """An approval in the dialog that could not apply is kept in the record of changes that did not
        happen, as a pending change's is (core.review.pending): the person said yes, and nothing changed."""
        from vaultwatch.core.edit.hooks import current_caller  # noqa: PLC0415  (hooks imports nothing from here)

        if not self.root_real:
            return
        caller = current_caller()
        refusals.note(
            self.root_real,
            refusals.Refusal(
                at=self.wall(),
                kind=refusals.REFUSED,
                agent=pending.agent or pending.actor,
                session=pending.session,
                tool=caller.tool if caller is not None else pending.operation,
                operation=pending.operation,
                paths=list(dict.fromkeys(p for p in (pending.path, pending.dest) if p)),
                reason=f"approved in vaultwatch's TUI, but could not apply: {failed}",
            ),
        )
        self._publish(RefusalKept(refusals.REFUSED))

    def _newest_change(self) -> int | None:
        journal = self.history()
        if journal is None:
            return None
        newest = journal.changes(limit=1)
        return newest[0].id if newest else 0

    def moved_since_asked(self, pending: Pending, rel: str) -> str | None:
        """Where the note at `rel` went while `pending` waited for the person, by the moves the journal
        saw since (None: it did not see one): an agent told to read it again must not retry at `rel`."""
        journal = self.history()
        if journal is None or pending.newest is None:
            return None
        now = journal.where_now(rel, pending.newest)[0]
        return now if now != rel else None

    def _settle(self, pending: Pending, approved: bool, reason: str, by: str) -> bool:
        with self._lock:
            if self._pending.pop(pending.id, None) is None:
                return False
            pending.approved = approved
            pending.reason = reason
            pending.by = by
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
        gate.history = lambda: kept_journal(vault)
        gate.wall = lambda: vault.clock.now().timestamp()
    vault.approval_gate = gate


def kept_journal(vault: Any) -> Any:
    """The vault's journal when it has one on disk, else None: what the rule notices read to know a
    folder was this vault's. Never made for that alone: a journal of its own makes a folder a vault
    of its own (core.review.nestedvault), and a start that is then refused must leave none."""
    if not os.path.exists(journal_path(vault.root_real)):
        return None
    return vault.journal


def configure(
    vault: Any, mode: str | None = None, *, settings: str | None = None, always: bool = False
) -> ApprovalGate:
    """Attach the gate the command line (`--approve MODE`) and the settings file ask for.

    Always a gate, rules or none: it reads the settings file again whenever the file changes
    (`RulesFile`), so rules the person adds later apply at once. The option wins over the file's
    mode until the file's mode is edited; the file's folder and agent rules apply either way.
    (`always` is accepted from older callers; every call attaches a gate now.)
    """
    source = RulesFile(settings or settings_path(), vault.root_real)
    found = source.current()
    # a file with a problem (not parsing, a misspelt rules table) starts the gate anyway: reads are
    # served and every agent's change is refused with the reason, as when the file breaks while
    # running; refusing the start instead left an agent with "connection closed" and no reason
    if mode is not None and mode not in MODES:
        raise VaultError(f"--approve must be one of {', '.join(MODES)}, not {mode!r}")
    gate = ApprovalGate(mode or found.mode or "none", bus=vault.bus, rules=source, chosen=mode)
    attach(vault, gate)
    gate.watch_rule_folders(vault.bus)  # a folder a rule names moved away: the person is told at once
    return gate


def rule_notices(root_real: str, path: str | None = None, journal: Callable[[], Any] | None = None) -> list[str]:
    """The settings file's rules for the vault at `root_real`, read now, that name a folder the vault
    does not have (see ApprovalGate.rule_notices), for a command with no gate of its own: the one
    place a global rule naming a folder this vault never had is said (`quiet=False`), since the
    person asked, without the advice to remove it (`journal()`: the vault's, for what it has had;
    opened only when a rule names a missing folder)."""
    path = path or settings_path()
    rules = read_rules(path, root_real)
    if rules.problem is not None:  # (a gate refuses every agent's change while it stands)
        return [f"{rules.problem} (until it is fixed, agents' changes are refused)"]
    origin = f"settings file {path}"
    found = _notices(rules.folders, rules.agents, root_real, fx.form_of(root_real), origin, journal, quiet=False)
    return [*rules.unknown, *found]


def _notices(
    folders: Iterable[tuple[str, str]],
    agents: AgentRules,
    root_real: str,
    form: PathForm,
    origin: str,
    journal: Callable[[], Any] | None = None,
    *,
    quiet: bool = True,
) -> list[str]:
    """The rules spelled amiss and those naming a folder the vault lacks; `quiet`: only the folders
    known to have been this vault's (said at every start: a global rule naming another vault's
    folder is no news there, and would be said at each start of every other vault)."""
    spelled = rulespelling.rules_of(folders, agents)
    named = rulefolders.named_folders(folders, agents, rulespelling.amiss(spelled, root_real))
    gone = rulefolders.missing(root_real, named, form)
    here = _here(gone, journal, form)
    if quiet:
        gone = {folder: rules for folder, rules in gone.items() if folder in here}
    return rulespelling.notices(spelled, root_real, origin) + rulefolders.start_notices(gone, origin, here)


def _here(gone: Mapping[str, list[str]], journal: Callable[[], Any] | None, form: PathForm) -> set[str]:
    """Of the missing folders, those known to have been this vault's: named by a rule of its own
    `[vaults."PATH"]` table, or holding a path the vault's journal has a change of."""
    own = {folder for folder, rules in gone.items() if any(rulefolders.own_rule(r) for r in rules)}
    rest = [folder for folder in gone if folder not in own]
    found = journal() if journal is not None and rest else None
    return own | (found.folders_seen(rest, form.key) if found is not None else set())


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
    "Applied",
    "GateRules",
    "RefusalKept",
    "RuleFoldersChanged",
    "RulesChanged",
    "RulesFile",
    "TIMED_OUT",
    "Undecided",
    "DEFAULT_TIMEOUT",
    "Declined",
    "LEFT",
    "MODES",
    "Pending",
    "attach",
    "configure",
    "gate_for",
    "load_ask_client",
    "load_rules",
    "read_rules",
    "rule_notices",
    "settings_path",
]

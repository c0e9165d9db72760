"""The person's rules per agent: what each agent may change, and whether its changes wait for approval.

In the settings file (`$XDG_CONFIG_HOME/vaultwatch/settings.toml`), beside `[approve]`:

    [agents.default]            # every agent without a rule of its own
    approve = "writes"
    [agents."claude-code"]      # the MCP clientInfo name, or the name `mcp-config --agent` gave
    read_only = true
    [agents.scribe]
    write = ["Inbox/**", "Daily/**"]   # the only folders it may change (absent: everywhere; []: none)
    deny = ["Private/**"]              # never these, even inside `write`
    approve = "none"                   # none | writes | deletes (absent: the vault's mode)
    ask_client = true                  # its own client may put a gated change to you (absent: [approve]'s)

    [vaults."~/Notes".agents.scribe]   # this vault only: replaces the rule of that name
    write = ["Inbox/**"]

An agent is known by the name part of its `name/version`. Names are claims: any process of the
same user can connect under any name, so these rules keep mistakes and over-eager agents in
bounds; they are no defence against malware.

A rule decides on a change's effects (every path it really touches, normalised), never on
the path the agent spelled; `refusal` says which rule refused, so the agent's answer names it.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from vaultwatch.core.disk.vaultkeys import nesting, one_table, same_folder, vault_folder
from vaultwatch.core.errors import VaultError
from vaultwatch.core.query.glob import glob_match
from vaultwatch.core.review import rulereach
from vaultwatch.core.review.visible import visible

MODES = ("none", "writes", "deletes")
DEFAULT = "default"
NAME_CHARS = 80  # of an agent's name: what the journal's actor keeps of it, so a rule's name at most


class RuleRefused(VaultError):
    """An agent's rule forbids the change (read-only, or a path outside what it may write)."""

    code = "forbidden"


@dataclass(frozen=True, slots=True)
class AgentRule:
    """One agent's rule. `write` None (not given): it may write anywhere not denied; an empty list:
    nowhere (a list names the only folders it may change, and an empty one names none)."""

    name: str
    read_only: bool = False
    write: tuple[str, ...] | None = None
    deny: tuple[str, ...] = ()
    approve: str | None = None
    source: str = ""  # where the rule is written, e.g. '[agents."scribe"]'
    ask_client: bool | None = None  # its client may ask the person (elicitation); None: [approve]'s setting

    def summary(self) -> str:
        """The rule in a few words, for the TUI's agent list and refusals."""
        if self.read_only:
            parts = ["read-only"]
        else:
            parts = ["writes anywhere" if self.write is None else f"writes {', '.join(self.write) or 'nowhere'}"]
            if self.deny:
                parts.append(f"never {', '.join(self.deny)}")
        if self.approve:
            parts.append(f"approval: {self.approve}")
        if self.ask_client is not None:
            parts.append("its client may approve" if self.ask_client else "never approved by its client")
        return "; ".join(parts)

    def refusal(self, operation: str, paths: Iterable[str], key: Callable[[str], str] | None = None) -> str | None:
        """Why this rule refuses `operation` on `paths` (every effect of the change), or None.
        `key(path)` puts a rule or a path in the form the vault's file system compares names in
        (default: NFC)."""
        form = key or _nfc
        where = self.source or f'[agents."{self.name}"]'
        if self.read_only:
            return f"the person's rule {where} makes this agent read-only: it may not {operation}"
        for path in paths:
            named = form(path)
            denied = (reading for pattern in self.deny for reading in rulereach.readings(pattern))
            if any(rulereach.covers(form(reading), named) for reading in denied):
                return f"the person's rule {where} denies changes to {path!r} (deny = {list(self.deny)})"
            if self.write is not None and not any(
                rulereach.covers(form(pattern), named, grants=True) for pattern in self.write
            ):
                return f"the person's rule {where} lets this agent change only {list(self.write)}, not {path!r}"
        return None


def covers(pattern: str, path: str, *, grants: bool = False) -> bool:
    """Whether a rule's folder glob covers `path` (core.review.rulereach: `X`, `X/` and `X/**` are
    the folder X and all in it; `grants` for a `write` list); both sides compared in Unicode NFC,
    so a rule typed on one system matches names stored by another."""
    return rulereach.covers(_nfc(pattern), _nfc(path), grants=grants)


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


@dataclass(frozen=True)
class AgentRules:
    """Every agent's rule for one vault; `for_agent` answers for any name (unknown ones get `default`)."""

    rules: Mapping[str, AgentRule]

    def for_agent(self, agent: str | None) -> AgentRule:
        """The rule for an agent's `name/version` label (see agent_label)."""
        return self.for_name(agent_name(agent))

    def for_name(self, name: str) -> AgentRule:
        """The rule for the agent called exactly `name` (its clientInfo name)."""
        found = self.rules.get(name) if name else None
        return found or self.rules.get(DEFAULT) or AgentRule(DEFAULT, source="(no rule: the default)")

    def __bool__(self) -> bool:
        return bool(self.rules)


def agent_label(name: str, version: str | None) -> str:
    """The label an agent's calls and changes carry: `name/version` from the client's handshake.
    A slash in the version becomes `_`: agent_name cuts a label at its last slash, and the version
    is the client's to choose, so `reader` sending version `1/x` would read as an agent `reader/1`
    that no rule names, and get the default rule instead of reader's. A name that holds a slash
    keeps one after it even with no version (`acme/writer/`): cut at its last slash, it would be
    another agent, `acme`, whose rule it is not."""
    if version:
        return f"{name}/{version.replace('/', '_')}"
    return f"{name}/" if "/" in name else name


def shown_agent(label: str) -> str:
    """An agent's label as the person's views and commands show it: always `agent <name>`, the name
    as visible() draws it (invisible characters written as `\\uXXXX`, lookalike letters among
    Latin ones too, line breaks and tabs). The name is the client's own claim; judging which
    names read as the person's own label (`human:<login>`) or as vaultwatch's (`outside vaultwatch`)
    would need every invisible character and lookalike letter a terminal or font draws, while with
    the prefix on every agent's name, however it is spelled, none reads as anything but an agent's."""
    return "agent " + visible(label, keep_tab=False)


def agent_name(agent: str | None) -> str:
    """The name part of an agent's `name/version` label (agent_label)."""
    if not agent:
        return ""
    return agent.removeprefix("agent:").rsplit("/", 1)[0] if "/" in agent else agent.removeprefix("agent:")


def parse(data: Mapping[str, Any], vault_root: str | None, *, origin: str = "settings file") -> AgentRules:
    """The rules for `vault_root` from a parsed settings file (`[agents]`, then `[vaults."ROOT".agents]`)."""
    rules: dict[str, AgentRule] = {}
    rules.update(_table(data.get("agents"), "agents", origin))
    vaults = data.get("vaults")
    if vaults is not None and not isinstance(vaults, dict):
        raise VaultError(f"{origin}: [vaults] must be a table of vault folders")
    if vaults and vault_root:
        mine = os.path.realpath(vault_root)
        overlapping: list[tuple[str, str, str]] = []
        own = False
        named: str | None = None  # the key whose agent rules are this vault's
        for folder, table in vaults.items():
            theirs = vault_folder(folder, origin)
            if not same_folder(mine, theirs):
                where = nesting(mine, theirs)
                # only a table with agent rules gives rules that would not apply here (one with
                # triage rules alone is the triage rules' to judge: core.query.triagerules)
                if where is not None and isinstance(table, dict) and "agents" in table:
                    overlapping.append((str(folder), theirs, where))
                continue
            if not isinstance(table, dict):
                raise VaultError(f'{origin}: [vaults."{folder}"] must be a table')
            if "agents" in table:  # (a table with triage rules alone says nothing of agents)
                own = True
                if named is not None:
                    raise one_table(origin, mine, named, str(folder), ".agents")
                named = str(folder)
            rules.update(_table(table.get("agents"), f'vaults."{folder}".agents', origin))
        if overlapping and not own:
            # a rule's globs are relative to the vault it was written for: served from a folder above
            # or below it, `deny = ["Projects/secret/**"]` names nothing, and the rules would quietly
            # not apply; so agents' changes are refused until this vault has a table of its own
            folder, theirs, where = overlapping[0]
            raise VaultError(
                f'{origin}: [vaults."{folder}"] gives rules to {theirs}, and this vault ({mine}) {where} '
                "it: its rules' paths are not this vault's paths, so they cannot be applied here; serve "
                f'{theirs} itself, or add a [vaults."{mine}".agents] table with this vault\'s own rules'
            )
    return AgentRules(rules)


def load(path: str, vault_root: str | None) -> AgentRules:
    """The rules for `vault_root` from the settings file at `path` (none when the file is absent)."""
    import tomllib  # noqa: PLC0415

    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        return AgentRules({})
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise VaultError(f"settings file {path}: {exc}; fix or remove it") from None
    return parse(data, vault_root, origin=f"settings file {path}")


def _table(table: Any, where: str, origin: str) -> dict[str, AgentRule]:
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise VaultError(f"{origin}: [{where}] must be a table of agent names")
    out = {}
    for name, body in table.items():
        source = f'[{where}."{name}"]'
        if not isinstance(body, dict):
            raise VaultError(f"{origin}: {source} must be a table")
        if len(str(name)) > NAME_CHARS:  # no agent's actor could carry it: the rule would never apply
            raise VaultError(f"{origin}: {source}: an agent's name has at most {NAME_CHARS} characters")
        unknown = set(body) - {"read_only", "write", "deny", "approve", "ask_client"}
        if unknown:
            raise VaultError(
                f"{origin}: {source} has unknown keys {sorted(unknown)}; use read_only, write, deny, approve, ask_client"
            )
        read_only = body.get("read_only", False)
        if not isinstance(read_only, bool):
            raise VaultError(f"{origin}: {source} read_only must be true or false")
        approve = body.get("approve")
        if approve is not None and approve not in MODES:
            raise VaultError(f"{origin}: {source} approve must be one of {', '.join(MODES)}, not {approve!r}")
        ask_client = body.get("ask_client")
        if ask_client is not None and not isinstance(ask_client, bool):
            raise VaultError(f"{origin}: {source} ask_client must be true or false")
        out[str(name)] = AgentRule(
            str(name),
            read_only,
            None if body.get("write") is None else _globs(body.get("write"), f"{source} write", origin),
            _globs(body.get("deny"), f"{source} deny", origin),
            approve,
            source,
            ask_client,
        )
    return out


def _globs(value: Any, where: str, origin: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):  # ([] is allowed)
        raise VaultError(f'{origin}: {where} must be a list of folder globs, e.g. ["Inbox/**"]')
    for pattern in value:
        glob_match(pattern, "")  # a bad pattern is said now, not at the first write
    return tuple(value)


__all__ = [
    "AgentRule",
    "AgentRules",
    "DEFAULT",
    "NAME_CHARS",
    "RuleRefused",
    "agent_label",
    "agent_name",
    "covers",
    "load",
    "parse",
]

"""Every setting vaultwatch reads, declared once: the `VAULTWATCH_*` environment variables (type,
default, help) and the keys of `settings.toml` (where they are documented and who reads them).

    from vaultwatch.core import settings
    if settings.env("VAULTWATCH_CACHE"): ...

`env(name)` parses the variable by its declared type; a value that does not parse falls back to
the default and is listed by `problems()`, which the command line reports at start. Reading a
name that is not declared here is a programming error (KeyError), and a test fails on any
`VAULTWATCH_` name in the product code that is not declared. `markdown()` is
docs/settings.md, which a test keeps equal to it.

Standard library only: the bridge, which must start fast, reads one of these.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

_FALSE = ("0", "off", "no", "false")
_TRUE = ("1", "on", "yes", "true")


@dataclass(frozen=True, slots=True)
class EnvSetting:
    """One environment variable: its type ("bool", "int", "float", "str"), default (None: unset
    means "the built-in value", documented in `help`) and what it does."""

    name: str
    kind: str
    default: Any
    help: str

    def parse(self, raw: str) -> Any:
        """The value of `raw`; ValueError when it is not of this setting's type."""
        text = raw.strip()
        if self.kind == "bool":
            if text.lower() in _FALSE:
                return False
            if text.lower() in _TRUE:
                return True
            raise ValueError(f"{self.name}={raw!r}: use 1 or 0")
        if self.kind == "int":
            return int(float(text)) if text else self.default
        if self.kind == "float":
            return float(text) if text else self.default
        return raw


@dataclass(frozen=True, slots=True)
class TomlKey:
    """One key of settings.toml: its table, type as the file spells it, default and help."""

    table: str
    key: str
    kind: str
    default: str
    help: str


ENV: tuple[EnvSetting, ...] = (
    EnvSetting("VAULTWATCH_CACHE", "bool", True, "0: no entry cache (every start parses every note)."),
    EnvSetting(
        "VAULTWATCH_JOURNAL",
        "bool",
        True,
        "0: no change journal (no history, review, revert or approval records). On, a journal that cannot "
        "be opened refuses every agent's change (docs/journal.md).",
    ),
    EnvSetting("VAULTWATCH_JOURNAL_MAX_CHANGES", "int", None, "The journal keeps at most this many changes (10000)."),
    EnvSetting(
        "VAULTWATCH_JOURNAL_MAX_MB", "float", None, "The journal's size cap on disk, WAL included, in MiB (256)."
    ),
    EnvSetting(
        "VAULTWATCH_JOURNAL_KEEP_DAYS",
        "float",
        None,
        "Changes younger than this many days are never dropped to make room (7).",
    ),
    EnvSetting(
        "VAULTWATCH_JOURNAL_AGENT_SHARE",
        "float",
        None,
        "The share of the journal (its bytes and its number of changes) one agent's kept changes may fill "
        "before its writes are refused (0.5).",
    ),
    EnvSetting(
        "VAULTWATCH_PENDING_MAX_CHANGES",
        "int",
        None,
        "At most this many changes wait for the person's approval as pending changes (1000).",
    ),
    EnvSetting(
        "VAULTWATCH_PENDING_MAX_MB",
        "float",
        None,
        "The pending changes waiting for approval may store at most this much, in MiB (256).",
    ),
    EnvSetting(
        "VAULTWATCH_PENDING_AGENT_SHARE",
        "float",
        None,
        "The share of the pending changes (their bytes and their number) one agent's may fill before its "
        "gated changes are refused (0.5).",
    ),
    EnvSetting(
        "VAULTWATCH_SEMANTIC", "bool", True, "0: no search by meaning even when the semantic extra is installed."
    ),
    EnvSetting(
        "VAULTWATCH_NO_FORK", "bool", False, "1: never fork a helper process for a warm start's scan (Linux only)."
    ),
    EnvSetting(
        "VAULTWATCH_BRIDGE_DRAIN",
        "float",
        5.0,
        "Seconds a bridge waits, at the end of its input, for answers still due.",
    ),
    EnvSetting(
        "VAULTWATCH_LANE_QUICK",
        "bool",
        True,
        "0: heavy agent calls do not tune the interpreter's switch interval or collector (for A/B figures).",
    ),
    EnvSetting(
        "VAULTWATCH_PLATFORM_OFF",
        "str",
        "",
        "Comma-separated Linux calls to do without (openat2, proc, peercred, renameat2, glibc): "
        "runs the fallbacks macOS takes (for tests).",
    ),
    EnvSetting(
        "VAULTWATCH_PLATFORM_FOLDS_CASE",
        "bool",
        False,
        "1: take the vault's file system to compare names without case, as macOS's does "
        "(for tests on a case-sensitive machine).",
    ),
    EnvSetting(
        "VAULTWATCH_SDK_FAST_PATH",
        "bool",
        True,
        "0: every MCP call takes the SDK's ordinary path (same answers, slower; for A/B figures).",
    ),
    EnvSetting(
        "VAULTWATCH_STDIO_FRONT_CALLS",
        "bool",
        True,
        "0: `serve --stdio` leaves every tool call to the SDK, also the plain reads and listings its front "
        "answers itself (same answers, slower; for A/B figures).",
    ),
    EnvSetting(
        "VAULTWATCH_STATELESS_SESSION_MINUTES",
        "float",
        30.0,
        "An agent without a session of its own (stateless HTTP, no bridge) starts a new session after "
        "this many idle minutes.",
    ),
    EnvSetting(
        "VAULTWATCH_TOKEN",
        "str",
        None,
        "The bearer token URL clients send to `serve --http`, kept out of their configuration files.",
    ),
)

TOML: tuple[TomlKey, ...] = (
    TomlKey("tui", "theme", "string", "textual-dark", "The TUI's theme; written back when you pick one."),
    TomlKey("tui", "vault", "string", "the demo vault", "What `vaultwatch` opens when no vault is named."),
    TomlKey("tui", "tree_width", "integer", "from the screen", "The folder tree's width, kept when you resize it."),
    TomlKey("keymap", "BINDING_ID", "string", "", "Keys for a binding id (as Textual's set_keymap); `?` lists ids."),
    TomlKey("approve", "mode", "string", "none", "none | writes | deletes: which agents' changes wait for you."),
    TomlKey("approve", "timeout", "number", "120", "Seconds a change waits for your decision."),
    TomlKey(
        "approve",
        "ask_client",
        "boolean",
        "false",
        "With no TUI open, an agent's own client may ask you (MCP elicitation); its answer applies the change, "
        "so it is only as trustworthy as that client. Off: the change waits (`vaultwatch pending`).",
    ),
    TomlKey(
        "approve.folders",
        "GLOB",
        "string",
        "",
        "A folder rule: none | writes | deletes, or never (every agent's change there is refused, whatever "
        "its own rule); first match wins.",
    ),
    TomlKey("agents.NAME", "read_only", "boolean", "false", "The agent may not change anything."),
    TomlKey(
        "agents.NAME",
        "write",
        "list of globs",
        "everywhere",
        "The only folders the agent may change (an empty list: none).",
    ),
    TomlKey("agents.NAME", "deny", "list of globs", "none", "Folders the agent may never change."),
    TomlKey("agents.NAME", "approve", "string", "the vault's", "The agent's own approval mode."),
    TomlKey("agents.NAME", "ask_client", "boolean", "[approve]'s", "Whether this agent's client may ask you."),
    TomlKey(
        "vaults.PATH.agents.NAME",
        "…",
        "",
        "",
        "The same agent rule for one vault only; PATH is the vault's full path or starts with ~/, in any "
        "Unicode form (a vault synced from macOS stores NFD names) and, on a disk that folds case, any "
        "case; two tables naming one vault are a settings problem. A vault "
        "in a folder inside PATH, or one holding it, needs an agents table of its own (an empty one will do; "
        "a triage table is not one): until it has one, it does not start (PATH's paths are not its paths).",
    ),
    TomlKey(
        "triage",
        "deprecated_status",
        "list of words",
        "deprecated, archived, obsolete, superseded",
        "Off an OKF bundle: a `status` that makes a note deprecated (any case); `c` offers the first when no "
        "note's status is one.",
    ),
    TomlKey("triage", "deprecated_tags", "list of words", "deprecated, archived", "Tags that make a note deprecated."),
    TomlKey(
        "triage",
        "deprecated_flags",
        "list of words",
        "deprecated",
        "Keys whose value `true`, `yes` or `on` (any case, a boolean or text) makes it deprecated.",
    ),
    TomlKey(
        "triage", "stale_keys", "list of words", "stale_after, review_by, expires", "Date keys: stale once reached."
    ),
    TomlKey("triage", "stale_unmodified_days", "integer", "0 (off)", "Also stale when untouched this many days."),
    TomlKey(
        "triage", "write_verified", "boolean", "false", "`v` also writes `verified:` into the note (a bundle: always)."
    ),
    TomlKey(
        "vaults.PATH.triage",
        "…",
        "",
        "",
        "The same triage keys for one vault only; PATH is named as for the agent rules above. A vault "
        "in a folder inside PATH, or one holding it, applies none of them until it has a triage table of "
        "its own, and its tabs say so (docs/triage.md).",
    ),
)

_BY_NAME: Mapping[str, EnvSetting] = {s.name: s for s in ENV}

# the parts of a table's name that stand for a name of the person's choosing, and keys of theirs
_ANY_PARTS = ("NAME", "PATH")
_ANY_KEYS = ("BINDING_ID", "GLOB")


def _schema() -> dict[str, Any]:
    """The tables and keys `TOML` declares, as a tree: a table is a dict, a key None, "*" any name
    (an agent's, a vault's path); a table whose whole content is the person's (`[keymap]`,
    `[approve.folders]`) is "*" itself; `…` (the same keys as the table it repeats for one vault)
    is filled in from that table."""
    tree: dict[str, Any] = {}

    def at(parts: list[str]) -> dict[str, Any]:
        node = tree
        for part in parts:
            node = node.setdefault("*" if part in _ANY_PARTS else part, {})
        return node

    for k in TOML:
        parts = k.table.split(".")
        if k.key == "…":  # `vaults.PATH.agents.NAME`: the keys of `agents.NAME`
            tail = parts[2:]
            node = tree
            for part in tail:
                node = node["*" if part in _ANY_PARTS else part]
            parent = at(parts[:-1])
            parent["*" if parts[-1] in _ANY_PARTS else parts[-1]] = node
        elif k.key in _ANY_KEYS:
            at(parts[:-1])[parts[-1]] = "*"
        else:
            at(parts)[k.key] = None
    return tree


@dataclass(frozen=True, slots=True)
class UnknownKey:
    """A table or key of settings.toml that vaultwatch does not read: `parents` the names of the
    tables it is in (as the file spells them), `meant` the nearest known name as the file would
    spell it (None: none is near), `table` whether it is a table."""

    parents: tuple[str, ...]
    name: str
    table: bool
    meant: str | None

    @property
    def where(self) -> str:
        """Where it is, as the file spells it: `[approve.folder]`, `[agents."x"] aprove`."""
        if self.table:
            return f"[{_dotted((*self.parents, self.name))}]"
        return _spelled(self.parents, self.name)


def _spelled(parents: tuple[str, ...], key: str) -> str:
    """A key as the file spells it: `[approve] mode`, or the key alone at the top of the file."""
    return f"[{_dotted(parents)}] {_quoted(key)}" if parents else _quoted(key)


def _quoted(part: str) -> str:
    return part if part and all(c.isalnum() or c in "_-" for c in part) else '"' + part.replace('"', '\\"') + '"'


def _dotted(parts: tuple[str, ...]) -> str:
    return ".".join(_quoted(p) for p in parts)


def unknown_keys(data: Mapping[str, Any]) -> list[UnknownKey]:
    """Every table and key of a parsed settings file that `TOML` does not declare, in the file's
    order, each with the nearest known name: a misspelt or misplaced rules table is otherwise
    ignored without a word, and the person believes a rule protects a folder when none does. Values
    of the wrong type are not judged here (their readers say so)."""
    import difflib  # noqa: PLC0415 (the bridge reads this module and never calls this)

    tree = _schema()
    keys_of: dict[str, list[str]] = {}  # a key's name -> the tables declaring it, for a misplaced key

    def index(node: dict[str, Any], parts: tuple[str, ...]) -> None:
        for name, sub in node.items():
            shown = (*parts, ("NAME" if parts[-1:] == ("agents",) else "PATH") if name == "*" else name)
            if name != "*":
                keys_of.setdefault(name, []).append(
                    f"[{'.'.join(shown)}]" if sub is not None else _spelled(parts, name)
                )
            if isinstance(sub, dict):
                index(sub, shown)

    index(tree, ())
    out: list[UnknownKey] = []

    def walk(node: dict[str, Any], value: Mapping[str, Any], parents: tuple[str, ...]) -> None:
        for name, sub in value.items():
            name = str(name)
            known = node.get(name, node.get("*", ...))
            if known is ...:
                out.append(UnknownKey(parents, name, isinstance(sub, dict), _meant(name, node, parents, keys_of)))
            elif isinstance(known, dict) and isinstance(sub, dict):
                walk(known, sub, (*parents, name))

    def _meant(name: str, node: dict[str, Any], parents: tuple[str, ...], keys: dict[str, list[str]]) -> str | None:
        near = difflib.get_close_matches(name, [n for n in node if n != "*"], n=1, cutoff=0.6)
        if near:
            return f"[{_dotted((*parents, near[0]))}]" if node[near[0]] is not None else _spelled(parents, near[0])
        elsewhere = keys.get(name)  # a known name in the wrong table (`mode` above `[approve]`)
        return elsewhere[0] if elsewhere else None

    walk(tree, data, ())
    return out


def declared(name: str) -> EnvSetting:
    return _BY_NAME[name]


def env(name: str, environ: Mapping[str, str] | None = None) -> Any:
    """The variable's value by its declared type; unset or unparsable: the default."""
    setting = _BY_NAME[name]
    raw = (os.environ if environ is None else environ).get(name)
    if raw is None or (raw.strip() == "" and setting.kind != "str"):
        return setting.default
    try:
        return setting.parse(raw)
    except ValueError:
        return setting.default


def mib(value: float) -> int:
    """A size given in MiB, in bytes."""
    return int(value * 2**20)


def days(value: float) -> float:
    """A time given in days, in seconds."""
    return value * 86400


def bounds(names: Mapping[str, tuple[str, Callable[[Any], Any]]]) -> dict[str, Any]:
    """The variables of `names` (keyword -> (variable, convert)) that are set, converted: a store's
    bounds from the environment, as keyword arguments; unset ones are left to the store's defaults."""
    out: dict[str, Any] = {}
    for key, (name, convert) in names.items():
        value = env(name)
        if value is not None:
            out[key] = convert(value)
    return out


def problems(environ: Mapping[str, str] | None = None) -> list[str]:
    """Every set variable whose value does not parse, or that vaultwatch does not know."""
    source = os.environ if environ is None else environ
    out = []
    for name, raw in sorted(source.items()):
        if not name.startswith("VAULTWATCH_") or name.startswith(
            ("VAULTWATCH_TEST", "VAULTWATCH_BENCH", "VAULTWATCH_CI")
        ):
            continue
        setting = _BY_NAME.get(name)
        if setting is None:
            out.append(f"{name} is not a vaultwatch setting (see docs/settings.md)")
            continue
        try:
            setting.parse(raw)
        except ValueError as exc:
            out.append(f"{exc}; using the default")
    return out


def markdown() -> str:
    """docs/settings.md."""
    lines = [
        "# Settings",
        "",
        "Generated from `core/settings.py` (a test keeps this page equal to it).",
        "",
        "## Environment variables",
        "",
        "| variable | type | default | what it does |",
        "| --- | --- | --- | --- |",
    ]
    for s in ENV:
        default = "(built in)" if s.default is None else str(s.default).lower() if s.kind == "bool" else str(s.default)
        lines.append(f"| `{s.name}` | {s.kind} | {default} | {s.help} |")
    lines += [
        "",
        "## settings.toml",
        "",
        "`$XDG_CONFIG_HOME/vaultwatch/settings.toml` (default `~/.config/vaultwatch/settings.toml`).",
        "",
        "Edits take effect at once, in a TUI or server already running: every decision on an agent's",
        "change (its rules, the approval mode and folder rules, an approval a running server applies)",
        "reads the file as it is then (one stat; read again when it changed), and the TUI's status line",
        "and activity panel follow it within two seconds. `--approve MODE` and the TUI's `g` choose the",
        "mode until the file's `[approve] mode` is next edited. That is the vault's mode: an agent whose",
        "table sets its own `approve` keeps it (you chose it for that agent; `g` choosing none must not",
        "loosen it), and folder rules decide their folders, so `g`'s notice and the status line name",
        "both (`approve: writes (scribe: none) + folder rules`). While the file does not parse, or",
        "`[approve]`, `[agents]` or `[vaults.PATH.agents]` hold a value of the wrong type, every agent's",
        "change is refused, saying what is wrong, and the person's own changes and agents' reads go on",
        "(never the rules dropped); a server or TUI started on such a file says so and does not start. A",
        "file an editor's save leaves gone or empty for a moment keeps its rules for two seconds. In the",
        "other tables a value of the wrong type is reported and the rest is used.",
        "",
        "A table or key vaultwatch does not know (`[approve.folder]`, `aprove = ...`) is reported with",
        "the known name nearest it (`did you mean [approve.folders]?`), where a rule's notices are said.",
        "Under `[approve]`, `[agents]` or the served vault's `[vaults.PATH]` table, or at the top of the",
        "file nearest one of them (`[aprove]`) or holding what reads as a rule whatever its name",
        '(`[never]` with `"Finance/**" = "never"`, a `deny` list, `read_only = true`), it refuses agents\'',
        "changes as a wrong value there does: the rule you typed there would not apply. Folder rules",
        "are global: `[vaults.PATH.approve]` is not supported (it is refused, saying so); keep agents",
        "out of one vault's folder with a `deny` in its `[vaults.PATH.agents.NAME]` tables.",
        "",
        "`[agents.default]` applies only to agents without an `[agents.NAME]` table of their own: a",
        "named agent gets its own table's rule instead, never both. For a rule that covers every agent,",
        'named or not, use a folder rule: `"Templates/**" = "never"` under `[approve.folders]` refuses every',
        "agent's change there (a folder rename or delete that would move it, a rename that would rewrite",
        "a link in it), and the refusal names that rule.",
        "",
        "Rules name folders by path, and do not follow a folder you rename (in Obsidian or with `mv`):",
        "the file is yours, and a rule rewritten behind your back could widen or narrow what an agent may",
        "do without your word, or hand a folder's protection to another made later under its old name. A",
        "rule (a folder rule, an agent's `write` or `deny`) whose literal folder part names no folder of",
        "the vault matches nothing, so it is reported: as a settings notice in the TUI, by",
        "`vaultwatch pending` and in the server's log, when the vault is known to have had that folder",
        "(its change journal holds a change there, or the rule is in its own `[vaults.PATH]` table); and",
        "when a folder a rule names goes away while vaultwatch runs, the TUI says so at once (`Templates",
        "was moved or removed: rules naming it match nothing now: ...`), in a notice that stays until you",
        "dismiss it, and its status line says it for as long as the folder is missing (`never: Templates/**",
        "(no such folder)`, `rules name missing folders: Daily`). Edit the rule to the folder's new name. A",
        "global rule naming a folder the vault never had is as likely another vault's: only `vaultwatch",
        "pending` says it (correct it if it is misspelt), never advising to remove it.",
        "",
        "| table | key | type | default | what it does |",
        "| --- | --- | --- | --- | --- |",
    ]
    for k in TOML:
        lines.append(f"| `[{k.table}]` | `{k.key}` | {k.kind} | {k.default} | {k.help} |")
    lines += RULE_GLOBS
    return "\n".join(lines) + "\n"


# what a rule's glob covers (core/review/rulereach.py), said once for every rule that takes one
RULE_GLOBS = [
    "",
    "### What a rule's glob covers",
    "",
    "A folder rule (`[approve.folders]`) and an agent's `write` and `deny` lists take globs on paths",
    "relative to the vault's root (`*` and `?` within one level, `**` any number of levels), read so",
    "that a rule never covers less than you wrote:",
    "",
    "- **A folder and everything in it.** `Money`, `Money/` and `Money/**` are one rule: the folder",
    "  `Money` itself (a rename or delete of it) and every file and folder inside it, as",
    "  `.vaultwatchignore` (gitignore) reads `Money/`. A bare name that is a file (`Taxes.md`) covers",
    "  that file; the rule is the same whichever it is, so a folder made later under that name is",
    "  covered too. Unlike gitignore, a bare name is anchored at the vault's root: `**/Money` names",
    "  every folder called Money. `./Money`, `/Money` and `Money//` are `Money`; `.` is the whole vault.",
    "- **Brackets in a real folder name.** `[...]` is read both ways: as one of its characters",
    "  (`[Dd]rafts` covers `Drafts` and `drafts`) and as the brackets themselves, so",
    '  `"Finance [2024]/**"` covers your folder `Finance [2024]` (and, as a glob, `Finance 2`, `Finance 0`',
    "  and `Finance 4`). A rule covers what either reading matches: no escape is needed, and none can",
    '  be forgotten. In a `write` list or a folder rule `"none"` that means those names are granted too.',
    "- **A restricting rule holds what is inside a folder it matches.** A `deny` and a folder rule",
    '  `"writes"` or `"deletes"` cover the contents of every folder their glob matches: `deny =',
    '  ["Journal/*"]` holds `Journal/2024/d.md` as well as `Journal/d.md`.',
    "- **A granting rule reaches no further than it names.** A `write` list and a folder rule",
    '  `"none"` reach into a folder only when their last level names it without `*` or `?`: `write =',
    '  ["Inbox/*"]` lets the agent change the entries of `Inbox`, not what is inside its subfolders;',
    '  write `"Inbox"` (or `"Inbox/**"`) for all of it.',
    "- **A rule spelled so that it covers nothing is reported.** Vault paths are separated by `/` and",
    "  start at the vault's top folder, so `Templates\\**` (a Windows path), `../Templates/**`, the",
    "  vault's absolute path (`/home/me/Vault/Templates/**`) and a rule with a space before or after it",
    "  match nothing as written, and an empty rule covers the whole vault. Each is said where a missing",
    "  folder is said, with the spelling meant (`the rule ... covers nothing: ...: write it as",
    '  "Templates/**"`); the rule is left as you wrote it. A restricting rule (a `deny`, a folder rule',
    '  other than `"none"`) with backslashes or spaces around it is applied as meant too, so it never',
    "  covers less than either reading; a granting one only as written, so it never grants more.",
    "",
    "Names are compared in Unicode NFC (a vault synced from macOS stores NFD names) and, on a disk",
    "that folds case, without case. A rule that restricts (a `deny`, a folder rule other than",
    '`"none"`) covers a path in any case and with trailing dots or spaces dropped from its names too:',
    "one folder of the vault may sit on a disk that folds case (an ext4 casefold folder, a vfat or",
    "exFAT mount, a Windows share) where `Secret`, `secret` and `Secret.` are one folder. A granting",
    "rule covers only the spelling it names, unless the whole vault folds case. Every rule is checked",
    "against every path a change touches: a rename of a folder above a covered one is checked against",
    "every file under it, a write through a symbolic link by the link's target.",
    "",
    "The globs are paths from the root of the vault served. No server starts on a folder inside a vault",
    "another vaultwatch serves, nor on one holding a served folder, where they would name other paths",
    "(docs/agents.md): to keep an agent to a folder, give it a `write` list on the vault's server. With",
    "no server running, a folder inside a vault vaultwatch knows (it keeps a change journal of it, or",
    'this file has a `[vaults."PATH"]` table for it) is refused too, unless it is a vault of its own: it',
    'has a journal of its own (it was served or opened before), a `[vaults."FOLDER"]` table (an empty',
    "one will do), or is started with `--allow-nested`. A refused folder gets no journal (opening it in",
    "the TUI or `vaultwatch changes` makes none), so being refused never makes it a vault of its own.",
    "A folder holding a vault vaultwatch knows is refused the same way, even with a journal of its own",
    "(from there the rules would name other folders of it): serve that vault, or, if you mean it,",
    'give the folder a `[vaults."FOLDER"]` table or start it with `--allow-nested`. The refusal names',
    "the journal that makes a folder known: if that folder was served by accident, move the journal",
    "file out of the state folder (after `vaultwatch changes FOLDER`: it is that folder's history).",
    "When the folder holding it has a journal of its own too (say the vault inside was served once",
    "with `--allow-nested`), the refusal leads with that: it never advises serving the vault inside",
    "while the folder around it may be the vault your rules were written for.",
]


__all__ = [
    "ENV",
    "TOML",
    "EnvSetting",
    "TomlKey",
    "UnknownKey",
    "declared",
    "env",
    "markdown",
    "problems",
    "unknown_keys",
]

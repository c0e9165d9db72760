"""The person's triage rules for a vault that is not an OKF bundle: which notes are deprecated
and which are stale, by rules the person can read in the tabs and set in the settings file.

OKF bundles keep OKF's own semantics (`core.markdown.okf`); these rules are a separate layer for
the person's views, so what `list_documents` answers agents off a bundle does not change.

In the settings file (`$XDG_CONFIG_HOME/vaultwatch/settings.toml`):

    [triage]                                # every vault
    deprecated_status = ["deprecated", "archived", "obsolete", "superseded"]
    deprecated_tags = ["deprecated", "archived"]
    deprecated_flags = ["deprecated"]       # keys whose true/yes/on value marks a note deprecated
    stale_keys = ["stale_after", "review_by", "expires"]
    stale_unmodified_days = 0               # > 0: also stale when untouched this long
    write_verified = false                  # `v` also writes a `verified:` entry into the note

    [vaults."~/Notes".triage]               # this vault only: replaces the keys it sets
    stale_keys = ["review_by"]
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from vaultwatch.core.clock import Clock
from vaultwatch.core.disk.vaultkeys import nesting, one_table, same_folder, vault_folder
from vaultwatch.core.errors import QueryError, VaultError
from vaultwatch.core.index.snapshot import Snapshot
from vaultwatch.core.markdown import mdlex, okf
from vaultwatch.core.model import Entry
from vaultwatch.core.query import postings

KINDS = ("deprecated", "stale")
_NS_PER_DAY = 86400 * 10**9


@dataclass(frozen=True, slots=True)
class TriageRules:
    """What Deprecated and Stale mean off an OKF bundle. Words compare regardless of case."""

    deprecated_status: tuple[str, ...] = ("deprecated", "archived", "obsolete", "superseded")
    deprecated_tags: tuple[str, ...] = ("deprecated", "archived")
    deprecated_flags: tuple[str, ...] = ("deprecated",)
    stale_keys: tuple[str, ...] = ("stale_after", "review_by", "expires")
    stale_unmodified_days: int = 0
    write_verified: bool = False
    source: str = "the defaults"  # where the rules were set, for the tabs' rule line

    def describe(self, kind: str) -> str:
        """The rule of one tab in one line, and where it is set."""
        if kind == "deprecated":
            parts = []
            if self.deprecated_status:
                parts.append(f"status is {' / '.join(self.deprecated_status)}")
            if self.deprecated_tags:
                parts.append(f"tagged {' / '.join('#' + t for t in self.deprecated_tags)}")
            if self.deprecated_flags:
                parts.append(" / ".join(f"{k}: true" for k in self.deprecated_flags))
            rule = " or ".join(parts) or "nothing (every rule is empty)"
        elif kind == "stale":
            parts = [f"{' / '.join(self.stale_keys)} reached"] if self.stale_keys else []
            if self.stale_unmodified_days > 0:
                parts.append(f"unmodified for {self.stale_unmodified_days} days")
            rule = " or ".join(parts) or "nothing (every rule is empty)"
        else:
            raise ValueError(f"unknown triage kind {kind!r}")
        return f"Rule: {rule} · set in {self.source} [triage]"


_WORD_LISTS = ("deprecated_status", "deprecated_tags", "deprecated_flags", "stale_keys")


def parse(data: Mapping[str, Any], vault_root: str | None, *, origin: str = "settings file") -> TriageRules:
    """The rules for `vault_root` from a parsed settings file: the defaults, then `[triage]`,
    then `[vaults."ROOT".triage]`. A wrong value raises VaultError naming the key, and so do a
    relative `[vaults."..."]` key and another vault's `triage` table when this vault lies inside or
    holds that vault and has no `triage` table of its own."""
    rules = TriageRules()
    set_any = False
    table = data.get("triage")
    if table is not None:
        rules = _apply(rules, table, "triage", origin)
        set_any = True
    vaults = data.get("vaults")
    if vaults is not None and not isinstance(vaults, dict):
        raise VaultError(f"{origin}: [vaults] must be a table of vault folders")
    if vaults and vault_root:
        mine = os.path.realpath(vault_root)
        overlapping: list[tuple[str, str, str]] = []
        own = False
        named: str | None = None  # the key whose triage rules are this vault's
        for folder, vtable in vaults.items():
            theirs = vault_folder(folder, origin)
            if not isinstance(vtable, dict) or vtable.get("triage") is None:
                continue
            if not same_folder(mine, theirs):
                where = nesting(mine, theirs)
                if where is not None:
                    overlapping.append((str(folder), theirs, where))
                continue
            if named is not None:
                raise one_table(origin, mine, named, str(folder), ".triage")
            named = str(folder)
            rules = _apply(rules, vtable["triage"], f'vaults."{folder}".triage', origin)
            set_any = own = True
        if overlapping and not own:
            # the person wrote that table for another folder's notes: served from a folder inside
            # or above it, whether its words fit these notes is the person's to say, and applying
            # them (or quietly not) would make the tabs disagree with what the person set
            folder, theirs, where = overlapping[0]
            raise VaultError(
                f'{origin}: [vaults."{folder}".triage] gives triage rules to {theirs}, and this vault ({mine}) '
                f"{where} it: they are that vault's rules, so they are not applied here; open {theirs} "
                f'itself, or add a [vaults."{mine}".triage] table with this vault\'s own rules'
            )
    return replace(rules, source=origin) if set_any else rules


def load(path: str, vault_root: str | None) -> TriageRules:
    """The rules for `vault_root` from the settings file at `path` (the defaults when absent)."""
    import tomllib  # noqa: PLC0415

    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        return TriageRules()
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise VaultError(f"settings file {path}: {exc}; fix or remove it") from None
    return parse(data, vault_root, origin=path)


def _apply(rules: TriageRules, table: Any, where: str, origin: str) -> TriageRules:
    if not isinstance(table, dict):
        raise VaultError(f"{origin}: [{where}] must be a table")
    known = {f.name for f in fields(TriageRules)} - {"source"}
    changes: dict[str, Any] = {}
    for key, value in table.items():
        if key not in known:
            raise VaultError(f"{origin}: [{where}] has no key {key!r}: use one of {', '.join(sorted(known))}")
        if key in _WORD_LISTS:
            if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
                raise VaultError(f'{origin}: [{where}] {key} must be a list of words, e.g. ["archived"]')
            changes[key] = tuple(v.strip().lstrip("#").casefold() for v in value)
        elif key == "stale_unmodified_days":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise VaultError(f"{origin}: [{where}] {key} must be a whole number of days (0: off)")
            changes[key] = value
        else:  # write_verified
            if not isinstance(value, bool):
                raise VaultError(f"{origin}: [{where}] {key} must be true or false")
            changes[key] = value
    return replace(rules, **changes)


FLAG_WORDS = ("true", "yes", "on")  # a deprecated flag's words for "on", in any case


def flag_on(value: Any) -> bool:
    """True when a deprecated flag's value says "on": the words people type for it, `true`, `yes`
    or `on` in any case, whether YAML read them as a boolean (the parser follows YAML 1.1, as
    python-frontmatter does: an unquoted `yes` or `on` is true) or as text (Obsidian's properties
    follow YAML 1.2, where `yes` is text, and store a quoted `"yes"`). Numbers, dates and other
    words are not: `deprecated: 1` or `"someday"` says nothing the person can read as yes."""
    if isinstance(value, bool):
        return value
    return isinstance(value, str) and value.strip().casefold() in FLAG_WORDS


def status_words(value: Any) -> tuple[str, ...]:
    """The words a `status` property holds, as Obsidian shows them: a text; a link by its target
    (`[[Archived]]`, `[[Archived|old]]` -> `Archived`), since Obsidian's properties hold links and
    kepano's template writes `status: ["[[Active]]"]`; or a list of them. Anything else (a number,
    a mapping, a template's `{{status}}` placeholder) holds none."""
    out: list[str] = []
    for item in value if isinstance(value, list) else (value,):
        if not isinstance(item, str):
            continue
        word = mdlex.property_link(item)
        if word is None:
            word = item.strip()
        if word:
            out.append(word)
    return tuple(out)


def is_deprecated(entry: Entry, rules: TriageRules) -> bool:
    """True when the note's status (any of its words, `status_words`), tags or a flag key says so
    by `rules`."""
    fm = entry.frontmatter
    if rules.deprecated_status and any(
        word.casefold() in rules.deprecated_status for word in status_words(fm.get("status"))
    ):
        return True
    if rules.deprecated_tags:
        for tag in entry.tags:
            word = tag.lstrip("#").casefold()
            # a nested tag (#archived/2024) counts as its top-level tag
            if word in rules.deprecated_tags or word.split("/", 1)[0] in rules.deprecated_tags:
                return True
    return any(flag_on(fm.get(key)) for key in rules.deprecated_flags)


def due_date(entry: Entry, rules: TriageRules) -> dt.date | None:
    """The earliest date among the note's stale keys (an offset datetime counts by its date)."""
    found: list[dt.date] = []
    for key in rules.stale_keys:
        if key in entry.frontmatter:
            day, instant = okf.parse_stale_after(entry.frontmatter[key])
            if day is not None:
                found.append(day)
            elif instant is not None:
                found.append(instant.date())
    return min(found) if found else None


def is_stale(entry: Entry, rules: TriageRules, clock: Clock) -> bool:
    """True when a stale key's date is reached, or (when set) the note is untouched that long."""
    due = due_date(entry, rules)
    if due is not None and due <= clock.today():
        return True
    if rules.stale_unmodified_days > 0:
        cutoff = clock.now().timestamp() * 10**9 - rules.stale_unmodified_days * _NS_PER_DAY
        return entry.mtime_ns < cutoff
    return False


def positions(snapshot: Snapshot, kind: str, rules: TriageRules, clock: Clock) -> frozenset[int]:
    """Note positions (as `core.query.postings` numbers them) that `kind`'s rule selects;
    memoized for this generation (and, for stale, this day)."""
    entries = postings.notes(snapshot)[1]
    if kind == "deprecated":
        return snapshot.cached(
            ("triage", kind, rules),
            lambda: frozenset(i for i, e in enumerate(entries) if is_deprecated(e, rules)),
        )
    if kind == "stale":
        key = ("triage", kind, rules, clock.today())  # a day's answers: stale dates are whole days
        return snapshot.cached(key, lambda: frozenset(i for i, e in enumerate(entries) if is_stale(e, rules, clock)))
    raise VaultError(f"triage kind {kind!r} is unknown: use one of {', '.join(KINDS)}")


def pair_positions(snapshot: Snapshot, key: str, want: str, rules: TriageRules, clock: Clock) -> frozenset[int] | None:
    """The note positions a filter pair selects when it names a triage tab off an OKF bundle:
    `status:deprecated` is the Deprecated tab's notes and `stale:true`/`stale:false` the Stale tab's
    notes or the others, by `rules` (the same `positions` the tabs list), so the filter bar's words
    select what the tabs count. None for any other pair (plain frontmatter equality). Raises
    QueryError for a `stale` value that is not a boolean word."""
    if key == "status" and want == "deprecated":
        return positions(snapshot, "deprecated", rules, clock)
    if key == "stale":
        flag = okf.parse_bool_word(want)
        if flag is None:
            raise QueryError(f"stale filter {want!r} is not a boolean: use true or false (also yes/no/1/0)")
        stale = positions(snapshot, "stale", rules, clock)
        return stale if flag else frozenset(postings.all_notes(snapshot) - stale)
    return None

"""Whether a folder about to be served lies inside, or holds, a vault the person has rules for.

The rules of the settings file (`[approve.folders]`, an agent's `write` and `deny`) are globs on
paths from the root of the vault served. Served from a folder inside that vault, they name other
paths: `"Finance/**" = "never"` covers nothing of `Vault/Finance` served on its own, and an agent
given that folder writes there unasked. Served from a folder above it, they name other paths too:
`"Templates/**" = "never"` covers nothing of `Parent/Vault/Templates`. A server already running
above or below is refused by the vault lock (core.disk.vaultlock.nested_server); this is the same
refusal when none runs.

A folder counts as a vault of the person's only where vaultwatch has something of it: a change
journal in the state folder (vaultwatch served or opened it), or a `[vaults."FOLDER"]` table in
the settings file. A `.obsidian` folder alone does not count (Obsidian's own vault holds no
vaultwatch rules), nor does a home folder or a repository that was never served, so a vault in a
home folder, the demo vault in an installed package and a test's temporary folder start as before.

A folder with a journal or a table of its own is a vault of its own: one inside a known vault
starts (an accidental serve of the folder above does not lock the real vault out). A journal is
made by vaultwatch run by the person (a server, the TUI, `vaultwatch changes`), never by an agent,
and never for a folder inside a known vault (`journal_withheld`, asked by the Vault before it makes
one) unless `--allow-nested`: so a refused folder never becomes a vault of its own by being opened.
A folder holding a known vault is refused even with a journal of its own (that journal may be the
accident); only a table of its own or `--allow-nested` says the person means it.

The journals' file names are the vault's folder name and a digest of its path, so the vaults below
a folder are found by walking its folders (not its files, no symbolic links) for names that match a
journal's; the walk is skipped when no journal but the folder's own and its parents' is left.

Real paths do not see mounts: `mount --bind VAULT/Private /mnt/p` shows a folder of the vault at a
path outside it, and `/mnt/p` served would be a vault of its own with none of the vault's rules. So
the folder is looked at under every path it is reachable at (core.disk.mounts), and so are the
known vaults when looking below it (a vault shown by a mount inside the folder); the refusal names
both paths and the mounts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from vaultwatch.core.disk import mounts
from vaultwatch.core.disk.mounts import Alias
from vaultwatch.core.disk.vaultkeys import nesting, same_folder, vault_folder
from vaultwatch.core.disk.vaultlock import VaultNested
from vaultwatch.core.errors import VaultError
from vaultwatch.core.review import vaultroots
from vaultwatch.core.review.guardenv import settings_path
from vaultwatch.core.review.journal import enabled_by_env, journal_path

ALLOW_FLAG = "--allow-nested"


@dataclass(frozen=True, slots=True)
class Known:
    """A folder vaultwatch knows as a vault of the person's, and what shows it."""

    folder: str
    journal: str | None  # its journal file, when that is the evidence
    table: str | None  # the key of its `[vaults."..."]` table, when that is the evidence

    @property
    def evidence(self) -> str:
        if self.table is not None:
            return f'settings.toml has a [vaults."{self.table}"] table for it'
        # a journal says only that vaultwatch served or opened the folder as a vault: no rule of the
        # settings file names it, so none is said to be "from" it
        return f"it was served on its own before: it has a change journal, {self.journal}"

    def forget(self) -> str:
        """How the person forgets this folder as a vault, if it was served by accident."""
        if self.table is not None:
            return f'remove its [vaults."{self.table}"] table from settings.toml'
        return (
            f"move its journal {self.journal} (and any -wal and -shm files beside it) out of the state "
            f"folder; that file is the history of changes made there, so look at it first with "
            f"`vaultwatch changes {self.folder}` and keep the copy"
        )


@dataclass(frozen=True, slots=True)
class VaultAbove:
    """The vault `known.folder` holding the folder `root` to serve, which has no rules of its own."""

    root: str
    known: Known
    parent_refused: str | None = None  # why serving the vault above would be refused too (a vault in it)
    via: Alias | None = None  # `root` is this other path of the folder asked about, through a mount

    @property
    def folder(self) -> str:
        return self.known.folder

    def refusal(self) -> str:
        return _through(self.via) + self._refusal()

    def _refusal(self) -> str:
        rel = self.root[len(self.folder) :].strip("/")
        if self.parent_refused is None:
            instead = (
                f"Serve {self.folder} instead and keep an agent to this folder with "
                f'`[agents.NAME] write = ["{rel}/**"]` in settings.toml; or, if'
            )
        else:
            instead = f"Serving {self.folder} instead is refused too: {self.parent_refused}. If"
        return (
            f"{self.root} lies inside the vault {self.folder} ({self.known.evidence}): {_READ_FROM} so served "
            f"from {self.root} they would name other folders than served from {self.folder}. {instead} "
            f"{self.root} is a vault of its own, start it with {ALLOW_FLAG} (or give it a "
            f'[vaults."{self.root}"] table in settings.toml). If {self.folder} is no vault of yours and '
            f"was served by accident, {self.known.forget()}"
        )


@dataclass(frozen=True, slots=True)
class VaultBelow:
    """The vault `known.folder` inside the folder `root` to serve."""

    root: str
    known: Known
    via: tuple[Alias, ...] = ()  # the paths, through mounts, at which `root` holds `known.folder`
    own: Known | None = None  # what shows `root` is a vault of the person's too (its journal)
    inner_refused: str | None = None  # why serving `known.folder` itself would be refused too

    @property
    def folder(self) -> str:
        return self.known.folder

    def refusal(self) -> str:
        return "".join(_through(alias) for alias in self.via) + self._refusal()

    def _refusal(self) -> str:
        said = (
            f"{self.root} holds the vault {self.folder} ({self.known.evidence}): {_READ_FROM} so served "
            f"from {self.root} they would name other folders of {self.folder} than when it is served itself."
        )
        nested = (
            f"you mean {self.root} to be a vault with {self.folder} in it under {self.root}'s rules, start "
            f'it with {ALLOW_FLAG} (or give it a [vaults."{self.root}"] table in settings.toml)'
        )
        if self.own is not None and self.known.table is None:
            # both were served as vaults, the one below only by a journal: serving it alone would leave
            # the rules the person served this folder under out of reach, so undoing it leads; serving
            # it is said only once this folder is undone, and never when that too would be refused
            inner_alone = (
                ""
                if self.inner_refused is not None
                else f" If it is {self.root} that was opened by accident instead, {self.own.forget()}, then "
                f"serve {self.folder} itself."
            )
            return (
                f"{said} If {self.folder} was served on its own by accident, make it no vault again: "
                f"{self.known.forget()}. {self.root} then starts. Or, if {nested}.{inner_alone}"
            )
        if self.inner_refused is not None:
            return (
                f"{said} Serving {self.folder} itself is refused too: {self.inner_refused}. If {nested}. "
                f"If {self.folder} is no vault of yours and was opened by accident, {self.known.forget()}"
            )
        return (
            f"{said} Serve {self.folder} itself; or, if {nested}. If {self.folder} is no vault of yours and "
            f"was opened by accident, {self.known.forget()}"
        )


@dataclass(frozen=True, slots=True)
class VaultElsewhere:
    """The folder `root` to serve is the vault `known.folder` itself, reached through a mount at
    another path: served there it would have a journal and a socket of its own, so the vault's
    history would split in two, and a server on each path would guard the one folder twice, each
    unaware of the other's agents."""

    root: str
    known: Known
    via: Alias

    @property
    def folder(self) -> str:
        return self.known.folder

    def refusal(self) -> str:
        return (
            f"{_through(self.via)}{self.folder} is a vault of the person's ({self.known.evidence}), so "
            f"{self.root} is that vault under another name: served from {self.root}, its changes would go "
            f"to a second journal, and a server there would not know the agents of the one on {self.folder}. "
            f"Serve it as {self.folder} (`vaultwatch bridge --vault {self.folder}`, or `vaultwatch serve "
            f"{self.folder}`), or start this one with `{ALLOW_FLAG}` if two histories of one vault are meant."
        )


_READ_FROM = "the settings' folder rules and agents' write and deny lists are read as paths from the folder served,"


def _through(alias: Alias | None) -> str:
    return "" if alias is None else f"{alias.said()}. "


def _places(folder: str, known_mounts: tuple[mounts.Mount, ...]) -> list[tuple[str, Alias | None]]:
    """`folder` and every other path it is reachable at through the mounts (with the mounts)."""
    return [(folder, None), *((alias.path, alias) for alias in mounts.aliases(folder, known_mounts))]


def _tables(settings_file: str) -> list[tuple[str, str]]:
    """(key, real folder) of every `[vaults."FOLDER"]` table; none when the file is absent or does
    not parse (the rules' own reading reports that, and refuses agents' changes meanwhile)."""
    import tomllib  # noqa: PLC0415  (only where a server starts)

    try:
        with open(settings_file, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError):
        return []
    vaults = data.get("vaults")
    if not isinstance(vaults, dict):
        return []
    found = []
    for key in vaults:
        try:
            found.append((str(key), vault_folder(key, settings_file)))
        except VaultError:
            continue  # a relative key: the rules' reading says so
    return found


def _own(folder: str, tables: list[tuple[str, str]]) -> Known | None:
    """What shows `folder` itself is a vault of the person's: its table first, then its journal."""
    for key, theirs in tables:
        if same_folder(folder, theirs):
            return Known(folder, None, key)
    journal = journal_path(folder)
    return Known(folder, journal, None) if os.path.exists(journal) else None


def _above(root_real: str, tables: list[tuple[str, str]]) -> Known | None:
    folder = root_real
    while (parent := os.path.dirname(folder)) != folder:
        folder = parent
        known = _own(folder, tables)
        if known is not None:
            return known
    return None


def _holds(root_real: str, theirs: str, seen: tuple[mounts.Mount, ...]) -> Alias | bool:
    """Whether `root_real` holds the vault `theirs` strictly inside it: True at its real path, the
    alias when at another path a mount shows it at, False when not."""
    if same_folder(root_real, theirs):
        return False
    if nesting(root_real, theirs) == "holds":
        return True
    for alias in mounts.aliases(theirs, seen):
        if not same_folder(root_real, alias.path) and nesting(root_real, alias.path) == "holds":
            return alias
    return False


def _below(
    root_real: str, tables: list[tuple[str, str]], seen: tuple[mounts.Mount, ...] = ()
) -> tuple[Known, Alias | None] | None:
    """A vault of the person's strictly inside `root_real`: a table's folder, else a journal's (and
    the mount it is seen through, when only through one)."""
    for key, theirs in tables:
        if (how := _holds(root_real, theirs, seen)) is not False:
            return Known(theirs, None, key), (how if isinstance(how, Alias) else None)
    folder_of_journals = os.path.dirname(journal_path(root_real))
    try:
        names = set(os.listdir(folder_of_journals))
    except OSError:
        return None
    # the folder's own journal and its parents' are no vault below it
    folder = root_real
    while True:
        names.discard(os.path.basename(journal_path(folder)))
        if (parent := os.path.dirname(folder)) == folder:
            break
        folder = parent
    names = {name for name in names if name.endswith(".sqlite3")}
    for root in vaultroots.recorded(folder_of_journals):  # the vaults whose journals are listed: no walk
        name = os.path.basename(journal_path(root))
        if name in names:
            names.discard(name)
            if (how := _holds(root_real, root, seen)) is not False:
                return Known(root, os.path.join(folder_of_journals, name), None), (
                    how if isinstance(how, Alias) else None
                )
    if not names:  # every journal left is listed: none lies below
        return None
    # folders only, no symbolic links, with a list of its own rather than recursion: a vault may
    # nest folders deeper than Python's recursion limit (os.walk recurses)
    stack = [root_real]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                inner = sorted(e.path for e in entries if e.is_dir(follow_symlinks=False))
        except OSError:
            continue
        for folder in inner:
            journal = journal_path(folder)
            if os.path.basename(journal) in names:
                return Known(folder, journal, None), None
        stack.extend(reversed(inner))
    return None


def vault_elsewhere(root_real: str, settings_file: str) -> VaultElsewhere | None:
    """The vault of the person's that `root_real` is, reached at another path through a mount (see
    VaultElsewhere), or None: also when `root_real` has a table of its own (the person named this
    path; a journal of its own is no answer, it may be the accident)."""
    seen = mounts.read()
    aliases = mounts.aliases(root_real, seen)
    if not aliases:  # the common case: nothing else is read
        return None
    tables = _tables(settings_file)
    # a table keyed by this very path (not one that matches it by device and inode through the
    # mount): the person named this path, so they mean it served
    if any(theirs == root_real for _, theirs in tables):
        return None
    for alias in aliases:
        known = _own(alias.path, tables)
        if known is not None:
            return VaultElsewhere(root_real, known, alias)
    return None


def vault_above(root_real: str, settings_file: str) -> VaultAbove | None:
    """The nearest folder above `root_real`, or above another path a mount shows it at, that is a
    vault of the person's (see module doc), or None: also when `root_real` has a table or a journal
    of its own (at any of its paths)."""
    tables = _tables(settings_file)
    seen = mounts.read()
    places = _places(root_real, seen)
    if any(_own(place, tables) is not None for place, _ in places):
        return None
    others = [t for t in tables if not any(same_folder(t[1], place) for place, _ in places)]
    for place, via in places:
        known = _above(place, tables)
        if known is None:
            continue
        below = _below(known.folder, others, seen)
        # never advise serving the vault above when that would be refused too, or would take in a
        # vault of the person's whose rules then would not apply
        refused = None if below is None else f"it holds the vault {below[0].folder}"
        return VaultAbove(place, known, refused, via)
    return None


def vault_below(root_real: str, settings_file: str, *, advise: bool = True) -> VaultBelow | None:
    """A vault of the person's inside `root_real` (see module doc), or inside another path a mount
    shows it at, or shown by a mount inside it; None also when the settings file gives `root_real` a
    table of its own (a journal of its own is no answer: it may be the accident). `advise`: also
    find whether serving the vault inside would be refused too (for the refusal's advice)."""
    tables = _tables(settings_file)
    seen = mounts.read()
    places = _places(root_real, seen)
    if any(same_folder(place, theirs) for place, _ in places for _, theirs in tables):
        return None
    # the paths through mounts first: a vault below one of them may be found from the real path too
    # (a parent of the vault's is the served folder by device and inode), but the refusal then names
    # no mount and reads as a contradiction
    for place, via in places[1:] + places[:1]:
        found = _below(place, tables, seen)
        if found is not None:
            known, how = found
            if how is None:
                known = _outermost(place, known, tables)
            aliases = tuple(alias for alias in (via, how) if alias is not None)
            return VaultBelow(
                place,
                known,
                aliases,
                own=next((k for k in (_own(p, tables) for p, _ in places) if k is not None), None),
                inner_refused=_inner_refused(known.folder, settings_file) if advise else None,
            )
    return None


def _outermost(root_real: str, known: Known, tables: list[tuple[str, str]]) -> Known:
    """The vault of the person's nearest `root_real` among `known` and the folders between them: the
    one found first may be a folder inside another vault below `root_real`, and the refusal must not
    advise serving it, where fewer of the person's rules would apply."""
    best, folder = known, known.folder
    while (parent := os.path.dirname(folder)) != folder and not same_folder(root_real, parent):
        if nesting(root_real, parent) != "holds":
            break
        folder = parent
        best = _own(folder, tables) or best
    return best


def _inner_refused(folder: str, settings_file: str) -> str | None:
    """Why serving `folder`, a vault found inside a folder to serve, would be refused too (so the
    refusal never advises it), in a few words, or None."""
    if (elsewhere := vault_elsewhere(folder, settings_file)) is not None:
        return f"it is the vault {elsewhere.folder} under another name"
    if (above := vault_above(folder, settings_file)) is not None:
        return f"it lies inside the vault {above.folder}"
    # one level deeper only: the words need no more than the first reason
    if (below := vault_below(folder, settings_file, advise=False)) is not None:
        return f"it holds the vault {below.folder}"
    return None


def refusal(root_real: str, settings_file: str) -> str | None:
    """Why `root_real` may not be served on its own (a vault of the person's lies above or below
    it), or None."""
    found: VaultElsewhere | VaultAbove | VaultBelow | None = (
        vault_elsewhere(root_real, settings_file)
        or vault_above(root_real, settings_file)
        or vault_below(root_real, settings_file)
    )
    return None if found is None else found.refusal()


def server_refusal(nested: VaultNested, settings_file: str, allow_nested: bool) -> str:
    """What to say when another vaultwatch serves a folder holding `nested.root`, or one inside it:
    without the advice to quit that server and serve `nested.root` alone when that start would be
    refused too (the folder lies inside, or holds, a vault of the person's)."""
    if allow_nested or refusal(nested.root, settings_file) is None:
        return str(nested)
    return str(VaultNested(nested.root, nested.other, nested.holder, alone_refused=True))


def journal_withheld(root_real: str) -> str | None:
    """Why no change journal may be made for `root_real`, or None. A journal of its own makes a
    folder a vault of its own (see module doc): one made by opening a folder inside a vault of the
    person's (the TUI with its MCP server refused, `vaultwatch changes FOLDER`) would let the next
    server of that folder start outside the vault's rules. An existing journal is always opened."""
    if not enabled_by_env() or os.path.exists(journal_path(root_real)):
        return None
    above = vault_elsewhere(root_real, settings_path()) or vault_above(root_real, settings_path())
    if above is None:
        return None
    return (
        f"no change journal is made for {root_real}: one of its own would make it a vault of its own, "
        f"outside the rules of the vault around it, so agents' changes are refused here. {above.refusal()}"
    )


__all__ = [
    "ALLOW_FLAG",
    "Known",
    "VaultAbove",
    "VaultBelow",
    "VaultElsewhere",
    "journal_withheld",
    "refusal",
    "server_refusal",
    "vault_above",
    "vault_below",
    "vault_elsewhere",
]

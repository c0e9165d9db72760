"""The effect set of a change: every vault file whose bytes or name one write operation changes.

Guards decide on effects, not on requests: an agent names one path, but a folder rename moves
every file under it, a symlinked note's bytes land at its target, and a rename rewrites links
in notes the agent never named. The write path (core.edit.writes) builds one `EffectSet` per
operation with the builders below before anything reaches the disk, and the approval gate
(core.review.approval, through core.review.policy) checks every effect against every rule.

    effects = moved("Private", "Open", files=["Private/a.md"], folders=[])
    effects.paths()   # ('Private', 'Open', 'Private/a.md', 'Open/a.md')

Paths are compared the way the vault's file system compares names (`PathForm`): Unicode NFC
always (a vault synced from macOS stores names in NFD, rules are typed in NFC), and case
folded where the file system folds it, which is probed per vault, never assumed.
"""

from __future__ import annotations

import os
import threading
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from vaultwatch.core import platform

# What an effect does to its path.
WRITE = "write"  # the bytes of an existing file change
CREATE = "create"  # a new file
DELETE = "delete"  # a file or folder goes (to the trash, or for good)
MOVE_FROM = "move_from"  # a file or folder leaves this path
MOVE_TO = "move_to"  # a file or folder arrives at this path
LINKS = "links"  # a rename may rewrite the links in this note
CHANGES = (WRITE, CREATE, DELETE, MOVE_FROM, MOVE_TO, LINKS)
REMOVALS = (DELETE, MOVE_FROM)  # the file is no longer at this path afterwards


@dataclass(frozen=True, slots=True)
class Effect:
    """One path one change touches. `via` is the path the caller spelled when it differs (a
    symlinked note's link, a path through a folder link); `dest` is a move's other end."""

    path: str
    change: str
    via: str | None = None
    dest: str | None = None

    def describe(self) -> str:
        text = f"{self.change} {self.path}"
        if self.dest:
            text += f" -> {self.dest}"
        if self.via:
            text += f" (named as {self.via})"
        return text


@dataclass(frozen=True, slots=True)
class EffectSet:
    """Every effect of one operation, in a stable order (the order the person reads them in), and
    what it does beyond its paths' bytes and names, which every place that shows the change says
    (`cautions`): `permanent`, a delete for good rather than to the trash; `stranded`, the notes
    whose links a rename leaves as they are (update_links off) and which will then point at
    nothing: links to what it moves, and a moved note's own relative links. Neither is an effect: no rule guards a path the change does not touch."""

    operation: str
    effects: tuple[Effect, ...]
    permanent: bool = False
    stranded: tuple[str, ...] = ()

    def paths(self) -> tuple[str, ...]:
        out: dict[str, None] = {}
        for e in self.effects:
            out[e.path] = None
            if e.via:
                out[e.via] = None
        return tuple(out)

    def keys(self, form: PathForm) -> frozenset[str]:
        """The set's paths as the file system compares them: what an approval covers."""
        return frozenset(form.key(p) for p in self.paths())

    def cautions(self) -> tuple[str, ...]:
        """What the person must be told beyond the paths, in the words every view of it uses."""
        return cautions(self.permanent, self.stranded)

    def __add__(self, other: EffectSet) -> EffectSet:
        return EffectSet(
            self.operation,
            tuple(dict.fromkeys((*self.effects, *other.effects))),
            self.permanent or other.permanent,
            tuple(dict.fromkeys((*self.stranded, *other.stranded))),
        )

    def __len__(self) -> int:
        return len(self.effects)


FOR_GOOD = "deleted for good (not to the trash)"


# each effect in the words a person reads it in (a move's arrival is said with it: `read_as`)
IN_WORDS = {
    WRITE: "rewrites",
    CREATE: "creates",
    DELETE: "removes",
    MOVE_FROM: "moves",
    MOVE_TO: "creates",
    LINKS: "rewrites links in",
}
MAY_RELINK = "may rewrite links in"  # a note a rename's link rewriting looks at, before it is known whether it does


def read_as(effects: Iterable[Effect], relinked: Iterable[str] | None = None) -> list[Effect]:
    """The effects as a person reads them: a move once (its arrival goes with it, `→ dest`), and of
    the notes whose links a rename might rewrite, only those it does rewrite (`relinked`, once worked
    out; None: not known yet, every one is kept and said as MAY_RELINK)."""
    effects = tuple(effects)
    arrivals = {e.dest for e in effects if e.change == MOVE_FROM}
    known = None if relinked is None else set(relinked)
    return [
        e
        for e in effects
        if not (e.change == MOVE_TO and e.path in arrivals) and (e.change != LINKS or known is None or e.path in known)
    ]


def verb(effect: Effect, *, relinks_known: bool = True) -> str:
    """What `effect` does, in the word a person reads it in ("moves", "rewrites links in"); a link
    rewrite not worked out yet (`relinks_known` False) is one it may do."""
    if effect.change == LINKS and not relinks_known:
        return MAY_RELINK
    return IN_WORDS.get(effect.change, effect.change)


def in_words(effect: Effect, *, relinks_known: bool = True) -> str:
    """One effect in the words every place that asks the person says it in: the approval dialog, the
    pending screen and `vaultwatch pending`, the question through an agent's client and the rule
    that asked ("moves Daily → Inbox/Daily", "rewrites a.md (named as b.md)")."""
    text = f"{verb(effect, relinks_known=relinks_known)} {effect.path}"
    if effect.dest:
        text += f" → {effect.dest}"
    if effect.via:
        text += f"  (named as {effect.via})"
    return text


# what each write operation does to the note it names, as a verb the person reads it by ("wants to
# change the properties of Daily/x.md"): the tools' names are the agent's words, not the person's
_DOING = {
    "update_frontmatter": "change the properties of",
    "edit_section": "edit a section of",
    "rename": "move",
}


def doing_verb(operation: str) -> str:
    """What an operation does to the note it names, as the verb before the note's path."""
    return _DOING.get(operation, operation)


def doing(operation: str, path: str, dest: str | None = None) -> str:
    """An operation on `path` (to `dest`, for a move) in words: "change the properties of a.md",
    "move Daily → Inbox/Daily", "write a.md"."""
    text = f"{doing_verb(operation)} {path}"
    return f"{text} → {dest}" if dest else text


def what_moves(effects: Iterable[Effect]) -> str:
    """What a rename moves, in words: "the note moves", or for a folder "the folder Daily and the 2
    files in it move" (the files: what moves under it that holds nothing else that moves)."""
    moves = [e for e in effects if e.change == MOVE_FROM]
    if not moves:
        return "the note moves"
    top = moves[0].path
    under = [e.path for e in moves if e.path.startswith(top + "/")]
    if not under:
        return "the note moves"
    files = [p for p in under if not any(q.startswith(p + "/") for q in under)]
    n = len(files)
    return f"the folder {top} and the {n} file{'s' if n != 1 else ''} in it move"


def stranded_words(count: int) -> str:
    """A rename's notes left with links to what it moves, in words (`count` of them, at least one)."""
    some = f"{count} note{'s' if count != 1 else ''}"
    return (
        f"{some} with links the move breaks (to what moves, or a moved note's relative links): the links are "
        "not rewritten and will point at nothing"
    )


def cautions(permanent: bool, stranded: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """The words for `EffectSet.permanent` and `EffectSet.stranded` (each only when it applies)."""
    out = [FOR_GOOD] if permanent else []
    if stranded:
        out.append(stranded_words(len(stranded)))
    return tuple(out)


# --- builders: one per kind of operation (the write path calls these, never builds by hand) ---


def written(
    rel: str, canon: str, *, create: bool = False, operation: str = "write", new_folders: Iterable[str] = ()
) -> EffectSet:
    """A note written, edited or given new frontmatter; `canon` is where its bytes live (an
    in-vault symlinked note: its target), `rel` the path the caller spelled. `new_folders`: the
    missing folders a create makes on the way, each a change of its own."""
    first = Effect(canon, CREATE if create else WRITE, rel if rel != canon else None)
    return EffectSet(operation, (first, *(Effect(f, CREATE) for f in new_folders)))


def moved(
    src: str,
    dst: str,
    *,
    files: Iterable[str] = (),
    folders: Iterable[str] = (),
    new_folders: Iterable[str] = (),
    stranded: Iterable[str] = (),
) -> EffectSet:
    """A rename of `src` to `dst`; a folder's `files` and `folders` (every one under it, by their
    old paths) move with it, each one an effect at both ends; `new_folders` are the missing
    folders made on the way to `dst`; `stranded`, the notes whose links to what moves are left as
    they are (a rename without link rewriting)."""
    out = [Effect(src, MOVE_FROM, dest=dst), Effect(dst, MOVE_TO)]
    for p in (*folders, *files):
        if p == src:
            continue
        new = dst + p[len(src) :]
        out += [Effect(p, MOVE_FROM, dest=new), Effect(new, MOVE_TO)]
    out += [Effect(f, CREATE) for f in new_folders]
    return EffectSet("rename", tuple(out), stranded=tuple(stranded))


def deleted(
    rel: str, canon: str, *, files: Iterable[str] = (), folders: Iterable[str] = (), permanent: bool = False
) -> EffectSet:
    """A delete of `rel` (at `canon`); a folder's files and folders under it go with it; to the
    trash, or for good (`permanent`)."""
    out = [Effect(canon, DELETE, rel if rel != canon else None)]
    out += [Effect(p, DELETE) for p in (*folders, *files) if p != canon]
    return EffectSet("delete", tuple(out), permanent=permanent)


def relinked(notes: Iterable[tuple[str, str]]) -> EffectSet:
    """The notes a rename's link rewriting may change, as (path named, path of the bytes) pairs
    (they differ for a symlinked note, whose target is what is rewritten)."""
    return EffectSet("rename", tuple(Effect(canon, LINKS, rel if rel != canon else None) for rel, canon in notes))


# --- how the vault's file system compares names ---------------------------------------------


@dataclass(frozen=True, slots=True)
class PathForm:
    """How one vault's file system compares names: NFC always, case folded where it folds case."""

    folds_case: bool = False

    def key(self, path: str) -> str:
        nfc = path if path.isascii() else unicodedata.normalize("NFC", path)
        return nfc.casefold() if self.folds_case else nfc


_FORMS: dict[str, PathForm] = {}
_FORMS_LOCK = threading.Lock()


def form_of(root_real: str) -> PathForm:
    """The vault's `PathForm`, probed once per vault root (a stat of one name in the other case)."""
    if platform.folds_case_forced():
        return PathForm(True)
    form = _FORMS.get(root_real)
    if form is not None:
        return form
    folds = _probe_folds_case(root_real)
    if folds is None:  # nothing to probe with (an empty vault on a root without letters): ask again later
        return PathForm(False)
    with _FORMS_LOCK:
        return _FORMS.setdefault(root_real, PathForm(folds))


def _probe_folds_case(root_real: str) -> bool | None:
    candidates: list[tuple[str, str]] = []
    try:  # a name inside the vault first: the root itself may sit on another file system than its parent
        candidates += [(root_real, n) for n in os.listdir(root_real) if n.swapcase() != n][:1]
    except OSError:
        pass
    parent, name = os.path.split(root_real.rstrip(os.sep))
    if name and name.swapcase() != name:
        candidates.append((parent, name))
    for folder, probe in candidates:
        try:
            a = os.stat(os.path.join(folder, probe), follow_symlinks=False)
        except OSError:
            continue
        try:
            b = os.stat(os.path.join(folder, probe.swapcase()), follow_symlinks=False)
        except OSError:
            return False
        return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
    return None


__all__ = [
    "CHANGES",
    "FOR_GOOD",
    "CREATE",
    "DELETE",
    "LINKS",
    "MOVE_FROM",
    "MOVE_TO",
    "REMOVALS",
    "WRITE",
    "Effect",
    "EffectSet",
    "PathForm",
    "cautions",
    "doing",
    "doing_verb",
    "deleted",
    "form_of",
    "moved",
    "relinked",
    "stranded_words",
    "what_moves",
    "in_words",
    "verb",
    "written",
]

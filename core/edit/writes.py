"""The one write path for agents (MCP tools) and the human (TUI actions).

Every mutation of the vault goes through `Writer`, which guarantees:

- **Path safety**: the same resolver as reads (core.disk.paths.normalize, then core.disk.safeio.locate),
  so nothing is ever written outside the vault or into a hidden folder (`.obsidian`, `.git`,
  `.trash`, anything dot-prefixed), also not through a symlinked folder, and not when another
  process swaps a folder on the way for a symlink midway: every read, temporary file, replace,
  rename and unlink is made relative to an open descriptor on the note's folder, reached by a
  walk that checks each symlink against the vault. A hard-linked note (st_nlink > 1: its bytes
  may also be a file outside the vault) is never read or rewritten; it can be renamed or
  deleted (which changes only the vault's own name for it). Only Markdown notes (`.md`) are written, plus
  allowlisted attachments where the caller explicitly asks. NUL bytes and contents over
  the size cap are refused.
- **Atomicity**: new bytes go to a hidden temporary file in the same folder, are fsynced,
  then `os.replace`d over the note and the folder is fsynced; a crash at any moment leaves
  the old or the new file, never a mix. Creation is no-clobber. The note's mode is kept.
- **No lost updates**: every mutation takes an optional `if_match` etag (SHA-256 hex of the
  note's bytes, as `read` returns it) checked under a per-note lock shared by every Writer
  in the process; a mismatch raises ConflictError carrying the current etag. Just before
  the replace the bytes on disk are compared again, so an outside editor's save in the
  meantime is a conflict too, never silently overwritten. Replacing an existing note
  wholesale requires `if_match` or `overwrite=True`.
- **Index and events**: after each write the changed paths are re-read into the index
  synchronously (`vault.refresh_paths(..., source=actor)`, which publishes
  DocumentsChanged; the watcher's later echo is a no-op) and a WriteApplied event carries
  who, what and a diff summary.
- **Attestation**: only the human (`actor` "human" or "human:<name>") may add a `verified`
  entry whose `by` starts with `human:`; an agent's write, edit or frontmatter update
  that would add one is refused.

Actors are free-form strings: "human", "human:<user>", or "agent:<name>" for MCP callers.

The disk primitives (descriptor-relative reads, the synced temporary file and its switch,
no-clobber renames, the leftover cleaner) are in core.edit.atomic. This module stays over
500 lines on purpose: its six operations are one set of rules (the per-note locks, one target
resolution, one commit path with its re-check, attestation and approval, one result and
event), and a rename's link rewriting goes back through that same commit path for each note.
"""

from __future__ import annotations

import contextlib
import contextvars
import difflib
import errno
import hashlib
import os
import stat as stat_mod
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vaultwatch.core import platform
from vaultwatch.core.disk.names import check_linkable_name, check_new_name, link_breaking
from vaultwatch.core.disk.paths import is_hidden, normalize
from vaultwatch.core.disk.safeio import Loc, locate, open_at, remove_created
from vaultwatch.core.disk.storednames import stored
from vaultwatch.core.disk.walk import fwalk
from vaultwatch.core.edit import effects as fx
from vaultwatch.core.edit import fmedit, pieces
from vaultwatch.core.edit import hooks as _journal
from vaultwatch.core.edit.atomic import (
    O_DIRECTORY,
    UNKNOWN,
    FolderSyncs,
    Hook,
    WriteFailed,
    WriteRefused,
    folds_case,
    fsync_dir,
    hardlink_refusal,
    moved_away,
    os_error,
    read_file,
    rename_noreplace,
    same_entry,
    write_temp,
)
from vaultwatch.core.edit.fmedit import FrontmatterEditError
from vaultwatch.core.edit.limits import MAX_WRITE_BYTES
from vaultwatch.core.errors import NotFoundError, PathChangedError, PathError, VaultError
from vaultwatch.core.events import Event
from vaultwatch.core.index.scan import walked_folder
from vaultwatch.core.links import rewrite
from vaultwatch.core.markdown import okf
from vaultwatch.core.markdown.linebreaks import markdown_lines
from vaultwatch.core.markdown.parse import decode, load_yaml, parse_note, split_frontmatter
from vaultwatch.core.markdown.sections import SectionError
from vaultwatch.core.markdown.sections import edit_section as _edit_section
from vaultwatch.core.model import ATTACHMENT, FOLDER, NOTE

if TYPE_CHECKING:  # vault.py imports this module
    from vaultwatch.core.index.snapshot import Snapshot
    from vaultwatch.core.vault import Vault

__all__ = [
    "MAX_WRITE_BYTES",
    "AlreadyExistsError",
    "ConflictError",
    "EditError",
    "FrontmatterEditError",
    "SectionError",
    "WriteApplied",
    "WriteFailed",
    "WriteRefused",
    "WriteResult",
    "Writer",
    "etag_of",
    "is_human",
]

HINT_MAX_CHARS = 1024 * 1024  # edit's "matches up to whitespace" hint is looked for in notes up to this size
BOM = b"\xef\xbb\xbf"
TRASH = ".trash"
REWRITE_THREADS = 16  # concurrent link rewrites during a rename


def etag_of(data: bytes) -> str:
    """The etag of a note's bytes: SHA-256, lowercase hex (the same value `read` returns)."""
    return hashlib.sha256(data).hexdigest()


def is_human(actor: str) -> bool:
    """True for the human at the keyboard ("human" or "human:<user>"); everything else is an agent."""
    return actor == "human" or actor.startswith("human:")


# --- errors ----------------------------------------------------------------------------


class ConflictError(VaultError):
    """The note changed since the caller read it (or vanished): re-read, re-apply, retry."""

    code = "revision_conflict"

    def __init__(self, message: str, path: str, current_etag: str | None) -> None:
        super().__init__(message)
        self.path = path
        self.current_etag = current_etag


class AlreadyExistsError(VaultError):
    """A create or a rename would replace an existing file or folder."""

    code = "already_exists"

    def __init__(self, message: str, path: str, current_etag: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.current_etag = current_etag


class EditError(VaultError):
    """old_text was not found, or found more than once."""

    code = "no_match"

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code


# --- results and events ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What one write call did."""

    operation: str  # write | edit | edit_section | update_frontmatter | rename | delete
    path: str  # the note's vault-relative path after the operation (rename: the destination)
    etag: str | None  # etag of the new bytes (None after a delete or for a folder)
    previous_etag: str | None  # etag before the operation (None when created, or a folder)
    created: bool = False
    changed: bool = True  # False when the call asked for what was already there
    changed_paths: tuple[str, ...] = ()  # every vault path written, created, moved or removed
    diff_summary: str = ""
    warnings: tuple[str, ...] = ()  # e.g. ambiguous links a rename left alone
    moved_to: str | None = None  # rename destination, or the trash location of a delete

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form for tool results."""
        return {
            "operation": self.operation,
            "path": self.path,
            "etag": self.etag,
            "previous_etag": self.previous_etag,
            "created": self.created,
            "changed": self.changed,
            "changed_paths": list(self.changed_paths),
            "diff_summary": self.diff_summary,
            "warnings": list(self.warnings),
            "moved_to": self.moved_to,
        }


@dataclass(frozen=True, slots=True)
class WriteApplied(Event):
    """A write went through the write path (published after the index was updated)."""

    actor: str
    operation: str
    path: str
    paths: tuple[str, ...]
    diff_summary: str
    at: float = 0.0


# --- per-note locks --------------------------------------------------------------------


class _LockTable:
    """One lock per real file path, shared by every Writer in the process; unused locks are dropped."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, list] = {}  # key -> [lock, users]

    @contextmanager
    def hold(self, *keys: str) -> Iterator[None]:
        ordered = sorted(set(keys))  # one global order: two-path operations never deadlock
        taken: list[str] = []
        try:
            for key in ordered:
                with self._guard:
                    slot = self._locks.setdefault(key, [threading.Lock(), 0])
                    slot[1] += 1
                try:
                    slot[0].acquire()
                except BaseException:
                    self._drop(key)
                    raise
                taken.append(key)
            yield
        finally:
            for key in reversed(taken):
                self._locks[key][0].release()
                self._drop(key)

    def _drop(self, key: str) -> None:
        with self._guard:
            slot = self._locks[key]
            slot[1] -= 1
            if slot[1] == 0:
                del self._locks[key]


_LOCKS = _LockTable()


# --- content helpers -------------------------------------------------------------------


def _human_attestations(data: bytes | None) -> Counter:
    """The `verified` frontmatter entries whose `by` starts with human:, each as its `by` and the
    whole entry (every key and value): an agent that moved a person's review to another date, or
    changed anything else of it, makes an entry the note did not have, as one that adds one does."""
    if not data:
        return Counter()
    text, _ = decode(data)
    block, _ = split_frontmatter(text)
    if block is None:
        return Counter()
    raw, error = load_yaml(block)
    if error:
        return Counter()
    verified = raw.get("verified")
    items = [verified] if isinstance(verified, dict) else verified if isinstance(verified, list) else []
    return Counter(
        (i["by"], _entry_key(i))
        for i in items
        if isinstance(i, dict) and isinstance(i.get("by"), str) and i["by"].startswith("human:")
    )


def _entry_key(entry: dict) -> str:
    """One attestation's keys and values as comparable text (YAML gives dates, lists, maps)."""
    return repr(sorted((str(k), repr(v)) for k, v in entry.items()))


OKF_INDEX = "index.md"  # the root note whose okf_version makes the vault an OKF bundle (core.markdown.okf)


def _declares_okf(data: bytes | None) -> bool:
    """Whether a root index.md of these bytes makes the vault an OKF bundle, read as the index
    reads it (parse_note's frontmatter): the raw YAML differs from it (a date there is a string
    here; frontmatter too big or too deep is none here), and a check that reads otherwise than the
    index can be walked around."""
    return bool(data) and okf.declares_okf(parse_note(data or b"", "index").frontmatter)


def _refuse_bundle_switch(actor: str, before: bool, after: bool) -> None:
    """An agent may not make the vault an OKF bundle or stop it being one: that decides by which
    rules every note is triaged, and on a bundle the Trust tab follows the notes' `verified:` keys
    instead of the journal, so one agent's write would hide every change nobody has reviewed."""
    if before != after and not is_human(actor):
        raise WriteRefused(
            "agents cannot turn the vault into an OKF bundle or out of one (okf_version in the root "
            "index.md decides how every note is triaged); leave okf_version as it is, or ask the person",
            "bundle_switch_refused",
        )


def _frontmatter_ok(text: str) -> tuple[bool, str | None]:
    """(has a block, error) for a note's text."""
    folded = pieces.replace(pieces.replace(text, "\r\n", "\n"), "\r", "\n")
    block, _ = split_frontmatter(folded)
    if block is None:
        return False, None
    return True, load_yaml(block)[1]


def _link_indexes(snap: Snapshot, moves: Mapping[str, str]) -> tuple[rewrite.LinkIndex, rewrite.LinkIndex]:
    """How links resolve before a rename's moves and after them."""
    before = rewrite.LinkIndex({e.path for e in snap.entries if e.kind != FOLDER} | set(moves))
    return before, before.moved(moves)


def _relinking(
    snap: Snapshot, src_rel: str, dst_rel: str, moved_files: list[str], update_links: bool
) -> tuple[dict[str, str], list[str]]:
    """A rename's moves (each file's path before and after) and the notes whose links it may rewrite."""
    moves = {p: dst_rel + p[len(src_rel) :] for p in moved_files}
    return moves, list(rewrite.candidate_notes(snap.entries, moves)) if update_links else []


def _stranded(snap: Snapshot, moves: dict[str, str]) -> tuple[str, ...]:
    """The notes a rename of `moves` without link rewriting leaves with links that will point at nothing
    (links into what moves, and a moved note's own relative links: core.links.rewrite.stranded_notes)."""
    return tuple(rewrite.stranded_notes(snap.entries, moves, *_link_indexes(snap, moves)))


def _refuse_unlinkable(dst_rel: str, held: list[str], linking: int) -> None:
    """Refuse a rename into a path a rewritten wiki link could not hold (`held`: what of
    names.link_breaking it holds) while `linking` notes may link to what it moves: rewriting their
    links would break them (`[[Plan #2]]` names a heading of "Plan "), and so would leaving them.
    An agent's new names never hold them (check_linkable_name); the person's may, with no link there."""
    raise WriteRefused(
        f"{dst_rel!r} holds {' '.join(held)}, which Obsidian's [[links]] cannot hold, and {linking} "
        f"note{'s' if linking != 1 else ''} may link to what this rename moves: their links would break. "
        "Choose a name without them, or rename without rewriting links (update_links=false) to leave "
        "their links as they are",
        "unlinkable_name",
    )


class _NoteLeft(str):
    """A rename's warning that stands for links of a note left as they were (an edit meanwhile, an
    error, its frontmatter), where the others each stand for one link: the summary counts them apart."""

    __slots__ = ()


def _relinked_bytes(
    old: bytes,
    old_path: str,
    new_path: str,
    moves: Mapping[str, str],
    before: rewrite.LinkIndex,
    after: rewrite.LinkIndex,
) -> tuple[bytes | None, rewrite.Rewrite]:
    """A note's bytes with a rename's links rewritten (None: nothing to rewrite, or not UTF-8 text,
    which the rewrite leaves alone), and the rewrite with its warnings."""
    bom = BOM if old.startswith(BOM) else b""
    try:
        text = old[len(bom) :].decode("utf-8")
    except UnicodeDecodeError:
        return None, rewrite.Rewrite(
            text="", changed=0, warnings=(_NoteLeft(f"{new_path}: not valid UTF-8; links not updated"),)
        )
    result = rewrite.rewrite_links(text, old_path, new_path, moves, before, after)
    if result.changed:
        had, err = _frontmatter_ok(text)
        _, err_after = _frontmatter_ok(result.text)
        if had and err is None and err_after is not None:  # a name that YAML cannot hold unquoted
            result = rewrite.rewrite_links(text, old_path, new_path, moves, before, after, frontmatter=False)
            result = rewrite.Rewrite(
                result.text,
                result.changed,
                (
                    *result.warnings,
                    _NoteLeft(f"{new_path}: frontmatter links left alone (the rewrite would break the YAML)"),
                ),
            )
    if not result.changed:
        return None, result
    return bom + result.text.encode("utf-8"), result


def _uniform_crlf(text: str) -> bool:
    n = pieces.count(text, "\n")
    return n > 0 and pieces.count(text, "\r\n") == n


def line_summary(old: str, new: str) -> str:
    """+added -removed lines between two versions of a note's text."""
    # counted before splitting: splitlines of a 40 MB note is one C call of ~0.3 s that holds the interpreter
    if pieces.count(old, "\n") + pieces.count(new, "\n") > 40_000:
        return f"rewritten ({len(old)} -> {len(new)} characters)"
    a, b = markdown_lines(old), markdown_lines(new)
    if len(a) + len(b) > 40_000:
        return f"rewritten ({len(old)} -> {len(new)} characters)"
    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return f"+{added} -{removed} lines"


def _line_numbers(text: str, needle: str, limit: int = 8, step: int | None = None) -> list[int]:
    out: list[int] = []
    pos = text.find(needle)
    while pos >= 0 and len(out) < limit:
        out.append(text.count("\n", 0, pos) + 1)
        pos = text.find(needle, pos + (step or max(1, len(needle))))
    return out


@dataclass(frozen=True, slots=True)
class _Target:
    rel: str  # the caller's path, normalized
    canon: str  # where the bytes live, vault-relative (an in-vault symlink note followed)
    kind: str  # note | attachment
    key: str  # the per-note lock's key


class Writer:
    """The write path over one Vault. Thread-safe; every Writer in the process shares the note locks."""

    def __init__(self, vault: Vault, *, max_bytes: int = MAX_WRITE_BYTES, fault_hook: Hook | None = None) -> None:
        """`fault_hook(stage)` is for crash tests only: called at "temp_created" (the temporary file made,
        empty), "temp_written", "checked" (the last
        look, just before the switch), "exchanged" (the names swapped, the replaced file not yet
        removed), "replaced", "deleted" and "moved" (a rename's move done, its links not yet rewritten)."""
        self.vault = vault
        self.max_bytes = max_bytes
        self._hook = fault_hook

    # --- public operations ---

    def etag(self, path: str) -> str:
        """Current etag of a note or attachment (NotFoundError when absent)."""
        t = self._target(path, allow_attachment=True)
        with self.locate(t.canon) as loc:
            found = read_file(loc, t.rel)
        if found is None:
            raise NotFoundError(f"not found: {t.rel!r} does not exist; list_documents shows what exists")
        return etag_of(found[0])

    @_journal.journaled("write")
    def write(
        self,
        path: str,
        content: str | bytes,
        *,
        if_match: str | None = None,
        overwrite: bool = False,
        create_only: bool = False,
        actor: str = "human",
        allow_attachment: bool = False,
        exact: bool = False,
        mode: int | None = None,
    ) -> WriteResult:
        """Create a note, or replace an existing one wholesale.

        Creating needs nothing; missing parent folders are created. Replacing needs
        `if_match` (the etag you read) or `overwrite=True`; `create_only=True` refuses to
        replace anything. A replaced note keeps its BOM and, when the new content has plain
        LF line breaks, its CRLF line breaks. Writing the bytes already there is a no-op.
        `mode`: the permission bits a created file gets (a revert re-creating a removed file
        gives it the ones the journal kept); a replaced note keeps its own.
        """
        t = self._target(path, allow_attachment=allow_attachment)
        # a rule that refuses outright answers before whether the note exists or its etag matches:
        # "already exists: pass overwrite=true" would tell an agent what a folder kept from it holds
        # and teach it the flag to retry with
        _journal.refuse_first(fx.written(t.rel, t.canon))
        data = self._encode(content, t)
        with _LOCKS.hold(t.key), self.locate(t.canon) as loc, FolderSyncs() as later:
            found = read_file(loc, t.rel)
            if found is None:
                if if_match is not None:
                    raise ConflictError(
                        f"revision conflict: {t.rel!r} does not exist (any more), so if_match "
                        "cannot match; omit if_match to create it",
                        t.rel,
                        None,
                    )
                self._check_new(loc, actor=actor)
                created = self._commit(
                    t, loc, None, data, actor=actor, create=True, later=later, mode=_journal.permission_bits(mode)
                )
                return self._done(
                    "write",
                    t,
                    None,
                    data,
                    actor,
                    later,
                    created=True,
                    extra=created,
                    summary=f"created ({_count_lines(data)} line{'s' if _count_lines(data) != 1 else ''})"
                    if t.kind == NOTE
                    else f"created ({len(data)} bytes)",
                )
            old, mode = found
            current = etag_of(old)
            if create_only:
                raise AlreadyExistsError(
                    f"already exists: {t.rel!r} is already in the vault (etag {current}); "
                    "choose another path, or replace it with if_match set to that etag",
                    t.rel,
                    current,
                )
            self._check_match(t, if_match, current)
            if if_match is None and not overwrite:
                raise WriteRefused(
                    f"{t.rel!r} already exists: to replace it pass if_match={current!r} (its current "
                    "etag; read it first to see what you replace) or overwrite=true; to change "
                    "part of it use edit or update_frontmatter",
                    "exists_requires_if_match",
                )
            if t.kind == NOTE and not exact:  # exact: a revert puts back the very bytes
                data = self._keep_style(old, data)
            if data == old:
                return self._unchanged("write", t, current)
            self._commit(t, loc, old, data, actor=actor, mode=mode, later=later)
            summary = (
                line_summary(old.decode("utf-8", "replace"), data.decode("utf-8", "replace"))
                if t.kind == NOTE
                else f"replaced ({len(old)} -> {len(data)} bytes)"
            )
            return self._done("write", t, current, data, actor, later, summary=summary)

    @_journal.journaled("edit")
    def edit(
        self,
        path: str,
        old_text: str,
        new_text: str,
        *,
        replace_all: bool = False,
        if_match: str | None = None,
        actor: str = "human",
    ) -> WriteResult:
        """Replace the exact text `old_text` with `new_text`; it must occur exactly once unless `replace_all`.

        Matching is exact (whitespace and case included). In a note with CRLF line breaks,
        old_text/new_text written with LF match and are written back with CRLF.
        """
        if not isinstance(old_text, str) or not isinstance(new_text, str):
            raise EditError("old_text and new_text must be strings", "invalid_arguments")
        if old_text == "":
            raise EditError(
                "old_text is empty: give the exact text to replace (to add text, include a "
                "neighbouring line in old_text, or append under a heading with a section edit)",
                "empty_old_text",
            )
        if old_text == new_text:
            raise EditError("old_text and new_text are identical: nothing would change", "no_change")

        def change(text: str) -> tuple[str, str, tuple[str, ...]]:
            work, back = text, None
            # piece by piece (core.edit.pieces): one C call over a 10 MB note held the interpreter
            count = pieces.count(text, old_text)
            old, new = old_text, new_text
            if count == 0 and _uniform_crlf(text) and "\r" not in old_text:
                work, back = pieces.replace(text, "\r\n", "\n"), "\r\n"
                new = new_text.replace("\r\n", "\n")
                count = pieces.count(work, old)
            if count == 0:
                hint = ""
                squeezed = " ".join(old_text.split())
                # the whitespace hint splits the whole note into words: one C call that holds the
                # interpreter (a 10 MB note: ~0.4-0.9 s during which every other agent waits), so
                # only notes up to HINT_MAX_CHARS get it
                if squeezed and len(work) <= HINT_MAX_CHARS and squeezed in " ".join(work.split()):
                    hint = " (text matching it up to whitespace exists: copy the exact spaces and line breaks)"
                raise EditError(
                    f"old_text not found in the note{hint}; read the note again (it may have "
                    "changed) and copy old_text exactly",
                    "no_match",
                )
            overlapping = count == 1 and work.find(old, work.find(old) + 1) >= 0  # "aba" in "ababa": twice
            if (count > 1 or overlapping) and not replace_all:
                lines = ", ".join(map(str, _line_numbers(work, old, step=1 if overlapping else None)))
                times = "at least 2 times, overlapping" if overlapping else f"{count} times"
                raise EditError(
                    f"old_text matches {times} (at lines {lines}); include more surrounding "
                    "text so it matches once, or pass replace_all=true",
                    "ambiguous_match",
                )
            result = pieces.replace(work, old, new) if replace_all else work.replace(old, new, 1)
            if back:
                result = pieces.replace(result, "\n", back)
            times = f" ({count} replacements)" if count > 1 else ""
            return result, line_summary(text, result) + times, ()

        return self._modify("edit", path, change, if_match=if_match, actor=actor)

    @_journal.journaled("edit_section")
    def edit_section(
        self, path: str, heading: str, mode: str, text: str, *, if_match: str | None = None, actor: str = "human"
    ) -> WriteResult:
        """Replace, append to or prepend to the own content of one heading (see core.markdown.sections)."""
        if not isinstance(text, str):
            raise EditError("text must be a string", "invalid_arguments")

        def change(note: str) -> tuple[str, str, tuple[str, ...]]:
            result, h = _edit_section(note, heading, mode, text)
            return result, f"{mode} under {h.label} (line {h.line}): {line_summary(note, result)}", ()

        return self._modify("edit_section", path, change, if_match=if_match, actor=actor)

    @_journal.journaled("update_frontmatter")
    def update_frontmatter(
        self,
        path: str,
        set: Mapping[str, Any] | None = None,
        delete: Iterable[str] | None = None,
        append: Mapping[str, Any] | None = None,
        *,
        if_match: str | None = None,
        actor: str = "human",
    ) -> WriteResult:
        """Set, delete or append to frontmatter keys, changing only those keys' lines (see core.edit.fmedit)."""
        if set is not None and not isinstance(set, Mapping):
            raise FrontmatterEditError("set must be a mapping of keys to values", "invalid_arguments")
        if append is not None and not isinstance(append, Mapping):
            raise FrontmatterEditError("append must be a mapping of keys to items", "invalid_arguments")
        if isinstance(delete, str):
            delete = [delete]
        if not (set or delete or append):
            raise FrontmatterEditError("nothing to do: give set, delete or append", "invalid_arguments")

        def change(note: str) -> tuple[str, str, tuple[str, ...]]:
            edit = fmedit.update(note, set=set, delete=delete or (), append=append)
            return edit.text, "frontmatter: " + "; ".join(edit.summary) if edit.changed else "", ()

        return self._modify("update_frontmatter", path, change, if_match=if_match, actor=actor)

    @_journal.journaled("rename")
    def rename(
        self, src: str, dst: str, *, update_links: bool = True, if_match: str | None = None, actor: str = "human"
    ) -> WriteResult:
        """Move a note, attachment or folder to `dst` and rewrite links to it across the vault.

        The destination must not exist (missing parent folders are created). A note must
        keep the .md extension and an attachment an allowlisted one. Each linking note is
        rewritten atomically under its own lock; links that were ambiguous are left alone and
        reported in `warnings`.
        """
        src_rel = self._stored(normalize(src, what="source path"))
        dst_rel = self._stored(normalize(dst, what="destination path"), last=False)
        # the rules that refuse outright answer first, by the paths as named and again by their real
        # ones, before "not found", "destination exists" or an etag check tell what a kept folder holds
        _journal.refuse_first(fx.moved(src_rel, dst_rel))
        sloc, sst, kind = self._existing(src_rel)
        with sloc:
            if stat_mod.S_ISLNK(sst.st_mode):
                raise WriteRefused(
                    f"{src_rel!r} is a symbolic link; rename the file it points to instead", "is_a_symlink"
                )
            src_rel = sloc.canon  # through an in-vault folder link: the path read and the index use
            with self.locate(dst_rel, follow_last=False) as probe:
                dst_rel = probe.canon
            _journal.refuse_first(fx.moved(src_rel, dst_rel))
            if dst_rel == src_rel:
                raise WriteRefused(
                    f"source and destination are the same path ({src_rel!r}): nothing to do", "same_path"
                )
            if kind == FOLDER:
                if dst_rel.startswith(src_rel + "/"):
                    raise WriteRefused(
                        f"cannot move folder {src_rel!r} into itself ({dst_rel!r})", "invalid_destination"
                    )
            else:
                dst_kind = self.vault.config.kind_of(dst_rel.rsplit("/", 1)[-1])
                if kind == NOTE and dst_kind != NOTE:
                    raise WriteRefused(
                        f"a note must keep the .md extension: rename it to e.g. {dst_rel.rsplit('.', 1)[0] + '.md'!r}",
                        "not_a_note",
                    )
                if kind == ATTACHMENT and dst_kind != ATTACHMENT:
                    raise WriteRefused(
                        f"{dst_rel!r} does not have an allowlisted attachment extension; keep the file's extension",
                        "not_an_attachment",
                    )
            snap = self.vault.snapshot
            if not snap.loaded:  # which notes link to what moves is the index's, rewritten or not
                self.vault.wait_ready(30)
                snap = self.vault.snapshot
            if update_links:
                self._check_rewrite_bounds(snap, src_rel, dst_rel, kind)
            with _LOCKS.hold(self._key(src_rel), self._key(dst_rel)), self.locate(dst_rel, follow_last=False) as dloc:
                now_st = sloc.lstat()
                if now_st is None:
                    raise NotFoundError(f"not found: {src_rel!r} does not exist; list_documents shows what exists")
                sst = now_st
                dst_rel = dloc.canon
                dst_st = dloc.lstat() if not dloc.missing else None
                case_only = same_entry(sst, dst_st)
                if dst_st is not None and not case_only:
                    raise AlreadyExistsError(
                        f"destination exists: {dst_rel!r} is already in the vault; choose "
                        "another name, or delete or rename it first (vaultwatch never "
                        "overwrites on rename)",
                        dst_rel,
                    )
                if not case_only:
                    self._check_new(dloc, leaving=src_rel, actor=actor)
                previous = None
                if kind != FOLDER:
                    previous = self._previous_etag(sloc, sst, src_rel, kind, if_match)
                elif if_match is not None:
                    raise WriteRefused("if_match applies to files; a folder has no etag: omit it", "invalid_arguments")
                moved_files = self.files_under(src_rel, sloc) if kind == FOLDER else [src_rel]
                moved_dirs = self.dirs_under(src_rel, sloc, kind)
                moves, todo = _relinking(snap, src_rel, dst_rel, moved_files, update_links)
                # without link rewriting, the notes whose links will point at nothing (into what moves,
                # or a moved note's relative ones):
                # the person is told before approving it, and the agent after
                stranded = () if update_links else _stranded(snap, moves)
                if todo and (held := link_breaking(dst_rel)):
                    linking = sum(1 for _ in rewrite.naming_notes(snap.entries, moves))
                    if linking:
                        _refuse_unlinkable(dst_rel, held, linking)
                if OKF_INDEX in (src_rel, dst_rel):
                    moved = snap.get(src_rel)
                    lands = dst_rel == OKF_INDEX and moved is not None and okf.declares_okf(moved.frontmatter)
                    _refuse_bundle_switch(actor, snap.is_bundle, lands)
                new_folders = _new_folders(dloc)
                effects = fx.moved(
                    src_rel, dst_rel, files=moved_files, folders=moved_dirs, new_folders=new_folders, stranded=stranded
                )
                shown: list[tuple[str, bytes, bytes]] = []
                asked: list[bool] = []

                def relinks() -> Iterator[tuple[str, bytes, bytes]]:
                    asked.append(True)
                    shown.clear()
                    for item in self._link_previews(snap, moves, todo):
                        shown.append(item)
                        yield item

                _journal.approve(effects + fx.relinked(self._relinked(todo, moves)), relinks=relinks)
                if asked and list(self._link_previews(snap, moves, todo)) != shown:
                    # the person approved the link rewrites the question showed: a note edited while
                    # they answered would be rewritten into text they never saw
                    raise ConflictError(
                        "revision conflict: a note whose links this rename rewrites changed while the "
                        "person was asked about it; nothing was moved; retry",
                        src_rel,
                        None,
                    )
                if kind == FOLDER and _journal.waited():  # approved while waiting: is it still what they saw?
                    if (self.files_under(src_rel, sloc), self.dirs_under(src_rel, sloc, kind)) != (
                        moved_files,
                        moved_dirs,
                    ):
                        raise ConflictError(
                            f"revision conflict: the contents of folder {src_rel!r} changed while this "
                            "rename waited for the person's approval; nothing was moved; retry",
                            src_rel,
                            None,
                        )
                created: list[str] = []
                created_ids: dict[str, tuple[int, int]] = {}
                moved_ok = False
                try:
                    if dloc.missing:  # the approved folders, made only now (see _make_folders)
                        made = self._make_folders(dst_rel, dst_rel, new_folders)
                        dloc.close()
                        dloc.dir_fd, dloc.name, dloc.missing = made.dir_fd, made.name, False
                        created, created_ids = made.created, made.created_ids
                    if kind == FOLDER and (dst_rel + "/").startswith(src_rel + "/"):
                        raise WriteRefused(f"cannot move folder {src_rel!r} into itself", "invalid_destination")
                    self._refuse_moved(sloc, dloc, what="moved")
                    try:
                        if case_only:
                            os.rename(sloc.name, dloc.name, src_dir_fd=sloc.dir_fd, dst_dir_fd=dloc.dir_fd)
                        else:
                            rename_noreplace(sloc.dir_fd, sloc.name, dloc.dir_fd, dloc.name)
                            if not (self._in_place(sloc) and self._in_place(dloc)):
                                # moved in the instant before the switch: put it back (the name it
                                # left is free unless someone took it meanwhile: then it stays, journaled)
                                with contextlib.suppress(OSError):
                                    rename_noreplace(dloc.dir_fd, dloc.name, sloc.dir_fd, sloc.name)
                                    self._refuse_moved(sloc, dloc, what="moved")
                    except FileExistsError:
                        raise AlreadyExistsError(
                            f"destination exists: {dst_rel!r} appeared meanwhile; choose another name", dst_rel
                        ) from None
                    except OSError as exc:
                        raise os_error(exc, src_rel, "was not moved") from None
                    moved_ok = True
                finally:
                    if not moved_ok and created:  # nothing moved: the folders made for it go again
                        remove_created(self.vault.root_real, created, created_ids)
                fsync_dir(sloc.dir_fd)
                fsync_dir(dloc.dir_fd)
                new_dirs = self.dirs_under(dst_rel, dloc, kind)
                etag = None
                if kind != FOLDER:
                    try:
                        found = read_file(dloc, dst_rel)
                    except VaultError:
                        found = None
                    etag = etag_of(found[0]) if found else None
        new_paths = [dst_rel, *(moves.values() if kind == FOLDER else ()), *new_dirs]
        self._refresh([src_rel, *created, *new_paths], actor)
        warnings: list[str] = []
        rewritten: list[str] = []
        n_links = notes_left = 0
        if update_links:
            if self._hook is not None:
                self._hook("moved")
            # shown to the person: each note is rewritten into exactly the bytes they approved, or left alone
            approved = {path: (was, now) for path, was, now in shown} if asked else None
            n_links, rewritten, warnings, notes_left = self._rewrite_links(snap, moves, todo, actor, approved)
            if kind != FOLDER and dst_rel in rewritten:
                with self.locate(dst_rel) as dloc:
                    try:
                        found = read_file(dloc, dst_rel)
                    except VaultError:
                        found = None
                etag = etag_of(found[0]) if found else None
        what = {NOTE: "note", ATTACHMENT: "attachment", FOLDER: "folder"}[kind]
        summary = f"renamed {what} {src_rel} -> {dst_rel}"
        if kind == FOLDER:
            summary += f" ({len(moved_files)} files)"
        if update_links:
            summary += (
                f"; rewrote {n_links} link{'s' if n_links != 1 else ''} in {len(rewritten)} "
                f"note{'s' if len(rewritten) != 1 else ''}"
            )
        if links_left := len(warnings) - notes_left:  # a warning is one link, or one note's links (notes_left)
            summary += f"; {links_left} link{'s' if links_left != 1 else ''} left alone"
        if notes_left:
            summary += f"; links in {notes_left} note{'s' if notes_left != 1 else ''} left as they were"
        if stranded:
            n = len(stranded)
            summary += f"; links in {n} note{'s' if n != 1 else ''} not rewritten (now broken)"
            listed = ", ".join(stranded[:10]) + (" ..." if n > 10 else "")
            warnings.append(f"{fx.stranded_words(n)} (update_links is false): {listed}")
        paths = tuple(dict.fromkeys([src_rel, dst_rel, *created, *rewritten]))
        return self._publish(
            WriteResult("rename", dst_rel, etag, previous, False, True, paths, summary, tuple(warnings), dst_rel), actor
        )

    def _check_rewrite_bounds(self, snap: Snapshot, src_rel: str, dst_rel: str, kind: str) -> None:
        """Refuse, before any change, a rename whose link rewriting would take unbounded time:
        every note it would rewrite (the moved ones and those linking to them) must hold at most
        rewrite.MAX_REWRITE_LINKS links. Notes too small to hold that many are not read."""
        if kind == FOLDER:
            prefix = src_rel + "/"
            moved = [e.path for e in snap.entries if e.path.startswith(prefix) and e.kind != FOLDER]
        else:
            moved = [src_rel]
        moves = {p: dst_rel + p[len(src_rel) :] for p in moved}
        for path in rewrite.candidate_notes(snap.entries, moves):
            entry = snap.get(path)
            if entry is None or entry.size_bytes <= rewrite.COUNT_ABOVE_BYTES:
                continue
            try:
                with self.locate(path) as loc:
                    found = read_file(loc, path)
            except VaultError:
                continue  # unreadable here: the rewrite skips it with a warning
            n = rewrite.link_markers(found[0]) if found else 0
            if n > rewrite.MAX_REWRITE_LINKS:
                raise WriteRefused(rewrite.too_many_links(path, n), "too_many_links")

    def _journal_bytes(self, loc: Loc, st: os.stat_result, rel: str) -> tuple[bytes, int] | None:
        """The bytes a delete removes and their file's mode, for the change journal (None for a
        hard-linked file, never read)."""
        if st.st_nlink > 1 and not stat_mod.S_ISLNK(st.st_mode):
            return None
        try:
            if stat_mod.S_ISLNK(st.st_mode):
                with self.locate(rel) as target:
                    found = read_file(target, rel)
            else:
                found = read_file(loc, rel)
        except VaultError:
            return None
        return found

    def _previous_etag(self, loc: Loc, st: os.stat_result, rel: str, kind: str, if_match: str | None) -> str | None:
        """The etag of the file a rename or delete moves (None for a hard-linked one, which is never read)."""
        if st.st_nlink > 1 and not stat_mod.S_ISLNK(st.st_mode):
            if if_match is not None:
                raise hardlink_refusal(rel, st.st_nlink)
            return None
        if stat_mod.S_ISLNK(st.st_mode):
            with self.locate(rel) as target:
                found = read_file(target, rel)
        else:
            found = read_file(loc, rel)
        previous = etag_of(found[0]) if found else None
        self._check_match(_Target(rel, rel, kind, ""), if_match, previous)
        return previous

    @_journal.journaled("delete")
    def delete(
        self,
        path: str,
        *,
        permanent: bool = False,
        confirm_path: str | None = None,
        if_match: str | None = None,
        actor: str = "human",
    ) -> WriteResult:
        """Move a note, attachment or folder to the vault's `.trash/` folder (as Obsidian does).

        In the trash the name is kept; a clash gets a numeric suffix ("Plan 1.md").
        `permanent=True` deletes instead, and only when `confirm_path` repeats `path` exactly;
        a folder is deleted permanently only when empty.
        """
        rel = self._stored(normalize(path))
        # the rules that refuse outright answer before "not found" or an etag check (see write)
        _journal.refuse_first(fx.deleted(rel, rel, permanent=permanent))
        if permanent and confirm_path != path:
            raise WriteRefused(
                f"permanent deletion needs confirm_path={path!r} (the exact same path repeated); "
                "or omit permanent to move it to the vault's .trash/ folder, where it can be "
                "restored",
                "confirmation_required",
            )
        loc, st, kind = self._existing(rel)
        snap = self.vault.snapshot
        with loc, _LOCKS.hold(self._key(loc.canon)):
            if loc.canon != rel:  # named through a folder link: its real path is what the rules look at
                _journal.refuse_first(fx.deleted(rel, loc.canon, permanent=permanent))
            now_st = loc.lstat()
            if now_st is None:
                raise NotFoundError(f"not found: {rel!r} does not exist; list_documents shows what exists")
            st = now_st
            previous = None
            if kind != FOLDER:
                previous = self._previous_etag(loc, st, rel, kind, if_match)
            elif if_match is not None:
                raise WriteRefused("if_match applies to files; a folder has no etag: omit it", "invalid_arguments")
            moved_to = None
            is_dir = stat_mod.S_ISDIR(st.st_mode)
            journaled = self._journal_bytes(loc, st, rel) if kind != FOLDER else None
            shown = journaled[0] if journaled is not None else None
            if OKF_INDEX in (rel, loc.canon):
                _refuse_bundle_switch(actor, snap.is_bundle, False)
            inside = self._contents(loc, is_dir)
            _journal.approve(
                fx.deleted(rel, loc.canon, files=inside[0], folders=inside[1], permanent=permanent),
                shown,
                None,
                old_mode=journaled[1] if journaled is not None else None,
            )
            if is_dir and _journal.waited():
                if self._contents(loc, is_dir) != inside:
                    raise ConflictError(
                        f"revision conflict: the contents of folder {rel!r} changed while this delete "
                        "waited for the person's approval; nothing was deleted; retry",
                        rel,
                        None,
                    )
            if kind != FOLDER and _journal.waited():  # the person approved what they saw: is it still there?
                again = loc.lstat()
                found = self._journal_bytes(loc, again, rel) if again is not None else None
                now = found[0] if found is not None else None
                if now != shown:
                    raise ConflictError(
                        f"revision conflict: {rel!r} was changed by someone else while this delete "
                        "waited for the person's approval; nothing was deleted; read it again and "
                        "retry",
                        rel,
                        etag_of(now) if now is not None else None,
                    )
            self._refuse_moved(loc, what="deleted")
            try:
                if permanent:
                    if is_dir:
                        try:
                            os.rmdir(loc.name, dir_fd=loc.dir_fd)
                        except OSError as exc:
                            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                                raise WriteRefused(
                                    f"folder {rel!r} is not empty: vaultwatch only deletes empty "
                                    "folders permanently; move it to the trash (omit permanent) "
                                    "or delete its notes first",
                                    "folder_not_empty",
                                ) from None
                            raise
                    else:
                        os.unlink(loc.name, dir_fd=loc.dir_fd)
                else:
                    moved_to = self._to_trash(loc, is_dir)
            except OSError as exc:
                raise os_error(exc, rel, "was not deleted") from None
            if self._hook is not None:
                self._hook("deleted")
            fsync_dir(loc.dir_fd)
        self._refresh([rel], actor)
        warnings: tuple[str, ...] = ()
        if kind != FOLDER:
            linking = rewrite.linking_notes(
                snap.entries, rel, lambda: rewrite.LinkIndex(e.path for e in snap.entries if e.kind != FOLDER)
            )
            if linking:
                listed = ", ".join(linking[:10]) + (" ..." if len(linking) > 10 else "")
                n = len(linking)
                warnings = (
                    f"{n} note{'s' if n != 1 else ''} still link{'' if n != 1 else 's'} to {rel} "
                    f"(now broken links): {listed}",
                )
        summary = f"deleted {rel} for good (not to the trash)" if permanent else f"moved {rel} to {moved_to}"
        return self._publish(
            WriteResult("delete", rel, None, previous, False, True, (rel,), summary, warnings, moved_to), actor
        )

    # --- the read-modify-write core ---

    def _modify(
        self,
        operation: str,
        path: str,
        change: Callable[[str], tuple[str, str, tuple[str, ...]]],
        *,
        if_match: str | None,
        actor: str,
    ) -> WriteResult:
        t = self._target(path)
        _journal.refuse_first(fx.written(t.rel, t.canon, operation=operation))  # before "not found" (see write)
        with _LOCKS.hold(t.key), self.locate(t.canon) as loc, FolderSyncs() as later:
            found = read_file(loc, t.rel)
            if found is None:
                raise NotFoundError(
                    f"not found: {t.rel!r} does not exist; create it with write, or check the path with list_documents"
                )
            old, mode = found
            current = etag_of(old)
            self._check_match(t, if_match, current)
            if len(old) > self.max_bytes:  # before the work: decoding, matching, checking a 40 MB note holds
                # the interpreter for seconds, and the result could never be written anyway
                raise WriteRefused(
                    f"{t.rel!r} is {len(old):,} bytes, over the {self.max_bytes // 2**20} MiB write "
                    f"cap, so {operation} cannot rewrite it; nothing was changed; split it by hand "
                    "into smaller notes",
                    "too_large",
                )
            bom = BOM if old.startswith(BOM) else b""
            try:
                text = old[len(bom) :].decode("utf-8")
            except UnicodeDecodeError:
                raise WriteRefused(
                    f"{t.rel!r} is not valid UTF-8, so it cannot be edited in place without "
                    "damaging it; replace it whole with write",
                    "not_utf8",
                ) from None
            new_text, summary, warnings = change(text)
            if new_text == text:
                return self._unchanged(operation, t, current)
            if operation != "update_frontmatter":
                had, err_before = _frontmatter_ok(text)
                has, err_after = _frontmatter_ok(new_text)
                if had and err_before is None and (not has or err_after is not None):
                    raise EditError(
                        f"this change would break the note's frontmatter ({err_after or 'block removed'}); "
                        "nothing was changed; use update_frontmatter to change frontmatter keys",
                        "would_break_frontmatter",
                    )
            data = bom + self._encode(new_text, t, check_size=False)
            self._commit(t, loc, old, data, actor=actor, mode=mode, later=later)
            return self._done(operation, t, current, data, actor, later, summary=summary, warnings=warnings)

    def _commit(
        self,
        t: _Target,
        loc: Loc,
        old: bytes | None,
        data: bytes,
        *,
        actor: str,
        mode: int | None = None,
        create: bool = False,
        effects: fx.EffectSet | None = None,
        later: FolderSyncs | None = None,
    ) -> list[str]:
        """Write `data` atomically (lock held). Returns vault paths of folders created for it.
        `mode`: the replaced note's permission bits, which the new bytes keep (a create: the new file's).
        `effects`: what the approval gate is asked about (default: this note written or created,
        with the folders a create makes); `later`: the folder's fsync runs in the background, the
        caller waits for it (see `_done`)."""
        if len(data) > self.max_bytes:
            raise WriteRefused(
                f"content is {len(data)} bytes, over the {self.max_bytes // 2**20} MiB write cap; "
                "split it into several notes",
                "too_large",
            )
        if t.kind == NOTE and not is_human(actor) and OKF_INDEX in (t.rel, t.canon):
            _refuse_bundle_switch(actor, _declares_okf(old), _declares_okf(data))
        if t.kind == NOTE and not is_human(actor):
            added = _human_attestations(data) - _human_attestations(old)
            if added:
                who = next(iter(added))[0]
                raise WriteRefused(
                    f"agents cannot attest human review: this change adds or alters a `verified` entry with "
                    f"by: {who!r}; record your own check with by: 'agent:<your name>' "
                    "(machine-confirmed) and leave human review to a person",
                    "human_attestation_refused",
                )
        new_folders = _new_folders(loc) if create else []
        if effects is None:
            effects = fx.written(t.rel, t.canon, create=create, new_folders=new_folders)
        fresh = None
        # No folder is made before the agent's rules, the journal's room and the approval gate let the
        # change through. Into folders that exist, the bytes go to disk first (a synced, hidden temporary
        # file, removed on any refusal), so that after the person's key only the re-check, the switch and
        # the folder's fsync remain; a change that needs new folders makes them, and its file, once approved.
        early = not (create and loc.missing)

        def precheck() -> None:
            if create:
                return
            now = read_file(loc, t.rel)
            moved = _journal.moved_while_waiting(t.rel) if now is None else None
            if moved is not None:
                raise ConflictError(
                    f"revision conflict: {t.rel!r} was moved to {moved!r} while this change waited for the "
                    f"person's approval; nothing was written; read {moved!r} and retry there",
                    t.rel,
                    None,
                )
            if now is None or now[0] != old:
                raise ConflictError(
                    f"revision conflict: {t.rel!r} was changed by someone else while this write "
                    "was in progress; read it again and retry",
                    t.rel,
                    etag_of(now[0]) if now else None,
                )

        done = False
        temp = None
        replaced: Any = UNKNOWN

        def placed() -> bool:
            return self._in_place(loc)

        try:
            if early:
                _journal.refuse_first(effects)  # no byte of a change its rules refuse reaches the disk
                temp = write_temp(loc, data, mode=mode, hook=self._hook)
                if self._hook is not None:
                    self._hook("temp_written")
            folder = loc.canon.rpartition("/")[0]
            named = None if temp is None else f"{folder}/{temp.name}" if folder else temp.name
            # raises when a rule refuses or the person declines
            _journal.approve(effects, old, data, named, old_mode=None if create else mode)
            if temp is None:  # make the approved folders, each relative to its parent's descriptor
                fresh = loc = self._make_folders(t.canon, loc.canon, new_folders)
                temp = write_temp(loc, data, mode=mode, hook=self._hook)
                if self._hook is not None:
                    self._hook("temp_written")
            replaced = temp.commit(
                loc.name, create=create, precheck=precheck, hook=self._hook, later=later, placed=placed, shown=t.rel
            )
            done = True
        except FileExistsError:
            try:
                found = read_file(loc, t.rel)
            except VaultError:
                found = None
            raise AlreadyExistsError(
                f"already exists: {t.rel!r} was created by someone else meanwhile; read it and retry with if_match",
                t.rel,
                etag_of(found[0]) if found else None,
            ) from None
        except OSError as exc:
            raise os_error(exc, t.rel, "was not created" if create else "is unchanged") from None
        finally:
            if temp is not None:
                temp.discard()  # refused, declined or failed: no temporary file stays
            if fresh is not None:
                fresh.close()
                if not done:  # failed: exactly the folders this call made go again (when still empty)
                    remove_created(self.vault.root_real, fresh.created, fresh.created_ids)
        # the journal holds what the switch really replaced: a change that reached the note after
        # the last look (another process's, an editor's) is given back by this write's revert
        _journal.committed(t.rel, old if replaced is UNKNOWN else replaced, data, None if create else mode)
        return list(fresh.created) if fresh is not None else []

    def _in_place(self, loc: Loc) -> bool:
        """Whether `loc`'s folder is still where the change was decided on. Another process (an agent
        allowed to, the person's file manager) may move it while the change waits for the person, or
        between the last look and the switch, and the descriptor follows it: into a folder the agent
        is denied, out of the vault, into the trash. The rules, the gate and the journal decided on
        the path, so the change lands there or nowhere. True where the system cannot name a
        descriptor (the other checks then stand alone)."""
        now = platform.fd_path(loc.dir_fd)
        root = self.vault.root_real
        return now is None or now == (f"{root}/{loc.parent}" if loc.parent else root)

    def _refuse_moved(self, *locs: Loc, what: str) -> None:
        """Raise WriteRefused when the folder of any of `locs` moved since the change was decided on
        (`_in_place`)."""
        for loc in locs:
            if not self._in_place(loc):
                raise moved_away(loc.canon, "change", what)

    def _make_folders(self, canon: str, approved: str, folders: list[str]) -> Loc:
        """Make the missing folders on the way to `canon` (a new entry), after the gate approved
        `folders` for the path `approved`. A folder on the way swapped for a link meanwhile (the
        walk follows in-vault links) would put the entry or new folders somewhere nobody approved:
        then the folders made are removed again and nothing is done."""
        made = self.locate(canon, make_dirs=True, follow_last=False)
        if made.canon != approved or not set(made.created) <= set(folders):
            made.close()
            remove_created(self.vault.root_real, made.created, made.created_ids)
            raise PathChangedError(
                f"{canon!r} changed on disk while its folders were being made (a folder on the way was "
                "moved or replaced by a link); nothing was done: try again"
            )
        return made

    def remove_empty_folders(self, folders: Iterable[str], *, actor: str = "human") -> list[str]:
        """rmdir each of `folders` (vault paths) that is empty, deepest first; one that is not (someone
        put something there since) stays, and so do its parents. Returns the folders removed."""
        order = sorted({normalize(f) for f in folders}, key=lambda f: f.count("/"), reverse=True)
        removed: list[str] = []
        for rel in order:  # rmdir refuses a folder that is not empty: no lock needed
            try:
                with self.locate(rel, follow_last=False) as loc:
                    os.rmdir(loc.name, dir_fd=loc.dir_fd)
            except (OSError, VaultError):
                continue
            removed.append(rel)
        if removed:
            self._refresh(removed, actor)
        return removed

    def _check_match(self, t: _Target, if_match: str | None, current: str | None) -> None:
        if if_match is None:
            return
        if not isinstance(if_match, str):
            raise WriteRefused("if_match must be the etag string returned by read", "invalid_arguments")
        if current is None:
            raise ConflictError(
                f"revision conflict: {t.rel!r} does not exist (any more); list_documents shows what exists", t.rel, None
            )
        if if_match.strip().strip('"').lower() != current:
            raise ConflictError(
                f"revision conflict: {t.rel!r} changed since you read it (your if_match "
                f"{if_match[:16]!r}..., current etag {current!r}); read it again, re-apply your "
                "change to the new content and retry with the new etag",
                t.rel,
                current,
            )

    # --- rename helpers ---

    def link_rewrites(self, src: str, dst: str, *, update_links: bool = True) -> list[tuple[str, bytes, bytes]]:
        """What renaming `src` to `dst` now would make of each note whose links it rewrites (each
        note's path after the move, its bytes now, its bytes after), moving and writing nothing: for
        a rename that waits for the person (a pending change), who approves the new link text as
        the question through an agent's client shows it (`_link_previews`, as `rename` reads them)."""
        if not update_links:
            return []
        snap, moves, todo = self._planned_moves(src, dst, update_links)
        return list(self._link_previews(snap, moves, todo))

    def stranded(self, src: str, dst: str) -> tuple[str, ...]:
        """The notes whose links renaming `src` to `dst` now without link rewriting would leave
        pointing at nothing, moving nothing: for a rename that waits for the person (a pending
        change), who is told, as `rename` tells them when it asks."""
        snap, moves, _ = self._planned_moves(src, dst, False)
        return _stranded(snap, moves)

    def contents(self, rel: str) -> tuple[list[str], list[str]]:
        """(files, folders) under the folder at `rel` that a rename or delete of it now would carry
        along, by their real paths, moving nothing (none for a file): for a folder's change that waits
        for the person, whose folder may hold notes since that they never saw."""
        loc, _st, kind = self._existing(self._stored(normalize(rel, what="path")))
        with loc:
            if kind != FOLDER:
                return [], []
            return self.files_under(loc.canon, loc), self.dirs_under(loc.canon, loc, FOLDER)

    def _planned_moves(self, src: str, dst: str, update_links: bool) -> tuple[Snapshot, dict[str, str], list[str]]:
        """What renaming `src` to `dst` now would move (old path -> new path) and which notes it
        would rewrite links in, over the loaded index, moving nothing (for the views of a waiting
        rename: its link rewrites, the links it would leave pointing at nothing)."""
        src_rel = self._stored(normalize(src, what="source path"))
        dst_rel = self._stored(normalize(dst, what="destination path"), last=False)
        sloc, _st, kind = self._existing(src_rel)
        with sloc:
            src_rel = sloc.canon
            with self.locate(dst_rel, follow_last=False) as probe:
                dst_rel = probe.canon
            snap = self.vault.snapshot
            if not snap.loaded:
                self.vault.wait_ready(30)
                snap = self.vault.snapshot
            moved_files = self.files_under(src_rel, sloc) if kind == FOLDER else [src_rel]
            moves, todo = _relinking(snap, src_rel, dst_rel, moved_files, update_links)
            return snap, moves, todo

    def _relinked(self, todo: list[str], moves: dict[str, str]) -> list[tuple[str, str]]:
        """(path after the move, path of its bytes) for each note a rename may rewrite links in:
        a symlinked note's target is what gets rewritten, so the approval must see it."""
        out: list[tuple[str, str]] = []
        for path in todo:
            try:
                t = self._target(path)
            except VaultError:
                continue  # the rewrite cannot reach it either (it warns instead)
            out.append((moves.get(path, path), moves.get(t.canon, t.canon)))
        return out

    def _link_previews(
        self, snap: Snapshot, moves: dict[str, str], todo: list[str]
    ) -> Iterator[tuple[str, bytes, bytes]]:
        """What the rename's link rewriting will make of each note it changes, read before the move
        (path of its bytes after the move, bytes now, bytes after), one note at a time: for the
        question put to the person, who approves the new link text, not only the notes' names."""
        before, after = _link_indexes(snap, moves)
        for old_path in todo:
            new_path = moves.get(old_path, old_path)
            try:
                t = self._target(old_path)
                with self.locate(t.canon) as loc:
                    found = read_file(loc, t.rel)
            except VaultError:
                continue  # the rewrite cannot reach it either (it warns instead)
            if found is None:
                continue
            data, _ = _relinked_bytes(found[0], old_path, new_path, moves, before, after)
            if data is not None:
                yield moves.get(t.canon, t.canon), found[0], data

    def _rewrite_links(
        self,
        snap: Snapshot,
        moves: dict[str, str],
        todo: list[str],
        actor: str,
        approved: Mapping[str, tuple[bytes, bytes]] | None = None,
    ) -> tuple[int, list[str], list[str], int]:
        """Rewrite the rename's links in each note of `todo`. `approved`: the rewrites the person was
        shown (path of the note's bytes after the move: its bytes before, its bytes after), the only
        ones this may write; None when nobody was asked (each note is then read as it is now).
        Returns the links rewritten, the notes rewritten, the warnings, and how many of those warnings
        each stand for a whole note whose links were left as they were (the others: one link each)."""
        before, after = _link_indexes(snap, moves)
        count = notes_left = 0
        rewritten: list[str] = []
        warnings: list[str] = []

        def one(old_path: str) -> tuple[str, int, tuple[str, ...]]:
            new_path = moves.get(old_path, old_path)
            try:
                return (new_path, *self._rewrite_one(old_path, new_path, moves, before, after, actor, approved))
            except VaultError as exc:
                return new_path, 0, (_NoteLeft(f"{new_path}: links not updated: {exc.message}"),)

        # Each note is rewritten atomically under its own lock; doing several at once lets the
        # file system batch their fsyncs (a folder move can touch thousands of notes).
        ctx = contextvars.copy_context()  # the change journal's scope reaches the rewriting threads
        with ThreadPoolExecutor(max_workers=max(1, min(REWRITE_THREADS, len(todo)))) as pool:
            for new_path, n, warns in pool.map(lambda p: ctx.copy().run(one, p), todo):
                warnings.extend(str(w) for w in warns)
                notes_left += sum(isinstance(w, _NoteLeft) for w in warns)
                if n:
                    count += n
                    rewritten.append(new_path)
        if rewritten:
            self.vault.refresh_paths(rewritten, source=actor)
        return count, rewritten, warnings, notes_left

    def _rewrite_one(
        self,
        old_path: str,
        new_path: str,
        moves: dict[str, str],
        before: rewrite.LinkIndex,
        after: rewrite.LinkIndex,
        actor: str,
        approved: Mapping[str, tuple[bytes, bytes]] | None = None,
    ) -> tuple[int, tuple[str, ...]]:
        """Rewrite the rename's links in one note, read as it is now (an edit meanwhile: read again and
        redone). `approved` (a rename the person approved, see _rewrite_links): the note is written only
        from the bytes they were shown into the bytes they were shown, once. One edited since (by an
        outside editor, which takes none of our locks, or another agent) is left alone: a rewrite of its
        new text, or a retry that reads it again, would put links there the person never saw."""
        t = self._target(new_path)
        shown = approved.get(t.canon) if approved is not None else None
        left = (
            _NoteLeft(f"{new_path}: changed after the person approved this rename: its links were left as they are"),
        )
        for _attempt in range(3 if approved is None else 1):
            with _LOCKS.hold(t.key), self.locate(t.canon) as loc:
                found = read_file(loc, t.rel)
                if found is None:
                    return 0, left if shown is not None else ()
                old, mode = found
                data, result = _relinked_bytes(old, old_path, new_path, moves, before, after)
                if data is None:
                    return 0, left if shown is not None else result.warnings
                if approved is not None and (old, data) != shown:
                    return 0, left  # (a rewrite nobody was shown is never written either)
                try:
                    # the commit compares `old` (for an approved rename, the shown bytes) under the lock
                    effects = fx.relinked([(t.rel, t.canon)])
                    self._commit(t, loc, old, data, actor=actor, mode=mode, effects=effects)
                except ConflictError:
                    if approved is not None:
                        return 0, left
                    continue  # edited meanwhile: read again and redo this note
                return result.changed, result.warnings
        return 0, (_NoteLeft(f"{new_path}: kept changing while its links were being updated; links not updated"),)

    # --- paths ---

    def locate(self, rel: str, **kwargs: Any) -> Loc:
        """core.disk.safeio.locate for a vault path, its OS errors turned into structured ones."""
        try:
            return locate(self.vault.root_real, rel, missing_ok=not kwargs.get("make_dirs"), **kwargs)
        except NotADirectoryError:
            raise WriteRefused(f"{rel!r}: a file stands where a folder on the way should be", "not_a_folder") from None
        except FileNotFoundError:
            raise NotFoundError(
                f"not found: a folder on the way to {rel!r} was removed meanwhile; list_documents shows what exists"
            ) from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise PathError(f"{rel!r} goes through a symlink loop; name it by its real path") from None
            raise os_error(exc, rel, "was not changed") from None

    def _stored(self, rel: str, *, last: bool = True) -> str:
        """`rel` with the levels that exist spelled as the disk stores them (core.disk.storednames):
        on a disk that folds case `notes/plan.md` is `Notes/Plan.md`, and the rules, the journal, the
        note's lock and the watcher must all name the change by that one path. `last` False: a
        rename's new name, kept as given."""
        snap = self.vault.snapshot
        return stored(self.vault.root_real, rel, lambda p: snap.get(p) is not None, last=last)

    def _spelling(self, rel: str, canon_parent: str) -> str:
        """The path to answer with: a path spelled through a folder link that read does not
        accept (a link to the root, or to a folder listed at its real path) becomes the real
        path, which read, the index and the answer all use (as rename does)."""
        parent = rel.rpartition("/")[0]
        if parent == canon_parent:
            return rel
        if walked_folder(self.vault.root_real, parent, self.vault.config) == parent:
            return rel
        name = rel.rpartition("/")[2]
        return f"{canon_parent}/{name}" if canon_parent else name

    def _key(self, canon: str) -> str:
        """The per-note lock's key: the entry's real location (as Vault.disk_path names it)."""
        return os.path.join(self.vault.root_real, *canon.split("/"))

    def _check_new(self, loc: Loc, *, leaving: str | None = None, actor: str = "human") -> None:
        """Refuse a new name (and new folders on the way) a person could mistake for another (names.check_new_name).

        `leaving` is a rename's source: beside its own new name it is gone, so renaming
        `plan.md` to `Plan.md` is no twin, unless the file system folds case (then the two
        names are one entry, and a forced probe on a case-sensitive disk must refuse it)."""
        new = loc.name.split("/")
        try:
            siblings = os.listdir(loc.dir_fd)
        except OSError:
            siblings = []
        folds = folds_case(loc.dir_fd, siblings)
        if leaving is not None and not folds and not loc.missing and leaving.rpartition("/")[0] == loc.parent:
            siblings = [s for s in siblings if s != leaving.rpartition("/")[2]]
        check_new_name(new[0], siblings, folds_case=folds)
        for part in new[1:]:
            check_new_name(part)
        if not is_human(actor):
            for part in new:
                check_linkable_name(part)

    def _target(self, path: str, *, allow_attachment: bool = False) -> _Target:
        rel = self._stored(normalize(path))
        name = rel.rsplit("/", 1)[-1]
        kind = self.vault.config.kind_of(name)
        if kind != NOTE:
            if kind == ATTACHMENT and allow_attachment:
                pass
            elif kind == ATTACHMENT:
                raise WriteRefused(
                    f"{rel!r} is an attachment; vaultwatch writes only Markdown notes here: use a path ending in .md",
                    "not_a_note",
                )
            else:
                raise WriteRefused(
                    f"{rel!r} is not a Markdown note: use a path ending in .md (other file types are not written)",
                    "not_a_note",
                )
        with self.locate(rel, follow_last=False) as loc:
            rel = self._spelling(rel, loc.canon.rpartition("/")[0])
        with self.locate(rel) as loc:  # an in-vault symlink note: its target is what is read and written
            canon = loc.canon
        return _Target(rel, canon, kind, self._key(canon))

    def _existing(self, rel: str) -> tuple[Loc, os.stat_result, str]:
        """(location of the entry itself, its lstat, kind) for an existing vault file or folder.

        A symlink is located as itself; its target must lie inside the vault, outside hidden folders.
        """
        loc = self.locate(rel, follow_last=False)
        try:
            st = loc.lstat() if not loc.missing else None
            if st is None:
                raise NotFoundError(f"not found: {rel!r} does not exist; list_documents shows what exists")
            if stat_mod.S_ISLNK(st.st_mode):
                with self.locate(rel) as target:  # raises for a link that leads outside or into hidden folders
                    tst = target.lstat() if not target.missing else None
                if tst is None:
                    raise NotFoundError(f"not found: {rel!r} is a broken symlink; list_documents shows what exists")
                if stat_mod.S_ISDIR(tst.st_mode):
                    return loc, st, FOLDER
            elif stat_mod.S_ISDIR(st.st_mode):
                return loc, st, FOLDER
            kind = self.vault.config.kind_of(loc.name)
            if kind is None or not (stat_mod.S_ISREG(st.st_mode) or stat_mod.S_ISLNK(st.st_mode)):
                raise WriteRefused(
                    f"{rel!r} is not a note, an allowlisted attachment or a folder of the vault", "not_a_vault_file"
                )
            return loc, st, kind
        except BaseException:
            loc.close()
            raise

    def files_under(self, rel: str, loc: Loc) -> list[str]:
        """The vault paths of the notes and attachments under the folder `loc` (at `rel`), hidden ones left out."""
        out: list[str] = []
        for dirpath, dirnames, filenames, _fd in fwalk(loc.name, dir_fd=loc.dir_fd):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            base = dirpath[len(loc.name) + 1 :]  # below loc.name (no relpath: it splits the whole path)
            prefix = f"{rel}/{base}" if base else rel
            for name in filenames:
                if not name.startswith(".") and self.vault.config.kind_of(name) is not None:
                    out.append(f"{prefix}/{name}")
        return sorted(out)

    def _contents(self, loc: Loc, is_dir: bool) -> tuple[list[str], list[str]]:
        """(files, folders) under a real folder (not through a link to one), by their real paths."""
        if not is_dir:
            return [], []
        return self.files_under(loc.canon, loc), self.dirs_under(loc.canon, loc, FOLDER)

    def dirs_under(self, rel: str, loc: Loc, kind: str) -> list[str]:
        """The vault paths of the folders under the folder `loc` (at `rel`; [] unless `kind` is FOLDER)."""
        if kind != FOLDER:
            return []
        out: list[str] = []
        for dirpath, dirnames, _, _fd in fwalk(loc.name, dir_fd=loc.dir_fd):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            base = dirpath[len(loc.name) + 1 :]  # below loc.name (no relpath: it splits the whole path)
            prefix = f"{rel}/{base}" if base else rel
            out.extend(f"{prefix}/{d}" for d in dirnames)
        return out

    def _to_trash(self, loc: Loc, is_dir: bool) -> str:
        with self.locate(TRASH, follow_last=False, allow_hidden=True) as trash:
            st = trash.lstat()
            if st is not None and not stat_mod.S_ISDIR(st.st_mode):
                raise WriteRefused(
                    f"the vault's {TRASH} is not a plain folder (a symlink or a file); fix it, or "
                    "delete permanently with permanent=true and confirm_path",
                    "trash_unusable",
                )
            if st is None:
                try:
                    os.mkdir(TRASH, dir_fd=trash.dir_fd)
                except FileExistsError:
                    pass
            tfd = open_at(trash.dir_fd, TRASH, os.O_RDONLY | O_DIRECTORY, rel=TRASH)
        try:
            name = loc.name
            stem, dot, ext = name.rpartition(".")
            if not stem or is_dir:
                stem, dot, ext = name, "", ""
            for i in range(10_000):
                candidate = name if i == 0 else f"{stem} {i}{dot}{ext}"
                try:
                    rename_noreplace(loc.dir_fd, loc.name, tfd, candidate)
                except FileExistsError:
                    continue
                fsync_dir(tfd)
                return f"{TRASH}/{candidate}"
        finally:
            os.close(tfd)
        raise WriteRefused(f"the trash already holds 10,000 items named like {name!r}; empty it first", "trash_full")

    def _encode(self, content: str | bytes, t: _Target, *, check_size: bool = True) -> bytes:
        if isinstance(content, str):
            if t.kind == NOTE and "\x00" in content:
                raise WriteRefused("content contains NUL characters; a Markdown note is text: remove them", "nul_bytes")
            try:
                data = content.encode("utf-8")
            except UnicodeEncodeError:
                raise WriteRefused(
                    "content is not valid Unicode text (lone surrogates); send UTF-8 text", "invalid_text"
                ) from None
        elif isinstance(content, (bytes, bytearray)):
            data = bytes(content)
            if t.kind == NOTE:
                if b"\x00" in data:
                    raise WriteRefused("content contains NUL bytes; a Markdown note is text: remove them", "nul_bytes")
                try:
                    data.decode("utf-8")
                except UnicodeDecodeError:
                    raise WriteRefused("note content must be UTF-8 text", "invalid_text") from None
        else:
            raise WriteRefused(f"content must be text, got {type(content).__name__}", "invalid_arguments")
        if check_size and len(data) > self.max_bytes:
            raise WriteRefused(
                f"content is {len(data)} bytes, over the {self.max_bytes // 2**20} MiB write cap; "
                "split it into several notes",
                "too_large",
            )
        return data

    @staticmethod
    def _keep_style(old: bytes, new: bytes) -> bytes:
        if old.startswith(BOM) and not new.startswith(BOM):
            new = BOM + new
        if b"\r" not in new and b"\n" in new and _uniform_crlf(old.decode("utf-8", "replace")):
            new = new.replace(b"\n", b"\r\n")
        return new

    # --- results ---

    def _refresh(self, paths: list[str], actor: str) -> None:
        self.vault.refresh_paths([p for p in dict.fromkeys(paths) if p and not is_hidden(p)], source=actor)

    def _index_paths(self, t: _Target) -> list[str]:
        paths = [t.rel]
        if t.canon != t.rel:
            paths.append(t.canon)  # the note is a symlink inside the vault: its target changed too
        return paths

    def _done(
        self,
        operation: str,
        t: _Target,
        previous: str | None,
        data: bytes,
        actor: str,
        later: FolderSyncs | None = None,
        *,
        created: bool = False,
        extra: Iterable[str] = (),
        summary: str = "",
        warnings: tuple[str, ...] = (),
    ) -> WriteResult:
        # the index takes the change while the folder's fsync runs (`later`); nothing says "done"
        # (the event, the answer, the journal's row after it) before that fsync has returned
        paths = [*extra, *self._index_paths(t)]
        self._refresh(paths, actor)
        entry = self.vault.snapshot.get(t.rel)
        if entry is not None and entry.frontmatter_error:  # written as asked, but its properties are lost
            warnings = (
                *warnings,
                f"{t.rel}: the frontmatter does not parse ({entry.frontmatter_error}), so its properties "
                "(status, tags, aliases) are not read; write it again with valid YAML between the --- lines",
            )
        ignore = self.vault.config.ignore
        if not ignore.empty and ignore.excluded(t.rel):
            warnings = (*warnings, f"{t.rel} matches the vault's ignore rules, so it is not listed or searched")
        result = WriteResult(
            operation, t.rel, etag_of(data), previous, created, True, tuple(dict.fromkeys(paths)), summary, warnings
        )
        if later is not None:
            later.wait()
        return self._publish(result, actor)

    def _unchanged(self, operation: str, t: _Target, etag: str) -> WriteResult:
        return WriteResult(operation, t.rel, etag, etag, False, False, (), "no change (already as requested)")

    def _publish(self, result: WriteResult, actor: str) -> WriteResult:
        self.vault.bus.publish(
            WriteApplied(actor, result.operation, result.path, result.changed_paths, result.diff_summary, time.time())
        )
        return result


def _new_folders(loc: Loc) -> list[str]:
    """The folders, parents first, that a new entry at a missing `loc` needs made: its path's
    folders below the deepest one that exists (none when `loc`'s folder exists)."""
    if not loc.missing:
        return []
    rest = loc.name.split("/")
    parts = loc.canon.split("/")
    base = parts[: len(parts) - len(rest)]
    return ["/".join(base + rest[:i]) for i in range(1, len(rest))]


def _count_lines(data: bytes) -> int:
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)

"""Walk a vault and turn its files into index entries (the whole vault's parse: core.index.parsepool).

Hidden (dot-prefixed) names are never indexed at any depth; ignore rules exclude more.
Symlinks are followed only when they resolve inside the vault and outside hidden folders.
Broken links, loops, FIFOs and unreadable files are skipped and counted, never fatal.
The note parser (core.markdown.parse, with the YAML libraries) is imported by the first note read:
a warm start takes every entry from the entry cache and the walk, and its first answer waits for
every module it imports.
"""

from __future__ import annotations

import errno
import mimetypes
import os
import stat as stat_mod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import NamedTuple, cast

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)

from vaultwatch.core.disk.paths import (
    MAX_PATH_CHARS,
    displayable,
    is_hidden,
    realpath_or_none,
    unaddressable,
    unaddressable_path,
)
from vaultwatch.core.disk.safeio import fd_is
from vaultwatch.core.index.ignore import IgnoreRules
from vaultwatch.core.model import ATTACHMENT, FOLDER, NOTE, Entry, Skipped, make_entry

# Obsidian's accepted file formats (help: "Accepted file formats": .base, .canvas, images, audio,
# video, PDF) and common office, archive and text files
DEFAULT_ATTACHMENT_EXTS = frozenset(
    "base canvas pdf docx xlsx pptx odt ods odp avif png jpg jpeg gif webp svg bmp tiff zip tar gz "
    "flac m4a mp3 ogg wav webm 3gp mkv mov mp4 ogv txt csv tsv json yaml toml xml html css js ts".split()
)
MAX_NOTE_BYTES = 64 * 1024 * 1024
# Our own table for the default allowlist, so a mime_type does not depend on the machine's
# /etc/mime.types; other extensions fall back to Python's built-in table only.
_MIME = {
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "odt": "application/vnd.oasis.opendocument.text",
    "ods": "application/vnd.oasis.opendocument.spreadsheet",
    "odp": "application/vnd.oasis.opendocument.presentation",
    "png": "image/png",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
    "svg": "image/svg+xml",
    "bmp": "image/bmp",
    "tiff": "image/tiff",
    "zip": "application/zip",
    "tar": "application/x-tar",
    "gz": "application/gzip",
    "mp3": "audio/mpeg",
    "mp4": "video/mp4",
    "wav": "audio/wav",
    "ogg": "audio/ogg",
    "base": "application/yaml",
    "canvas": "application/json",
    "avif": "image/avif",
    "flac": "audio/flac",
    "m4a": "audio/mp4",
    "webm": "video/webm",
    "3gp": "video/3gpp",
    "mkv": "video/x-matroska",
    "mov": "video/quicktime",
    "ogv": "video/ogg",
    "txt": "text/plain",
    "csv": "text/csv",
    "tsv": "text/tab-separated-values",
    "json": "application/json",
    "yaml": "application/yaml",
    "toml": "application/toml",
    "xml": "application/xml",
    "html": "text/html",
    "css": "text/css",
    "js": "text/javascript",
    "ts": "text/typescript",
}
_BUILTIN_MIME = mimetypes.MimeTypes()  # Python's own table, without the system files


def mime_type(name: str) -> str:
    """The MIME type of an attachment file name (case-insensitive extension)."""
    dot = name.rfind(".")
    ext = name[dot + 1 :].lower() if dot > 0 else ""
    return _MIME.get(ext) or _BUILTIN_MIME.guess_type(name.lower(), strict=False)[0] or "application/octet-stream"


@dataclass(frozen=True, slots=True)
class ScanConfig:
    """What the scanner indexes. `attachment_exts` None means every extension (`*`)."""

    attachment_exts: frozenset[str] | None = DEFAULT_ATTACHMENT_EXTS
    ignore: IgnoreRules = IgnoreRules()

    def kind_of(self, name: str) -> str | None:
        """'note', 'attachment' or None (not part of the vault) for a file name."""
        dot = name.rfind(".")
        ext = name[dot + 1 :].lower() if dot > 0 else ""
        if ext == "md":
            return NOTE
        if self.attachment_exts is None or ext in self.attachment_exts:
            return ATTACHMENT
        return None


class FileFact(NamedTuple):
    """A file found by the walk: where it is, where its bytes are, and its stat.

    A named tuple (immutable, cheap to build and to pickle): the walk makes one per file and
    ships them to the parse workers by the 100k.
    """

    rel: str
    real: str
    kind: str
    size: int
    mtime_ns: int
    inode: int


Found = FileFact | Entry | Skipped  # Entry here is a folder entry


def parse_attachment_exts(spec: str | Iterable[str] | None) -> frozenset[str] | None:
    """Parse an allowlist ("pdf,png", a list, or "*" for all) into lowercase extensions."""
    if spec is None:
        return DEFAULT_ATTACHMENT_EXTS
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    cleaned = {i.strip().lower().lstrip(".") for i in items if i.strip()}
    return None if "*" in cleaned else frozenset(cleaned)


def _inside(root_real: str, real: str | None) -> str | None:
    """The vault-relative form of a real path, or None when it lies outside the vault (or is
    None: it changed while being resolved)."""
    if real is None:
        return None
    if real == root_real:
        return ""
    if not real.startswith(root_real + os.sep):
        return None
    return real[len(root_real) + 1 :].replace(os.sep, "/")


def walk(root_real: str, config: ScanConfig, start: str = "") -> Iterator[Found]:
    """Yield FileFacts, folder Entries and Skipped records for the vault at `root_real` (a realpath),
    or only for what lies below the vault-relative folder `start` (the folder itself excluded)."""
    seen_dirs: set[tuple[int, int]] = set()
    start_real = realpath_or_none(os.path.join(root_real, *start.split("/"))) if start else root_real
    if start_real is None:
        return
    try:
        st = os.stat(start_real)
        seen_dirs.add((st.st_dev, st.st_ino))
    except OSError:
        return
    stack: list[tuple[str, str]] = [(start_real, start)]
    # Symlinked folders are walked after every real one, so a real folder is always listed
    # at its real path (whatever the scandir order) and a link to it is the duplicate.
    deferred: list[tuple[str, os.DirEntry[str] | _At]] = []
    no_ignores = config.ignore.empty
    kind_of = config.kind_of
    while stack or deferred:
        if not stack:
            deferred.sort(key=lambda item: item[0], reverse=True)
            rel, de = deferred.pop()
            yield from _take(de, rel, root_real, config, seen_dirs, stack)
            continue
        dir_real, dir_rel = stack.pop()
        # Listed through a descriptor that the kernel names by exactly `dir_real`: a folder on
        # the way swapped for a link (out of the vault) since it was found lists nothing.
        try:
            dfd = os.open(dir_real, _DIR_FLAGS)
        except OSError as exc:
            if dir_rel:
                yield Skipped(dir_rel, f"folder unreadable: {exc.strerror or exc}")
            continue
        try:
            if not fd_is(dfd, dir_real):
                if dir_rel:
                    yield Skipped(
                        dir_rel, "changed while being scanned (moved, or a folder on the way replaced by a link)"
                    )
                continue
            it = os.scandir(dfd)
        except OSError as exc:
            os.close(dfd)
            if dir_rel:
                yield Skipped(dir_rel, f"folder unreadable: {exc.strerror or exc}")
            continue
        except BaseException:
            os.close(dfd)
            raise
        with it:
            prefix = dir_real + os.sep
            try:
                yield from _listed(
                    it, prefix, dir_rel, no_ignores, kind_of, root_real, config, seen_dirs, stack, deferred
                )
            finally:
                os.close(dfd)


class _At:
    """A DirEntry listed through a folder descriptor, with `path` the full path (as a path-listed one has)."""

    __slots__ = ("_de", "name", "path")

    def __init__(self, de: os.DirEntry[str], path: str) -> None:
        self._de, self.name, self.path = de, de.name, path

    def is_symlink(self) -> bool:
        return self._de.is_symlink()

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        return self._de.is_dir(follow_symlinks=follow_symlinks)

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        return self._de.is_file(follow_symlinks=follow_symlinks)

    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
        return self._de.stat(follow_symlinks=follow_symlinks)


def _listed(
    it: Iterator[os.DirEntry[str]],
    prefix: str,
    dir_rel: str,
    no_ignores: bool,
    kind_of: Callable[[str], str | None],
    root_real: str,
    config: ScanConfig,
    seen_dirs: set[tuple[int, int]],
    stack: list[tuple[str, str]],
    deferred: list[tuple[str, os.DirEntry[str] | _At]],
) -> Iterator[Found]:
    """The walk's work for one folder's entries (see walk)."""
    for de in it:
        name = de.name
        if name.startswith("."):
            continue
        rel = f"{dir_rel}/{name}" if dir_rel else name
        bad = unaddressable(name, at_root=not dir_rel)
        if bad is not None or len(rel) > MAX_PATH_CHARS:  # listed, it could never be read
            yield Skipped(
                displayable(rel), f"cannot be addressed: {bad or f'path longer than {MAX_PATH_CHARS} characters'}"
            )
            continue
        if de.is_symlink():
            if is_dir(de):
                deferred.append((rel, _At(de, prefix + name)))
                continue
        elif no_ignores and de.is_file(follow_symlinks=False):
            # the common case (a plain file, no ignore rules) without visit's general path
            kind = kind_of(name)
            if kind is None:
                continue
            try:
                st = de.stat(follow_symlinks=False)
            except OSError as exc:
                yield Skipped(rel, f"unreadable: {exc.strerror or exc}")
                continue
            if st.st_nlink > 1:
                yield _hard_linked(rel, st.st_nlink)
                continue
            yield FileFact(rel, prefix + name, kind, st.st_size, st.st_mtime_ns, st.st_ino)
            continue
        yield from _take(_At(de, prefix + name), rel, root_real, config, seen_dirs, stack)


def _hard_linked(rel: str, nlink: int) -> Skipped:
    """A note with several names on disk: one may be a file outside the vault, so it is never read."""
    return Skipped(
        rel,
        f"hard-linked ({nlink} names on disk, which may include a file outside the vault); "
        "vaultwatch does not read hard-linked files: replace it with a plain copy",
    )


def is_dir(de: os.DirEntry[str]) -> bool:
    """Whether a directory entry is a folder (following a symlink); False when it cannot be told."""
    try:
        return de.is_dir()
    except OSError:
        return False


def _take(
    de: os.DirEntry[str] | _At,
    rel: str,
    root_real: str,
    config: ScanConfig,
    seen_dirs: set[tuple[int, int]],
    stack: list[tuple[str, str]],
) -> Iterator[Found]:
    try:
        found = visit(de, rel, root_real, config, seen_dirs)
    except OSError as exc:
        found = Skipped(rel, f"unreadable: {exc.strerror or exc}")
    if found is None:
        return
    # FileFact is a tuple too: mypy cannot narrow on the exact type, so the branches say it
    if type(found) is tuple:  # a folder: (its entry, its real path)
        entry, real = cast("tuple[Entry, str]", found)
        yield entry
        stack.append((real, rel))
    else:
        yield cast(Found, found)


def visit(
    de: os.DirEntry[str] | _At, rel: str, root_real: str, config: ScanConfig, seen_dirs: set[tuple[int, int]]
) -> FileFact | Skipped | tuple[Entry, str] | None:
    """What the walk makes of one directory entry: a FileFact to parse, a Skipped with the reason, a folder
    as (its entry, its real path), or None (hidden, ignored, not part of the vault)."""
    is_link = de.is_symlink()
    real = de.path
    if is_link:
        try:
            st = os.stat(de.path)
        except OSError as exc:
            reason = "symlink loop" if exc.errno == 40 else "broken symlink"
            return Skipped(rel, reason)
        resolved = realpath_or_none(de.path)
        if resolved is None:
            return Skipped(rel, "changed while being scanned")
        real = resolved
        inside = _inside(root_real, real)
        if inside is None:
            return Skipped(rel, "symlink escapes vault")
        if inside == "" or is_hidden(inside):
            return Skipped(rel, "symlink into a hidden folder or the vault root")
    else:
        st = de.stat(follow_symlinks=False)
    if stat_mod.S_ISDIR(st.st_mode):
        if config.ignore.excluded(rel, is_dir=True):
            return None
        key = (st.st_dev, st.st_ino)
        if key in seen_dirs:
            if not is_link:
                return None
            return Skipped(rel, "symlinked folder already listed at its real path (a loop or a duplicate)")
        seen_dirs.add(key)
        return Entry(path=rel, kind=FOLDER, size_bytes=0, mtime_ns=st.st_mtime_ns, title=de.name, inode=st.st_ino), real
    kind = config.kind_of(de.name)
    if kind is None:
        return None
    if not config.ignore.empty and config.ignore.excluded(rel):
        return None
    if not stat_mod.S_ISREG(st.st_mode):
        return Skipped(rel, "not a regular file")
    if st.st_nlink > 1:
        return _hard_linked(rel, st.st_nlink)
    return FileFact(rel, real, kind, st.st_size, st.st_mtime_ns, st.st_ino)


def _read_note(real: str, size: int, check: bool = False) -> bytes:
    """A note's bytes (at most MAX_NOTE_BYTES + 1), with plain file-descriptor calls: a file
    object costs measurably more per note, and read(cap) would allocate the whole cap up front.

    With `check`, the open file is checked on its descriptor (core.disk.safeio.fd_is) before a
    byte is read: the kernel must name it by the real path the walk found (`real` has no
    symlinks), so a folder on the way swapped for a link (out of the vault) since the walk
    listed it raises PermissionError and nothing outside reaches the index; and its own fstat
    must still say a regular file with one name (not a FIFO or a hard link put there since)."""
    # O_NONBLOCK: a file swapped for a FIFO since the stat must not hang the scan
    fd = os.open(real, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0) | _NOFOLLOW)
    try:
        if check and not fd_is(fd, real):
            raise PermissionError(
                errno.EXDEV, "changed while being scanned (moved, or a folder on the way replaced by a link)"
            )
        if check:  # the walk's stat was of the name; the file opened since may be another one
            st = os.fstat(fd)
            if not stat_mod.S_ISREG(st.st_mode):
                raise PermissionError(errno.EXDEV, "changed while being scanned (no longer a regular file)")
            if st.st_nlink > 1:
                raise PermissionError(
                    errno.EMLINK,
                    f"changed while being scanned (now hard-linked: {st.st_nlink} "
                    "names on disk, which may include a file outside the vault)",
                )
        parts = [os.read(fd, size + 1)]  # what stat saw, plus one byte to notice growth
        got = len(parts[0])
        while got > size and got <= MAX_NOTE_BYTES:  # it grew since the stat: read on to the cap
            more = os.read(fd, min(1 << 20, MAX_NOTE_BYTES + 1 - got))
            if not more:
                break
            parts.append(more)
            got += len(more)
        return parts[0] if len(parts) == 1 else b"".join(parts)
    finally:
        os.close(fd)


def entry_for(fact: FileFact) -> Entry | Skipped:
    """Read and parse one file into an Entry. Errors become a Skipped record."""
    stem = fact.rel.rsplit("/", 1)[-1]
    if fact.kind == ATTACHMENT:
        mime = mime_type(stem)
        return make_entry(
            path=fact.rel,
            kind=ATTACHMENT,
            size_bytes=fact.size,
            mtime_ns=fact.mtime_ns,
            title=stem,
            inode=fact.inode,
            mime_type=mime,
        )
    if fact.size > MAX_NOTE_BYTES:
        return Skipped(fact.rel, f"note larger than {MAX_NOTE_BYTES // (1024 * 1024)} MiB")
    try:
        data = _read_note(fact.real, fact.size, True)
    except OSError as exc:
        return Skipped(fact.rel, f"unreadable: {exc.strerror or exc}")
    if len(data) > MAX_NOTE_BYTES:
        return Skipped(fact.rel, f"note larger than {MAX_NOTE_BYTES // (1024 * 1024)} MiB")
    from vaultwatch.core.markdown.parse import parse_note  # noqa: PLC0415  (module doc: a warm start parses none)

    facts = parse_note(data, stem[:-3] if stem.lower().endswith(".md") else stem)
    return make_entry(
        path=fact.rel,
        kind=NOTE,
        size_bytes=len(data),
        mtime_ns=fact.mtime_ns,
        title=facts.title,
        inode=fact.inode,
        frontmatter=facts.frontmatter,
        tags=facts.tags,
        links=facts.links,
        content_chars=facts.content_chars,
        frontmatter_error=facts.frontmatter_error,
        decode_error=facts.decode_error,
        okf_status=facts.okf_status,
        okf_trust=facts.okf_trust,
        stale_date=facts.stale_date,
        stale_instant=facts.stale_instant,
        anchors=facts.anchors,
    )


def parse_chunk(chunk: list[FileFact]) -> list[Entry | Skipped]:
    """Entries (or skips) for a chunk of files: the unit of work of the whole vault's parse
    (core.index.parsepool). It lives here so that a parse worker imports this module and the
    note parser, not the pool's own (multiprocessing, the sharing of values)."""
    return [entry_for(f) for f in chunk]


def walked_folder(
    root_real: str, folder_rel: str, config: ScanConfig, memo: dict[str, str | None] | None = None
) -> str | None:
    """The vault path at which the walk lists the folder `folder_rel` ("" is the root).

    That is `folder_rel` itself unless the way to it passes a symlinked folder the walk does
    not follow: a link to a folder listed at its real path (a duplicate, or the root itself)
    makes it that folder's real vault path; a link out of the vault or into a hidden folder
    makes it None (not part of the vault). Single-path refreshes and watcher events use it,
    so a path spelled through such a link is never indexed under that spelling (and nothing
    outside the vault is ever indexed through one).

    `memo` (one per batch of paths: spelling -> answer) answers a folder from its parent's answer
    with one more component, so the paths of a deep tree cost work in their depth each, not in
    its square (without it a tree `depth` levels deep costs work in the cube of its depth).
    """
    if not folder_rel:
        return ""
    parent, _, last = folder_rel.rpartition("/")
    if memo is not None and parent and parent in memo:
        start: str | None = memo[parent]
        if start is None:
            return None
        parts, raw, canon = [last], parent, start
    else:
        parts, raw, canon = folder_rel.split("/"), "", ""
    for part in parts:
        raw = f"{raw}/{part}" if raw else part
        nxt = f"{canon}/{part}" if canon else part
        full = os.path.join(root_real, nxt)
        if os.path.islink(full):
            inside = _inside(root_real, realpath_or_none(full))
            if inside is None or (inside and is_hidden(inside)):
                if memo is not None:
                    memo[raw] = None
                return None
            if inside == "" or listed_elsewhere(full, root_real, config):
                canon = inside
                if memo is not None:
                    memo[raw] = canon
                continue
        canon = nxt
        if memo is not None:
            memo[raw] = canon
    return canon


def stat_one(
    root_real: str, rel: str, config: ScanConfig, memo: dict[str, str | None] | None = None
) -> FileFact | Entry | Skipped | None:
    """Stat a single vault path the way the walk would (None: absent, hidden or not part of the vault).
    `memo`: shared by the paths of one batch (see walked_folder)."""
    if is_hidden(rel):
        return None
    parent_rel = rel.rpartition("/")[0]
    if parent_rel and walked_folder(root_real, parent_rel, config, memo) != parent_rel:
        return None  # spelled through a symlinked folder the walk does not follow
    bad = unaddressable_path(rel)
    abs_path = os.path.join(root_real, rel)
    parent = os.path.dirname(abs_path)
    name = os.path.basename(abs_path)
    try:
        with os.scandir(parent) as it:
            for de in it:
                if de.name == name:
                    if bad is not None or len(rel) > MAX_PATH_CHARS:
                        reason = bad or f"path longer than {MAX_PATH_CHARS} characters"
                        return Skipped(displayable(rel), f"cannot be addressed: {reason}")
                    if de.is_symlink() and is_dir(de) and listed_elsewhere(de.path, root_real, config):
                        return Skipped(rel, "symlinked folder already listed at its real path (a loop or a duplicate)")
                    found = visit(de, rel, root_real, config, set())
                    return cast("tuple[Entry, str]", found)[0] if type(found) is tuple else cast(Found, found)
    except OSError:
        return None
    return None


def listed_elsewhere(link: str, root_real: str, config: ScanConfig) -> bool:
    """True when a symlinked folder's target is a folder the full walk lists at its real path
    (inside the vault, not hidden, not ignored): the walk skips such a link, so stat_one does too."""
    inside = _inside(root_real, realpath_or_none(link))
    if not inside or is_hidden(inside):
        return False
    parts = inside.split("/")
    return not any(config.ignore.excluded("/".join(parts[:i]), is_dir=True) for i in range(1, len(parts) + 1))

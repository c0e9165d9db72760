"""The one resolver for caller-supplied vault paths (every read, list and write goes through it).

A caller path is vault-relative, `/`-separated, and names nothing hidden. Anything else is
refused with a typed error whose message says what to write instead.
"""

from __future__ import annotations

import os
import re

from vaultwatch.core.errors import (
    AbsolutePathError,
    HiddenPathError,
    PathChangedError,
    PathError,
    TraversalError,
)

MAX_PATH_CHARS = 1024
_DRIVE = re.compile(r"^[A-Za-z]:")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # C0, DEL and C1 control characters
# Lone surrogates: what Python makes of file-name bytes that are not UTF-8. Such a name cannot
# be sent as JSON text or drawn on a terminal, so it is neither accepted nor listed.
_SURROGATE = re.compile("[\ud800-\udfff]")


def normalize(path: object, *, what: str = "path") -> str:
    """Validate a caller-supplied vault-relative path and return its canonical form.

    The canonical form has no leading, trailing or doubled slashes and no `.` segments.
    Raises PathError (or a subclass) for empty, absolute, traversing, hidden, backslashed
    or control-character paths. The messages start with the stable phrases
    "absolute path blocked", "path traversal blocked" and "hidden path blocked".
    """
    if not isinstance(path, str):
        raise PathError(f"{what} must be a string such as 'Projects/plan.md', got {type(path).__name__}")
    if path == "" or path.strip() == "":
        raise PathError(f"empty {what}: give a vault-relative path such as 'Projects/plan.md'")
    if len(path) > MAX_PATH_CHARS:
        raise PathError(f"{what} is longer than {MAX_PATH_CHARS} characters: give a shorter vault-relative path")
    if _CONTROL.search(path):
        raise PathError(f"{what} contains a NUL or control character: remove it and use a plain vault-relative path")
    if _SURROGATE.search(path):
        raise PathError(
            f"{what} is not valid Unicode text (it holds a lone surrogate, as undecodable bytes give): "
            "use a plain UTF-8 vault-relative path"
        )
    if "\\" in path:
        raise PathError(f"{what} contains a backslash: separate folders with '/' as in 'Projects/plan.md'")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    # Checked on the first real segment too, so "./C:/x" or "./~" cannot slip through.
    # "~" (a home folder to a shell) is refused; a name such as "~draft.md" is an ordinary file.
    if path.startswith("/") or (parts and (parts[0] == "~" or _DRIVE.match(parts[0]))):
        raise AbsolutePathError(
            f"absolute path blocked: {path!r} points outside the vault; use a vault-relative {what} "
            "such as 'Projects/plan.md' (omit it to cover the whole vault)"
        )
    if not parts:
        raise TraversalError(
            f"path traversal blocked: {path!r} names the vault root itself; omit the {what} to cover the whole vault"
        )
    for part in parts:
        if part == "..":
            raise TraversalError(
                f"path traversal blocked: {path!r} uses '..'; name the target by its vault-relative path instead"
            )
        if part.startswith("."):
            raise HiddenPathError(
                f"hidden path blocked: {part!r} is hidden (dot-prefixed, like .obsidian or .git); "
                "vaultwatch never reads, lists or writes hidden files; use a path outside hidden folders"
            )
        if part.strip() != part and part.strip() == "":
            raise PathError(f"{what} has a blank segment: remove it")
    return "/".join(parts)


_BAD_NAME = re.compile(r"[\x00-\x1f\x7f-\x9f\\]")


def unaddressable(name: str, *, at_root: bool) -> str | None:
    """Why a name found on disk could never be passed back through `normalize` (None: it can).

    The scanner skips such files, so nothing is listed that a read would then refuse, and no
    control character in a file name ever reaches a terminal.
    """
    if name.isprintable() and "\\" not in name and name.strip() and not at_root:
        return None  # the common case, decided in C
    if _BAD_NAME.search(name):
        return "the name contains a control character or a backslash"
    if _SURROGATE.search(name):
        return "the name is not valid UTF-8"
    if not name.strip():
        return "the name is blank"
    if at_root and (name == "~" or _DRIVE.match(name)):
        return "the name looks like an absolute path"
    return None


_BLANK_PART = re.compile(r"(?:^|/) *(?:/|$)")


def unaddressable_path(rel: str) -> str | None:
    """`unaddressable` of the first of a vault path's names that is (None: every one can be addressed).

    Decided in C for the whole path in the common case (a printable path holds no whitespace but
    the ASCII space), so a deep path costs its length, not a Python step per folder level."""
    if rel.isprintable() and "\\" not in rel and not _BLANK_PART.search(rel):
        return unaddressable(rel.partition("/")[0], at_root=True)
    return next((r for i, p in enumerate(rel.split("/")) if (r := unaddressable(p, at_root=i == 0))), None)


def displayable(rel: str) -> str:
    """A path found on disk as printable text: undecodable name bytes become `\\xNN` escapes.

    Used for the paths of skipped files, which are reported (to agents as JSON, to the
    terminal) but never addressed.
    """
    if not _SURROGATE.search(rel):
        return rel
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def normalize_folder(folder: object) -> str | None:
    """Normalize a folder argument: None stays None (whole vault), "" stays "" (the root level)."""
    if folder is None:
        return None
    if isinstance(folder, str) and folder == "":
        return ""
    return normalize(folder, what="folder")


def is_hidden(rel_path: str) -> bool:
    """True when any segment of a vault-relative path is dot-prefixed."""
    # one scan in C: a path's length, not its depth in Python steps (deep trees refresh many paths)
    return rel_path.startswith(".") or "/." in rel_path


def realpath_or_none(path: str) -> str | None:
    """`os.path.realpath(path)`, or None when the path changed on disk while it was being resolved.

    realpath lstat()s each segment and then readlink()s the symlinks among them: a link
    removed between the two raises FileNotFoundError even in non-strict mode.
    """
    try:
        return os.path.realpath(path)
    except OSError:
        return None


def to_disk(root_real: str, rel: str) -> str:
    """Map a canonical vault-relative path to its real location, refusing symlink escapes.

    `root_real` must be the vault's realpath. The path is walked with core.disk.safeio.locate
    (relative to the vault's descriptor, every symlink on the way checked against the
    vault), so a link swapped in midway is never followed. Raises SymlinkEscapeError when
    the real location lies outside the vault and HiddenPathError when a link leads into a
    hidden folder of the vault. A path that does not exist yet maps to its would-be
    location below its nearest existing folder.

    The string returned is for showing and for handing to the person's own editor; disk
    operations use core.disk.safeio descriptors, never this string.
    """
    from vaultwatch.core.disk.safeio import locate

    try:
        loc = locate(root_real, rel, missing_ok=True)
    except NotADirectoryError:
        return os.path.join(root_real, *rel.split("/"))
    except (FileNotFoundError, PermissionError):
        return os.path.join(root_real, *rel.split("/"))
    except OSError as exc:
        if exc.errno == 40:  # ELOOP
            raise PathError(f"{rel!r} goes through a symlink loop; name the note by its real path") from None
        raise PathChangedError(
            f"{rel!r} changed on disk while it was being resolved (a symlink on the way "
            "was removed or replaced); nothing was done: try again"
        ) from None
    with loc:
        return os.path.join(root_real, *loc.canon.split("/")) if loc.canon else root_real

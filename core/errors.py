"""Typed errors raised by core. Every message says what went wrong and what to do instead."""

from __future__ import annotations


class VaultError(Exception):
    """Base class for errors a caller can act on; `code` is a stable machine-readable name."""

    code = "vault_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class PathError(VaultError):
    """A caller-supplied path was refused by the path resolver."""

    code = "invalid_path"


class AbsolutePathError(PathError):
    code = "absolute_path_blocked"


class TraversalError(PathError):
    code = "path_traversal_blocked"


class HiddenPathError(PathError):
    code = "hidden_path_blocked"


class SymlinkEscapeError(PathError):
    code = "symlink_escapes_vault"


class PathChangedError(PathError):
    """The path changed on disk while it was being resolved (a symlink removed or replaced midway)."""

    code = "path_changed"


class UnsafeNameError(PathError):
    """A new file or folder name a person could mistake for another (a twin, invisible or bidi characters)."""

    code = "unsafe_name"


class NotFoundError(VaultError):
    code = "not_found"


class QueryError(VaultError):
    """Bad query arguments (an unknown sort, an invalid stale value, a bad cursor...)."""

    code = "invalid_query"


class GuardUnavailable(VaultError):
    """A part of the guard an agent's change must pass (the change journal, the person's rules) cannot
    be read: the change is refused before anything is written, and the message says what to fix."""

    code = "guard_unavailable"


class JournalUnavailable(GuardUnavailable):
    """The change journal is meant to be on (VAULTWATCH_JOURNAL is not 0) but cannot be opened or
    written: an agent's change it could not record is not made."""

    code = "journal_unavailable"


class RulesUnreadable(GuardUnavailable):
    """The person's settings file does not parse (or cannot be read): agents' changes wait for it."""

    code = "settings_unreadable"

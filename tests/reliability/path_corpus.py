"""The path attack corpus: hostile path strings an agent (or a prompt-injected note) could send,
and the jail they are fired at.

Each case names its family and what must happen:
- "refused": every operation refuses the path itself (a PathError: absolute, traversal,
  hidden, control character, backslash, symlink escape, not valid Unicode...);
- "contained": the string is a legal (odd) vault-relative name, or leads to something that is
  not a regular file (a FIFO, a loop); an operation may fail with a typed error or act, but only
  on visible files inside the vault.
Whatever the expectation, nothing outside the vault and nothing hidden inside it is read or
written (tests check bytes and mtimes of canaries, new files, and an audit of file accesses).
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reliability_helpers import Audit, tree_state

from vaultwatch.core.disk.paths import is_hidden
from vaultwatch.core.errors import VaultError

REFUSED = "refused"
CONTAINED = "contained"


JAIL = "{JAIL}"  # stands for the jail's real base folder in absolute cases


@dataclass(frozen=True)
class Case:
    id: str
    path: str
    family: str
    expect: str

    def resolve(self, jail: Jail) -> str:
        """The path string to send (absolute cases name the jail's real location)."""
        return self.path.replace(JAIL, str(jail.base))


# --- the jail -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Jail:
    base: Path  # realpath; holds the vault and the things outside it
    vault: Path
    token: str  # in every canary's bytes: must never appear in a result

    @property
    def outside_canaries(self) -> list[Path]:
        return [self.base / "secret.md", self.base / "outside" / "note.md", self.base / "abs-target.md"]

    @property
    def hidden_canaries(self) -> list[Path]:
        v = self.vault
        return [
            v / ".git" / "config",
            v / ".obsidian" / "app.json",
            v / ".trash" / "x.md",
            v / "a" / ".trash" / "x.md",
            v / ".hidden.md",
            v / "Notes" / ".secret.md",
            v / ".obsidian" / "plugins" / "p" / "data.json",
        ]


def canary_text(token: str, what: str) -> str:
    return f"---\ntitle: {what}\nsecret: {token}\n---\n# Secret\n{token} {what}\n"


def build_jail(base: str | os.PathLike[str]) -> Jail:
    """Create the jail under `base`: a vault with hidden folders, symlinks (inside, outside,
    hidden, dangling, looping), FIFOs, and canary files outside it and in its hidden folders."""
    base = Path(os.path.realpath(base))
    token = f"CANARY-{uuid.uuid4().hex}"
    v = base / "vault"
    for d in (
        v / "Notes",
        v / "victims",
        v / ".git",
        v / ".obsidian" / "plugins" / "p",
        v / ".trash",
        v / "a" / ".trash",
        base / "outside" / "sub",
    ):
        d.mkdir(parents=True, exist_ok=True)
    jail = Jail(base, v, token)
    for p in jail.outside_canaries + jail.hidden_canaries:
        p.write_text(canary_text(token, p.name))
    (v / "index.md").write_text("---\ntitle: Home\n---\n# Home\nSee [[Notes/a]].\n")
    (v / "Notes" / "a.md").write_text("---\nstatus: draft\n---\n# A\n## Secret\nplain text\n")
    (v / "café.md").write_text("# Café (NFC)\n")
    os.mkfifo(base / "outside.fifo")
    os.mkfifo(v / "fifo.md")
    links = {
        "escape": "../outside",  # a folder symlink leading out
        "escape.md": "../secret.md",  # a note symlink leading out
        "abs-escape.md": str(base / "abs-target.md"),  # absolute target outside
        "abs-dir": str(base / "outside"),
        "dangling.md": "../created-by-attack.md",  # writing through it would create a file outside
        "dangling-dir": "../made-by-attack",
        "hidden-link": ".git",  # inside the vault, but into a hidden folder
        "hidden-note.md": ".hidden.md",
        "obsidian.md": ".obsidian/app.json",
        "loop": "loop",
        "loop-a": "loop-b",
        "loop-b": "loop-a",
        "outfifo.md": "../outside.fifo",
        "Notes/up.md": "../../secret.md",
        "Notes/escape-parent": "../../outside",
        "root-link": ".",  # the vault root itself
    }
    for name, target in links.items():
        os.symlink(target, v / name)
    return jail


def forbidden_absolute() -> tuple[str, ...]:
    """Absolute paths outside the jail that the corpus names: no access to them is tolerated."""
    return (
        "/etc/passwd",
        "/etc/shadow",
        "/etc/hosts",
        "/proc/self/environ",
        "/proc/self/cmdline",
        "/root/.ssh",
        "/dev/zero",
        "/dev/stdin",
        "/dev/random",
        "/var/log",
    )


# --- containment: what firing a path at a jail may and may not have done ---------------------------


def _outside(jail: Jail) -> dict:
    return tree_state(jail.base, skip=lambda rel: rel == "vault" or rel.startswith("vault/"))


def _hidden(jail: Jail) -> dict:
    """Hidden things inside the vault, except what delete may add to the top-level .trash."""

    def skip(rel: str) -> bool:
        if not is_hidden(rel.replace(os.sep, "/")):
            return True
        return rel.startswith(".trash/") and rel != ".trash/x.md"

    return tree_state(jail.vault, skip=skip)


def outcome_text(value: Any) -> str:
    if isinstance(value, BaseException):
        return f"{type(value).__name__}: {value}"
    return repr(value)


class Fired:
    """What one case did to one jail: outcomes per operation and the evidence of containment."""

    def __init__(self, jail: Jail) -> None:
        self.jail = jail
        self.outcomes: dict[str, Any] = {}
        self.audit = Audit()
        self.out_before = _outside(jail)
        self.hidden_before = _hidden(jail)

    def trash_and_hidden(self) -> dict:
        return tree_state(self.jail.vault, skip=lambda rel: not is_hidden(rel.replace(os.sep, "/")))

    def problems(self) -> list[str]:
        jail = self.jail
        found = []
        for op, value in self.outcomes.items():
            text = outcome_text(value)
            if jail.token in text:
                found.append(f"{op}: a canary's secret token came back: {text[:200]}")
            if isinstance(value, (TimeoutError,)):
                found.append(f"{op}: hung")
            elif isinstance(value, BaseException) and not isinstance(value, VaultError):
                found.append(f"{op}: crashed with {type(value).__name__}: {value}")
        if _outside(jail) != self.out_before:
            after = _outside(jail)
            diff = sorted(set(after.items()) ^ set(self.out_before.items()))
            found.append(f"files outside the vault changed: {diff[:5]}")
        hidden_after = _hidden(jail)
        if hidden_after != self.hidden_before:
            # A folder moved (renamed, or deleted to .trash) carries its hidden files along, bytes
            # and mtimes intact: that is the folder's move, not an access to them. Anything else
            # (changed bytes, a new hidden file, one gone) is a violation.
            def files(state):
                return {(os.path.basename(rel), v) for rel, v in state.items() if v[0] != "dir"}

            before = files(self.hidden_before)
            new = files(hidden_after) - before  # written or created
            lost = before - files(self.trash_and_hidden())  # changed or removed
            if new or lost:
                diff = sorted(set(hidden_after.items()) ^ set(self.hidden_before.items()))
                found.append(f"hidden files inside the vault changed: {diff[:5]}")
        lingering = [str(p) for p in jail.vault.rglob(".vaultwatch-*")]
        if lingering:
            found.append(f"temporary files left behind: {lingering}")
        found += self.audit.violations(str(jail.base), str(jail.vault), forbidden_absolute())
        return found


# --- the cases ------------------------------------------------------------------------------------


def _cases() -> list[Case]:
    out: list[Case] = []

    def add(family: str, expect: str, *paths: str) -> None:
        for p in paths:
            out.append(Case(f"{family}-{len(out):03}", p, family, expect))

    targets = ["secret.md", "outside/note.md", "etc/passwd", "vault/.git/config"]
    # traversal, every spelling the resolver must see through
    for t in targets:
        add(
            "traversal",
            REFUSED,
            f"../{t}",
            f"../../{t}",
            f"Notes/../../{t}",
            f"./../{t}",
            f"Notes/./../../{t}",
            f"Notes//..//..//{t}",
            f"a/b/c/../../../../{t}",
            "../" * 40 + t,
        )
    add("traversal", REFUSED, "..", "../", "Notes/..", "Notes/../..", "/..", "../.", ".././..")
    add(
        "traversal-backslash",
        REFUSED,
        "..\\secret.md",
        "..\\..\\secret.md",
        "Notes\\..\\..\\secret.md",
        "..\\/secret.md",
        "../\\secret.md",
        "....\\\\secret.md",
        ".\\..\\secret.md",
    )
    add(
        "traversal-encoded",
        CONTAINED,
        "%2e%2e/secret.md",
        "%2e%2e%2fsecret.md",
        "..%2fsecret.md",
        "%2E%2E/%2E%2E/secret.md",
        "%252e%252e/secret.md",
        "..%5csecret.md",
        "%2e%2e%5csecret.md",
        "%c0%ae%c0%ae/secret.md",
        "%c0%ae%c0%ae%c0%afsecret.md",
        "%e0%80%ae%e0%80%ae/secret.md",
        "..%c0%afsecret.md",
        "..%u2215secret.md",
        "%uff0e%uff0e/secret.md",
        "..%00/secret.md",
    )
    add(
        "traversal-odd-dots",
        CONTAINED,
        "....//secret.md",
        "..../secret.md",
        ".../secret.md",
        "..;/secret.md",
        "Notes/..;/..;/secret.md",
        " ../secret.md",
        "Notes/ ../secret.md",
        "..%20/secret.md",
        "..\u200b/secret.md",
    )
    add("traversal-odd-dots", REFUSED, ". ./secret.md", "../ secret.md", ".. /secret.md")
    add(
        "unicode-lookalike",
        CONTAINED,
        "\uff0e\uff0e/secret.md",
        "\uff0e\uff0e\uff0fsecret.md",
        "\u2025/secret.md",
        "\u2026/secret.md",
        "..\u2215secret.md",
        "..\u2044secret.md",
        "..\u29f8secret.md",
        "\ufe52\ufe52/secret.md",
        "\u2024\u2024/secret.md",
        "..\uff3csecret.md",
        "\uff0fetc\uff0fpasswd",
        "\uff43:/x.md",
        "\uff0egit/config",
        "\u2024git/config",
        "\u0130ndex.md",
        "\u212aey.md",
    )
    # absolute, drive and UNC
    add(
        "absolute",
        REFUSED,
        "/etc/passwd",
        "/etc/shadow",
        "//etc/passwd",
        "///etc/passwd",
        "/proc/self/environ",
        "/dev/zero",
        "/dev/stdin",
        "/root/.ssh/id_rsa",
        "/",
        "//",
        "/./etc/passwd",
        "/vault/index.md",
        f"{JAIL}/secret.md",
        f"{JAIL}/vault/index.md",
        f"{JAIL}/vault/.git/config",
        f"{JAIL}/outside/note.md",
        f"{JAIL}/vault/../secret.md",
        f"{JAIL}/vault/escape/note.md",
        "~",
        "~/secret.md",
        "./~/x.md",
        "/var/log/../../etc/passwd",
    )
    add("absolute", CONTAINED, "~root/.ssh/id_rsa", "file:/etc/passwd", "file:", "-rf.md")
    add(
        "drive-unc",
        REFUSED,
        "C:\\Windows\\win.ini",
        "C:/Windows/win.ini",
        "c:/x.md",
        "C:secret.md",
        "C:",
        "\\\\server\\share\\x.md",
        "\\\\?\\C:\\x.md",
        "\\\\.\\pipe\\x",
        "//server/share/x.md",
        "\\\\?\\UNC\\server\\share",
        "Z:../secret.md",
        "./C:/x.md",
        "\\x.md",
        "\\\\",
    )
    add("drive-unc", CONTAINED, "file://localhost/etc/passwd", "smb://server/share.md", "C\u2236/x.md")
    # NUL and control characters
    add(
        "control",
        REFUSED,
        "a\x00.md",
        "secret.md\x00.png",
        "\x00",
        "Notes/a.md\x00",
        "\x00../secret.md",
        "a\nb.md",
        "a\rb.md",
        "a\tb.md",
        "\x1b[31mred.md",
        "a\x7f.md",
        "a\x85.md",
        "a\x9b2J.md",
        "Notes/\x08a.md",
        "\x07bell.md",
        "line\n../../secret.md",
        "a\x0bb.md",
        "a\x0cb.md",
    )
    add("invalid-unicode", REFUSED, "bad\udcff.md", "\ud800.md", "Notes/\udc80\udc80/x.md", "\udcae\udcae/secret.md")
    add("blank", REFUSED, "", " ", "  ", "\u3000", "/ /", "Notes/ /a.md", ".", "./", "./.", "//./")
    add("long", REFUSED, "a/" * 600 + "x.md", "x" * 5000 + ".md", "../" * 400 + "secret.md")
    add("long", CONTAINED, "n" * 300 + ".md", "/".join(["d"] * 200) + "/x.md")
    # backslashes in any position
    add(
        "backslash",
        REFUSED,
        "a\\b.md",
        "Notes\\a.md",
        "\\Notes\\a.md",
        "Notes/a.md\\",
        ".git\\config",
        "Notes\\.secret.md",
        "/\\etc\\passwd",
    )
    # hidden segments, at any depth and in any case
    add(
        "hidden",
        REFUSED,
        ".git/config",
        ".git",
        ".git/",
        "./.git/config",
        "Notes/../.git/config",
        ".obsidian/app.json",
        ".obsidian",
        ".obsidian/plugins/p/data.json",
        ".trash/x.md",
        ".trash",
        "a/.trash/x.md",
        ".hidden.md",
        "Notes/.secret.md",
        "a/./.trash/x.md",
        "a//.trash/x.md",
        ".git/../index.md",
        ".vaultwatchignore",
        ".vaultwatch-deadbeef.tmp",
        "Notes/.hidden/new.md",
        "...",
        "..../x.md",
        ".../x.md",
        ".%2e/secret.md",
        ".\u200b/x.md",
    )
    add(
        "hidden-case",
        REFUSED,
        ".GIT/config",
        ".Git/config",
        ".OBSIDIAN/app.json",
        ".Obsidian/app.json",
        ".TRASH/x.md",
        ".Trash/x.md",
        "a/.TRASH/x.md",
        ".HIDDEN.md",
    )
    add(
        "hidden-encoded",
        CONTAINED,
        "%2egit/config",
        "%2Egit/config",
        "%252egit/config",
        "%2eobsidian/app.json",
        "%2etrash/x.md",
        "Notes/%2esecret.md",
        "\u2024obsidian/app.json",
        "\uff0eobsidian/app.json",
    )
    # case and normalisation variants of real notes
    add(
        "case-variant",
        CONTAINED,
        "notes/a.md",
        "NOTES/A.MD",
        "Notes/A.md",
        "Notes/a.MD",
        "INDEX.md",
        "Index.md",
        "index.MD",
        "index.md.",
        "index.md ",
        "index.md/",
        "Notes/a.md/.",
    )
    add(
        "nfc-nfd",
        CONTAINED,
        "caf\u00e9.md",
        "cafe\u0301.md",
        "CAF\u00c9.md",
        "cafe\u0301.MD",
        "\u0063\u0061\u0066\u0065\u0301.md",
        "Notes/a\u0301.md",
        "\ufb01le.md",
    )
    add(
        "format-chars",
        CONTAINED,
        "\u202eevil.md",
        "Notes/\u202egpj.md",
        "\u200f.md",
        "a\u2028b.md",
        "a\u2029b.md",
        "\ufeffindex.md",
        "\u200d../secret.md",
        "\u2066x\u2069.md",
        "emoji \U0001f389.md",
    )
    # symlinks: escapes, hidden targets, loops, dangling
    add(
        "symlink-escape",
        REFUSED,
        "escape",
        "escape/note.md",
        "escape/sub",
        "escape/new.md",
        "escape/sub/new.md",
        "escape.md",
        "abs-escape.md",
        "abs-dir/note.md",
        "abs-dir",
        "abs-dir/new.md",
        "dangling.md",
        "dangling-dir/new.md",
        "dangling-dir",
        "Notes/up.md",
        "Notes/escape-parent/note.md",
        "Notes/escape-parent/new.md",
        "Notes/escape-parent",
        "outfifo.md",
        "escape/../secret.md",
    )
    add(
        "symlink-hidden",
        REFUSED,
        "hidden-link/config",
        "hidden-link",
        "hidden-link/new.md",
        "hidden-note.md",
        "obsidian.md",
        "root-link/.git/config",
        "root-link/.hidden.md",
    )
    add(
        "symlink-loop",
        CONTAINED,
        "loop",
        "loop/x.md",
        "loop-a",
        "loop-a/x.md",
        "loop-b/new.md",
        "root-link",
        "root-link/index.md",
        "root-link/root-link/index.md",
    )
    # FIFOs: never opened in a blocking way, never written
    add("fifo", CONTAINED, "fifo.md", "fifo.md/x.md", "fifo.md/../secret.md")
    # odd but legal names, to prove they stay inside
    add(
        "odd-legal",
        CONTAINED,
        "Notes/a.md",
        "index.md",
        "new note.md",
        "$(touch pwned).md",
        "`id`.md",
        "'; DROP TABLE notes; --.md",
        "<script>.md",
        "{{7*7}}.md",
        "%s%s%s%n.md",
        "CON.md",
        "nul.md",
        "aux/prn.md",
        "a:b.md",
        "a*b?.md",
        "[[link]].md",
        "#tag.md",
        "a|b.md",
        "-.md",
        "~draft.md",
    )
    return out


def corpus() -> list[Case]:
    """Every case, deduplicated by path string (first family wins)."""
    seen: set[str] = set()
    unique = []
    for case in _cases():
        if case.path not in seen:
            seen.add(case.path)
            unique.append(case)
    return unique


CASES = corpus()
assert len(CASES) >= 200, len(CASES)

"""What a person's rule covers: the one reading of a folder glob that every rule shares (the
folder rules of `[approve.folders]`, an agent's `write` and `deny` lists).

    covers("Money/", "Money/m.md")                    # True: a folder and everything in it
    covers("Finance [2024]/**", "Finance [2024]/b.md") # True: the brackets of a real folder name
    covers("Inbox/*", "Inbox/Sub/a.md", grants=True)   # False: a grant reaches only what it matches

A rule is written as a person writes a folder in `.vaultwatchignore` (gitignore), anchored at the
vault's root, and read so that it never covers less than the person wrote:

- `X`, `X/` and `X/**` are one rule: the folder (or file) `X` and everything in it. A rule that
  covers a folder covers what is in it, since renaming or deleting the folder changes all of it,
  and since a rule holding the folder but letting every write inside it through protects nothing.
- A rule that restricts (a `deny`, a folder rule asking for approval) covers everything inside
  any folder it matches: `Journal/*` holds `Journal/2024/d.md` too, as gitignore reads it. A rule
  that grants (a `write` list, a folder rule `"none"`) reaches into a folder only when it names
  the folder (its last level has no `*` or `?`): `write = ["Inbox/*"]` lets an agent change the
  entries of Inbox, not what is inside its subfolders, so an unclear glob never grants more.
- `[...]` is read both ways, as a set of characters (`[Dd]rafts`) and as the brackets themselves
  (`Finance [2024]` is a real folder name): a rule covers what either reading matches, so the
  person's own folder names are never silently missed, and a glob class keeps its meaning.
- Empty levels and `.` are dropped (`./X`, `X//Y`), `..` takes back the level before it; a rule
  that names no level (`.`, `/`) is the whole vault.
- A rule spelled with backslashes (`Templates\\**`, as Windows writes paths) or with spaces around it
  covers nothing as written (vault paths are separated by `/`), yet plainly means its `plain`
  spelling (`Templates/**`). A rule that restricts is applied both ways (`readings`), so it never
  covers less than either reading; a rule that grants is applied only as written, so a slip never
  grants more. Either way the person is told (core.review.rulespelling).

Both sides are compared as given: the caller puts them in the vault's form first (NFC, case
folded where its file system folds case: `PathForm.key`). The vault's form is probed at its root,
yet one of its folders may sit on a disk that folds case (an ext4 casefold folder, a vfat, exFAT or
NTFS mount, a Windows share), where `Secret`, `secret` and `Secret.` name one folder; the path a
change names keeps the spelling the agent typed. So a rule that restricts also covers a path read
`loosely` (each level case folded, trailing dots and spaces dropped), never less than it names
wherever a folder lies; a rule that grants covers only the spelling it names, never more.
"""

from __future__ import annotations

from functools import lru_cache

from vaultwatch.core.query.glob import glob_match

WILDCARDS = ("*", "?")


@lru_cache(maxsize=256)
def _reading(pattern: str, grants: bool) -> tuple[str, bool]:
    """(stem, reach): the glob a path or one of its folders must match, and whether matching one
    of its folders is enough."""
    levels: list[str] = []
    for level in pattern.split("/"):
        if level in ("", "."):
            continue
        if level == ".." and levels and levels[-1] != "..":
            levels.pop()
            continue
        levels.append(level)
    if not levels or levels == ["**"]:
        return "**", False  # the whole vault: `**` matches every path
    if levels[-1] == "**":
        return "/".join(levels[:-1]), True
    named = not any(w in levels[-1] for w in WILDCARDS)
    return "/".join(levels), named or not grants


def plain(pattern: str) -> str | None:
    """The rule as plainly meant when it is spelled otherwise (backslashes for slashes, spaces around
    it), or None when it is spelled as meant."""
    fixed = pattern.replace("\\", "/").strip()
    return fixed if fixed and fixed != pattern else None


def readings(pattern: str, *, grants: bool = False) -> tuple[str, ...]:
    """The spellings a rule is applied as: as written, and, for a rule that restricts, as plainly
    meant too (`plain`), so that it never covers less than either."""
    meant = None if grants else plain(pattern)
    return (pattern,) if meant is None else (pattern, meant)


def loosely(path: str) -> str:
    """`path` as a disk that folds case and drops trailing dots and spaces (Windows, vfat) finds it:
    each level case folded and so trimmed (a level that would be left empty stays as it is)."""
    return "/".join(level.rstrip(". ") or level for level in path.casefold().split("/"))


def covers(pattern: str, path: str, *, grants: bool = False, any_spelling: bool | None = None) -> bool:
    """Whether the rule `pattern` covers the vault-relative `path` (see module doc). `grants`: the
    rule lets agents do more (a `write` list, a folder rule `"none"`) rather than less.
    `any_spelling`: also cover the path as a disk folding case finds it (`loosely`); by default a
    restricting rule does and a granting one does not."""
    if _covers(pattern, path, grants):
        return True
    if any_spelling is None:
        any_spelling = not grants
    if not any_spelling:
        return False
    loose_pattern, loose_path = loosely(pattern), loosely(path)
    return (loose_pattern, loose_path) != (pattern, path) and _covers(loose_pattern, loose_path, grants)


def _covers(pattern: str, path: str, grants: bool) -> bool:
    stem, reach = _reading(pattern, grants)
    readings = (True, False) if "[" in stem else (True,)
    for classes in readings:
        if glob_match(stem, path, classes=classes):
            return True
        if reach:
            cut = path.find("/")
            while cut > 0:
                if glob_match(stem, path[:cut], classes=classes):
                    return True
                cut = path.find("/", cut + 1)
    return False


__all__ = ["covers", "loosely", "plain", "readings"]

"""Fix-it actions on the note the person sees: copy its path or `[[wikilink]]`, open it in
Obsidian. (Editing in $EDITOR and the triage writes are `tui.flows.triaging`'s.)

The clipboard is the terminal's: Textual's `App.copy_to_clipboard` sends OSC 52, which most
terminals honour and some do not (macOS Terminal; tmux without `set-clipboard on`; a
terminal that asks first). A terminal never says whether it copied, so the notification says
what was sent and where it is known not to arrive, and always shows the text itself.

Opening in Obsidian builds `obsidian://open?vault=NAME&file=PATH` (Obsidian's help, "Obsidian
URI": every value percent-encoded, `/` as %2F and spaces as %20; `file` is the path from the
vault root; the vault is named by its folder's name) and hands it to the system opener
(`open` on macOS, `xdg-open` elsewhere, `os.startfile` on Windows) in a thread.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from vaultwatch.core.model import Entry

if TYPE_CHECKING:
    from textual.app import App

    from vaultwatch.core.index.snapshot import Snapshot


def wikilink(entry: Entry, snapshot: Snapshot | None = None) -> str:
    """`[[Name]]` as Obsidian writes it with its default "shortest path when possible": the file
    name without `.md`, or the path from the vault root when another file has that name."""
    path = entry.path[:-3] if entry.path.lower().endswith(".md") else entry.path
    name = path.rsplit("/", 1)[-1]
    if snapshot is not None:
        from vaultwatch.core.links import resolve as linkmap  # noqa: PLC0415

        if isinstance(linkmap.names(snapshot).get(entry.path.rsplit("/", 1)[-1].casefold()), tuple):
            return f"[[{path}]]"
    return f"[[{name}]]"


def obsidian_uri(vault_root: str, path: str) -> str:
    """The URI that opens vault-relative `path` in the Obsidian vault whose folder is `vault_root`."""
    name = os.path.basename(os.path.normpath(vault_root))
    return f"obsidian://open?vault={quote(name, safe='')}&file={quote(path, safe='')}"


def opener(platform: str | None = None) -> list[str] | None:
    """The system's URI opener command, or None when there is none on this machine."""
    platform = platform or sys.platform
    if platform == "darwin":
        return ["open"]
    if platform.startswith("win"):
        return []  # os.startfile
    found = shutil.which("xdg-open") or shutil.which("gio")
    if found is None:
        return None
    return [found, "open"] if found.endswith("gio") else [found]


def open_uri(uri: str) -> str | None:
    """Hand `uri` to the system opener; None when it went, else what went wrong (blocking: run
    it in a thread)."""
    command = opener()
    if command is None:
        return "no system opener (xdg-open) on this machine"
    try:
        if command == []:
            os.startfile(uri)  # type: ignore[attr-defined]  # Windows only
            return None
        done = subprocess.run([*command, uri], check=False, stdin=subprocess.DEVNULL, capture_output=True, timeout=15)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{command[0] if command else 'startfile'} failed: {exc}"
    if done.returncode:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"{os.path.basename(command[0])} exited with status {done.returncode}" + (f": {err[-1]}" if err else "")
    return None


def clipboard_caveat(environ: Mapping[str, str] | None = None) -> str | None:
    """Why the terminal may not copy what OSC 52 sent, when that is known from its environment."""
    env = os.environ if environ is None else environ
    if env.get("TERM_PROGRAM") == "Apple_Terminal":
        return "macOS Terminal ignores OSC 52: nothing was copied"
    if env.get("TMUX"):
        return "inside tmux this reaches the clipboard only with `set -g set-clipboard on`"
    if env.get("STY"):
        return "GNU screen does not pass OSC 52 on: it may not reach the clipboard"
    return None


def copy(app: App[Any], text: str, what: str) -> None:
    """Copy `text` through the terminal (OSC 52) and say honestly what happened."""
    if getattr(app, "_driver", None) is None or getattr(app, "is_headless", False):
        app.copy_to_clipboard(text)
        app.notify(f"no terminal to copy to (headless): {text}", title=f"copy {what}", severity="warning", markup=False)
        return
    app.copy_to_clipboard(text)
    caveat = clipboard_caveat()
    if caveat:
        app.notify(
            f"{text}\n{caveat}; select the text above to copy it by hand",
            title=f"copy {what}",
            severity="warning",
            markup=False,
            timeout=10,
        )
    else:
        app.notify(
            f"{text}\nsent to the terminal's clipboard (OSC 52; a terminal without it copies nothing)",
            title=f"copied {what}",
            markup=False,
        )

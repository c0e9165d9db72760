"""Issue 13: the TUI's own reads (the preview, the bytes an edit compares) and the file name it
gives $EDITOR go through core's safe open (core.disk.reader.note_bytes / editor_path), so a
folder swapped for a link out of the vault between the check and the use is never read."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time

import pytest

from vaultwatch.core.disk.reader import editor_path, note_bytes
from vaultwatch.core.errors import VaultError
from vaultwatch.core.vault import Vault
from vaultwatch.tui.flows.actions import Actions

SECRET = b"OUTSIDE-SECRET-BYTES"
OUTSIDE_BYTES = b"# out\n" + SECRET + b"\n"
OUTSIDE_ETAG = hashlib.sha256(OUTSIDE_BYTES).hexdigest()


def _vault(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_bytes(OUTSIDE_BYTES)
    root = tmp_path / "v"
    (root / "d" / "sub").mkdir(parents=True)
    (root / "d" / "sub" / "x.md").write_bytes(b"# inside\n")
    os.symlink(outside, root / "d" / "link")
    (root / "real").mkdir()
    (root / "real" / "a.md").write_bytes(b"# a\n")
    os.symlink("real", root / "L")  # an in-vault folder link: followed as documented
    v = Vault(root, cache=False)
    v.load()
    return v, root, outside


def test_note_bytes_and_editor_path_follow_in_vault_links_and_refuse_outside_ones(tmp_path):
    v, root, outside = _vault(tmp_path)
    data, st = note_bytes(v.root_real, "L/a.md")
    assert data == b"# a\n" and st.st_size == 4
    assert note_bytes(v.root_real, "d/sub/x.md", limit=3)[0] == b"# i"
    assert editor_path(v.root_real, "L/a.md") == os.path.join(v.root_real, "real", "a.md")  # no link in it
    for call in (lambda: note_bytes(v.root_real, "d/link/x.md"), lambda: editor_path(v.root_real, "d/link/x.md")):
        with pytest.raises(VaultError) as err:
            call()
        assert SECRET.decode() not in str(err.value)
    os.link(outside / "x.md", root / "hard.md")  # a hard link to an outside file is not read as a note
    with pytest.raises(VaultError, match="hard-linked"):
        note_bytes(v.root_real, "hard.md")


_SWAPPER = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
a, b, stop = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2]), sys.argv[3]
n = 0
while not os.path.exists(stop):
    if libc.renameat2(-100, a, -100, b, 2) != 0:  # RENAME_EXCHANGE
        sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))
    n += 1
print(n)
"""


def test_the_tuis_reads_never_return_an_outside_file_while_a_folder_is_swapped(tmp_path):
    """Actions.seen_bytes (the bytes an edit or a triage write compares with what the person was
    shown), note_bytes (the preview's read) and editor_path while another process swaps d/sub with
    d/link -> outside: the old seen_bytes (vault.disk_path, then open by name) read the outside file
    and put its SHA-256 in the conflict it raised, within a second."""
    v, root, _outside = _vault(tmp_path)
    entry = v.entry("d/sub/x.md")
    actions = Actions(v, user="tester")
    stopfile = tmp_path / "stop"
    # another process (a sync client), so the swaps land between any two steps of the reader
    swapper = subprocess.Popen(
        [sys.executable, "-c", _SWAPPER, str(root / "d" / "sub"), str(root / "d" / "link"), str(stopfile)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    leaks, reads, refused = [], 0, 0
    end = time.monotonic() + 3.0
    try:
        while time.monotonic() < end and not leaks:
            for call in (lambda: actions.seen_bytes(entry), lambda: note_bytes(v.root_real, "d/sub/x.md")[0]):
                try:
                    data = call()
                except VaultError as exc:  # refused; but it must not carry the outside file's hash either
                    refused += 1
                    if OUTSIDE_ETAG in (str(exc), str(getattr(exc, "current_etag", ""))):
                        leaks.append(f"the outside file's SHA-256 in {exc!r}".encode())
                    continue
                reads += 1
                if SECRET in data:
                    leaks.append(data)
            try:
                where = editor_path(v.root_real, "d/sub/x.md")
            except VaultError:
                continue
            if not where.startswith(v.root_real + os.sep):
                leaks.append(where.encode())
    finally:
        stopfile.write_text("stop")
        out, err = swapper.communicate(timeout=30)
    assert swapper.returncode == 0, err
    assert int(out) > 100 and reads > 10, (out, reads, refused)
    assert leaks == [], leaks[:3]

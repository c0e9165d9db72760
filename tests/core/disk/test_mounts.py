"""core.disk.mounts: mountinfo's lines read as the kernel writes them, and the other paths a folder
is reachable at through a real bind mount."""

from __future__ import annotations

from pathlib import Path

from tests.bind_mount import bound
from vaultwatch.core.disk import mounts
from vaultwatch.core.disk.mounts import Alias, Mount

# Real lines: a root filesystem with one optional field, a bind mount of a folder with a space in
# its name (root `\040`), a mount point with a tab and a backslash, a mount with several optional
# fields and one with none (before the lone `-` that ends them).
LINES = [
    b"27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard\n",
    b"45 27 254:0 /home/me/vault/Pri\\040vate /mnt/p rw,relatime shared:1 - ext4 /dev/vda rw,discard\n",
    b"46 27 0:50 / /mnt/odd\\011name\\134x rw,nosuid shared:30 master:12 propagate_from:3 unbindable - tmpfs "
    b"tmpfs rw\n",
    b"24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw,size=12334760k,mode=755\n",
]


def test_a_line_gives_device_root_and_mount_point_with_escapes_undone() -> None:
    assert [mounts.parse_line(line) for line in LINES] == [
        Mount("254:0", "/", "/"),
        Mount("254:0", "/home/me/vault/Pri vate", "/mnt/p"),
        Mount("0:50", "/", "/mnt/odd\tname\\x"),
        Mount("0:6", "/", "/dev"),
    ]


def test_a_line_not_in_mountinfos_form_is_skipped(tmp_path: Path) -> None:
    info = tmp_path / "mountinfo"
    info.write_bytes(b"".join([LINES[0], b"garbage\n", b"1 2 3 4 5 6 7\n", b"1 2 nocolon / /x rw - t s o\n", LINES[1]]))
    assert mounts.read(str(info)) == (Mount("254:0", "/", "/"), Mount("254:0", "/home/me/vault/Pri vate", "/mnt/p"))
    assert mounts.read(str(tmp_path / "absent")) == ()


def test_a_carriage_return_in_a_mount_point_stays_in_its_line(tmp_path: Path) -> None:
    info = tmp_path / "mountinfo"  # the kernel escapes space, tab, newline and backslash, not \r
    info.write_bytes(LINES[0] + b"47 27 254:0 /srv /mnt/a\rb rw shared:1 - ext4 /dev/vda rw\n")
    assert mounts.read(str(info))[1] == Mount("254:0", "/srv", "/mnt/a\rb")


def test_a_folder_reached_through_a_bind_mount_has_its_other_path(tmp_path: Path) -> None:
    private = tmp_path / "vault" / "Pri vate"
    (private / "Inner").mkdir(parents=True)
    target = tmp_path / "mnt"
    target.mkdir()
    before = mounts.read()
    assert mounts.aliases(str(private), before) == []  # no mount shows it anywhere else
    with bound(private, target):
        seen = mounts.read()
        (there,) = mounts.aliases(str(target / "Inner"), seen)
        assert there.path == str(private / "Inner") and there.of == str(target / "Inner")
        assert there.here == str(target)
        (back,) = mounts.aliases(str(private), seen)
        assert back == Alias(str(target), str(private), there.there, str(target))
        assert mounts.aliases(str(tmp_path / "vault"), seen) == []  # the folder above is not shown there

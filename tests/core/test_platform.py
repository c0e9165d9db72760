"""Each Linux-only call's fallback, forced on Linux: the safety tests still pass on it.

core.platform holds every call only some systems have. Here each capability is turned off
(as on macOS or an old kernel), the focused safety tests of the code that uses it run again,
and the capability's fallback counter proves the fallback really ran (so no test here can pass
by still using the Linux call).
"""

from __future__ import annotations

import errno
import os

import pytest

from tests.core.disk import test_containment as containment
from vaultwatch.core import memory, platform
from vaultwatch.core.disk import fileopen, safeio
from vaultwatch.core.disk.vaultlock import VaultLock, holder
from vaultwatch.core.edit.atomic import rename_noreplace

# The containment tests of core.disk: links in and out of the vault, folders and last components
# swapped after the walk, hard links, renames and writes through links.
CONTAINMENT = [
    containment.test_locate_follows_in_vault_links_and_refuses_outside_ones,
    containment.test_a_last_component_swapped_for_a_link_after_the_walk_is_path_changed,
    containment.test_a_folder_swapped_for_an_outside_link_after_the_walk_is_not_followed,
    containment.test_hard_linked_notes_are_never_read_or_rewritten,
    containment.test_rename_through_a_folder_link_answers_the_real_path,
    containment.test_a_write_through_a_link_to_the_vault_root_lands_at_the_real_path,
]


def test_force_turns_a_capability_off_for_the_block_only():
    assert platform.available("openat2") and platform.available("proc")
    with platform.force(openat2=False, proc=False):
        assert not platform.available("openat2") and not platform.available("proc")
        assert not safeio.has_openat2()
    assert platform.available("openat2") and platform.available("proc")


def test_force_refuses_an_unknown_capability_by_name():
    with pytest.raises(ValueError, match="unknown platform capability 'proc_fd'.*openat2"):
        with platform.force(proc_fd=False):
            pass


@pytest.mark.parametrize("cap", ["openat2", "proc", "renameat2"])
def test_containment_holds_on_each_fallback(cap, tmp_path):
    before = platform.fallbacks[cap]
    with platform.force(**{cap: False}):
        for i, test in enumerate(CONTAINMENT):
            where = tmp_path / str(i)
            where.mkdir()
            test(where)
    assert platform.fallbacks[cap] > before, f"no containment test took the {cap} fallback"


def test_without_proc_a_folder_swapped_for_an_outside_link_is_still_not_read(tmp_path):
    """fd_inside cannot ask the kernel for the open file's name: it says so (True, its caller's
    descriptor walk stands alone), and the editor's file name is the walked one."""
    vault = tmp_path / "v"
    (vault / "a").mkdir(parents=True)
    (vault / "a" / "n.md").write_text("# n\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "n.md").write_text("secret\n")
    root = os.path.realpath(vault)
    before = platform.fallbacks["proc"]
    with platform.force(proc=False):
        assert fileopen.editor_path(root, "a/n.md") == os.path.join(root, "a/n.md")
        (vault / "a" / "n.md").unlink()
        (vault / "a").rmdir()
        (vault / "a").symlink_to(outside)
        with pytest.raises(Exception, match="escapes vault|outside"):
            fileopen.editor_path(root, "a/n.md")
    assert platform.fallbacks["proc"] > before


def test_without_proc_locks_the_vault_holder_is_found_by_probing_its_lock(tmp_path):
    root = os.path.realpath(tmp_path)
    lock = VaultLock(root)
    lock.acquire(record={"pid": os.getpid(), "kind": "tui"})
    before = platform.fallbacks["proc"]
    try:
        with platform.force(proc=False):
            found = holder(root)
            assert found is not None and found.pid == os.getpid()
    finally:
        lock.release()
    with platform.force(proc=False):
        assert holder(root) is None
    assert platform.fallbacks["proc"] > before


def test_without_renameat2_a_rename_never_replaces_a_file_or_a_folder(tmp_path):
    (tmp_path / "a.md").write_text("a")
    (tmp_path / "b.md").write_text("b")
    (tmp_path / "d1").mkdir()
    (tmp_path / "d2").mkdir()
    (tmp_path / "d2" / "keep.md").write_text("keep")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    before = platform.fallbacks["renameat2"]
    try:
        with platform.force(renameat2=False):
            with pytest.raises(FileExistsError) as err:
                rename_noreplace(fd, "a.md", fd, "b.md")
            assert err.value.errno == errno.EEXIST
            with pytest.raises(FileExistsError):
                rename_noreplace(fd, "d1", fd, "d2")
            rename_noreplace(fd, "a.md", fd, "c.md")
            rename_noreplace(fd, "d1", fd, "d3")
    finally:
        os.close(fd)
    assert (tmp_path / "b.md").read_text() == "b" and (tmp_path / "d2" / "keep.md").read_text() == "keep"
    assert (tmp_path / "c.md").read_text() == "a" and not (tmp_path / "a.md").exists()
    assert (tmp_path / "d3").is_dir() and not (tmp_path / "d1").exists()
    assert os.stat(tmp_path / "c.md").st_nlink == 1  # the link+unlink fallback left no second name
    assert platform.fallbacks["renameat2"] >= before + 4


def test_without_glibc_the_memory_tuning_says_it_did_nothing():
    before = platform.fallbacks["glibc"]
    with platform.force(glibc=False):
        assert memory.can_release_free_memory() is False
        assert memory.release_free_memory() is False
        assert memory.limit_malloc_arenas(2) is False
    assert platform.fallbacks["glibc"] >= before + 2


def test_without_proc_resident_memory_is_unknown_not_an_error():
    before = platform.fallbacks["proc"]
    assert memory.resident_bytes() > 0
    with platform.force(proc=False):
        assert memory.resident_bytes() == 0
    assert platform.fallbacks["proc"] > before


def test_forced_case_folding_makes_both_probes_fold_for_the_block_only(tmp_path):
    """No case-insensitive file system mounts on the test machine (see tests/reliability/
    test_gate_case.py): `force(folds_case=True)` makes the vault's probes answer as macOS's would,
    and the gate's comparison folds case; outside the block the real (case-sensitive) answer."""
    from vaultwatch.core.edit.atomic import folds_case
    from vaultwatch.core.edit.effects import form_of

    (tmp_path / "Private").mkdir()
    root = os.path.realpath(tmp_path)
    fd = os.open(root, os.O_RDONLY)
    try:
        assert not folds_case(fd, ["Private"]) and not form_of(root).folds_case
        with platform.force(folds_case=True):
            assert folds_case(fd, ["Private"])
            assert form_of(root).key("PRIVATE/Secret.md") == form_of(root).key("private/secret.md")
        assert not folds_case(fd, ["Private"]) and not form_of(root).folds_case
    finally:
        os.close(fd)


def test_without_setrlimit_no_memory_cap_is_set_and_it_says_so():
    before = platform.fallbacks["rlimit"]
    with platform.force(rlimit=False):
        assert platform.limit_data_memory(1 << 30) is None
    assert platform.fallbacks["rlimit"] > before

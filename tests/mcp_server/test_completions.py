"""completion/complete, through the real server on its socket with the real Python client: the note
template's path (exact prefix first, most recent first; then ignoring case; then by file name; at most
100 with the total), the review_vault prompt's folder, nothing (never an error) for anything else, and
the capability advertised in both protocol eras."""

from __future__ import annotations

import os

import pytest
from mcp_testing import serving, uds_client
from mcp_types import PromptReference, ResourceTemplateReference

from vaultwatch.core.query.complete import complete_tag
from vaultwatch.mcp_server.resources import TEMPLATE

NOTE = ResourceTemplateReference(uri=TEMPLATE)
REVIEW = PromptReference(name="review_vault")


@pytest.fixture
def vault(make_vault, open_vault):
    files = {f"Projects/Note {i:03d}.md": f"# {i}\n" for i in range(150)}
    files |= {
        "projects/lower.md": "# lower\n",
        "Areas/Projects plan.md": "# by name\n",
        "Areas/Other.md": "# other\n",
        "Projects/Archive/Old.md": "---\ntags: [ops/oncall, Ops]\n---\n# old\n",
        "img/Projects.png": b"\x89PNG\r\n",
    }
    root = make_vault(files)
    for i in range(150):  # Note 042 is the newest, then 043, ... (mtime order differs from path order)
        age = (i - 42) % 150
        os.utime(root / f"Projects/Note {i:03d}.md", ns=(1_700_000_000_000_000_000 - age * 10**9,) * 2)
    for other in ("projects/lower.md", "Areas/Projects plan.md", "Areas/Other.md", "Projects/Archive/Old.md"):
        os.utime(root / other, ns=(1_600_000_000_000_000_000,) * 2)  # older than every numbered note
    return open_vault(root)


async def test_a_note_path_completes_exact_prefix_first_most_recent_first(vault, sock_dir):
    async with serving(vault, sock_dir / "v.sock") as host, uds_client(host.socket_path) as client:
        caps = client.server_capabilities
        exact = (await client.complete(NOTE, {"name": "path", "value": "Projects/Note 1"})).completion
        every = (await client.complete(NOTE, {"name": "path", "value": "Projects/"})).completion
        loose = (await client.complete(NOTE, {"name": "path", "value": "proj"})).completion
    assert caps.completions is not None
    assert exact.values == [f"Projects/Note {i}.md" for i in range(100, 150)] and exact.total == 50  # 100 newest
    assert not exact.has_more
    # 151 notes under Projects/ (the archive's too), and projects/lower.md ignoring case: the newest 100 of 152
    assert every.values[:3] == ["Projects/Note 042.md", "Projects/Note 043.md", "Projects/Note 044.md"]
    assert len(every.values) == 100 and every.total == 152 and every.has_more
    # "proj": the exact prefix has only projects/lower.md; then paths ignoring case; then file names
    assert loose.values[0] == "projects/lower.md" and loose.values[1] == "Projects/Note 042.md"
    assert "Areas/Projects plan.md" not in loose.values  # past the first 100: ranked after every path match
    assert loose.total == 1 + 151 + 2  # + Areas/Projects plan.md and img/Projects.png by name


async def test_a_prompt_folder_completes_and_anything_else_gets_no_values(vault, sock_dir):
    async with serving(vault, sock_dir / "v.sock") as host:
        seen = {}
        for mode in ("legacy", "auto"):
            async with uds_client(host.socket_path, mode=mode) as client:
                seen[mode] = client.server_capabilities.completions
                folders = (await client.complete(REVIEW, {"name": "folder", "value": "pro"})).completion
                named = (await client.complete(NOTE, {"name": "path", "value": "projects pl"})).completion
                other = (await client.complete(REVIEW, {"name": "nope", "value": "x"})).completion
                unknown = (
                    await client.complete(ResourceTemplateReference(uri="file:///{x}"), {"name": "x", "value": ""})
                ).completion
    assert all(cap is not None for cap in seen.values()), seen
    assert folders.values == ["projects", "Projects", "Projects/Archive"] and folders.total == 3
    assert named.values == ["Areas/Projects plan.md"]  # no path starts with it: its file name does
    assert other.values == [] and unknown.values == []


def test_tags_complete_most_used_first_ignoring_case_and_hash(vault):
    found = complete_tag(vault.snapshot, "#OPS")
    assert set(found.values) == {"ops/oncall", "Ops"} and found.total == 2
    assert complete_tag(vault.snapshot, "zz").values == ()


async def test_completion_answers_on_the_event_loop_unless_a_whole_vault_build_is_due(vault, sock_dir, monkeypatch):
    """A completion whose tables are at hand (or patched from the previous generation's) is answered
    on the event loop, with no thread hop; one that must build them from the whole vault (a fresh
    index; tag counts after a change) runs in a worker thread, off the loop the TUI shares."""
    import threading

    from vaultwatch.mcp_server import completions

    threads: list[tuple[str, bool]] = []
    for what, real in list(completions.COMPLETE.items()):

        def spy(snap, typed, real=real, what=what):  # calls the real completion; notes where it ran
            threads.append((what, threading.get_ident() == loop_thread))
            return real(snap, typed)

        monkeypatch.setitem(completions.COMPLETE, what, spy)
    loop_thread = threading.get_ident()
    root = vault.root
    async with serving(vault, sock_dir / "v.sock") as host, uds_client(host.socket_path) as client:

        async def path(typed):
            return (await client.complete(NOTE, {"name": "path", "value": typed})).completion.values

        first = await path("Projects/Note 04")  # a fresh index: the tables are built
        again = await path("Projects/Note 04")  # the same generation: at hand
        with open(os.path.join(root, "Projects/Note 049.md"), "a") as f:
            f.write("more\n")
        os.utime(os.path.join(root, "Projects/Note 049.md"), ns=(1_800_000_000_000_000_000,) * 2)
        vault.refresh_paths(["Projects/Note 049.md"])  # a new generation: patched
        after = await path("Projects/Note 04")
        await client.complete(REVIEW, {"name": "folder", "value": "pro"})  # built (first folder completion)
        await client.complete(REVIEW, {"name": "tag", "value": "op"})  # built (the first tag counts)
        tags = (await client.complete(REVIEW, {"name": "tag", "value": "op"})).completion.values
    assert first == again and first[0] == "Projects/Note 042.md"
    assert after[0] == "Projects/Note 049.md" and sorted(after) == sorted(first)
    assert set(tags) == {"ops/oncall", "Ops"}
    assert threads == [
        ("path", False),
        ("path", True),
        ("path", True),
        ("folder", False),
        ("tag", False),
        ("tag", True),
    ]

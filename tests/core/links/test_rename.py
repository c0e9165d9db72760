"""Rename and move with link rewriting (core.links.rewrite + Writer.rename), on real vaults."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vaultwatch.core.edit.writes import AlreadyExistsError, ConflictError, Writer, WriteRefused, etag_of
from vaultwatch.core.errors import NotFoundError, PathError
from vaultwatch.core.links.rewrite import LinkIndex, find_links, rewrite_links
from vaultwatch.core.vault import Vault


def make_vault(root: Path, files: dict[str, str | bytes]) -> tuple[Vault, Writer]:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    v = Vault(root)
    v.load()
    return v, Writer(v)


def text(v: Vault, rel: str) -> str:
    return (Path(v.root) / rel).read_text()


def test_wiki_links_aliases_headings_embeds_and_blocks(tmp_path):
    v, w = make_vault(
        tmp_path,
        {
            "Projects/Plan.md": "# Plan\n## Goals\n",
            "Home.md": (
                "[[Plan]] [[Plan|the plan]] [[Plan#Goals]] [[Plan#Goals|goals]] ![[Plan]] ![[Plan#Goals]]\n"
                "[[Plan#^block1]] [[plan]] [[Plan.md]] [[Projects/Plan]] [[Projects/Plan.md|x]]\n"
                "| [[Plan\\|in a table]] |\n"
            ),
        },
    )
    result = w.rename("Projects/Plan.md", "Projects/Roadmap.md")
    assert text(v, "Home.md") == (
        "[[Roadmap]] [[Roadmap|the plan]] [[Roadmap#Goals]] [[Roadmap#Goals|goals]] ![[Roadmap]] ![[Roadmap#Goals]]\n"
        "[[Roadmap#^block1]] [[Roadmap]] [[Roadmap.md]] [[Projects/Roadmap]] [[Projects/Roadmap.md|x]]\n"
        "| [[Roadmap\\|in a table]] |\n"
    )
    assert result.changed_paths == ("Projects/Plan.md", "Projects/Roadmap.md", "Home.md")
    assert "rewrote 12 links in 1 note" in result.diff_summary
    assert v.snapshot.get("Projects/Plan.md") is None and v.snapshot.get("Projects/Roadmap.md") is not None
    assert [link.target for link in v.snapshot.get("Home.md").links][:2] == ["Roadmap", "Roadmap"]


def test_markdown_links_relative_absolute_encoded_and_angle(tmp_path):
    v, w = make_vault(
        tmp_path,
        {
            "Projects/Plan.md": "plan",
            "Areas/Home.md": (
                "[rel](../Projects/Plan.md) [abs](/Projects/Plan.md) [enc](../Projects/Plan.md#Goals)\n"
                '![img](../Projects/Plan.md "title") [web](https://example.com/Plan.md) [frag](#Plan)\n'
            ),
            "Root.md": "[root](Projects/Plan.md) [angle](<Projects/Plan.md>) [code](`Projects/Plan.md`)\n",
        },
    )
    w.rename("Projects/Plan.md", "Archive/Old Plans/Plan (v1).md")
    assert text(v, "Areas/Home.md") == (
        "[rel](../Archive/Old%20Plans/Plan%20%28v1%29.md) [abs](/Archive/Old%20Plans/Plan%20%28v1%29.md) "
        "[enc](../Archive/Old%20Plans/Plan%20%28v1%29.md#Goals)\n"
        '![img](../Archive/Old%20Plans/Plan%20%28v1%29.md "title") [web](https://example.com/Plan.md) [frag](#Plan)\n'
    )
    assert text(v, "Root.md").startswith(
        "[root](Archive/Old%20Plans/Plan%20%28v1%29.md) [angle](<Archive/Old Plans/Plan (v1).md>)"
    )
    # and back again: the encoded links are found and decoded
    w.rename("Archive/Old Plans/Plan (v1).md", "Plan.md")
    assert text(v, "Areas/Home.md").startswith("[rel](../Plan.md) [abs](/Plan.md) [enc](../Plan.md#Goals)")


def test_moving_a_note_rewrites_its_own_relative_links(tmp_path):
    v, w = make_vault(
        tmp_path,
        {
            "A/Note.md": "[o](../B/Other.md) [same](Sibling.md) [[Other]]\n",
            "A/Sibling.md": "s",
            "B/Other.md": "o",
        },
    )
    w.rename("A/Note.md", "C/D/Note.md")
    assert text(v, "C/D/Note.md") == "[o](../../B/Other.md) [same](../../A/Sibling.md) [[Other]]\n"


def test_folder_rename_rewrites_links_to_everything_inside(tmp_path):
    v, w = make_vault(
        tmp_path,
        {
            "Projects/Plan.md": "[[Sub/Deep]] [s](Sub/Deep.md)",
            "Projects/Sub/Deep.md": "[[Plan]] [up](../Plan.md)",
            "Projects/img.png": b"\x89PNG",
            "Home.md": "[[Projects/Plan]] [[Deep]] ![[Projects/img.png]] ![[img.png]] [p](Projects/Sub/Deep.md)\n",
        },
    )
    result = w.rename("Projects", "Work/Projects 2026")
    assert text(v, "Home.md") == (
        "[[Work/Projects 2026/Plan]] [[Deep]] ![[Work/Projects 2026/img.png]] ![[img.png]] "
        "[p](Work/Projects%202026/Sub/Deep.md)\n"
    )
    assert text(v, "Work/Projects 2026/Plan.md") == "[[Sub/Deep]] [s](Sub/Deep.md)"  # relative inside: unchanged
    assert text(v, "Work/Projects 2026/Sub/Deep.md") == "[[Plan]] [up](../Plan.md)"
    assert "(3 files)" in result.diff_summary
    paths = v.snapshot.paths
    assert "Work/Projects 2026/Sub/Deep.md" in paths and not any(p.startswith("Projects") for p in paths)
    assert v.snapshot.get("Work/Projects 2026/img.png").kind == "attachment"


def test_attachment_rename_updates_embeds(tmp_path):
    v, w = make_vault(
        tmp_path, {"img/pic.png": b"\x89PNG", "N.md": "![[pic.png]] ![[pic.png|200]] ![p](img/pic.png)\n"}
    )
    w.rename("img/pic.png", "img/diagram.png")
    assert text(v, "N.md") == "![[diagram.png]] ![[diagram.png|200]] ![p](img/diagram.png)\n"
    with pytest.raises(WriteRefused) as info:
        w.rename("img/diagram.png", "img/diagram.md")
    assert info.value.code == "not_an_attachment"


def test_ambiguous_links_are_left_alone_and_reported(tmp_path):
    v, w = make_vault(
        tmp_path,
        {
            "A/Plan.md": "a",
            "B/Plan.md": "b",
            "Home.md": "[[Plan]] and [[A/Plan]]\n",
        },
    )
    result = w.rename("A/Plan.md", "A/Roadmap.md")
    assert text(v, "Home.md") == "[[Plan]] and [[A/Roadmap]]\n"
    assert len(result.warnings) == 1 and "ambiguous" in result.warnings[0] and "line 1" in result.warnings[0]
    assert "1 link left alone" in result.diff_summary


def test_the_summary_counts_notes_left_as_they_were_apart_from_links(tmp_path):
    """A warning about a note's links (here its unquoted frontmatter links, which the new name would
    break as YAML) is not counted as one link left alone."""
    v, w = make_vault(
        tmp_path,
        {"Plan.md": "x", "Home.md": "---\nrelated: [[Plan]]\nalso: [[Plan]]\n---\n[[Plan]] [[Plan|p]]\n"},
    )
    result = w.rename("Plan.md", "@Plan.md")
    assert text(v, "Home.md") == "---\nrelated: [[Plan]]\nalso: [[Plan]]\n---\n[[@Plan]] [[@Plan|p]]\n"
    assert result.warnings == ("Home.md: frontmatter links left alone (the rewrite would break the YAML)",)
    assert result.diff_summary.endswith("rewrote 2 links in 1 note; links in 1 note left as they were")


def test_a_rename_that_would_steal_a_bare_link_rewrites_it_to_keep_its_target(tmp_path):
    v, w = make_vault(
        tmp_path,
        {
            "Inbox/Idea.md": "new idea",
            "Ideas/Plan.md": "the real plan",
            "Home.md": "[[Plan]] [[Idea]]\n",
        },
    )
    w.rename("Inbox/Idea.md", "Inbox/Plan.md")  # now two notes are named Plan
    assert text(v, "Home.md") == "[[Ideas/Plan]] [[Inbox/Plan]]\n"


def test_links_in_code_are_not_links(tmp_path):
    body = "```\n[[Plan]]\n```\n`[[Plan]]` [[Plan]]\n~~~md\n[x](Plan.md)\n~~~\n"
    v, w = make_vault(tmp_path, {"Plan.md": "p", "Home.md": body})
    w.rename("Plan.md", "Goal.md")
    assert text(v, "Home.md") == body.replace("` [[Plan]]", "` [[Goal]]")


def test_frontmatter_links_are_rewritten_like_obsidian_properties(tmp_path):
    v, w = make_vault(
        tmp_path,
        {
            "Plan.md": "p",
            "Home.md": '---\nup: "[[Plan]]"\nrelated:\n  - "[[Plan|p]]"\n# comment stays\ntitle: Home\n---\n[[Plan]]\n',
        },
    )
    w.rename("Plan.md", "Goal.md")
    assert text(v, "Home.md") == (
        '---\nup: "[[Goal]]"\nrelated:\n  - "[[Goal|p]]"\n# comment stays\ntitle: Home\n---\n[[Goal]]\n'
    )


def test_crlf_bom_and_other_bytes_of_linking_notes_are_kept(tmp_path):
    raw = b"\xef\xbb\xbf---\r\ntitle: x\r\n---\r\nSee [[Plan]].\r\n\tTabbed\r\n"
    v, w = make_vault(tmp_path, {"Plan.md": "p", "Home.md": raw})
    w.rename("Plan.md", "Goal.md")
    assert (Path(v.root) / "Home.md").read_bytes() == raw.replace(b"[[Plan]]", b"[[Goal]]")


def test_update_links_false_only_moves(tmp_path):
    v, w = make_vault(tmp_path, {"Plan.md": "p", "Home.md": "[[Plan]]"})
    result = w.rename("Plan.md", "Goal.md", update_links=False)
    assert text(v, "Home.md") == "[[Plan]]" and result.changed_paths == ("Plan.md", "Goal.md")


def test_rename_refusals(tmp_path):
    v, w = make_vault(tmp_path, {"Plan.md": "p", "Goal.md": "g", "F/x.md": "x"})
    with pytest.raises(AlreadyExistsError) as info:
        w.rename("Plan.md", "Goal.md")
    assert info.value.code == "already_exists"
    assert text(v, "Goal.md") == "g" and text(v, "Plan.md") == "p"
    with pytest.raises(WriteRefused) as info:
        w.rename("Plan.md", "Plan.txt")
    assert info.value.code == "not_a_note"
    with pytest.raises(WriteRefused):
        w.rename("F", "F/inner")
    with pytest.raises(WriteRefused):
        w.rename("Plan.md", "Plan.md")
    with pytest.raises(NotFoundError):
        w.rename("Missing.md", "Other.md")
    with pytest.raises(PathError):
        w.rename("Plan.md", ".obsidian/Plan.md")
    with pytest.raises(PathError):
        w.rename("Plan.md", "../Plan.md")
    with pytest.raises(ConflictError):
        w.rename("Plan.md", "New.md", if_match="0" * 64)
    result = w.rename("Plan.md", "New.md", if_match=etag_of(b"p"))
    assert result.etag == etag_of(b"p") and result.moved_to == "New.md"
    os.symlink(Path(v.root) / "Goal.md", Path(v.root) / "Link.md")
    with pytest.raises(WriteRefused) as info:
        w.rename("Link.md", "Link2.md")
    assert info.value.code == "is_a_symlink"


def test_resolver_rules():
    idx = LinkIndex(["Projects/Plan.md", "Areas/Plan.md", "Home.md", "img/a.png", "Projects/Sub/Deep.md"])
    assert idx.resolve("Home", "Projects/Plan.md", False) == (["Home.md"], "absolute")
    assert idx.resolve("home", "x.md", False) == (["Home.md"], "absolute")
    assert idx.resolve("Plan", "Home.md", False) == (["Areas/Plan.md", "Projects/Plan.md"], "name")
    assert idx.resolve("Sub/Deep", "Home.md", False) == (["Projects/Sub/Deep.md"], "suffix")
    assert idx.resolve("a.png", "Home.md", False) == (["img/a.png"], "name")
    assert idx.resolve("Sub/Deep.md", "Projects/Plan.md", True) == (["Projects/Sub/Deep.md"], "relative")
    assert idx.resolve("../Home.md", "Projects/Plan.md", True) == (["Home.md"], "relative")
    assert idx.resolve("../../Home.md", "Projects/Plan.md", True)[0] == []


def test_find_links_positions_cover_only_the_path_part():
    t = '[[ Plan #H| a ]] [x](<My Plan.md#h> "t") [y](a%20b.md)'
    spans = [t[o.start : o.end] for o in find_links(t)]
    assert spans == ["Plan", "My Plan.md", "a%20b.md"]
    assert [o.target for o in find_links(t)] == ["Plan", "My Plan.md", "a b.md"]


def test_rewrite_links_is_pure_and_reports_counts():
    before = LinkIndex(["Plan.md", "Home.md"])
    moves = {"Plan.md": "Goal.md"}
    out = rewrite_links("[[Plan]] [[Nope]]", "Home.md", "Home.md", moves, before, before.moved(moves))
    assert out.text == "[[Goal]] [[Nope]]" and out.changed == 1 and out.warnings == ()


def test_a_same_folder_match_is_not_ambiguous(tmp_path):
    v, w = make_vault(
        tmp_path, {"A/Plan.md": "a", "B/Plan.md": "b", "A/Home.md": "[[Plan]]\n", "B/Home.md": "[[Plan]]\n"}
    )
    result = w.rename("A/Plan.md", "A/Goal.md")
    assert text(v, "A/Home.md") == "[[Goal]]\n" and text(v, "B/Home.md") == "[[Plan]]\n"
    assert result.warnings == ()


@pytest.mark.parametrize("name", ["Plan | x", "Plan #2", "Plan ^x", "Plan [x]", "Plan %% x", "Plan]"])
def test_a_rename_to_a_name_links_cannot_hold_is_refused_while_notes_link_to_it(tmp_path, name):
    """The person's rename (an agent may not use such names at all): `[[Plan | x]]` would point at
    "Plan " (alias " x"), `[[Plan #2]]` at a heading of "Plan ": a rewrite into such a name breaks
    every link it touches, so nothing is moved."""
    files = {"Plan.md": "x", "Home.md": "see [[Plan]] and [[Plan|the plan]]\n"}
    v, w = make_vault(tmp_path, files)
    with pytest.raises(WriteRefused) as info:
        w.rename("Plan.md", f"{name}.md")
    assert info.value.code == "unlinkable_name" and "1 note may link" in info.value.message
    assert text(v, "Home.md") == files["Home.md"] and text(v, "Plan.md") == "x"
    assert not (tmp_path / f"{name}.md").exists()
    w.rename("Plan.md", f"{name}.md", update_links=False)  # the person's choice: the links left as they are
    assert text(v, "Home.md") == files["Home.md"] and text(v, f"{name}.md") == "x"


def test_a_folder_rename_into_such_a_name_is_refused_and_a_note_nobody_links_is_not(tmp_path):
    v, w = make_vault(tmp_path, {"Proj/a.md": "[[Proj/b]]", "Proj/b.md": "b", "Lone.md": "[[elsewhere]]"})
    with pytest.raises(WriteRefused) as info:
        w.rename("Proj", "Proj #2")
    assert info.value.code == "unlinkable_name"
    assert text(v, "Proj/a.md") == "[[Proj/b]]"
    w.rename("Lone.md", "Meeting 10:30.md")  # no link names it: no link can break
    assert text(v, "Meeting 10:30.md") == "[[elsewhere]]"


@pytest.mark.parametrize("name", ["Budget.md.md", "Budget .md"])
def test_a_rename_whose_name_needs_its_md_written_out_keeps_the_links_reaching_it(tmp_path, name):
    """`[[Budget.md]]` names a note called Budget, and `[[Budget ]]` one with no space: to reach
    `Budget.md.md` or `Budget .md` the rewritten link writes the `.md` out, where the links were
    left alone, every one broken, while the person had approved them as following the note."""
    v, w = make_vault(tmp_path, {"Budget.md": "x", "A.md": "see [[Budget]] and [[Budget|b]] and [m](Budget.md)\n"})
    result = w.rename("Budget.md", name)
    assert not result.warnings and "rewrote 3 links in 1 note" in result.diff_summary
    moved = Vault(tmp_path)
    moved.load()
    assert [r.target for r in moved.links("A.md").outgoing] == [name] * 3

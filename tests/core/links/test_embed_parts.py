"""What an embed of a note shows (core.links.embeds): the whole body, a heading's section, the
block an id names, read through core's safe open; on the shapes Obsidian's help vault writes."""

from __future__ import annotations

from pathlib import Path

from vaultwatch.core.links import embeds
from vaultwatch.core.links.embeds import EmbedReader, block, body_of, section
from vaultwatch.core.model import Link
from vaultwatch.core.vault import Vault

NOTE = """---
title: Refunds
---
# Refunds

Intro paragraph
on two lines. ^intro

## Policy

Policy text.

### Details

Detail text.

## Discounts
**If I qualify, what do I do?**
Contact support.
^discount

> [!abstract] Regions
> Asia: Singapore
^regions

- item one
- item two
    - child of two ^two
- item three

^the-list

Setext heading
--------------

Under setext.
"""


def texts(lines: list, span: tuple[int, int] | None) -> list[str]:
    assert span is not None
    return [line.text for line in lines[span[0] : span[1]]]


def test_a_section_runs_to_the_next_heading_of_its_level_or_higher() -> None:
    lines = body_of(NOTE)
    assert texts(lines, section(lines, "Policy")) == [
        "## Policy",
        "",
        "Policy text.",
        "",
        "### Details",
        "",
        "Detail text.",
        "",
    ]
    assert texts(lines, section(lines, "details"))[0] == "### Details"  # matched as links are: case folded
    assert texts(lines, section(lines, "Refunds#Policy#Details"))[0] == "### Details"  # through its parents
    assert texts(lines, section(lines, "Setext heading")) == ["Setext heading", "--------------", "", "Under setext."]
    assert section(lines, "Nowhere") is None


def test_a_block_is_the_paragraph_item_or_block_its_id_names() -> None:
    lines = body_of(NOTE)
    assert texts(lines, block(lines, "intro")) == ["Intro paragraph", "on two lines. ^intro"]
    # an id on a line of its own right after a paragraph or callout: that paragraph or callout
    assert texts(lines, block(lines, "discount")) == ["**If I qualify, what do I do?**", "Contact support."]
    assert texts(lines, block(lines, "^regions")) == ["> [!abstract] Regions", "> Asia: Singapore"]
    # an id after a blank line: the list before it; on an item: the item with its children
    assert texts(lines, block(lines, "the-list")) == [
        "- item one",
        "- item two",
        "    - child of two ^two",
        "- item three",
    ]
    assert texts(lines, block(lines, "two")) == ["    - child of two ^two"]
    assert block(lines, "gone") is None


def test_the_reader_reads_each_note_once_and_only_when_allowed(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "v"
    root.mkdir()
    (root / "Refunds.md").write_text(NOTE)
    (root / "Long.md").write_text("".join(f"line {i}\n\n" for i in range(60)))
    vault = Vault(root)
    vault.load()
    reader = EmbedReader(vault.snapshot, vault.root_real)
    link = Link("Refunds", "embed", "Discounts")
    assert reader.part(link, "Refunds.md", read=False) is None  # a read is due: not done
    part = reader.part(link, "Refunds.md")
    assert part is not None and part.title == "Refunds" and part.problem == ""
    assert [line.text for line in part.lines][:3] == [
        "## Discounts",
        "**If I qualify, what do I do?**",
        "Contact support.",
    ]
    # up to the setext heading (level 2 too), without the blank line before it
    assert part.lines[-1].text == "^the-list"
    assert reader.part(Link("Refunds", "embed", "^intro"), "Refunds.md", read=False) is not None  # read once
    assert set(reader.entries) == {"Refunds.md"}
    # a part the note lacks, as the index judges it
    assert reader.part(Link("Refunds", "embed", "Nope"), "Refunds.md").problem == "heading"
    assert reader.part(Link("Refunds", "embed", "^nope"), "Refunds.md").problem == "block"
    # a long part is cut, the rest counted
    monkeypatch.setattr(embeds, "MAX_EMBED_LINES", 10)
    long = reader.part(Link("Long", "embed"), "Long.md")
    assert len(long.lines) == 10 and long.left_out == 119 - 10

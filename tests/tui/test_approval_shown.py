"""What the TUI's approval dialog shows of an agent's change, as the question through the agent's
client shows it (core.review.visible, core.review.question): combining marks and lookalike letters
that could disguise a line as `\\uXXXX`, and for a rename what each link it rewrites becomes. A real
agent on the app's real socket, Pilot keys."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from tui_agents import agent, mcp_started
from tui_helpers import armed, open_loaded
from waiting import TIMEOUT, await_until

from vaultwatch.core.edit import writes
from vaultwatch.core.edit.effects import stranded_words
from vaultwatch.core.links import resolve
from vaultwatch.core.review import approval
from vaultwatch.core.review.approval import ApprovalGate
from vaultwatch.core.review.journal import journal_for
from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.flows.review import ApprovalScreen
from vaultwatch.tui.widgets.diffview import DiffView, plain

pytestmark = pytest.mark.usefixtures("own_state")

NOTE = "Projects/Atlas Migration.md"
# what an agent could write to make a line read as something else, and real text that must not change
OVERLAY = "approved: 1\u0336 1\u0336 1\u0336 paid"  # a stroke through each 1
ZALGO = "o" + "\u0301\u0302\u0303\u0304\u0306\u0307"  # six marks stacked on one letter
# one letter passing for an ASCII one in a link or a number: x.com, 2024, paypal
LOOKALIKE = "https://\u0445.com/login [[Report 2\u041e24]] https://p\u0251ypal.com"
REAL = "cafe\u0301 Tie\u0302\u0301ng Vie\u0323\u0302t \u0939\u093f\u0928\u094d\u0926\u0940 \u05e9\u05c1\u05b8\u05dc\u05d5\u05b9\u05dd \u0645\u064f\u062d\u064e\u0645\u0651\u064e\u062f"


def dialog_text(app) -> str:
    """The approval dialog's whole text once drawn ("" before)."""
    views = app.screen.query(DiffView)
    return plain(views.first().renderable) if views and views.first().renderable else ""


async def test_the_dialog_shows_disguising_marks_as_escapes_and_real_text_as_it_is(tui_demo: Path, socket_path: str):
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    path = "Inbox/ledger\u20dd.md"  # an enclosing circle drawn around the name's last letter
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await mcp_started(app, socket_path)
        async with agent(socket_path, "scribe\u0338") as scribe:  # a slash through the name's last letter
            content = f"# Ledger\n{OVERLAY}\n{ZALGO}\n{REAL}\n\u0301 alone\n{LOOKALIKE}\n"
            call = asyncio.create_task(scribe.call_tool("write", {"path": path, "content": content}))
            await await_until(lambda: isinstance(app.screen, ApprovalScreen) and "paid" in dialog_text(app))
            text = dialog_text(app)
            assert "scribe\\u0338/1.0 wants to write Inbox/ledger\\u20dd.md" in text  # the title
            assert "creates Inbox/ledger\\u20dd.md" in text  # the paths it touches
            assert "approved: 1\\u0336 1\\u0336 1\\u0336 paid" in text
            assert "o\\u0301\\u0302\\u0303\\u0304\\u0306\\u0307" in text
            assert "\\u0301 alone" in text  # a mark with no letter under it
            assert REAL in text  # accents and points of real text, as they are
            assert "https://\\u0445.com/login [[Report 2\\u041e24]] https://p\\u0251ypal.com" in text
            for raw in ("\u0336", "\u0338", "\u20dd", "\u0307", "\u0445", "\u041e", "\u0251"):
                assert raw not in text, repr(raw)
            await armed(app.screen)
            await pilot.press("n")
            result = await asyncio.wait_for(call, TIMEOUT)
    assert result.is_error and not (tui_demo / path).exists()


async def test_the_dialog_shows_what_each_link_a_note_rename_rewrites_becomes(tui_demo: Path, socket_path: str):
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await mcp_started(app, socket_path)
        async with agent(socket_path, "mover") as mover:
            call = asyncio.create_task(
                mover.call_tool("rename", {"path": NOTE, "new_path": "Projects/Atlas Platform.md"})
            )
            await await_until(lambda: isinstance(app.screen, ApprovalScreen) and "it touches" in dialog_text(app))
            text = dialog_text(app)
            assert "links rewritten in Projects/Archive/Billing Rewrite 2024.md" in text
            assert "Superseded by [[Atlas Migration]]" in text and "Superseded by [[Atlas Platform]]" in text
            assert "links rewritten in Projects/Search Relevance v2.md" in text
            assert "[[Atlas Platform#Phases]]" in text
            await armed(app.screen)
            await pilot.press("y")
            result = await asyncio.wait_for(call, TIMEOUT)
    assert not result.is_error, result.content
    assert "[[Atlas Platform#Phases]]" in (tui_demo / "Projects" / "Search Relevance v2.md").read_text()


async def test_the_dialog_shows_what_each_link_a_folder_rename_rewrites_becomes(tui_demo: Path, socket_path: str):
    (tui_demo / "Inbox" / "linker.md").write_text("# Linker\nsee [[Projects/Archive/Legacy Deploy Script]]\n")
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await mcp_started(app, socket_path)
        async with agent(socket_path, "mover") as mover:
            call = asyncio.create_task(mover.call_tool("rename", {"path": "Projects/Archive", "new_path": "Old"}))
            await await_until(lambda: isinstance(app.screen, ApprovalScreen) and "it touches" in dialog_text(app))
            text = dialog_text(app)
            assert "links rewritten in Inbox/linker.md" in text
            assert "-see [[Projects/Archive/Legacy Deploy Script]]" in text.replace("- ", "-")
            assert "+see [[Old/Legacy Deploy Script]]" in text.replace("+ ", "+")
            await armed(app.screen)
            await pilot.press("n")
            result = await asyncio.wait_for(call, TIMEOUT)
    assert result.is_error and (tui_demo / "Projects" / "Archive").is_dir()


async def test_a_note_edited_while_the_dialog_shows_its_link_rewrite_is_a_conflict(tui_demo: Path, socket_path: str):
    """The person approves the link text the dialog showed: a linking note edited meanwhile would
    be rewritten into text they never saw, so nothing moves."""
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    linking = tui_demo / "Projects" / "Search Relevance v2.md"
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await mcp_started(app, socket_path)
        async with agent(socket_path, "mover") as mover:
            call = asyncio.create_task(
                mover.call_tool("rename", {"path": NOTE, "new_path": "Projects/Atlas Platform.md"})
            )
            await await_until(lambda: isinstance(app.screen, ApprovalScreen) and "it touches" in dialog_text(app))
            linking.write_text(linking.read_text() + "\nalso [[Atlas Migration]] here\n")
            await armed(app.screen)
            await pilot.press("y")
            result = await asyncio.wait_for(call, TIMEOUT)
    assert result.is_error and "revision conflict" in result.content[0].text, result.content
    assert (tui_demo / NOTE).exists() and not (tui_demo / "Projects" / "Atlas Platform.md").exists()


async def test_a_note_edited_after_the_dialogs_answer_keeps_its_links(
    tui_demo: Path, socket_path: str, monkeypatch: pytest.MonkeyPatch
):
    """Past the re-check after the person's key, a linking note edited before its rewrite (here as soon
    as the moved note is at its new path, as an editor saves) is left as it is: the rewrite writes only
    the bytes the dialog showed. The rename completes and its answer names the note."""
    linking = tui_demo / "Projects" / "Search Relevance v2.md"
    edited = linking.read_text() + "\nadded after the answer: [[Atlas Migration|wire the money]]\n"
    done: list[str] = []

    def edit_once_moved(stage: str) -> None:
        if stage == "moved" and not done:
            done.append(stage)
            spare = tui_demo.parent / "editor.tmp"
            spare.write_text(edited)
            os.replace(spare, linking)

    init = writes.Writer.__init__

    def editing(self, vault, **options):
        options.setdefault("fault_hook", edit_once_moved)
        init(self, vault, **options)

    monkeypatch.setattr(writes.Writer, "__init__", editing)
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await mcp_started(app, socket_path)
        async with agent(socket_path, "mover") as mover:
            call = asyncio.create_task(
                mover.call_tool("rename", {"path": NOTE, "new_path": "Projects/Atlas Platform.md"})
            )
            await await_until(lambda: isinstance(app.screen, ApprovalScreen) and "it touches" in dialog_text(app))
            assert "[[Atlas Platform#Phases]]" in dialog_text(app) and "wire the money" not in dialog_text(app)
            await armed(app.screen)
            await pilot.press("y")
            result = await asyncio.wait_for(call, TIMEOUT)
    said = result.content[0].text
    assert not result.is_error and done == ["moved"], said
    assert (
        "Projects/Search Relevance v2.md: changed after the person approved this rename: "
        "its links were left as they are" in said
    ), said
    assert linking.read_text() == edited  # neither the link shown nor the one added after is rewritten
    assert "[[Atlas Platform]]" in (tui_demo / "Projects" / "Archive" / "Billing Rewrite 2024.md").read_text()
    assert (tui_demo / "Projects" / "Atlas Platform.md").exists() and not (tui_demo / NOTE).exists()


def broken_links_to(root: Path, name: str) -> list[str]:
    """The notes with a link naming `name` that resolves to nothing (as the index reads the vault now)."""
    vault = open_loaded(root)
    try:
        return sorted(
            {
                e.path
                for e in vault.snapshot.entries
                if e.kind == "note"
                for link, target in resolve.outgoing(vault.snapshot, e.path)
                if target is None and name in link.target
            }
        )
    finally:
        vault.stop()


async def test_a_rename_without_link_rewriting_says_the_links_it_leaves_pointing_at_nothing(
    tui_demo: Path, socket_path: str
):
    """update_links=false rewrites no link: the dialog said "no link needs rewriting" of a rename that
    broke the links of every note linking to the note. It says how many, and the agent's answer
    names them."""
    linking = resolve.backlinks(open_loaded(tui_demo).snapshot, NOTE)
    assert len(linking) > 1 and broken_links_to(tui_demo, "Atlas Migration") == []
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await mcp_started(app, socket_path)
        async with agent(socket_path, "mover") as mover:
            call = asyncio.create_task(
                mover.call_tool(
                    "rename", {"path": NOTE, "new_path": "Projects/Atlas Platform.md", "update_links": False}
                )
            )
            await await_until(lambda: isinstance(app.screen, ApprovalScreen) and "it touches" in dialog_text(app))
            text = dialog_text(app)
            assert "no link needs rewriting" not in text, text
            said = stranded_words(len(linking))
            assert said in text, text
            await armed(app.screen)
            await pilot.press("y")
            result = await asyncio.wait_for(call, TIMEOUT)
    assert not result.is_error, result.content
    answer = result.content[0].text
    assert f"{stranded_words(len(linking))} (update_links is false)" in answer, answer
    assert broken_links_to(tui_demo, "Atlas Migration") == list(linking)  # what it said is what happened


async def test_a_permanent_delete_says_for_good_not_to_the_trash(tui_demo: Path, socket_path: str):
    """delete with permanent=true: the dialog said "the file goes to the trash" of a note then
    unlinked, with nothing in .trash/."""
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("deletes"))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await mcp_started(app, socket_path)
        async with agent(socket_path, "tidy") as tidy:
            call = asyncio.create_task(
                tidy.call_tool("delete", {"path": NOTE, "permanent": True, "confirm_path": NOTE})
            )
            await await_until(lambda: isinstance(app.screen, ApprovalScreen) and "it touches" in dialog_text(app))
            text = dialog_text(app)
            assert "goes to the trash" not in text and "deleted for good (not to the trash)" in text, text
            await armed(app.screen)
            await pilot.press("y")
            result = await asyncio.wait_for(call, TIMEOUT)
    assert not result.is_error, result.content
    assert not (tui_demo / NOTE).exists() and not (tui_demo / ".trash").exists()  # what it said is what happened
    [row] = journal_for(vault).changes(path=NOTE)
    assert row.summary == f"deleted {NOTE} for good (not to the trash)", row.summary


async def test_a_folder_rename_whose_links_all_still_resolve_says_only_that_none_is_rewritten(
    tui_demo: Path, socket_path: str
):
    """Notes link to People's notes by their names alone, which still resolve once the folder moves:
    the dialog said "no link needs rewriting" and listed those notes as ones it "may rewrite links
    in". It says one thing: no link is rewritten, and no note is listed as touched for its links."""
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await mcp_started(app, socket_path)
        async with agent(socket_path, "mover") as mover:
            call = asyncio.create_task(mover.call_tool("rename", {"path": "People", "new_path": "Crew"}))
            await await_until(lambda: isinstance(app.screen, ApprovalScreen) and "it touches" in dialog_text(app))
            text = dialog_text(app)
            assert "no link needs rewriting" in text, text
            assert "links in" not in text, text
            assert "moves People/Marta Lindqvist.md → Crew/Marta Lindqvist.md" in text, text
            await armed(app.screen)
            await pilot.press("y")
            result = await asyncio.wait_for(call, TIMEOUT)
    assert not result.is_error, result.content
    assert (tui_demo / "Crew" / "Marta Lindqvist.md").exists()


async def test_a_folder_rename_that_rewrites_links_counts_the_notes_and_lists_each(tui_demo: Path, socket_path: str):
    """A link spelled with the folder's path is rewritten: the dialog counts the notes whose links it
    rewrites and lists each as touched, in the same words."""
    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await mcp_started(app, socket_path)
        async with agent(socket_path, "mover") as mover:
            call = asyncio.create_task(
                mover.call_tool("rename", {"path": "Areas/Craft/Woodworking", "new_path": "Areas/Craft/Wood"})
            )
            await await_until(lambda: isinstance(app.screen, ApprovalScreen) and "it touches" in dialog_text(app))
            text = dialog_text(app)
            assert "no link needs rewriting" not in text and "may rewrite" not in text, text
            assert "the links in 1 note will be rewritten" in text, text
            assert text.count("rewrites links in ") == 1, text
            await armed(app.screen)
            await pilot.press("n")
            await asyncio.wait_for(call, TIMEOUT)


async def test_the_dialogs_footer_offers_its_own_keys_not_quit(tui_demo: Path, socket_path: str):
    """Under the dialog the main screen's footer said `q Quit`, where q does nothing."""
    from vaultwatch.tui.widgets.footer import KeyFooter  # noqa: PLC0415

    vault = open_loaded(tui_demo)
    approval.attach(vault, ApprovalGate("writes"))
    app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await mcp_started(app, socket_path)
        async with agent(socket_path, "scribe") as scribe:
            call = asyncio.create_task(scribe.call_tool("write", {"path": "Inbox/x.md", "content": "# X\n"}))
            await await_until(lambda: isinstance(app.screen, ApprovalScreen) and "Inbox/x.md" in dialog_text(app))
            await armed(app.screen)
            await pilot.pause()
            footer = app.screen.query_one(KeyFooter)
            line = footer.render_line(0).text
            assert "Approve" in line and "Decline" in line and "Quit" not in line, line
            assert footer.region.y == 39  # the bottom line, over the main screen's
            await pilot.press("n")
            await asyncio.wait_for(call, TIMEOUT)

"""The `c` dialog offers the vault's own statuses (core.query.statuschoices): on a vault shaped like
kepano's, whose notes hold `status: ["[[Published]]"]`, it offered OKF's draft / stable /
deprecated, and writing one gave the note a word no other note used, in another form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Input, OptionList
from tui_helpers import open_loaded

from vaultwatch.core.query.statuschoices import MAX_TYPED
from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.idle import settle
from vaultwatch.tui.screens.triage import StatusScreen

FILES = {
    "Notes/Evergreen.md": '---\nstatus:\n  - "[[Published]]"\n---\n# Evergreen\n',
    "Notes/Buy wisely.md": '---\nstatus: ["[[Published]]"]\n---\n# Buy wisely\n',
    "Notes/Minimal.md": '---\nstatus:\n  - "[[Active]]"\n---\n# Minimal\n',
    "Notes/Plain.md": "# Plain\n\nNo status yet.\n",
    # a template's status is no value of the vault's notes
    "Templates/Post.md": "---\nstatus: Placeholder\n---\n# {{title}}\n",
}


@pytest.fixture
def kepano_like(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "vault"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / ".obsidian").mkdir()
    (root / ".obsidian" / "templates.json").write_text(json.dumps({"folder": "Templates"}))
    config = tmp_path / "config"
    (config / "vaultwatch").mkdir(parents=True)
    (config / "vaultwatch" / "settings.toml").write_text('[triage]\ndeprecated_status = ["retired", "deprecated"]\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return root


async def finish(app, pilot) -> None:
    for _ in range(3):
        for worker in [w for w in app.workers if w.group == "write"]:
            await worker.wait()
        await pilot.pause()
    await settle(app)
    await pilot.pause()


async def open_dialog(app, pilot, path: str) -> StatusScreen:
    assert app.main.active_list.select_key(path), f"{path} is not listed"
    await pilot.pause()
    await pilot.press("c")
    await pilot.pause()
    assert isinstance(app.screen, StatusScreen)
    return app.screen


async def test_the_status_dialog_offers_the_vaults_own_words_and_writes_their_form(kepano_like: Path) -> None:
    app = make_app(open_loaded(kepano_like), config=fixed_config())
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        dialog = await open_dialog(app, pilot, "Notes/Plain.md")
        # the most used first, then the person's deprecated word (no note uses one of them)
        assert [(c.word, c.notes) for c in dialog.choices] == [("Published", 2), ("Active", 1), ("retired", 0)]
        labels = [str(o.prompt) for o in dialog.query_one(OptionList).options]
        assert labels == ["1  Published  2 notes", "2  Active  1 note", "3  retired  the Deprecated tab's rule"]
        await pilot.press("1")
        await finish(app, pilot)
        # written as the vault's notes hold it: a list of one link
        assert app.session.snapshot.get("Notes/Plain.md").frontmatter["status"] == ["[[Published]]"]

        dialog = await open_dialog(app, pilot, "Notes/Minimal.md")
        assert dialog.query_one(OptionList).highlighted == 1  # its own status, Active
        await pilot.press("3")
        await finish(app, pilot)
        # the rule's word is plain text, not a link to a note nobody wrote; the Deprecated tab lists it
        assert app.session.snapshot.get("Notes/Minimal.md").frontmatter["status"] == "retired"
        assert str(app.main.tabs.get_tab("deprecated").label) == "Depr 1"


def error(dialog: StatusScreen) -> str:
    return str(dialog.query_one("#status-error").render())


async def test_a_new_status_word_is_typed_checked_and_written(kepano_like: Path) -> None:
    """Tab from the vault's words to the field, type a word none of them is: refused, saying why,
    while empty, too long, or on more than one line (the field keeps it, to be mended); written as
    plain text once it is one short word. A typed word the vault has is written in the vault's form."""
    app = make_app(open_loaded(kepano_like), config=fixed_config())
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app)
        dialog = await open_dialog(app, pilot, "Notes/Plain.md")
        field = dialog.query_one("#status-typed", Input)
        await pilot.press("tab")
        assert field.has_focus
        await pilot.press("enter")
        assert app.screen is dialog and "type a status word: an empty status says nothing" in error(dialog)
        # the field is filled to the limit and the one character past it typed: each key a pilot
        # presses waits for the app to be idle, and the refusal is the same after one key as after the whole word
        field.value = "x" * MAX_TYPED
        await pilot.press("x", "enter")
        assert app.screen is dialog, "a word too long was taken"
        assert f"at most {MAX_TYPED} characters; this one has {MAX_TYPED + 1}" in error(dialog)
        assert field.value == "x" * (MAX_TYPED + 1)  # kept, to be mended
        field.value = "in review\nstatus: published"  # a paste of two lines
        await pilot.press("enter")
        assert app.screen is dialog and "a status is one line: no line breaks" in error(dialog)
        field.value = ""
        await pilot.press(*"in review 2", "enter")  # the digit is typed, not a pick of the 2nd word
        await finish(app, pilot)
        assert not isinstance(app.screen, StatusScreen)
        assert app.session.snapshot.get("Notes/Plain.md").frontmatter["status"] == "in review 2"

        dialog = await open_dialog(app, pilot, "Notes/Plain.md")
        await pilot.press("tab", *"published", "enter")  # the vault's word: its form, a list of links
        await finish(app, pilot)
        assert app.session.snapshot.get("Notes/Plain.md").frontmatter["status"] == ["[[Published]]"]

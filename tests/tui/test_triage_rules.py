"""The Deprecated and Stale tabs on a vault that is no OKF bundle (tests/triage_vault.py): they
list by the person's rules (the defaults, or `[triage]` in the settings file) and say in one line
which rule applies and where it is set."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tui_helpers import open_loaded, paste

from tests.triage_vault import BASE_MTIME, DEPRECATED, STALE, make_triage_vault
from vaultwatch.core.edit.writes import Writer
from vaultwatch.tui.app import make_app
from vaultwatch.tui.config import fixed_config
from vaultwatch.tui.idle import settle
from vaultwatch.tui.widgets.filterbar import FilterBar
from vaultwatch.tui.widgets.rowlist import Column


@pytest.fixture
def triage_vault(tmp_path: Path) -> Path:
    return make_triage_vault(tmp_path / "vault")


def app_on(root: Path, **changes):
    return make_app(open_loaded(root), config=fixed_config(**changes))


async def open_tab(app, pilot, key: str, pane_id: str, want: int):
    await settle(app)
    await pilot.press(key)
    await settle(app)
    for _ in range(50):  # the tab's list may land a frame after settle
        if app.main.active_pane.id == pane_id and len(app.main.active_list.rows) == want:
            break
        await pilot.pause(0.1)
    return app.main.active_list


async def test_deprecated_and_stale_by_the_default_rules(triage_vault: Path) -> None:
    app = app_on(triage_vault)
    async with app.run_test(size=(160, 40)) as pilot:
        lst = await open_tab(app, pilot, "2", "deprecated", len(DEPRECATED))
        assert [e.path for e in lst.rows] == DEPRECATED
        assert str(app.main.tabs.get_tab("deprecated").label) == f"Deprecated {len(DEPRECATED)}"
        line = str(app.query_one("#deprecated-info").render())
        assert line.startswith("Rule: status is deprecated / archived / obsolete / superseded or tagged #deprecated")
        assert "set in the defaults [triage]" in line
        lst = await open_tab(app, pilot, "3", "stale", len(STALE))
        # most overdue first: expires 2026-06-30, then review_by 2026-11-01
        assert [e.path for e in lst.rows] == ["Reference/Vendor Terms.md", "Projects/Roadmap.md"]
        assert str(app.main.tabs.get_tab("stale").label) == f"Stale {len(STALE)}"
        line = str(app.query_one("#stale-info").render())
        assert "Rule: stale_after / review_by / expires reached" in line


async def test_settings_change_the_rules_and_the_line_says_so(
    triage_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config"
    (config / "vaultwatch").mkdir(parents=True)
    settings = config / "vaultwatch" / "settings.toml"
    settings.write_text(
        '[triage]\ndeprecated_status = ["archived"]\n'
        f'[vaults."{triage_vault}".triage]\ndeprecated_tags = []\ndeprecated_flags = []\nstale_keys = ["expires"]\n'
    )
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    app = app_on(triage_vault)
    async with app.run_test(size=(160, 40)) as pilot:
        lst = await open_tab(app, pilot, "2", "deprecated", 1)
        assert [e.path for e in lst.rows] == ["Projects/Old Website.md"]
        line = str(app.query_one("#deprecated-info").render())
        assert line.startswith("Rule: status is archived · set in ") and str(settings) in line
        lst = await open_tab(app, pilot, "3", "stale", 1)
        assert [e.path for e in lst.rows] == ["Reference/Vendor Terms.md"]
        assert "Rule: expires reached" in str(app.query_one("#stale-info").render())


AGENT_NOTE = "Notes/Agent Draft.md"


def agent_changed(root: Path):
    """The vault, loaded, after an agent rewrote AGENT_NOTE (journaled, not reviewed)."""
    vault = open_loaded(root)
    Writer(vault).write(AGENT_NOTE, "# Agent Draft\n\nThe agent rewrote this.\n", overwrite=True, actor="agent:bot")
    return vault


async def wait_until(pilot, condition, tries: int = 100) -> None:
    for _ in range(tries):
        if condition():
            return
        await pilot.pause(0.05)
    assert condition()


async def test_changes_marked_reviewed_from_a_shell_move_the_trust_tab_at_once(
    triage_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`vaultwatch changes --mark-reviewed all` in another shell adds no journal row, yet the
    running TUI's Trust tab moves the note to the reviewed tier without a key pressed."""
    import asyncio
    import sys

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    vault = agent_changed(triage_vault)
    app = make_app(vault, config=fixed_config(user="tester", watch=True))  # a watching TUI follows the journal
    repo = Path(__file__).resolve().parents[2]
    async with app.run_test(size=(160, 40)) as pilot:
        await open_tab(app, pilot, "4", "trust", 1)
        assert str(app.main.tabs.get_tab("trust").label) == "Trust ✗1 ✓0"
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "vaultwatch.tui.commands.cli",
            "changes",
            str(triage_vault),
            "--mark-reviewed",
            "all",
            cwd=repo,
            env={**os.environ, "PYTHONPATH": str(repo)},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err
        await wait_until(pilot, lambda: str(app.main.tabs.get_tab("trust").label) == "Trust ✗0 ✓1", tries=200)
        await wait_until(pilot, lambda: not app.main.active_list.rows)


@pytest.mark.parametrize("write_verified", [False, True])
async def test_v_on_an_agent_changed_note_marks_it_reviewed(
    triage_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_verified: bool
) -> None:
    """The Trust tab lists the note an agent changed and nobody reviewed; `v` and `y` move it to
    the reviewed tier at once (the tab's counts, the tier bar and the list's Trust column too). The
    note is written to only when the settings say write_verified."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    if write_verified:
        config = tmp_path / "config"
        (config / "vaultwatch").mkdir(parents=True)
        (config / "vaultwatch" / "settings.toml").write_text("[triage]\nwrite_verified = true\n")
        monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    from vaultwatch.tui.screens.triage import ConfirmScreen

    vault = agent_changed(triage_vault)
    written = (triage_vault / AGENT_NOTE).read_bytes()
    app = make_app(vault, config=fixed_config(user="tester"))
    async with app.run_test(size=(160, 40)) as pilot:
        lst = await open_tab(app, pilot, "4", "trust", 1)
        assert [e.path for e in lst.rows] == [AGENT_NOTE]
        assert str(app.main.tabs.get_tab("trust").label) == "Trust ✗1 ✓0"
        bar = str(app.query_one("#tier-bar").render())
        assert "unreviewed 1" in bar and "reviewed 0" in bar
        assert "nobody has reviewed it since" in bar
        assert lst.cells(lst.rows[0], [Column("trust", "Trust", 10)])[0][0] == "unreviewed"
        lst.focus()
        await pilot.press("v")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_until(pilot, lambda: str(app.main.tabs.get_tab("trust").label) == "Trust ✗0 ✓1")
        await wait_until(pilot, lambda: not app.main.active_list.rows)
        bar = str(app.query_one("#tier-bar").render())
        assert "unreviewed 0" in bar and "reviewed 1" in bar
        await pilot.press("]")  # the reviewed tier
        await wait_until(pilot, lambda: [e.path for e in app.main.active_list.rows] == [AGENT_NOTE])
        reviewed = app.main.active_list
        assert reviewed.cells(reviewed.rows[0], [Column("trust", "Trust", 10)])[0][0] == "reviewed"
        assert "the person reviewed" in str(app.query_one("#tier-bar").render())
    after = (triage_vault / AGENT_NOTE).read_bytes()
    if write_verified:
        assert b"verified:" in after and b"human:tester" in after
    else:
        assert after == written


def test_snapshot_deprecated_tab_on_a_vault_without_okf(snap_compare, triage_vault: Path) -> None:
    async def run_before(pilot) -> None:
        await open_tab(pilot.app, pilot, "2", "deprecated", len(DEPRECATED))
        await settle(pilot.app)
        await pilot.pause()

    assert snap_compare(app_on(triage_vault), terminal_size=(120, 24), run_before=run_before)


def test_snapshot_stale_tab_on_a_vault_without_okf(snap_compare, triage_vault: Path) -> None:
    async def run_before(pilot) -> None:
        await open_tab(pilot.app, pilot, "3", "stale", len(STALE))
        await settle(pilot.app)
        await pilot.pause()

    assert snap_compare(app_on(triage_vault), terminal_size=(120, 24), run_before=run_before)


REVIEWED_NOTE = "Projects/Launch.md"


def reviewed_and_not(root: Path):
    """The vault after an agent rewrote AGENT_NOTE and REVIEWED_NOTE and the person marked the
    second reviewed through the call `v` makes (nothing written into the note), reopened with the
    files' times fixed again so the Modified column draws the same every run."""
    from vaultwatch.tui.flows.actions import Actions

    vault = agent_changed(root)
    Writer(vault).update_frontmatter(REVIEWED_NOTE, set={"owner": "bot"}, actor="agent:bot")
    outcome = Actions(vault, user="tester").mark_reviewed([vault.entry(REVIEWED_NOTE)], write=False)
    assert outcome.done and not outcome.errors
    for rel in (AGENT_NOTE, REVIEWED_NOTE):
        os.utime(root / rel, (BASE_MTIME, BASE_MTIME))
    return open_loaded(root)


def test_snapshot_trust_column_off_a_bundle(snap_compare, triage_vault: Path, tmp_path: Path, monkeypatch) -> None:
    """Off a bundle the list's Trust column says which notes an agent changed that wait for review
    and which the person reviewed, and the tab counts both tiers."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    vault = reviewed_and_not(triage_vault)

    async def run_before(pilot) -> None:
        app = pilot.app
        await settle(app)
        await wait_until(pilot, lambda: str(app.main.tabs.get_tab("trust").label) == "Trust ✗1 ✓1")
        await settle(app)
        await pilot.pause()

    app = make_app(vault, config=fixed_config(user="tester"))
    assert snap_compare(app, terminal_size=(160, 24), run_before=run_before)


def test_snapshot_trust_tab_reviewed_tier_off_a_bundle(
    snap_compare, triage_vault: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    vault = reviewed_and_not(triage_vault)

    async def run_before(pilot) -> None:
        app = pilot.app
        await open_tab(app, pilot, "4", "trust", 1)
        await pilot.press("]")
        await wait_until(pilot, lambda: [e.path for e in app.main.active_list.rows] == [REVIEWED_NOTE])
        await settle(app)
        await pilot.pause()

    app = make_app(vault, config=fixed_config(user="tester"))
    assert snap_compare(app, terminal_size=(120, 24), run_before=run_before)


def tab_numbers(app) -> dict[str, int]:
    """The counts the tab labels show ("Deprecated 4", "Trust ✗1 ✓1")."""
    label = {pane: str(app.main.tabs.get_tab(pane).label) for pane in ("deprecated", "stale", "trust")}
    unverified, reviewed = label["trust"].removeprefix("Trust ✗").split(" ✓")
    trust = {"unverified": int(unverified), "human_reviewed": int(reviewed)}
    return {
        "deprecated": int(label["deprecated"].split()[-1]),
        "stale": int(label["stale"].split()[-1]),
        **trust,
    }


async def test_the_agents_overview_counts_are_the_tabs_counts(
    triage_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent on the app's own socket writes two notes; the person marks one reviewed with `v`;
    at each step the triage tool's overview counts are the numbers on the TUI's tabs."""
    import tempfile

    from tui_agents import agent, wait_for

    from vaultwatch.tui.screens.triage import ConfirmScreen

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    vault = open_loaded(triage_vault)
    with tempfile.TemporaryDirectory(prefix="vw-") as folder:
        socket_path = os.path.join(folder, "tui.sock")
        app = make_app(vault, config=fixed_config(mcp=True, socket_path=socket_path, user="tester"))
        async with app.run_test(size=(160, 40)) as pilot:
            await settle(app)
            await wait_for(lambda: os.path.exists(socket_path) and socket_path in app.status.parts["mcp"].plain, 10)
            async with agent(socket_path, "bot") as bot:

                async def overview() -> dict[str, int]:
                    counts = (await bot.call_tool("triage", {})).structured_content["counts"]
                    return {k: counts[k] for k in ("deprecated", "stale", "unverified", "human_reviewed")}

                await wait_until(pilot, lambda: str(app.main.tabs.get_tab("trust").label) == "Trust ✗0 ✓0")
                assert (
                    await overview()
                    == tab_numbers(app)
                    == {
                        "deprecated": len(DEPRECATED),
                        "stale": len(STALE),
                        "unverified": 0,
                        "human_reviewed": 0,
                    }
                )
                for path, content in ((AGENT_NOTE, "# Agent Draft\n\nRewritten.\n"), (REVIEWED_NOTE, "# Launch\n")):
                    done = await bot.call_tool("write", {"path": path, "content": content, "overwrite": True})
                    assert not done.is_error, done.content[0].text
                await wait_until(pilot, lambda: str(app.main.tabs.get_tab("trust").label) == "Trust ✗2 ✓0")
                assert (
                    await overview()
                    == tab_numbers(app)
                    == {
                        "deprecated": len(DEPRECATED),
                        "stale": len(STALE),
                        "unverified": 2,
                        "human_reviewed": 0,
                    }
                )
                lst = await open_tab(app, pilot, "4", "trust", 2)
                lst.focus()
                await pilot.press("v")
                await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
                await pilot.press("y")
                await wait_until(pilot, lambda: str(app.main.tabs.get_tab("trust").label) == "Trust ✗1 ✓1")
                assert (
                    await overview()
                    == tab_numbers(app)
                    == {
                        "deprecated": len(DEPRECATED),
                        "stale": len(STALE),
                        "unverified": 1,
                        "human_reviewed": 1,
                    }
                )


async def test_the_filter_bars_trust_key_off_a_bundle_reads_the_trust_tabs_tiers(
    triage_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Off an OKF bundle `trust:` in the filter bar selects by the tiers the Trust tab shows (the
    journal's), not by a `trust_tier` frontmatter key no note has; `-trust:` leaves them out."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    app = make_app(reviewed_and_not(triage_vault), config=fixed_config())
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app)
        every = [e.path for e in app.main.active_list.rows]
        assert AGENT_NOTE in every and REVIEWED_NOTE in every
        await pilot.press("slash")
        for text, want in [
            ("trust:unverified", [AGENT_NOTE]),
            ("trust:human", [REVIEWED_NOTE]),
            ("-trust:unverified", [p for p in every if p != AGENT_NOTE]),
            ("-trust:unverified -trust:human-reviewed", [p for p in every if p not in (AGENT_NOTE, REVIEWED_NOTE)]),
            ("trust:machine-confirmed", []),
        ]:
            await pilot.press("ctrl+u")
            await paste(app, pilot, text)
            await settle(app)
            await wait_until(pilot, lambda want=want: [e.path for e in app.main.active_list.rows] == want)
            assert [e.path for e in app.main.active_list.rows] == want, text


async def test_the_filter_bars_status_deprecated_and_stale_list_what_the_tabs_list(triage_vault: Path) -> None:
    """Off an OKF bundle the bar's advertised `status:deprecated` and `stale:true` select the notes
    the Deprecated and Stale tabs list (the person's rules), not a frontmatter equality no note
    meets; excluded, they leave those notes out."""
    app = app_on(triage_vault)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app)
        every = [e.path for e in app.main.active_list.rows]
        await pilot.press("slash")
        for text, want in [
            ("status:deprecated", DEPRECATED),
            ("stale:true", STALE),
            ("-status:deprecated", [p for p in every if p not in DEPRECATED]),
            ("stale:false path:Reference", ["Reference/Style.md", "Reference/Superseded Guide.md"]),
        ]:
            await pilot.press("ctrl+u")
            await paste(app, pilot, text)
            await settle(app)
            await wait_until(pilot, lambda want=want: [e.path for e in app.main.active_list.rows] == want)
            assert [e.path for e in app.main.active_list.rows] == want, text
            assert not app.query_one(FilterBar).hints, text  # nothing to explain: the tab's own words


async def test_the_status_column_shows_a_status_that_is_a_list_of_links_by_its_link_text(tmp_path: Path) -> None:
    """kepano's vault writes `status: ["[[Active]]"]`: the Status column shows `Active`, a list's
    links each by its text, and a linked `[[Archived]]` makes the note deprecated (the tab lists it)."""
    root = tmp_path / "vault"
    notes = {
        "Active.md": '---\nstatus: ["[[Active]]"]\n---\n# Active\n',
        "Old.md": '---\nstatus:\n  - "[[Archived|old]]"\n  - "[[Evergreen]]"\n---\n# Old\n',
        "Plain.md": "---\nstatus: draft\n---\n# Plain\n",
    }
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    app = app_on(root)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app)
        lst = app.main.active_list
        status = [c for c in lst.all_columns() if c.key == "status"]
        assert status, "the Status column shows"
        shown = {row.path: lst.cells(row, status)[0][0] for row in lst.rows}
        assert shown == {"Active.md": "Active", "Old.md": "Archived, Evergreen", "Plain.md": "draft"}
        lst = await open_tab(app, pilot, "2", "deprecated", 1)
        assert [e.path for e in lst.rows] == ["Old.md"]


async def test_the_filter_bar_matches_a_property_as_the_lists_show_it(tmp_path: Path) -> None:
    """The Status column shows kepano's `status: ["[[Published]]"]` as `Published`: the bar's
    `status:Published` finds it, as does `categories:Places` for `["[[Places]]"]`, in any case."""
    root = tmp_path / "vault"
    notes = {
        "Clip.md": '---\nstatus: ["[[Published]]"]\ncategories: ["[[Places]]"]\n---\n# Clip\n',
        "Other.md": '---\nstatus: "[[Published|out]]"\n---\n# Other\n',
        "Plain.md": "---\nstatus: draft\n---\n# Plain\n",
    }
    root.mkdir()
    for rel, text in notes.items():
        (root / rel).write_text(text, encoding="utf-8")
    app = app_on(root)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app)
        await pilot.press("slash")
        for text, want in [
            ("status:Published", ["Clip.md", "Other.md"]),
            ("status:[[Published]]", ["Clip.md"]),  # as written, still
            ("categories:Places", ["Clip.md"]),
            ("status:Draft", ["Plain.md"]),
            ("-status:published", ["Plain.md"]),
        ]:
            await pilot.press("ctrl+u")
            await paste(app, pilot, text)
            await settle(app)
            await wait_until(pilot, lambda want=want: [e.path for e in app.main.active_list.rows] == want)
            assert [e.path for e in app.main.active_list.rows] == want, text
            assert not app.query_one(FilterBar).hints, text

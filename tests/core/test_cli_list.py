"""`vaultwatch list` and `vaultwatch stats` as real subprocesses: output shapes, options, errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

AS_OF = ["--as-of", "2026-11-29"]
ROW_KEYS = {"path", "kind", "title", "status", "stale", "trust_tier", "frontmatter", "size_bytes", "modified_at"}


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TEXTUAL_THEME")}
    return subprocess.run(
        [sys.executable, "-m", "vaultwatch.tui.commands.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=env,
    )


def json_lines(proc: subprocess.CompletedProcess[str]) -> list[dict]:
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def test_list_json_lines_on_the_default_demo_vault(tmp_path: Path) -> None:
    rows = json_lines(run("list", "--json", *AS_OF, cwd=tmp_path))
    assert len(rows) == 43
    assert [r["path"] for r in rows] == sorted(r["path"] for r in rows)
    for row in rows:
        assert ROW_KEYS <= set(row), row["path"]
        assert row["kind"] == "note"
        assert isinstance(row["frontmatter"], dict)
        assert row["status"] in ("draft", "stable", "deprecated")
        assert isinstance(row["stale"], bool)
        assert row["trust_tier"] in ("unverified", "machine-confirmed", "human-reviewed")
        assert isinstance(row["size_bytes"], int) and row["size_bytes"] > 0
        assert row["modified_at"].endswith("Z")
    by_path = {r["path"]: r for r in rows}
    onboarding = by_path["Projects/Onboarding Revamp.md"]
    assert (onboarding["status"], onboarding["stale"], onboarding["trust_tier"]) == (
        "stable",
        True,
        "machine-confirmed",
    )
    assert onboarding["frontmatter"]["stale_after"] == "2026-11-29"  # JSON-safe: a date is ISO text
    assert by_path["Areas/Craft/Woodworking/Sharpening Chisels.md"]["frontmatter"]["published"] is True
    assert by_path["Inbox/Broken frontmatter.md"]["frontmatter_error"]


def test_list_filters_and_as_of(demo_vault: Path) -> None:
    rows = json_lines(
        run("list", str(demo_vault), "--json", *AS_OF, "--filter", "stale=true", "--filter", "status=deprecated")
    )
    assert [r["path"] for r in rows] == [
        "Projects/Archive/Billing Rewrite 2024.md",
        "Projects/Archive/Legacy Deploy Script.md",
        "Projects/Archive/Retired/Q3 2024 Roadmap.md",
    ]
    # a day earlier, the note whose stale_after is 2026-11-29 is not yet stale
    before = json_lines(run("list", str(demo_vault), "--json", "--as-of", "2026-11-28", "--filter", "stale=yes"))
    assert "Projects/Onboarding Revamp.md" not in [r["path"] for r in before]
    assert len(before) == 7


def test_list_folder_pattern_attachments_and_folders(demo_vault: Path) -> None:
    rows = json_lines(run("list", str(demo_vault), "--json", *AS_OF, "--folder", "Resources", "--attachments"))
    att = [r for r in rows if r["kind"] == "attachment"]
    assert [(r["path"], r["mime_type"]) for r in att] == [
        ("Resources/attachments/architecture-diagram.png", "image/png"),
        ("Resources/attachments/reading-list.pdf", "application/pdf"),
    ]
    assert all(r["size_bytes"] > 0 and r["modified_at"] for r in att)

    rows = json_lines(
        run("list", str(demo_vault), "--json", *AS_OF, "--folder", "Projects", "--no-recursive", "--folders")
    )
    assert [(r["path"], r["kind"]) for r in rows] == [
        ("Projects/Archive", "folder"),
        ("Projects/Atlas Migration.md", "note"),
        ("Projects/Bold Ideas Spec.md", "note"),
        ("Projects/Onboarding Revamp.md", "note"),
        ("Projects/Search Relevance v2.md", "note"),
    ]

    rows = json_lines(run("list", str(demo_vault), "--json", *AS_OF, "--folder", ""))
    assert [r["path"] for r in rows] == ["Café notes.md", "Getting Started.md", "index.md"]

    rows = json_lines(run("list", str(demo_vault), "--json", *AS_OF, "--pattern", "**/*Cheatsheet.md"))
    assert [r["path"] for r in rows] == ["Resources/Tools/Git Cheatsheet.md", "Resources/Tools/tmux Cheatsheet.md"]


def test_list_sort_limit_and_cursor(demo_vault: Path) -> None:
    first = run("list", str(demo_vault), "--json", *AS_OF, "--sort", "title", "--limit", "5")
    rows = json_lines(first)
    assert len(rows) == 5
    titles = [r["title"].casefold() for r in rows]
    assert titles == sorted(titles)
    assert "next cursor: " in first.stderr
    cursor = first.stderr.split("next cursor: ", 1)[1].split()[0]
    second = json_lines(
        run("list", str(demo_vault), "--json", *AS_OF, "--sort", "title", "--limit", "5", "--cursor", cursor)
    )
    assert len(second) == 5 and not {r["path"] for r in second} & {r["path"] for r in rows}
    assert second[0]["title"].casefold() >= titles[-1]
    wrong = run("list", str(demo_vault), "--json", "--sort", "path", "--cursor", cursor)
    assert wrong.returncode != 0 and "different query" in wrong.stderr


def test_list_table_output(demo_vault: Path) -> None:
    proc = run("list", str(demo_vault), *AS_OF, "--folder", "People")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["PATH", "KIND", "STATUS", "TRUST", "MODIFIED"]  # nobody there is overdue
    assert len(lines) == 4 and lines[1].startswith("People/Ben Okafor.md")
    assert "3 of 3 entries" in proc.stderr
    projects = run("list", str(demo_vault), *AS_OF, "--folder", "Projects", "--no-recursive").stdout.splitlines()
    assert projects[0].split() == ["PATH", "KIND", "STATUS", "STALE", "TRUST", "MODIFIED"]
    onboarding = next(line for line in projects if line.startswith("Projects/Onboarding Revamp.md"))
    assert onboarding.split()[3:6] == ["stable", "0d", "machine-confirmed"]  # the TUI's days overdue


def test_list_okf_off(demo_vault: Path) -> None:
    rows = json_lines(run("list", str(demo_vault), "--json", *AS_OF, "--okf", "off", "--filter", "status=stable"))
    assert len(rows) == 19  # only the notes that say so: no implicit stable
    # every OKF field is null off a bundle, as list_documents says (status too, not the raw value)
    assert all(r["status"] is None and r["stale"] is None and r["trust_tier"] is None for r in rows)


def test_list_attachment_exts_option(demo_vault: Path) -> None:
    rows = json_lines(
        run(
            "list",
            str(demo_vault),
            "--json",
            "--attachments",
            "--attachment-exts",
            "PDF",
            "--folder",
            "Resources/attachments",
        )
    )
    assert [r["path"] for r in rows] == ["Resources/attachments/reading-list.pdf"]


@pytest.mark.parametrize(
    ("args", "phrase"),
    [
        (["--folder", "/etc"], "absolute path blocked"),
        (["--folder", "../x"], "path traversal blocked"),
        (["--folder", ".obsidian"], "hidden path blocked"),
        (["--filter", "stale=maybe"], "not a boolean"),
        (["--filter", "novalue"], "KEY=VALUE"),
        (["--as-of", "29/11/2026"], "YYYY-MM-DD"),
        (["--limit", "0"], "limit"),
        (["--sort", "bogus"], "invalid choice"),
        (["--cursor", "garbage"], "cursor"),
        # a slip that lists nothing says what it is, not "0 of 0 entries"
        (["--folder", "Nope"], "no folder 'Nope' in this vault"),
        (["--folder", "projects"], "did you mean 'Projects'?"),
        (["--pattern", "["], "that no ']' closes"),
        (["--pattern", "Projects/[A-C*.md"], "that no ']' closes"),
    ],
)
def test_list_errors_go_to_stderr_with_nonzero_exit(demo_vault: Path, args: list[str], phrase: str) -> None:
    proc = run("list", str(demo_vault), "--json", *args)
    assert proc.returncode != 0
    assert phrase in proc.stderr
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr


def test_missing_vault_is_an_error(tmp_path: Path) -> None:
    proc = run("list", str(tmp_path / "nope"))
    assert proc.returncode != 0 and "not a directory" in proc.stderr and "Traceback" not in proc.stderr


def test_stats_json_and_text(demo_vault: Path) -> None:
    proc = run("stats", str(demo_vault), *AS_OF, "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert (data["notes"], data["attachments"], data["stale"]) == (43, 2, 8)
    assert data["folders"] == 19
    assert data["status"] == {"stable": 27, "draft": 8, "deprecated": 7}  # OKF's index.md is not counted
    assert data["trust_tier"] == {"unverified": 21, "machine-confirmed": 10, "human-reviewed": 11}  # index.md reserved
    assert (data["frontmatter_errors"], data["skipped"], data["okf_bundle"]) == (1, 0, True)

    text = run("stats", str(demo_vault), *AS_OF)
    assert text.returncode == 0, text.stderr
    out = "\n".join(" ".join(line.split()) for line in text.stdout.splitlines())  # column widths may change
    for needle in (
        "okf bundle yes",
        "notes 43",
        "attachments 2",
        "stale 8",
        "folders 19",
        "deprecated 7",
        "human-reviewed 11",
        "frontmatter errors 1",
        "skipped 0",
    ):
        assert needle in out, needle


def test_stats_of_a_vault_that_is_no_okf_bundle_counts_no_okf_fields(make_vault) -> None:
    """Rows of a plain vault carry status, stale and trust_tier null; stats agrees (it counted the
    raw `status:` values and an implicit 'stable' while list and triage said there were none)."""
    root = make_vault({"a.md": "---\nstatus: deprecated\nstale_after: 2020-01-01\n---\n", "b.md": "plain\n"})
    data = json.loads(run("stats", str(root), "--json").stdout)
    assert (data["okf_bundle"], data["status"], data["stale"]) == (False, {}, 0)
    assert set(data["trust_tier"].values()) == {0}
    keys = [line.split("  ")[0] for line in run("stats", str(root)).stdout.splitlines()]
    assert "okf fields" in keys and not {"status", "stale", "trust tier"} & set(keys)


def test_stats_off_a_bundle_counts_by_the_persons_triage_rules(make_vault) -> None:
    """Off a bundle, stats says what the TUI's Deprecated and Stale tabs hold, and by which rule
    (the stale date is one any clock has passed: the CLI runs on the real clock)."""
    root = make_vault(
        {
            "a.md": "---\nstatus: archived\nreview_by: 2020-01-01\n---\n",
            "b.md": "plain #deprecated\n",
            "c.md": "---\nstatus: {{status}}\nreview_by: {{date}}\n---\n",
        }
    )
    data = json.loads(run("stats", str(root), "--json").stdout)
    assert (data["triage"]["deprecated"], data["triage"]["stale"]) == (2, 1)
    assert data["triage"]["source"] == "the defaults"
    out = run("stats", str(root)).stdout
    assert "triage deprecated   2  (Rule: status is deprecated / archived" in out
    assert "triage stale        1  (Rule: stale_after / review_by / expires reached" in out


def test_stats_off_a_bundle_counts_the_trust_tabs_tiers_from_the_journal(
    make_vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Off a bundle, stats counts what the Trust tab lists: notes an agent changed that nobody
    reviewed, then, once the person marks the change reviewed, the reviewed tier."""
    from vaultwatch.core.edit.writes import Writer
    from vaultwatch.core.vault import Vault

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = make_vault({"a.md": "plain\n", "b.md": "plain\n"})
    vault = Vault(root)
    vault.load()
    Writer(vault).write("a.md", "rewritten\n", overwrite=True, actor="agent:bot")
    vault.stop()
    triage = json.loads(run("stats", str(root), "--json").stdout)["triage"]
    assert (triage["unverified"], triage["human-reviewed"]) == (1, 0)
    assert "nobody has reviewed it since" in triage["unverified_rule"]
    assert run("changes", str(root), "--mark-reviewed", "all").returncode == 0
    out = run("stats", str(root)).stdout
    assert "triage unreviewed   0  (Rule: an agent changed it" in out  # as the Trust tab's tier bar
    assert "triage reviewed     1  (Rule: the person reviewed" in out


def test_stats_on_a_bundle_counts_an_attested_note_an_agent_changed_as_unverified(
    make_vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a bundle, stats counts the tiers as the Trust tab lists them: a note a person attested that
    an agent changed since is unverified until the person reviews the change."""
    from vaultwatch.core.edit.writes import Writer
    from vaultwatch.core.vault import Vault

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    attested = "---\nverified:\n  - by: human:ana\n---\n# A\n"
    root = make_vault({"a.md": attested, "b.md": "plain\n"}, okf=True)
    assert json.loads(run("stats", str(root), "--json").stdout)["trust_tier"]["human-reviewed"] == 1
    vault = Vault(root)
    vault.load()
    Writer(vault).write("a.md", attested + "An agent's paragraph.\n", overwrite=True, actor="agent:bot")
    vault.stop()
    data = json.loads(run("stats", str(root), "--json").stdout)
    assert data["trust_tier"] == {"unverified": 2, "machine-confirmed": 0, "human-reviewed": 0}
    assert run("changes", str(root), "--mark-reviewed", "all").returncode == 0
    out = run("stats", str(root)).stdout
    assert "trust tier          unverified 1, machine-confirmed 0, human-reviewed 1" in out


def test_stats_counts_skipped_files(make_vault) -> None:
    root = make_vault({"a.md": "# a\n"})
    os.symlink("missing.md", root / "broken.md")
    os.mkfifo(root / "pipe.md")
    data = json.loads(run("stats", str(root), "--json").stdout)
    assert data["notes"] == 1 and data["skipped"] == 2 and data["okf_bundle"] is False


def test_links_broken_lists_every_problem_by_kind_at_its_line(tmp_path: Path) -> None:
    """One row per problem, grouped by kind, with its line; templates folders left out; links
    to notes not yet written last, and not counted as broken (before: one row per note with
    unresolved links, templates included)."""
    from tests.template_vault import EXPECTED, make_template_vault

    vault = make_template_vault(tmp_path / "v")
    rows = json_lines(run("links", str(vault), "--broken", "--json"))
    assert [(r["kind"], r["path"], r["line"]) for r in rows] == [
        (kind, path, line) for kind, where in EXPECTED.items() for path, line in where
    ]
    assert rows[0]["link"] == {"target": "Packing List", "kind": "wiki", "heading": "Shoes", "alias": None}
    text = run("links", str(vault), "--broken")
    lines = text.stdout.splitlines()
    assert text.returncode == 0 and lines[:2] == [
        "missing heading (1)",
        "  Trips/Kyoto 2023.md:8  [[Packing List#Shoes]]: Trips/Packing List.md has no such heading",
    ]
    assert lines[-4:] == [
        "not yet written (3)",
        "  Trips/Kyoto 2023.md:7  [[Japan]]: no note yet",
        "  Trips/Kyoto 2023.md:11  [[Osaka]]: no note yet",
        "  Trips/Kyoto 2023.md:11  [[Japan]]: no note yet",
    ]
    assert "Templates/" not in text.stdout
    assert "4 problems in 2 files; 3 links to notes not yet written" in text.stderr
    assert run("links").returncode == 2  # neither a note nor --broken


def test_links_of_a_note_say_not_yet_written_as_links_broken_does(tmp_path: Path) -> None:
    """A link to a note not yet written is no breakage in `links NOTE` either (before: "BROKEN",
    and counted as broken); a missing heading, block or embedded file is."""
    from tests.template_vault import make_template_vault

    vault = make_template_vault(tmp_path / "v")
    text = run("links", str(vault), "Trips/Kyoto 2023.md")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert [line for line in lines if "->" in line] == [
        "  wiki     Trips  ->  Trips.md",
        "  wiki     Japan  ->  not yet written",
        "  wiki     Packing List#Shoes  ->  Trips/Packing List.md  BROKEN: missing heading",
        "  embed    kyoto-temple.jpg  ->  BROKEN: missing embed",
        "  wiki     Packing List#^railpass  ->  Trips/Packing List.md  BROKEN: missing block",
        "  wiki     Osaka  ->  not yet written",
        "  wiki     Japan  ->  not yet written",
    ]
    assert lines[-2:] == ["broken (3)", "not yet written (3)"]
    data = json.loads(run("links", str(vault), "Trips/Kyoto 2023.md", "--json").stdout)
    assert [b["problem"] for b in data["broken"]] == [
        "unwritten",
        "heading",
        "embed",
        "block",
        "unwritten",
        "unwritten",
    ]


def test_links_of_a_missing_note_point_at_the_list_command(tmp_path: Path) -> None:
    """The CLI names its own command for what exists, not the MCP tool an agent would call."""
    from tests.template_vault import make_template_vault

    vault = make_template_vault(tmp_path / "v")
    proc = run("links", str(vault), "Kyoto")
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"vaultwatch: not found: 'Kyoto' is not in the vault; `vaultwatch list {vault}` shows what exists"
    )


LONG = "00 - Contribute to the Obsidian Hub/01 Templates/T - Auxiliary Tool Category Template.md"


def _plain_vault(root: Path) -> Path:
    """A vault that is no OKF bundle: one long path, an archived note past its review date."""
    (root / LONG).parent.mkdir(parents=True)
    (root / LONG).write_text("# template\n", encoding="utf-8")
    (root / "Notes").mkdir()
    (root / "Notes/Old plan.md").write_text(
        "---\nstatus: Archived\nreview_by: 2026-01-15\n---\nOld.\n", encoding="utf-8"
    )
    (root / "Notes/Plain.md").write_text("Nothing declared.\n", encoding="utf-8")
    return root


def _on_a_terminal(*args: str, columns: int) -> str:
    """`vaultwatch` with its stdout on a pseudo-terminal COLUMNS wide, as a person runs it."""
    import pty

    primary, secondary = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TEXTUAL_THEME")}
    env["COLUMNS"] = str(columns)
    proc = subprocess.Popen(
        [sys.executable, "-m", "vaultwatch.tui.commands.cli", *args],
        stdout=secondary,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the terminal's other end closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(primary)
    assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


def test_list_table_piped_prints_whole_paths(tmp_path: Path) -> None:
    vault = _plain_vault(tmp_path / "v")
    for extra in ({}, {"COLUMNS": "40"}):  # piped, a COLUMNS of the shell's does not cut either
        env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TEXTUAL_THEME")} | extra
        proc = subprocess.run(
            [sys.executable, "-m", "vaultwatch.tui.commands.cli", "list", str(vault), *AS_OF],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        assert proc.returncode == 0, proc.stderr
        assert any(line.startswith(LONG + "  ") for line in proc.stdout.splitlines()), proc.stdout


def test_list_table_on_a_terminal_cuts_paths_visibly_to_its_width(tmp_path: Path) -> None:
    vault = _plain_vault(tmp_path / "v")
    wide = _on_a_terminal("list", str(vault), *AS_OF, columns=200)
    assert any(line.startswith(LONG + "  ") for line in wide.splitlines()), wide
    narrow = _on_a_terminal("list", str(vault), *AS_OF, columns=80)
    lines = narrow.splitlines()
    assert all(len(line) <= 80 for line in lines), narrow
    cut = next(line for line in lines if line.startswith("00 - "))
    assert "…" in cut and cut.split("  ")[0].endswith("Category Template.md"), cut  # the note's name kept


def test_list_table_off_a_bundle_shows_what_the_notes_list_shows(tmp_path: Path) -> None:
    vault = _plain_vault(tmp_path / "v")
    proc = run("list", str(vault), *AS_OF, "--folder", "Notes")
    assert proc.returncode == 0, proc.stderr
    header, *rows = proc.stdout.splitlines()
    # the TUI's Status and Stale cells for the same notes; no row has a trust (no agent changed one)
    assert header.split() == ["PATH", "KIND", "STATUS", "STALE", "MODIFIED"]
    cells = {row.split("  ")[0]: row.split() for row in rows}
    assert cells["Notes/Old plan.md"][3:5] == ["Archived", "318d"]  # review_by 2026-01-15, as of 2026-11-29
    assert cells["Notes/Plain.md"][1] == "note" and len(cells["Notes/Plain.md"]) == 3  # blank cells
    bare = run("list", str(vault), *AS_OF, "--folder", "00 - Contribute to the Obsidian Hub")
    assert bare.stdout.splitlines()[0].split() == ["PATH", "KIND", "MODIFIED"]  # no column with nothing in it
    full = json_lines(run("list", str(vault), "--json", *AS_OF))
    assert {r["path"] for r in full} == {LONG, "Notes/Old plan.md", "Notes/Plain.md"}
    assert next(r for r in full if r["path"] == "Notes/Old plan.md")["frontmatter"]["status"] == "Archived"


def test_list_table_says_a_status_as_the_notes_list_does(make_vault) -> None:
    # kepano's template: a status is a list of links; a template's `{{...}}` frontmatter is no YAML yet
    vault = make_vault(
        {
            ".obsidian/templates.json": '{"folder": "Templates"}',
            "Notes/Minimal Theme.md": '---\nstatus:\n  - "[[Archived]]"\n---\nx\n',
            "Notes/Clipping.md": '---\nstatus: ["[[Published|out]]", "[[Later]]"]\n---\nx\n',
            "Notes/Torn.md": "---\nstatus: [draft\n---\nx\n",
            "Templates/Album Template.md": "---\nstatus: {{status}}\nyear: {{date:YYYY}}\n---\nx\n",
        }
    )
    proc = run("list", str(vault), *AS_OF)
    assert proc.returncode == 0, proc.stderr
    cells = {row.split("  ")[0]: row.split("  ")[1:] for row in proc.stdout.splitlines()[1:]}
    status = {path: [c.strip() for c in rest if c.strip()][1] for path, rest in cells.items()}
    assert status["Notes/Minimal Theme.md"] == "Archived"
    assert status["Notes/Clipping.md"] == "Published, Later"
    assert status["Notes/Torn.md"] == "broken"
    # the Broken tab, `stats` and the Notes list exempt a templates folder's notes
    assert status["Templates/Album Template.md"].startswith("20")  # no status: the next cell is MODIFIED


def test_list_sort_overdue_off_a_bundle_follows_the_stale_column(make_vault) -> None:
    # off an OKF bundle the STALE column counts days past the person's stale keys (review_by,
    # expires by default): the overdue sort orders by those days, most overdue first
    vault = make_vault(
        {
            "A first.md": "plain\n",
            "B expiring.md": "---\nexpires: 2026-11-23\n---\nx\n",
            "C later.md": "---\nreview_by: 2027-03-01\n---\nx\n",
            "D old plan.md": "---\nreview_by: 2026-01-07\n---\nx\n",
        }
    )
    proc = run("list", str(vault), *AS_OF, "--sort", "overdue")
    assert proc.returncode == 0, proc.stderr
    rows = [line.split("  ")[0] for line in proc.stdout.splitlines()[1:]]
    assert rows[:2] == ["D old plan.md", "B expiring.md"], proc.stdout
    first = json_lines(run("list", str(vault), *AS_OF, "--sort", "overdue", "--json", "--limit", "1"))
    assert [r["path"] for r in first] == ["D old plan.md"]


def test_search_of_a_folder_with_no_vault_named_says_what_was_meant(tmp_path: Path) -> None:
    # `vaultwatch search kep3`: the vault's folder taken for the query, the default vault searched
    (tmp_path / "kep3").mkdir()
    (tmp_path / "kep3" / "Note.md").write_text("hello\n", encoding="utf-8")
    proc = run("search", "kep3", "--local", cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "'kep3' is a folder and no vault was named" in proc.stderr
    assert "default vault" in proc.stderr and "vaultwatch search kep3 WORDS" in proc.stderr
    words = run("search", "zzzunfound", "--local", cwd=tmp_path)
    assert words.returncode == 0, words.stderr
    assert "matching notes; keyword search in the default vault " in words.stderr  # which vault it searched
    named = run("search", "kep3", "hello", "--local", cwd=tmp_path)
    assert named.returncode == 0 and "Note.md" in named.stdout and "default vault" not in named.stderr
    # a well-formed glob that matches nothing is an answer, not a slip
    listed = run("list", "kep3", "--pattern", "Nothing*", cwd=tmp_path)
    assert listed.returncode == 0 and "0 of 0 entries" in listed.stderr

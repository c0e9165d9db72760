"""A table or key of the settings file that vaultwatch does not read is said, never ignored without a
word: under a rules table (a misspelt `[approve.folder]`, a per-vault `[vaults."PATH".approve]`) it
refuses agents' changes, saying what is wrong and the name meant, in a running `serve --stdio`, at a
start and in `vaultwatch pending`; elsewhere (`[tui] thme`) it is said and the rest applies. Through
the real processes and the real `mcp` client."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp_testing import ROOT, VAULTWATCH
from mcp_types import Implementation


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def place(tmp_path: Path, sock_dir: Path) -> Iterator[tuple[Path, dict[str, str], Path]]:
    root = tmp_path / "vault"
    for rel in ("Archive/old.md", "Notes/a.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("# note\n")
    config = tmp_path / "config"
    (config / "vaultwatch").mkdir(parents=True)
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(config),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_RUNTIME_DIR": str(sock_dir),
        "VAULTWATCH_SEMANTIC": "0",
        "PYTHONPATH": str(ROOT),
    }
    yield root, env, config / "vaultwatch" / "settings.toml"


def stdio(root: Path, env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(
        command=VAULTWATCH[0], args=[*VAULTWATCH[1:], "serve", "--stdio", str(root)], env=env, cwd=str(ROOT)
    )


def pending(root: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*VAULTWATCH, "pending", str(root)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )


async def test_a_misspelt_or_per_vault_folder_rule_refuses_agents_until_fixed(place) -> None:
    root, env, settings = place
    settings.write_text(f'[vaults."{root}"]\n')
    typo = '[approve.folder]\n"Archive/**" = "never"\n'
    per_vault = f'[vaults."{root}".approve.folders]\n"Archive/**" = "never"\n'
    async with Client(stdio(root, env), client_info=Implementation(name="helper", version="1")) as client:
        done = await client.call_tool("write", {"path": "Archive/one.md", "content": "one\n"})
        assert not done.is_error, done.content[0].text
        for written, expected in (
            (typo, "[approve.folder] is not a setting vaultwatch knows (did you mean [approve.folders]?)"),
            (per_vault, f'[vaults."{root}".approve] is not supported: approval and folder rules are global'),
        ):
            settings.write_text(written)
            before = tree(root)
            refused = await client.call_tool("write", {"path": "Archive/two.md", "content": "two\n"})
            said = refused.content[0].text
            assert refused.is_error and expected in said and "refused until" in said, said
            assert tree(root) == before
            out = pending(root, env)
            assert out.returncode == 0 and expected in out.stderr and "agents' changes are refused" in out.stderr
        settings.write_text('[approve.folders]\n"Archive/**" = "never"\n')  # the rule as meant
        held = await client.call_tool("write", {"path": "Archive/two.md", "content": "two\n"})
        assert held.is_error and 'rule "Archive/**" = "never"' in held.content[0].text, held.content[0].text
        settings.write_text("# no rules now\n")  # (an empty file may be an editor's save under way)
        done = await client.call_tool("write", {"path": "Archive/two.md", "content": "two\n"})
        assert not done.is_error, done.content[0].text
    settings.write_text(typo)
    # at a start too (finding: the server died and the agent saw only "connection closed"): reads are
    # served, and every change is refused with the reason as the error's first words
    async with Client(stdio(root, env), client_info=Implementation(name="helper", version="1")) as client:
        read = await client.call_tool("read", {"path": "Notes/a.md"})
        assert not read.is_error, read.content[0].text
        before = tree(root)
        refused = await client.call_tool("write", {"path": "Notes/b.md", "content": "b\n"})
        said = refused.content[0].text.removeprefix("Error: ")
        assert refused.is_error and said.startswith(f"settings file {settings}: [approve.folder] is not a setting")
        assert "did you mean [approve.folders]?" in said and "refused until" in said, said
        assert tree(root) == before


async def test_an_unknown_key_outside_the_rules_is_said_and_the_rules_apply(place) -> None:
    root, env, settings = place
    settings.write_text('[tui]\nthme = "textual-light"\n[approve.folders]\n"Archive/**" = "never"\n')
    out = pending(root, env)
    assert out.returncode == 0, out.stderr
    assert "[tui] thme is not a setting vaultwatch knows (did you mean [tui] theme?): it is ignored" in out.stderr
    async with Client(stdio(root, env), client_info=Implementation(name="helper", version="1")) as client:
        refused = await client.call_tool("write", {"path": "Archive/two.md", "content": "two\n"})
        assert refused.is_error and 'rule "Archive/**" = "never"' in refused.content[0].text
        done = await client.call_tool("write", {"path": "Notes/b.md", "content": "b\n"})
        assert not done.is_error, done.content[0].text


async def test_a_global_rule_naming_a_folder_this_vault_never_had_gets_no_rename_advice(place) -> None:
    """Finding: every start of every other vault said a global rule's folder "was renamed: edit the
    rule or remove it", and removing it would drop the other vault's protection. Said at a start only
    for a folder this vault had (its journal holds a change there); `vaultwatch pending` says the
    other once, without the advice to remove it."""
    root, env, settings = place
    async with Client(stdio(root, env), client_info=Implementation(name="helper", version="1")) as client:
        done = await client.call_tool("write", {"path": "Archive/one.md", "content": "one\n"})
        assert not done.is_error, done.content[0].text
    (root / "Archive").rename(root / "Attic")  # while nothing watches: only the journal knew Archive
    settings.write_text('[approve.folders]\n"Archive/**" = "never"\n"Templates/**" = "never"\n')
    started = subprocess.run(
        [*VAULTWATCH, "serve", "--stdio", str(root)], env=env, cwd=ROOT, input="", capture_output=True, text=True
    )
    assert "names the folder 'Archive', which this vault does not have" in started.stderr, started.stderr
    assert "edit the rule to the folder's new name" in started.stderr, started.stderr
    assert "Templates" not in started.stderr, started.stderr
    out = pending(root, env)
    [templates] = [line for line in out.stderr.splitlines() if "'Templates'" in line]
    assert "which this vault has never had" in templates and "apply in every vault" in templates, templates
    assert "remove it" not in templates and "renamed" not in templates, templates
    assert "names the folder 'Archive', which this vault does not have" in out.stderr, out.stderr


async def test_a_rule_under_a_name_near_no_rules_table_refuses_agents_too(place) -> None:
    """A folder rule or an agent's rule typed under a table named far from every rules table (`[never]`,
    `[permissions.NAME]`), or above the file's first table, was only said: the person believed the
    folder protected while an agent wrote there. What reads as a rule refuses agents' changes, as a
    misspelt rules table does; an unknown key that holds none (`[mcp] log = "none"`) is still only said."""
    root, env, settings = place
    async with Client(stdio(root, env), client_info=Implementation(name="helper", version="1")) as client:
        for written, named in (
            ('[never]\n"Archive/**" = "never"\n', "[never]"),
            ('"Archive/**" = "never"\n[approve]\nmode = "none"\n', '"Archive/**"'),
            ('[permissions.helper]\ndeny = ["Archive/**"]\n', "[permissions]"),
        ):
            settings.write_text(written)
            before = tree(root)
            refused = await client.call_tool("write", {"path": "Archive/two.md", "content": "two\n"})
            said = refused.content[0].text
            assert refused.is_error and f"{named} is not a setting vaultwatch knows" in said, said
            assert "folder rules go in [approve.folders]" in said and "refused until" in said, said
            assert tree(root) == before
        settings.write_text('[mcp]\nlog = "none"\n')
        done = await client.call_tool("write", {"path": "Archive/two.md", "content": "two\n"})
        assert not done.is_error, done.content[0].text


def test_changes_pending_and_refusals_say_a_rule_naming_a_missing_folder_alike(place) -> None:
    """Finding: `vaultwatch pending` said a rule naming a folder the vault lacks, `changes` said
    nothing: the three commands where the person reviews agents' changes say it alike."""
    root, env, settings = place
    settings.write_text('[approve.folders]\n"Templates/**" = "never"\n')
    said = {}
    for command in ("pending", "refusals", "changes"):
        out = subprocess.run(
            [*VAULTWATCH, command, str(root)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0, out.stderr
        said[command] = [line for line in out.stderr.splitlines() if "'Templates'" in line]
    assert len(said["pending"]) == 1 and "which this vault has never had" in said["pending"][0], said
    assert said["refusals"] == said["pending"] and said["changes"] == said["pending"], said

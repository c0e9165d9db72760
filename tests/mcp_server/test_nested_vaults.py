"""No second server on a folder inside a served vault, nor on one holding a served folder: from
another root the person's folder rules (`"Work/Clients/**" = "writes"`) name other paths, so an agent
pointed at `VAULT/Work` wrote `Clients/acme.md` unasked, and the person's journal for VAULT listed it
as a reviewed outside edit with no bytes to revert.

Real parts: `vaultwatch serve` processes on sockets, the `vaultwatch bridge` and `serve --stdio` an
MCP client runs, the Python `mcp` client, `vaultwatch changes --json`."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_testing import ROOT, VAULTWATCH, end_server, stop_headless_servers
from mcp_types import Implementation

from tests.bind_mount import bound
from vaultwatch.core.disk.vaultlock import holder

SETTINGS = '[approve]\nmode = "none"\n[approve.folders]\n"Work/Clients/**" = "writes"\n'
ACME = "# Acme\nrate: 100 EUR/h\n"


@pytest.fixture
def place(tmp_path: Path, sock_dir: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    root = (tmp_path / "vault").resolve()
    (root / "Work" / "Clients").mkdir(parents=True)
    (root / "Work" / "Clients" / "acme.md").write_text(ACME)
    (root / "Work" / "todo.md").write_text("# todo\n")
    config = tmp_path / "config"
    (config / "vaultwatch").mkdir(parents=True)
    (config / "vaultwatch" / "settings.toml").write_text(SETTINGS)
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(config),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_RUNTIME_DIR": str(sock_dir),
        "VAULTWATCH_SEMANTIC": "0",
    }
    yield root, env
    stop_headless_servers(root / "Work")


def serve(root: Path, sock: Path, env: dict[str, str], *extra: str) -> subprocess.Popen:
    proc = subprocess.Popen(
        [*VAULTWATCH, "serve", str(root), "--socket", str(sock), *extra],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    line = proc.stdout.readline().decode()
    assert line.startswith("vaultwatch: serving "), (line, proc.stderr.read1().decode() if proc.poll() else "")
    return proc


def messages(exc: BaseException) -> list[str]:
    if isinstance(exc, BaseExceptionGroup):
        return [m for inner in exc.exceptions for m in messages(inner)]
    return [str(exc)]


async def agents_write(params: StdioServerParameters) -> str:
    """What the agent is told when it rewrites the client's rate: "APPLIED", or the refusal."""
    try:
        async with Client(params, client_info=Implementation(name="scribe", version="1")) as client:
            got = await client.call_tool(
                "write", {"path": "Clients/acme.md", "content": "# Acme\nrate: 1 EUR/h\n", "overwrite": True}
            )
            return got.content[0].text if got.is_error else "APPLIED"
    except (MCPError, BaseExceptionGroup) as exc:
        return " | ".join(messages(exc))


def journal(root: Path, env: dict[str, str]) -> list[dict]:
    out = subprocess.run(
        [*VAULTWATCH, "changes", str(root), "--json"], env=env, capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


@pytest.mark.parametrize("how", ["bridge", "stdio"])
async def test_an_agent_given_a_folder_of_a_served_vault_gets_no_server_of_its_own(
    place, sock_dir: Path, how: str
) -> None:
    root, env = place
    person = serve(root, sock_dir / "v.sock", env)
    try:
        args = ["bridge", "--vault"] if how == "bridge" else ["serve", "--stdio"]
        params = StdioServerParameters(
            command=VAULTWATCH[0], args=[*VAULTWATCH[1:], *args, str(root / "Work")], env=env, cwd=str(ROOT)
        )
        said = await agents_write(params)
        assert said != "APPLIED", "the write into Work/Clients landed past the folder rule"
        assert f"serves {root}, which holds {root / 'Work'}" in said, said
        assert f"vaultwatch bridge --vault {root}" in said and 'write = ["Work/**"]' in said, said
        assert holder(str(root / "Work")) is None  # no server was left on the folder
    finally:
        end_server(person.pid)
        person.wait(30)
    assert (root / "Work" / "Clients" / "acme.md").read_text() == ACME
    assert journal(root, env) == []  # nothing for the person to find filed as an outside edit


def test_a_vault_holding_a_served_folder_does_not_start(place, sock_dir: Path) -> None:
    root, env = place
    inner = serve(root / "Work", sock_dir / "w.sock", env)
    outer = subprocess.Popen(
        [*VAULTWATCH, "serve", str(root), "--socket", str(sock_dir / "v.sock")],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = outer.stdout.readline()  # "vaultwatch: serving ..." once it serves; "" when it ended
    finally:
        if outer.poll() is None:
            end_server(outer.pid)
        stderr = outer.communicate(timeout=60)[1]
        end_server(inner.pid)
        inner.wait(30)
    assert not first.startswith("vaultwatch: serving") and outer.returncode != 0, first
    assert f"serves {root / 'Work'}, a folder inside {root}" in stderr, stderr
    # the folder served has a journal now: once it quits, the vault holding it is refused too
    assert "Quit it first" not in stderr and f"Keep serving {root / 'Work'} alone" in stderr, stderr


# With no server running above, a server on the folder read its rules from the folder itself:
# `"Finance/**" = "never"`, written for the vault, covered nothing of `Vault/Finance` served alone.
NEVER = '[approve]\nmode = "none"\n[approve.folders]\n"Work/Clients/**" = "never"\n'


def start_refused(args: list[str], env: dict[str, str]) -> str:
    """The stderr of a `vaultwatch` start that must end without serving."""
    out = subprocess.run([*VAULTWATCH, *args], env=env, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode != 0 and "vaultwatch: serving" not in out.stdout, (out.stdout, out.stderr)
    return out.stderr


@pytest.mark.parametrize("how", ["serve", "stdio", "bridge"])
async def test_a_folder_of_a_vault_with_a_journal_gets_no_server_when_none_runs_above(
    place, sock_dir: Path, how: str
) -> None:
    root, env = place
    (Path(env["XDG_CONFIG_HOME"]) / "vaultwatch" / "settings.toml").write_text(NEVER)
    journal(root, env)  # the person has used vaultwatch on the vault: it has a journal of its own
    work = root / "Work"
    if how == "serve":
        said = start_refused(["serve", str(work), "--socket", str(sock_dir / "w.sock")], env)
    else:
        args = ["bridge", "--vault"] if how == "bridge" else ["serve", "--stdio"]
        params = StdioServerParameters(
            command=VAULTWATCH[0], args=[*VAULTWATCH[1:], *args, str(work)], env=env, cwd=str(ROOT)
        )
        said = await agents_write(params)
        assert said != "APPLIED", "the write into Work/Clients landed past the folder rule"
    assert f"{work} lies inside the vault {root} (it was served on its own before: it has a change journal" in said, (
        said
    )
    assert f"Serve {root} instead" in said and 'write = ["Work/**"]' in said, said
    assert "--allow-nested" in said and f'[vaults."{work}"]' in said, said
    assert holder(str(work)) is None
    assert (work / "Clients" / "acme.md").read_text() == ACME


def test_a_vaults_table_above_refuses_and_one_of_its_own_or_the_flag_lets_it_start(place, sock_dir: Path) -> None:
    root, env = place
    settings = Path(env["XDG_CONFIG_HOME"]) / "vaultwatch" / "settings.toml"
    work = root / "Work"
    settings.write_text(NEVER + f'[vaults."{root}".triage]\nstale_unmodified_days = 30\n')
    said = start_refused(["serve", str(work), "--socket", str(sock_dir / "w.sock")], env)
    assert f'(settings.toml has a [vaults."{root}"] table for it)' in said, said
    for extra, text in (
        (["--allow-nested"], settings.read_text()),
        ([], settings.read_text() + f'[vaults."{work}"]\n'),  # the person names the folder a vault
    ):
        settings.write_text(text)
        proc = serve(work, sock_dir / "w.sock", env, *extra)
        end_server(proc.pid)
        proc.wait(30)


def test_a_vault_in_a_folder_vaultwatch_never_knew_starts(place, sock_dir: Path) -> None:
    root, env = place
    (root / ".obsidian").mkdir()  # Obsidian's vault above is no vaultwatch rule of the person's
    proc = serve(root / "Work", sock_dir / "w.sock", env)
    end_server(proc.pid)
    proc.wait(30)


# A folder holding a vault with rules, served, applied none of them: `"Work/Clients/**" = "never"`
# covers nothing of `Home/vault/Work/Clients`. And a vault with a journal of its own inside a folder
# served once by accident was refused, told to serve that folder instead: the unsafe choice.
@pytest.fixture
def home(place) -> tuple[Path, Path, dict[str, str]]:
    """(the folder holding the vault, the vault, env): the vault has rules and a journal."""
    root, env = place
    holder_folder = root.parent / "home"
    holder_folder.mkdir()
    inner = holder_folder / "vault"
    root.rename(inner)
    (Path(env["XDG_CONFIG_HOME"]) / "vaultwatch" / "settings.toml").write_text(NEVER)
    journal(inner, env)  # the person has used vaultwatch on the vault
    return holder_folder, inner, env


def journal_file(folder: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Path:
    from vaultwatch.core.review.journal import journal_path

    monkeypatch.setenv("XDG_STATE_HOME", env["XDG_STATE_HOME"])
    return Path(journal_path(str(folder)))


async def agent_writes(params: StdioServerParameters, path: str) -> str:
    """What the agent is told when it writes `path`: "APPLIED", or the refusal."""
    try:
        async with Client(params, client_info=Implementation(name="scribe", version="1")) as client:
            got = await client.call_tool("write", {"path": path, "content": "# from the agent\n", "overwrite": True})
            return got.content[0].text if got.is_error else "APPLIED"
    except (MCPError, BaseExceptionGroup) as exc:
        return " | ".join(messages(exc))


@pytest.mark.parametrize("how", ["serve", "stdio", "bridge"])
async def test_a_folder_holding_a_vault_with_rules_gets_no_server(
    home, sock_dir: Path, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent, root, env = home
    try:
        if how == "serve":
            said = start_refused(["serve", str(parent), "--socket", str(sock_dir / "h.sock")], env)
        else:
            args = ["bridge", "--vault"] if how == "bridge" else ["serve", "--stdio"]
            params = StdioServerParameters(
                command=VAULTWATCH[0], args=[*VAULTWATCH[1:], *args, str(parent)], env=env, cwd=str(ROOT)
            )
            said = await agent_writes(params, "vault/Work/Clients/acme.md")
            assert said != "APPLIED", "the write into the vault's never folder landed through the folder above"
    finally:
        stop_headless_servers(parent)
    assert f"{parent} holds the vault {root} (it was served on its own before: it has a change journal" in said, said
    assert f"Serve {root} itself" in said and "--allow-nested" in said, said
    assert f"Serve {parent} instead" not in said and f"Serve {parent.parent} instead" not in said, said
    assert f"move its journal {journal_file(root, env, monkeypatch)}" in said, said
    assert "vaultwatch changes" in said, said  # look at the history before moving it away
    assert holder(str(parent)) is None
    assert (root / "Work" / "Clients" / "acme.md").read_text() == ACME
    assert not journal_file(parent, env, monkeypatch).exists()  # a refused start made no vault of it
    if how == "serve":  # the person who means it
        proc = serve(parent, sock_dir / "h.sock", env, "--allow-nested")
        end_server(proc.pid)
        proc.wait(30)


@pytest.mark.parametrize("how", ["serve", "stdio"])
async def test_a_vault_with_a_journal_of_its_own_starts_inside_a_folder_served_by_accident(
    home, sock_dir: Path, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent, root, env = home
    journal(parent, env)  # the folder above was opened once by accident: it has a journal too
    assert journal_file(parent, env, monkeypatch).exists()
    if how == "serve":
        proc = serve(root, sock_dir / "v.sock", env, "--headless")
        end_server(proc.pid)
        proc.wait(30)
    else:
        params = StdioServerParameters(
            command=VAULTWATCH[0], args=[*VAULTWATCH[1:], "serve", "--stdio", str(root)], env=env, cwd=str(ROOT)
        )
        said = await agent_writes(params, "Work/Clients/acme.md")
        assert "never" in said and said != "APPLIED", said  # served on its own, under its own rules
        assert await agent_writes(params, "Work/note.md") == "APPLIED"
    # and the accidental folder above is the one refused now, with no advice to serve it
    said = start_refused(["serve", str(parent), "--socket", str(sock_dir / "h.sock")], env)
    assert f"{parent} holds the vault {root}" in said, said
    # both have journals: which was the accident is the person's to say, serving the vault only once
    # the folder above is undone
    assert f"Serve {root} itself" not in said, said
    assert f"If it is {parent} that was opened by accident instead, move its journal" in said, said
    assert said.rstrip().endswith(f"then serve {root} itself."), said
    assert (root / "Work" / "Clients" / "acme.md").read_text() == ACME
    if how == "serve":  # a folder beside the vault is refused, never told to serve the folder above
        (parent / "other").mkdir()
        said = start_refused(["serve", str(parent / "other"), "--socket", str(sock_dir / "o.sock")], env)
        assert f"lies inside the vault {parent}" in said and f"Serve {parent} instead" not in said, said
        assert f"Serving {parent} instead is refused too: it holds the vault {root}" in said, said
        assert f"move its journal {journal_file(parent, env, monkeypatch)}" in said, said


def test_opening_a_folder_inside_a_vault_makes_no_journal_that_would_let_it_start(
    place, sock_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, env = place
    (Path(env["XDG_CONFIG_HOME"]) / "vaultwatch" / "settings.toml").write_text(NEVER)
    journal(root, env)
    work = root / "Work"
    out = subprocess.run(
        [*VAULTWATCH, "changes", str(work)], env=env, capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert f"no change journal is made for {work}: " in out.stderr, (out.stdout, out.stderr)
    assert f"{work} lies inside the vault {root}" in out.stderr, out.stderr
    for args in (["serve", str(work), "--socket", str(sock_dir / "w.sock")], ["serve", str(work), "--headless"]):
        said = start_refused(args, env)
        assert f"{work} lies inside the vault {root}" in said, said
    assert not journal_file(work, env, monkeypatch).exists()


# The checks above compared real paths, and a bind mount shows a folder of the vault at another:
# `mount --bind VAULT/Work /mnt/w; vaultwatch serve /mnt/w` served the folder as a vault of its own,
# `"Work/Clients/**" = "never"` covering nothing of it.
@pytest.mark.parametrize("how", ["serve", "stdio"])
async def test_a_folder_of_a_vault_bind_mounted_elsewhere_gets_no_server_of_its_own(
    place, sock_dir: Path, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, env = place
    (Path(env["XDG_CONFIG_HOME"]) / "vaultwatch" / "settings.toml").write_text(NEVER)
    journal(root, env)
    work = root / "Work"
    mnt = root.parent / "mnt w"  # a space: mountinfo writes it as \040
    mnt.mkdir()
    with bound(work, mnt):
        try:
            if how == "serve":
                said = start_refused(["serve", str(mnt), "--socket", str(sock_dir / "m.sock")], env)
            else:
                params = StdioServerParameters(
                    command=VAULTWATCH[0], args=[*VAULTWATCH[1:], "serve", "--stdio", str(mnt)], env=env, cwd=str(ROOT)
                )
                said = await agent_writes(params, "Clients/acme.md")
                assert said != "APPLIED", "the write into Work/Clients landed through the bind mount"
        finally:
            stop_headless_servers(mnt)
        assert f"{mnt} and {work} are one folder, reached through two mounts" in said, said
        assert (
            f"{work} lies inside the vault {root} (it was served on its own before: it has a change journal" in said
        ), said
        assert "--allow-nested" in said, said
        assert (work / "Clients" / "acme.md").read_text() == ACME
        assert not journal_file(mnt, env, monkeypatch).exists()  # a refused start made no vault of it
        if how == "serve":  # the person who means it
            proc = serve(mnt, sock_dir / "m.sock", env, "--allow-nested")
            end_server(proc.pid)
            proc.wait(30)


@pytest.mark.parametrize("shown", ["the folder above", "the vault"])
def test_a_folder_holding_a_vault_through_a_bind_mount_gets_no_server(
    home, sock_dir: Path, shown: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    parent, root, env = home
    if shown == "the folder above":  # the folder holding the vault, shown elsewhere
        source, served = parent, tmp_path_factory.mktemp("elsewhere")
        target = served
    else:  # the vault, shown inside another folder
        served = tmp_path_factory.mktemp("outer")
        source, target = root, served / "v"
        target.mkdir()
    with bound(source, target):
        said = start_refused(["serve", str(served), "--socket", str(sock_dir / "h.sock")], env)
    assert "are one folder, reached through two mounts" in said, said
    assert f"holds the vault {root} (it was served on its own before: it has a change journal" in said, said
    assert f"Serve {root} itself" in said, said
    assert holder(str(served)) is None


# A bind mount of the vault's own folder: the settings' tables match it by device and inode, so the
# rules held, but it was served as a vault of its own, with a second journal and a socket of its own:
# an agent's changes there reached the person's journal of the vault only as outside edits.
def test_a_vault_bind_mounted_elsewhere_is_served_only_as_itself(place, sock_dir: Path, monkeypatch) -> None:
    root, env = place
    journal(root, env)
    mnt = root.parent / "mnt v"
    mnt.mkdir()
    with bound(root, mnt):
        try:
            said = start_refused(["serve", str(mnt), "--socket", str(sock_dir / "m.sock")], env)
        finally:
            stop_headless_servers(mnt)
        assert f"{mnt} and {root} are one folder, reached through two mounts" in said, said
        assert f"Serve it as {root}" in said and "--allow-nested" in said, said
        assert not journal_file(mnt, env, monkeypatch).exists()  # no second history was begun
        proc = serve(mnt, sock_dir / "m.sock", env, "--allow-nested")  # the person who means it
        end_server(proc.pid)
        proc.wait(30)


# One `serve --allow-nested VAULT/Work` gave the folder a journal; the vault was then refused, told the
# settings' rules "are paths from" VAULT/Work (no table names it: it is a vault only by its journal) and
# advised to serve VAULT/Work itself, the one choice under which none of the rules written for the
# vault apply.
def test_a_vault_holding_a_folder_served_once_with_the_flag_says_how_to_undo_it(
    place, sock_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, env = place
    (Path(env["XDG_CONFIG_HOME"]) / "vaultwatch" / "settings.toml").write_text(NEVER)
    journal(root, env)  # the person's vault
    work = root / "Work"
    proc = serve(work, sock_dir / "w.sock", env, "--allow-nested")
    end_server(proc.pid)
    proc.wait(30)
    inner = journal_file(work, env, monkeypatch)
    assert inner.exists()
    said = start_refused(["serve", str(root), "--socket", str(sock_dir / "v.sock")], env)
    assert f"{root} holds the vault {work} (it was served on its own before: it has a change journal, {inner})" in (
        said
    ), said
    assert f"paths from {work}" not in said and "vaultwatch keeps" not in said, said
    assert f"Serve {work} itself" not in said, said  # where none of the vault's rules would apply
    undo = said.index(f"If {work} was served on its own by accident, make it no vault again: move its journal {inner}")
    assert undo < said.index("--allow-nested"), said
    assert f"look at it first with `vaultwatch changes {work}`" in said, said
    assert (work / "Clients" / "acme.md").read_text() == ACME
    inner.rename(tmp_path / "work-journal.sqlite3")  # the advice, followed: the vault starts
    proc = serve(root, sock_dir / "v.sock", env)
    end_server(proc.pid)
    proc.wait(30)


# With a server on the vault, a start on its folder was told "or quit it and serve VAULT/Work", and
# once it quit, that start was refused as lying inside the vault.
@pytest.mark.parametrize("how", ["serve", "stdio", "bridge"])
async def test_a_folder_of_a_served_vault_is_not_told_to_quit_it_and_serve_the_folder(
    place, sock_dir: Path, how: str
) -> None:
    root, env = place
    work = root / "Work"
    person = serve(root, sock_dir / "v.sock", env)  # it keeps a journal: a vault of the person's
    try:
        if how == "serve":
            said = start_refused(["serve", str(work), "--socket", str(sock_dir / "w.sock")], env)
        else:
            args = ["bridge", "--vault"] if how == "bridge" else ["serve", "--stdio"]
            params = StdioServerParameters(
                command=VAULTWATCH[0], args=[*VAULTWATCH[1:], *args, str(work)], env=env, cwd=str(ROOT)
            )
            said = await agents_write(params)
        assert f"serves {root}, which holds {work}" in said, said
        assert f"quit it and serve {work}" not in said, said
        assert f"{work} alone is refused too, even once that server quits" in said, said
        assert f"quit that server and start {work} with --allow-nested" in said, said
        if how == "serve":  # with the flag, serving it alone once that server quits does start
            flagged = start_refused(["serve", str(work), "--socket", str(sock_dir / "w.sock"), "--allow-nested"], env)
            assert f"or quit it and serve {work}" in flagged, flagged
    finally:
        stop_headless_servers(work)
        end_server(person.pid)
        person.wait(30)
    said = start_refused(["serve", str(work), "--socket", str(sock_dir / "w.sock")], env)  # as it was told
    assert f"{work} lies inside the vault {root}" in said, said
    assert (work / "Clients" / "acme.md").read_text() == ACME

"""vaultwatch as people install it: `python -m build` makes a wheel whose only top-level name is
`vaultwatch`, and that wheel, installed into a fresh virtual environment, runs: `--version`,
`stats` on the bundled demo vault, and an MCP `list_documents` call through `vaultwatch bridge`
from the real `mcp` client (the bridge spawns the headless server, `python -m vaultwatch.tui.commands.cli`).

No network: the fresh environment gets the wheel alone (`--no-deps`); its dependencies come from
this environment's site-packages through a path file, listed after the fresh environment's own
site-packages, so `vaultwatch` itself can only come from the wheel."""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.xdist_group("package"),  # one worker builds the wheel and installs it once
    pytest.mark.skipif(
        not Path("/proc/self/cmdline").exists(), reason="reads the spawned server's command line from /proc"
    ),
]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is needed to copy the checkout")
    out = tmp_path_factory.mktemp("dist")
    # a copy of the committed and working files, so the build's egg-info and build/ stay out of the checkout
    src = tmp_path_factory.mktemp("src") / "vaultwatch"
    _copy_checkout(src)
    done = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(src)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    wheels = list(out.glob("vaultwatch-*.whl"))
    sdists = list(out.glob("vaultwatch-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(p.name for p in out.iterdir())
    return wheels[0]


def _copy_checkout(dest: Path) -> None:
    """Copy the files a clean clone would have (tracked, or new and not ignored), not what .gitignore
    keeps out: a working checkout's ignored benchmark output can be gigabytes."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        timeout=60,
    )
    if listed.returncode != 0:  # not a git checkout (an unpacked archive): everything but the usual clutter
        shutil.copytree(
            ROOT,
            dest,
            symlinks=True,
            ignore=shutil.ignore_patterns(
                ".venv", ".git", "node_modules", "__pycache__", "*.egg-info", "build", "dist"
            ),
        )
        return
    for name in dict.fromkeys(listed.stdout.decode().split("\0")):
        source = ROOT / name
        if not name or not (source.is_symlink() or source.is_file()):  # deleted in the working tree
            continue
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)


def test_the_wheel_holds_vaultwatch_alone_with_its_data(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/", 1)[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"vaultwatch"}
    assert "vaultwatch/core/demo_vault/Getting Started.md" in names
    assert "vaultwatch/core/demo_vault/.obsidian/app.json" in names
    assert any(n.startswith("vaultwatch/tui/") and n.endswith(".tcss") for n in names)
    assert "vaultwatch/mcp_server/toollist.json" in names  # a first stdio start's tools/list
    assert "vaultwatch/core/about.py" in names and "vaultwatch/__main__.py" in names
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "vaultwatch = vaultwatch.tui.entry:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    env_dir = tmp_path_factory.mktemp("fresh") / "venv"
    venv.EnvBuilder(with_pip=False, clear=True).create(env_dir)
    python = env_dir / "bin" / "python"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-index",
            "--disable-pip-version-check",
            "-q",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        # a PYTHONPATH holding a checkout (and its egg-info) would make pip take vaultwatch as installed
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")},
    )
    assert done.returncode == 0, done.stderr
    fresh_site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    deps = [sysconfig.get_paths()["purelib"], *site.getsitepackages()]
    Path(fresh_site, "zz_dependencies.pth").write_text("\n".join(dict.fromkeys(deps)) + "\n")
    return env_dir


def fresh_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    for name in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR"):
        env[name] = str(tmp / name.lower())
        Path(env[name]).mkdir(mode=0o700, exist_ok=True)
    return env


def test_the_installed_wheel_runs(installed: Path, tmp_path: Path) -> None:
    env = fresh_env(tmp_path)
    bin_dir = installed / "bin"
    where = subprocess.run(
        [str(bin_dir / "python"), "-c", "import vaultwatch.core as c; print(c.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert where.returncode == 0, where.stderr
    assert where.stdout.strip().startswith(str(installed)), where.stdout
    generic = subprocess.run(
        [str(bin_dir / "python"), "-c", "import core"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert generic.returncode != 0 and "No module named 'core'" in generic.stderr

    version = subprocess.run(
        [str(bin_dir / "vaultwatch"), "--version"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    import tomllib

    want = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert version.returncode == 0 and version.stdout.strip() == f"vaultwatch {want}"
    stats = subprocess.run(
        [str(bin_dir / "vaultwatch"), "stats", "--json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["notes"] > 10


async def test_the_installed_bridge_answers_the_real_client(installed: Path, tmp_path: Path) -> None:
    env = fresh_env(tmp_path)
    params = StdioServerParameters(
        command=str(installed / "bin" / "vaultwatch"), args=["bridge", "--idle-exit", "5"], env=env, cwd=str(tmp_path)
    )
    async with Client(params) as client:
        assert client.server_info is not None and client.server_info.version
        listing = await client.call_tool("list_documents", {"folder": "Projects", "limit": 2})
        assert not listing.is_error, listing.content
        assert listing.structured_content["total"] == 7
        # the bridge started the headless server with the installed interpreter, through the
        # distribution's console script entry point
        servers = [cmd for cmd in _command_lines() if "serve" in cmd and "--headless" in cmd]
        ours = [cmd for cmd in servers if cmd[0] == str(installed / "bin" / "python")]
        assert ours and all(any("vaultwatch.tui.entry" in part for part in cmd) for cmd in ours), servers


def _command_lines() -> list[list[str]]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                found.append((proc / "cmdline").read_bytes().decode(errors="replace").split("\0")[:-1])
            except OSError:
                continue
    return found

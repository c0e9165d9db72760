"""The bridge's socket trust without SO_PEERCRED (core.platform forced, as on macOS).

Without peer credentials the bridge cannot learn who serves a socket: it still connects to our
own server and relays, and its trust rests on the socket's folder mode and owner alone.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

from mcp_testing import serving
from test_bridge import RawBridge

from vaultwatch.core import platform
from vaultwatch.mcp_server.launch import connect_trusted, vaultwatch_command


async def test_without_peercred_our_own_server_is_reached_and_its_pid_is_unknown(demo, sock_dir):
    async with serving(demo, sock_dir / "v.sock") as host:
        assert await asyncio.to_thread(connect_trusted, host.socket_path) == os.getpid()
        before = platform.fallbacks["peercred"]
        with platform.force(peercred=False):
            assert await asyncio.to_thread(connect_trusted, host.socket_path) is None
        assert platform.fallbacks["peercred"] > before


async def test_a_bridge_process_without_peercred_relays_to_our_server(demo, sock_dir):
    off = {**os.environ, "VAULTWATCH_PLATFORM_OFF": "peercred"}
    async with serving(demo, sock_dir / "v.sock") as host:
        # the variable reaches a whole process: its trust check learns no pid (the fallback ran)
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            "import sys; from vaultwatch.core import platform; from vaultwatch.mcp_server.launch import "
            "connect_trusted; print(connect_trusted(sys.argv[1]), platform.fallbacks['peercred'])",
            str(host.socket_path),
            env=off,
            stdout=subprocess.PIPE,
        )
        out, _ = await child.communicate()
        assert out.decode().split() == ["None", "1"]
        bridge = await RawBridge.start("--socket", str(host.socket_path), env=off)
        reply = await bridge.handshake()
        assert reply["id"] == 1 and "result" in reply, reply
        await bridge.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "read", "arguments": {"path": "Getting Started.md"}},
            }
        )
        answer = await bridge.receive()
        assert answer["id"] == 2 and not answer["result"].get("isError"), answer
        bridge.proc.stdin.close()
        assert await bridge.exit_code() == 0


def test_the_headless_server_command_is_the_installed_vaultwatch_console_script():
    """launch starts the server through the distribution's declared `vaultwatch` entry point,
    not through a TUI module named inside mcp_server (which its import contract cannot see)."""
    command = vaultwatch_command()
    assert "vaultwatch.tui.commands.cli" not in " ".join(command)
    done = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=60, cwd="/")
    assert done.returncode == 0 and done.stdout.startswith("vaultwatch "), done

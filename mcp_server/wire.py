"""Names shared by the server and the bridge on the socket's HTTP wire (kept free of SDK imports,
so `vaultwatch bridge` starts in a fraction of a second)."""

from __future__ import annotations

MCP_PATH = "/mcp"
SESSION_HEADER = "x-vaultwatch-session"  # the bridge names its client's session (2026-07-28 requests carry none)
DESK_PATH = "/vaultwatch/person"  # the person's decisions on pending changes, Unix socket only (persondesk.py)
# the bridge's guard environment (core/review/guardenv.py): a server with another one refuses it (sameenv.py)
GUARD_ENV_HEADER = "x-vaultwatch-guard-env"

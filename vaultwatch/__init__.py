"""vaultwatch: watch, triage and guard a Markdown vault while AI agents read and edit it over MCP.

The repository keeps its three packages at its root (core/, mcp_server/, tui/); this package holds
them as links, so they install and import as vaultwatch.core, vaultwatch.mcp_server and
vaultwatch.tui, never under a generic top-level name.
"""

"""vaultwatch core: the vault index, its queries, parsing, path safety, writes and events.

Pure Python. Never imports textual or mcp (an import-linter contract and a test enforce it).
"""

"""The TUI's flows: querying, searching, triaging and reviewing, off the UI thread where they take time."""

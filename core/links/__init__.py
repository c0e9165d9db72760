"""The link graph: resolving targets the way Obsidian does, backlinks and broken links, rewriting links on rename.

Modules: graph, resolve, rewrite.
"""

"""The one write path (Writer) and surgical frontmatter edits.

Modules: fmedit, writes.
"""

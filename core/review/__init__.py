"""Reviewing changes: the change journal, revert, text diffs, the approval gate.

Modules: approval, journal, revert, textdiff.
"""

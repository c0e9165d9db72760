"""Keeping the index live: the filesystem watcher, change followers, the person-first hold.

Modules: follower, foreground, watch.
"""

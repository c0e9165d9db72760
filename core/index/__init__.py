"""The index: immutable snapshots, the scan that builds them, the persistent entry cache, ignore rules.

Modules: entrycache, ignore, scan, snapshot.
"""

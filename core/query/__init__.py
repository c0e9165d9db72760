"""Listings: the one query function, the filter language, globs, per-snapshot postings, folder and tag counts.

Modules: filterexpr, folders, glob, listing, postings, tags.
"""

"""Search: the full-text index, ranking, note vectors (optional extra) and hybrid fusion.

Modules: fulltext, hybrid, ranking, semantic.
"""

"""Search: the full-text index, ranking, note vectors (optional extra) and hybrid fusion.

Modules: fulltext (the index object), ftsbuild (its writer), ftsquery (its readers), terms (query
syntax), snippets, results, notetext (a note's indexed text), hybrid, ranking, semantic.
"""

"""Reading one note: the Markdown lexer, frontmatter (fast YAML), sections, OKF fields, the parse into index facts.

Modules: fastyaml, mdlex, okf, parse, sections.
"""

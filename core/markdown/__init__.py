"""Reading one note: the Markdown lexer, frontmatter (fast YAML), sections, OKF fields, the parse into index facts.

Modules: fastyaml, linebreaks, lines, mdlex, okf, parse, readable, sections.
"""

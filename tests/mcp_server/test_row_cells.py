"""The listing's per-row cells (mcp_server/answers.py) are kept for every listed row, so they hold
little: rows of one shape share one keys tuple; asked for another column list than its own, and
back, a cell answers each one right."""

from __future__ import annotations

import json

from vaultwatch.core.serialize import RowCache
from vaultwatch.mcp_server import answers


def _rows(open_vault, make_vault, clock):
    files = {f"d{i % 3}/n{i}.md": f"---\nstatus: draft\ntags: [t{i}]\n---\n# N{i}\n" for i in range(6)}
    files["plain.md"] = "no frontmatter here\n"
    vault = open_vault(make_vault(files))
    entries = [e for e in vault.snapshot.entries if e.kind == "note"]
    rows, cells = RowCache().rows_with(entries, clock, False, answers._Cell)
    return entries, rows, cells


def test_cells_of_rows_of_one_shape_share_one_keys_tuple(open_vault, make_vault, clock) -> None:
    entries, rows, cells = _rows(open_vault, make_vault, clock)
    by_keys: dict[tuple[str, ...], set[int]] = {}
    for cell, row in zip(cells, rows, strict=True):
        assert cell.keys == tuple(json.loads(row))
        by_keys.setdefault(cell.keys, set()).add(id(cell.keys))
    assert len(by_keys) >= 1 and any(len([c for c in cells if c.keys == k]) > 1 for k in by_keys)
    assert all(len(ids) == 1 for ids in by_keys.values())  # one tuple object per row shape


def test_a_cell_answers_each_column_list_it_is_asked_for(open_vault, make_vault, clock) -> None:
    entries, rows, cells = _rows(open_vault, make_vault, clock)
    keys = tuple(json.loads(rows[0]))
    # its own keys; those and other rows' after them (a page that mixes row shapes: padded with
    # nulls, never kept); another order (made from the row's JSON, kept)
    padded = (*keys, "frontmatter_error", "decode_error")
    lists = [keys, ("path", "nothing", "title"), padded, keys, tuple(reversed(keys)), ("path", "nothing", "title")]
    for row, cell in zip(rows, cells, strict=True):
        doc = json.loads(row)
        for columns in lists:
            values, share = cell.table_row(row, columns)
            assert json.loads(values) == [doc.get(k) for k in columns]
            assert share == len(row) + answers.budget.escaped_len(values) + 1 + cell.link_size

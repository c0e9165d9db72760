"""Issue 13 (per-call budgets): a search hit in a huge note gets its snippet from one scan of the
body. FTS5's snippet() scores every hit of a note: a 2 MB body of one repeated word kept one
search call running for over a minute."""

from __future__ import annotations

import os
import threading
import time

import pytest

from vaultwatch.core.vault import Vault


def test_a_hit_in_a_note_of_one_repeated_word_is_answered_quickly_with_a_snippet(tmp_path):
    root = tmp_path / "v"
    root.mkdir()
    (root / "big.md").write_text("# big\n" + "word " * 400_000)  # 2 MB, 400,000 hits
    (root / "lines.md").write_text("---\ntitle: lines\n---\n" + "line of text here\n" * 100_000)
    (root / "small.md").write_text("# small\na word of text\n")
    v = Vault(root, cache=False)
    v.load()
    v.start_search()
    try:
        assert v.wait_search_ready(60)
        answers: dict[str, object] = {}

        def run() -> None:
            for q in ("word", "text line", "word text line"):
                t = time.perf_counter()
                answers[q] = (v.search(q), time.perf_counter() - t)

        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        worker.join(30)  # generous: the scan takes ~0.1 s, FTS5's snippet() over a minute
        assert not worker.is_alive(), f"search still running after 30 s: {list(answers)} answered"
        res, _took = answers["word"]
        hits = {h.path: h for h in res.hits}
        assert {"big.md", "small.md"} <= hits.keys()
        # every match in the passage marked, as in a small note's: one run of matched words, one mark
        assert hits["big.md"].snippet.startswith("**word word") and len(hits["big.md"].snippet) < 400
        assert "**word**" in hits["small.md"].snippet  # small notes: their matches found by FTS5
        assert "**line**" in {h.path: h for h in answers["text line"][0].hits}["lines.md"].snippet
    finally:
        v.stop()


@pytest.mark.parametrize("swap", ["hard link", "fifo"])
def test_the_indexer_never_reads_an_outside_hard_link_and_never_waits_on_a_fifo(tmp_path, swap):
    """Issue 13 (hard links; scanner reads): a note indexed as a plain file, then replaced on disk by
    a hard link to a file outside the vault (or by a FIFO) before the full-text index reads it. The
    indexer opened the path by name: the outside file's words became searchable (a hard link's
    descriptor lies inside the vault, so the after-open check passed) and a FIFO stopped the indexer
    for good. It now opens notes as read does (core.disk.fileopen)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("# out\nzanzibarsecret\n")
    root = tmp_path / "v"
    root.mkdir()
    (root / "x.md").write_text("# inside\nplain words\n")
    (root / "y.md").write_text("# y\nordinary zanzibar\n")
    v = Vault(root, cache=False)
    v.load()
    (root / "x.md").unlink()  # what another local process does after the scan saw the note
    if swap == "hard link":
        os.link(outside / "x.md", root / "x.md")
    else:
        os.mkfifo(root / "x.md")
    v.start_search()
    try:
        assert v.wait_search_ready(20), "the full-text index never got ready"
        assert [h.path for h in v.search("zanzibarsecret").hits] == []
        assert [h.path for h in v.search("ordinary").hits] == ["y.md"]
    finally:
        v.stop()

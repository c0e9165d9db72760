"""A pooled full-text build prepares notes in one process per core but the writer's: SQLite's
indexing in the writer takes about as long as the preparing, so more workers only wait on it,
and each is a process of its own in memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vaultwatch.core.search import ftsprep


@pytest.mark.parametrize("cores, expected", [(1, 1), (2, 1), (4, 3)])
def test_a_pooled_build_leaves_the_writer_a_core(make_vault, monkeypatch, cores, expected) -> None:
    root = os.path.realpath(make_vault({f"n{i}.md": f"# Note {i}\n\nbody {i}\n" for i in range(12)}))
    real = ftsprep.process_context
    started: list[object] = []

    class Counted:
        def __init__(self, ctx) -> None:
            self.ctx = ctx

        def Pipe(self):  # noqa: N802  (the context's name)
            return self.ctx.Pipe()

        def Process(self, **kw):  # noqa: N802
            proc = self.ctx.Process(**kw)
            started.append(proc)
            return proc

    monkeypatch.setattr(ftsprep, "process_context", lambda module, **kw: Counted(real(module, **kw)))
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    jobs = [ftsprep.Job(f"n{i}.md", 20, f"Note {i}", "", "") for i in range(12)]
    batches = [jobs[i : i + 2] for i in range(0, 12, 2)]
    rows = [r for b in ftsprep.prepare_pooled(root, batches, lambda: False, [0.0]) for r in b]
    assert [r.path for r in rows] == [j.path for j in jobs]
    assert rows == ftsprep.prepare(root, jobs, ftsprep.FieldTokens())
    assert len(started) == expected


def test_field_tokens_are_the_same_when_the_word_cache_starts_afresh(monkeypatch) -> None:
    """The word cache is cleared once it would grow past MAX_CACHED_WORDS; the rows that filled
    it up still get every word's tokens, those cached before the clear included."""
    rows = [(f"note {i}", f"Running budgets {i}", f"Alias {i % 3}", f"Heading café {i}") for i in range(40)]
    whole = ftsprep.FieldTokens()
    try:
        expected = [whole.terms([row]) for row in rows]
    finally:
        whole.close()
    monkeypatch.setattr(ftsprep, "MAX_CACHED_WORDS", 12)
    small = ftsprep.FieldTokens()
    try:
        got = [small.terms([row]) for row in rows]  # each row's new numbers fill it up: cleared along the way
    finally:
        small.close()
    assert got == expected


def test_a_build_process_imports_no_process_pool() -> None:
    """A big first build's own process and its preparing workers start by importing
    core.search.ftsfirst (or ftsprep): a fresh interpreter, whose imports are its start-up and
    its memory for the build's time. Starting processes is the app's side: the pool's module
    (multiprocessing's contexts, the scanner) is not among them."""
    code = (
        "import sys, json\n"
        "import vaultwatch.core.search.ftsfirst, vaultwatch.core.search.ftsprep\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    root = Path(__file__).resolve().parents[3]
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(root)),
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    modules = set(json.loads(run.stdout))
    assert "vaultwatch.core.search.notetext" in modules
    assert not {"vaultwatch.core.index.parsepool", "multiprocessing"} & modules

"""Semantic and hybrid search (the optional `semantic` extra), on the judged corpus.

Without the extra the tests that need it skip (with the reason); the ones about what the
core does without it always run.
"""

from __future__ import annotations

import contextlib
import socket
import time
from pathlib import Path

import pytest

from vaultwatch.core.errors import QueryError, VaultError
from vaultwatch.core.search import reuse, semantic
from vaultwatch.core.vault import Vault

# one worker builds the module-scoped vaults once (tests split over workers built them on each)
pytestmark = pytest.mark.xdist_group("semantic")

needs_extra = pytest.mark.skipif(
    not semantic.available(), reason="the semantic extra is not installed (pip install 'vaultwatch[semantic]')"
)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    from bench.searcheval import write

    return write(tmp_path_factory.mktemp("semantic") / "eval")


@pytest.fixture(scope="module")
def vec_vault(corpus, tmp_path_factory):
    import os

    from vaultwatch.core.clock import FixedClock

    if not semantic.available():
        pytest.skip("the semantic extra is not installed (pip install 'vaultwatch[semantic]')")
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("semantic-cache"))
    v = Vault(corpus, clock=FixedClock.at_date(__import__("datetime").date(2026, 11, 29)))
    v.start_watching()
    v.load()
    assert v.wait_search_ready(60)
    progress: list = []
    v.bus.subscribe(lambda e: progress.append((e.done, e.total)) if getattr(e, "phase", None) == "vectors" else None)
    v.vector_progress = progress
    vectors = v.start_vectors()
    assert vectors is not None and vectors.wait_ready(120), vectors.problem
    yield v
    v.stop()
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old


@needs_extra
@contextlib.contextmanager
def warm_vectors(corpus: Path, clock):
    """A second Vault on the corpus, loaded, its full-text index and note vectors ready (from
    the caches the module's vec_vault wrote); stopped afterwards."""
    v = Vault(corpus, clock=clock)
    v.load()
    try:
        assert v.wait_search_ready(60)
        vectors = v.start_vectors()
        assert vectors.wait_ready(60), vectors.problem
        yield v, vectors
    finally:
        v.stop()


def test_vectors_are_int8_one_row_per_note(vec_vault):
    vectors = vec_vault._vectors
    notes = sum(1 for e in vec_vault.snapshot.entries if e.kind == "note")
    assert vectors._mat.dtype.name == "int8" and vectors._mat.shape == (notes, semantic.DIM)
    assert vec_vault.semantic_status() == {
        "installed": True,
        "started": True,
        "ready": True,
        "done": vectors.done,
        "total": vectors.total,
        "problem": None,
    }


@needs_extra
def test_the_first_vector_build_reports_progress_on_the_bus(vec_vault):
    progress = vec_vault.vector_progress
    notes = sum(1 for e in vec_vault.snapshot.entries if e.kind == "note")
    assert progress[0] == (0, progress[0][1]) and progress[0][1] >= notes - 1
    assert progress[-1][0] == progress[-1][1] and len(progress) == 1 + -(-progress[0][1] // semantic.BATCH)
    assert [d for d, _ in progress] == sorted(d for d, _ in progress)


@needs_extra
def test_semantic_finds_the_page_that_uses_other_words(vec_vault):
    query = "how can I give a note another name"  # the Aliases page says "alternative names"
    keyword = [h.path for h in vec_vault.search(query, mode="keyword").hits[:3]]
    meaning = vec_vault.search(query, mode="semantic")
    assert meaning.mode == "semantic"
    assert "help/Aliases.md" not in keyword and "help/Aliases.md" in [h.path for h in meaning.hits[:3]]
    hit = next(h for h in meaning.hits if h.path == "help/Aliases.md")
    assert hit.snippet_plain.startswith("If you want to reference a file") and hit.highlights == ()


@needs_extra
def test_hybrid_is_the_default_once_vectors_are_ready_and_keeps_quality(vec_vault):
    from bench.searcheval import evaluate

    res = vec_vault.search("create virtual machine")
    assert res.mode == "hybrid" and res.hits[0].path == "reference/Az.Compute/New-AzVM.md"
    keyword, hybrid = evaluate(vec_vault, mode="keyword"), evaluate(vec_vault, mode="hybrid")
    assert hybrid["hit@3"] >= keyword["hit@3"] and hybrid["mrr@10"] >= keyword["mrr@10"] - 0.01, (keyword, hybrid)


@needs_extra
def test_hybrid_scopes_pages_and_excludes(vec_vault):
    res = vec_vault.search("secret", mode="hybrid", folder="reference/azps-12.5.0", limit=3)
    assert res.hits and all(h.path.startswith("reference/azps-12.5.0/") for h in res.hits)
    page2 = vec_vault.search("secret", mode="hybrid", folder="reference/azps-12.5.0", limit=3, cursor=res.next_cursor)
    assert not {h.path for h in page2.hits} & {h.path for h in res.hits}
    excluded = vec_vault.search("secret -backup", mode="semantic", limit=50)
    assert "reference/azps-12.5.0/Az.KeyVault/Backup-AzKeyVaultSecret.md" not in [h.path for h in excluded.hits]


@needs_extra
def test_hybrid_answers_the_same_terms_again_from_its_last_answer(vec_vault, monkeypatch):
    """A space typed after the words (issue 19: search as you type) asks for the same terms: the
    last answer is given again, under the new text (no query by meaning), and its cursor pages
    the new text; other words are searched."""
    vectors = vec_vault._vectors
    asked: list[str] = []
    query = vectors.query
    monkeypatch.setattr(vectors, "query", lambda words, *a: asked.append(words) or query(words, *a))
    first = vec_vault.search("create virtual machine", mode="hybrid", limit=3)
    again = vec_vault.search("create virtual machine ", mode="hybrid", limit=3)
    assert asked == ["create virtual machine"]
    assert again.query == "create virtual machine " and again.hits == first.hits and again.total == first.total
    page2 = vec_vault.search("create virtual machine ", mode="hybrid", limit=3, cursor=again.next_cursor)
    assert page2.hits and not {h.path for h in page2.hits} & {h.path for h in first.hits}
    vec_vault.search("create virtual machines", mode="hybrid", limit=3)
    assert asked[-1] == "create virtual machines"


@needs_extra
def test_similar_notes_leave_the_note_out(vec_vault):
    res = vec_vault.similar("reference/Az.Compute/Start-AzVM.md", limit=5)
    got = [h.path for h in res.hits]
    assert "reference/Az.Compute/Start-AzVM.md" not in got and len(got) == 5
    assert all(p.startswith("reference/Az.Compute/") and "AzVM" in p for p in got[:3]), got
    with pytest.raises(VaultError, match="not found"):
        vec_vault.similar("no/such note.md")


@needs_extra
def test_a_new_note_gets_its_vector_from_the_live_index(vec_vault, corpus):
    (corpus / "team" / "Bicycle repair.md").write_text(
        "# Bicycle repair\n\nFix a flat tyre: remove the wheel, find the puncture, patch the inner tube.\n"
    )
    assert vec_vault.wait_for_pending_writes(10)
    deadline = time.monotonic() + 20
    while vec_vault._vectors.vector_of("team/Bicycle repair.md") is None and time.monotonic() < deadline:
        time.sleep(0.05)
    hits = vec_vault.search("mend a punctured bike tire", mode="semantic", limit=3).hits
    assert hits[0].path == "team/Bicycle repair.md"


@needs_extra
def test_the_model_table_is_mapped_not_copied_and_survives_release():
    import numpy as np
    from safetensors import safe_open

    e = semantic.Embedder()
    weights = Path(e._map_path)
    with safe_open(str(weights), framework="np", device="cpu") as f:
        copied = f.get_tensor("embedding.weight")
    assert e._table.dtype == copied.dtype and e._table.shape == copied.shape
    assert not e._table.flags.owndata and np.array_equal(e._table, copied)  # a view of the file's bytes
    before = e.embed(["rotate the deploy keys", "Zürich café notes"])
    e.release()
    assert np.array_equal(e.embed(["rotate the deploy keys", "Zürich café notes"]), before)


@needs_extra
def test_a_warm_start_reuses_the_cached_vectors_offline(corpus, vec_vault, monkeypatch, clock):
    vec_vault._vectors._save_cache()

    def no_network(self, *a, **k):
        if self.family != socket.AF_UNIX:
            raise OSError("no network in this test")
        return real_connect(self, *a, **k)

    real_connect = socket.socket.connect
    monkeypatch.setattr(socket.socket, "connect", no_network)
    with warm_vectors(corpus, clock) as (v, vectors):
        assert vectors.total == 0  # nothing computed again: every vector came from vectors.npz
        assert vectors.embedder is None  # nothing to embed: the tokenizer (~18 MB) is not loaded
        v.prepare_semantic_queries()  # a front end about to search: the tokenizer loads in the background
        deadline = time.monotonic() + 30
        while vectors.embedder is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert vectors.embedder is not None
        assert v.search("how can I give a note another name", mode="semantic").hits


@needs_extra
def test_a_warm_start_after_changes_embeds_only_the_changed_and_added_notes(make_vault, clock, monkeypatch, tmp_path):
    import os

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    notes = {
        f"n{i}.md": f"# Note {i}\n\n{word} notes about {word}.\n"
        for i, word in enumerate(["bicycles", "gardens", "kettles", "rivers", "violins"])
    }
    root = make_vault(notes)

    def started():
        v = Vault(root, clock=clock)
        v.load()
        assert v.wait_search_ready(30)
        vectors = v.start_vectors()
        assert vectors is not None and vectors.wait_ready(60), vectors.problem
        return v, vectors

    v, vectors = started()
    before = dict(zip(vectors._paths, vectors._mat.copy(), strict=True))
    v.stop()
    (root / "n1.md").write_text("# Note 1\n\nSailing boats and harbours.\n", encoding="utf-8")
    os.utime(root / "n1.md", ns=(1, 1))  # another mtime whatever the clock's resolution
    (root / "n3.md").unlink()
    (root / "n5.md").write_text("# Note 5\n\nTelescopes and stars.\n", encoding="utf-8")
    v, vectors = started()
    try:
        assert vectors.total == 2  # n1 changed, n5 added; n0, n2 and n4 came from the cache
        assert sorted(vectors._paths) == ["n0.md", "n1.md", "n2.md", "n4.md", "n5.md"]
        rows = dict(zip(vectors._paths, vectors._mat, strict=True))
        for kept in ("n0.md", "n2.md", "n4.md"):
            assert (rows[kept] == before[kept]).all()
        assert not (rows["n1.md"] == before["n1.md"]).all()
        assert v.similar("n5.md", limit=3).hits
    finally:
        v.stop()


def test_without_the_extra_search_is_keyword_and_says_so(make_vault, clock, monkeypatch):
    monkeypatch.setenv("VAULTWATCH_SEMANTIC", "0")
    v = Vault(make_vault({"a.md": "# A\n\nDeploy runbook.\n"}), clock=clock)
    v.load()
    try:
        assert v.wait_search_ready(20)
        assert v.start_vectors() is None
        res = v.search("deploy")
        assert res.mode == "keyword" and [h.path for h in res.hits] == ["a.md"]
        with pytest.raises(QueryError, match="not installed"):
            v.search("deploy", mode="semantic")
        with pytest.raises(QueryError, match="semantic"):
            v.similar("a.md")
        with pytest.raises(QueryError, match="mode must be one of"):
            v.search("deploy", mode="fuzzy")
        assert v.semantic_status()["installed"] is False
    finally:
        v.stop()


@needs_extra
def test_the_embedder_is_dropped_once_idle_and_queries_still_answer_the_same(corpus, vec_vault, monkeypatch, clock):
    query = "how can I give a note another name"
    expected = [(h.path, h.score) for h in vec_vault.search(query, mode="hybrid").hits]
    vec_vault._vectors._save_cache()
    monkeypatch.setattr(semantic, "EMBEDDER_IDLE_S", 0.3)
    monkeypatch.setattr(reuse, "REUSE_SECONDS", 0.0)  # the same query again is embedded again, not reused
    with warm_vectors(corpus, clock) as (v, vectors):
        assert [(h.path, h.score) for h in v.search(query, mode="hybrid").hits] == expected
        deadline = time.monotonic() + 30
        while vectors.embedder is not None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert vectors.embedder is None  # its tokenizer (~16 MB) is not kept while nobody searches
        assert [(h.path, h.score) for h in v.search(query, mode="hybrid").hits] == expected
        assert vectors.embedder is not None  # loaded again for that query


def mapped_kib(path: Path) -> int | None:
    """KiB of `path`'s mappings resident in this process (None when it is not mapped at all)."""
    total = None
    current = False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split(maxsplit=1)[0]
            if not head.endswith(":"):  # a mapping's first line: its range, ..., its file
                current = line.rstrip("\n").endswith(" " + str(path))
            elif current and head == "Rss:":
                total = (total or 0) + int(line.split()[1])
    return total


needs_smaps = pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="no /proc/self/smaps here")


NOTES = {
    f"n{i}.md": f"# Note {i}\n\n{w} notes about {w}.\n"
    for i, w in enumerate(["bicycles", "gardens", "kettles", "rivers", "violins"])
}


def vectors_ready(root: Path, clock, *, watch: bool = False):
    """A Vault on `root`, loaded, its full-text index and note vectors ready (stop it after)."""
    v = Vault(root, clock=clock)
    if watch:
        v.start_watching()
    v.load()
    assert v.wait_search_ready(30)
    vectors = v.start_vectors()
    assert vectors is not None and vectors.wait_ready(60), vectors.problem
    return v, vectors


@needs_extra
@needs_smaps
def test_the_vectors_are_the_cache_files_pages_and_a_search_leaves_none_of_them_resident(
    make_vault, clock, monkeypatch, tmp_path
):
    """Issue 16: a copy of the matrix stayed resident for good (25.6 MB at 100k notes); mapped,
    a scan's pages go back to the page cache after it."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = make_vault(NOTES)
    v, vectors = vectors_ready(root, clock)  # the first build writes the cache file
    v.stop()
    v, vectors = vectors_ready(root, clock)
    try:
        assert vectors.total == 0 and vectors._file is not None
        assert not vectors._mat.flags.owndata and not vectors._mat.flags.writeable  # a view of the file
        assert mapped_kib(vectors.cache_path) == 0  # the warm start's comparison left nothing resident
        assert v.search("repairing a bike", mode="semantic", limit=1).hits[0].path == "n0.md"
        assert mapped_kib(vectors.cache_path) == 0
        assert mapped_kib(Path(vectors.embedder._map_path)) == 0  # nor the model's rows the query read
        assert v.similar("n3.md", limit=3).hits
        assert mapped_kib(vectors.cache_path) == 0
    finally:
        v.stop()


@needs_extra
@needs_smaps
def test_a_changed_note_is_saved_and_the_new_file_is_mapped(make_vault, clock, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = make_vault(NOTES)
    v, vectors = vectors_ready(root, clock, watch=True)
    try:
        deadline = time.monotonic() + 20  # the build is ready first, then it saves and maps its file
        while vectors._file is None and time.monotonic() < deadline:
            time.sleep(0.05)
        first = vectors._file
        assert first is not None and mapped_kib(vectors.cache_path) == 0  # the cold build's matrix, saved and mapped
        (root / "n5.md").write_text("# Note 5\n\nTelescopes and stars.\n", encoding="utf-8")
        deadline = time.monotonic() + 20
        while vectors.vector_of("n5.md") is None and time.monotonic() < deadline:
            time.sleep(0.05)
        deadline = time.monotonic() + 20
        while vectors._file in (first, None) and time.monotonic() < deadline:  # saved, then mapped
            time.sleep(0.05)
        assert vectors._file is not first and vectors._file is not None and not vectors._mat.flags.owndata
        assert v.search("astronomy and the night sky", mode="semantic", limit=1).hits[0].path == "n5.md"
        assert mapped_kib(vectors.cache_path) == 0
        on_disk = semantic.vectorfile.load(vectors.cache_path, v.root_real, semantic.CACHE_VERSION)
        assert on_disk is not None and on_disk[0].decode().split("\n") == vectors._paths
        assert (on_disk[1].vecs == vectors._mat).all() and (on_disk[1].keys == vectors._keys).all()
    finally:
        v.stop()


@needs_extra
def test_vectors_that_cannot_be_saved_stay_in_memory_and_answer(make_vault, clock, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = make_vault({"a.md": "# Bicycles\n\nRepairing bicycles.\n", "b.md": "# Gardens\n\nGrowing tomatoes.\n"})
    v = Vault(root, clock=clock)
    problems: list = []
    v.bus.subscribe(lambda e: problems.append(e.message) if hasattr(e, "message") else None)
    v.load()
    try:
        assert v.wait_search_ready(30)
        (v.start_search().db_path.with_name("vectors.npz")).mkdir()  # where the file goes: a folder
        vectors = v.start_vectors()
        assert vectors.wait_ready(60), vectors.problem
        deadline = time.monotonic() + 10
        while not problems and time.monotonic() < deadline:
            time.sleep(0.02)
        assert any("could not write the vector cache" in p for p in problems), problems
        assert vectors._file is None and vectors._mat.flags.owndata
        assert v.search("fixing a bike", mode="semantic", limit=1).hits[0].path == "a.md"
        assert not list(vectors.cache_path.parent.glob("vectors.npz.tmp*"))  # nothing left behind
    finally:
        v.stop()


@needs_extra
@needs_smaps
def test_embedding_one_query_starts_no_thread_pool():
    """The tokenizers' encode_batch starts a thread pool that stays for good (~1.2 MB of RSS for
    the app's first query); one text is encoded on the caller's thread (and as encode_batch does)."""
    import subprocess
    import sys

    code = (
        "import os\n"
        "from vaultwatch.core.search import semantic\n"
        "e = semantic.Embedder()\n"
        "before = len(os.listdir('/proc/self/task'))\n"
        "one = e.embed(['rotate the deploy keys'])\n"
        "after = len(os.listdir('/proc/self/task'))\n"
        "both = e.embed(['rotate the deploy keys', 'Zürich café notes'])\n"
        "assert (one[0] == both[0]).all()\n"
        "print(before, after)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[3],
        env={**__import__("os").environ, "RAYON_NUM_THREADS": "2"},
    )
    assert out.returncode == 0, out.stderr
    before, after = out.stdout.split()
    assert after == before


@needs_extra
@needs_smaps
def test_queries_do_not_grow_the_tokenizers_memory():
    """Issue 16: the tokenizer's BPE cache kept every short text encoded (up to 10,000), and as-you-
    type searches and agents' queries are all different: ~3 KB more heap per query, for as long
    as the tokenizer stays loaded."""
    import subprocess
    import sys

    code = (
        "from vaultwatch.core.memory import release_free_memory\n"
        "from vaultwatch.core.search import semantic\n"
        "def anon():\n"
        "    with open('/proc/self/smaps_rollup') as f:\n"
        "        return next(int(l.split()[1]) for l in f if l.startswith('Anonymous:'))\n"
        "e = semantic.Embedder()\n"
        "first = e.embed(['rotate the deploy keys'])\n"
        "release_free_memory()\n"
        "before = anon()\n"
        "for i in range(3000):\n"
        "    e.embed([f'query {i} about the deploy runbook and its keys {i * 7}'])\n"
        "release_free_memory()\n"
        "assert (e.embed(['rotate the deploy keys']) == first).all()\n"
        "print(anon() - before)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert out.returncode == 0, out.stderr
    grown_kib = int(out.stdout)
    assert grown_kib < 3 * 1024, f"{grown_kib} KiB more after 3,000 queries"


def fresh_vectors(root: Path, clock, cache: Path):
    """Note vectors built from nothing (a new cache folder): (paths, int8 matrix, whether this
    process loaded the embedder for them, vectors.done)."""
    import os

    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(cache)
    try:
        v, vectors = vectors_ready(root, clock)
        try:
            return list(vectors._paths), vectors._mat.copy(), vectors.embedder is not None, vectors.done
        finally:
            v.stop()
    finally:
        if old is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = old


@needs_extra
def test_a_big_build_embeds_in_a_process_of_its_own_with_the_same_vectors(corpus, clock, monkeypatch, tmp_path):
    """A build of PROCESS_MIN_NOTES notes or more never loads the embedder into this process
    (its tokenizer and thread pool left ~25 MB behind at 100k notes); the vectors are the ones
    this process would have computed."""
    from vaultwatch.core.search import embedprocess

    here = fresh_vectors(corpus, clock, tmp_path / "here")
    assert here[2] and here[3] > 200  # a small build: this process's embedder
    monkeypatch.setattr(embedprocess, "PROCESS_MIN_NOTES", 1)
    monkeypatch.setattr(semantic, "BATCH", 64)  # several batches through the pipeline
    started = []
    real_start = embedprocess.start
    monkeypatch.setattr(embedprocess, "start", lambda: started.append(1) or real_start())
    pooled = fresh_vectors(corpus, clock, tmp_path / "pooled")
    assert started == [1]
    assert not pooled[2]  # no embedder loaded here
    assert pooled[0] == here[0] and pooled[3] == here[3]
    assert (pooled[1] == here[1]).all()


@needs_extra
@pytest.mark.parametrize("error", [OSError("no processes in this sandbox"), ValueError("bad value(s) in fds_to_keep")])
def test_a_big_build_whose_process_cannot_start_embeds_here(corpus, clock, monkeypatch, tmp_path, error):
    from vaultwatch.core.search import embedprocess

    here = fresh_vectors(corpus, clock, tmp_path / "here")
    monkeypatch.setattr(embedprocess, "PROCESS_MIN_NOTES", 1)

    def refuse():
        raise error

    monkeypatch.setattr(embedprocess, "start", refuse)
    fallback = fresh_vectors(corpus, clock, tmp_path / "fallback")
    assert fallback[2]  # embedded here
    assert fallback[0] == here[0] and (fallback[1] == here[1]).all()

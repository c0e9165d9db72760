"""The link graph and backlink tables patched across edits, new files and deletions answer
exactly what ones built from scratch answer (the same resolver, Obsidian's rules)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultwatch.core.index.snapshot import Index
from vaultwatch.core.links import resolve as linkmap
from vaultwatch.core.links.graph import LinkGraph
from vaultwatch.core.model import ATTACHMENT, NOTE, Link, make_entry

POOL = ["a/Foo.md", "b/foo.md", "a/Bar.md", "c/d/Bar.md", "Baz.md", "b/pic.png", "c/pic.png", "a/Other.md"]
TARGETS = ["Foo", "foo.md", "Bar", "c/d/Bar", "Baz", "pic.png", "Missing", "a/Foo", "Other"]

_links = st.lists(st.tuples(st.sampled_from(TARGETS), st.sampled_from(["wiki", "embed", "markdown"])), max_size=4)


def _entry(path: str, links: list) -> object:
    if path.endswith(".png"):
        return make_entry(path, ATTACHMENT, 1, 0, path)
    return make_entry(path, NOTE, 1, 0, path, links=tuple(Link(t, k) for t, k in links))


def _view(snapshot, graph: LinkGraph):
    notes = [e.path for e in snapshot.entries if e.kind != "folder"]
    reports = {p: graph.report(p).as_json() | {"generation": 0} for p in notes}
    backlinks = {p: linkmap.backlinks(snapshot, p) for p in notes}
    return reports, backlinks, [r.as_json() for r in graph.broken], graph.orphans()


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(st.sampled_from(POOL), _links, min_size=1),
    st.lists(st.tuples(st.sampled_from(["put", "put", "remove", "look"]), st.sampled_from(POOL), _links), max_size=10),
)
def test_patched_graph_answers_like_a_fresh_one(initial: dict, steps: list) -> None:
    index = Index()
    entries = {p: _entry(p, links) for p, links in initial.items()}
    index.load(entries.values())
    graph = LinkGraph(index.snapshot)
    _view(index.snapshot, graph)  # build the tables once, so later generations patch them
    for op, path, links in steps:
        if op == "look":
            graph = LinkGraph(index.snapshot, graph)
            _view(index.snapshot, graph)
            continue
        if op == "remove":
            if path not in entries:
                continue
            del entries[path]
            index.apply(removals=[path])
        else:
            entries[path] = _entry(path, links)
            index.apply(upserts=[entries[path]])
        graph = LinkGraph(index.snapshot, graph)
        fresh = Index()
        fresh.load(entries.values())
        assert _view(index.snapshot, graph) == _view(fresh.snapshot, LinkGraph(fresh.snapshot))

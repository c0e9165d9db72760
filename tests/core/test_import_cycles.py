"""No import cycle between core's modules at run time.

The layers contract in pyproject.toml orders core's subpackages and top-level modules; this
test looks inside them too: the graph of every import between two `vaultwatch.core` modules,
function-local imports included (a cycle hidden in a function is still a cycle), imports under
`if TYPE_CHECKING:` left out (they only name types for mypy), must have no cycle.
"""

from __future__ import annotations

import pytest

grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter, which is not installed here")

CORE = "vaultwatch.core"


def core_graph() -> dict[str, set[str]]:
    graph = grimp.build_graph("vaultwatch", exclude_type_checking_imports=True, cache_dir=None)
    modules = sorted(m for m in graph.modules if m.startswith(CORE + "."))
    return {m: {i for i in graph.find_modules_directly_imported_by(m) if i.startswith(CORE + ".")} for m in modules}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in edges:
        if root in index:
            continue
        # Tarjan's algorithm, iterative: (module, its imports still to visit)
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, todo = work[-1]
            step = next(todo, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(edges.get(step, ())))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges.get(node, ()):
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}, "f": set()}
    assert sorted(cycles(edges)) == [["a", "b", "c"], ["e"]]


def test_core_modules_import_each_other_without_cycles() -> None:
    edges = core_graph()
    assert {"vaultwatch.core.vault", "vaultwatch.core.edit.writes", "vaultwatch.core.review.journal"} <= set(edges)
    found = cycles(edges)
    described = [
        " <-> ".join(m.removeprefix(CORE + ".") for m in component)
        + ": "
        + ", ".join(
            f"{a.removeprefix(CORE + '.')} -> {b.removeprefix(CORE + '.')}"
            for a in component
            for b in sorted(edges[a] & set(component))
        )
        for component in found
    ]
    assert found == [], "import cycles in core:\n" + "\n".join(described)

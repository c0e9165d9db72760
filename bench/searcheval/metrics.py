"""hit@3 and MRR@10 of the judged queries against a vault's `search`."""

from __future__ import annotations

from typing import Any

from vaultwatch.core.errors import QueryError

from .queries import QUERIES


def evaluate(vault: Any, queries=QUERIES, **search_args: Any) -> dict[str, Any]:
    """Run every judged query; return hit@3, MRR@10 (overall and per shape) and the misses.

    A query that raises a QueryError or finds nothing scores 0 (rank None).
    """
    per: list[dict[str, Any]] = []
    for text, relevant, shape in queries:
        try:
            res = vault.search(text, limit=10, **search_args)
            got = [h.path for h in res.hits]
        except QueryError:
            got = []
        rank = next((i for i, p in enumerate(got, 1) if p in relevant), None)
        per.append({"query": text, "shape": shape, "rank": rank, "top3": got[:3]})

    def summary(rows: list[dict[str, Any]]) -> dict[str, float]:
        n = len(rows) or 1
        return {
            "hit@3": round(sum(1 for r in rows if r["rank"] and r["rank"] <= 3) / n, 3),
            "mrr@10": round(sum(1 / r["rank"] for r in rows if r["rank"]) / n, 3),
            "queries": len(rows),
        }

    shapes = sorted({r["shape"] for r in per})
    return {
        **summary(per),
        "by_shape": {s: summary([r for r in per if r["shape"] == s]) for s in shapes},
        "misses": [r for r in per if not r["rank"] or r["rank"] > 3],
    }

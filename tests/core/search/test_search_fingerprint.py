"""A search's fingerprint (what its cursor holds of its words and scope) is memoized: the same digest as the
definition it replaced, for every scope, also where two scopes are equal as keys but digest apart."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict

from vaultwatch.core.query.listing import Query
from vaultwatch.core.search.ftsquery import _fingerprint


def digest(strict: str, scope: Query) -> str:
    """The fingerprint as it was worked out on every search."""
    return hashlib.sha256(json.dumps([strict, asdict(scope)], sort_keys=True, default=str).encode()).hexdigest()[:12]


SCOPES = [
    Query(),
    Query(folder="A"),
    Query(folder=""),
    Query(folder="A", recursive=False),
    Query(pattern="**/*.md"),
    Query(filters=(("status", "draft"),)),
    Query(filters=(("n", "1"),)),
    Query(filters=(("n", 1),)),  # equal to the next as a key (1 == True), not as JSON
    Query(filters=(("n", True),)),
    Query(filters=(("n", 1.0),)),
    Query(exclude=(("status", "x"),), words=("a", "b")),
    Query(only_paths=("a.md", "b.md")),
    Query(only_paths=()),
    Query(include_attachments=True, include_notes=True),
]


def test_a_searchs_fingerprint_is_the_digest_of_its_words_and_scope():
    for _ in range(2):  # worked out, then from the memo
        for strict in ('"vault"', '"vault" "0007"', '("vault" OR "0007")', '"vault" NOT "x"'):
            for scope in SCOPES:
                assert _fingerprint(strict, scope) == digest(strict, scope), (strict, scope)
    assert len({_fingerprint('"a"', q) for q in SCOPES[6:10]}) == 4  # "1", 1, True, 1.0: four cursors

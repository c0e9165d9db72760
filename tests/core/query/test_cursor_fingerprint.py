"""What a cursor holds of its query (a digest of every argument but limit and cursor) is worked out once
per query, not once per page, and is the same digest as ever: cursors handed out before still page on,
and a cursor of one query is still refused by another, also one whose arguments differ only in type."""

from __future__ import annotations

import base64
import hashlib
import json
import random
from dataclasses import asdict, replace

import pytest

from vaultwatch.core.errors import QueryError
from vaultwatch.core.query import listing
from vaultwatch.core.query.listing import Query, run_query
from vaultwatch.core.vault import Vault


def old_fingerprint(q: Query) -> str:
    """The digest as cursors have always held it."""
    core = asdict(replace(q, limit=None, cursor=None))
    return hashlib.sha256(json.dumps(core, sort_keys=True, default=str).encode()).hexdigest()[:12]


def held(cursor: str) -> list:
    return json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))


@pytest.fixture
def vault(make_vault, open_vault) -> Vault:
    files = {
        f"{'ab'[i % 2]}/n{i:02d}.md": f"---\nstatus: {'draft' if i % 3 else 'stable'}\n---\n# N{i}\n" for i in range(60)
    }
    return open_vault(make_vault(files))


def random_queries(seed: int):
    rnd = random.Random(seed)
    for _ in range(40):
        yield Query(
            folder=rnd.choice([None, "a", "b"]),
            recursive=rnd.choice([True, False]),
            pattern=rnd.choice([None, "*/n1*"]),
            filters=rnd.choice([(), (("status", "draft"),)]),
            text=rnd.choice([None, "n2"]),
            sort=rnd.choice(["path", "modified", "title"]),
            descending=rnd.random() < 0.3,
            limit=rnd.choice([1, 3, 7]),
        )


def test_cursors_hold_the_digest_they_always_held(vault):
    for q in random_queries(7):
        res = vault.list(q)
        if res.next_cursor:
            assert held(res.next_cursor)[0] == old_fingerprint(q)
            # a cursor made the old way pages on as before
            fp, key, path = held(res.next_cursor)
            again = vault.list(replace(q, cursor=listing.encode_cursor(old_fingerprint(q), key, path)))
            assert again == vault.list(replace(q, cursor=res.next_cursor))


def test_a_cursor_of_another_query_is_refused_even_when_only_a_type_differs(vault):
    first = vault.list(Query(limit=2, recursive=True))
    assert first.next_cursor
    with pytest.raises(QueryError, match="different query"):
        vault.list(Query(limit=2, recursive=1, cursor=first.next_cursor))  # type: ignore[arg-type]
    with pytest.raises(QueryError, match="different query"):
        vault.list(Query(limit=2, folder="a", cursor=first.next_cursor))


def test_a_whole_listing_digests_its_query_once(vault, monkeypatch):
    digests = []
    real = hashlib.sha256

    def counting(data=b"", **kw):
        digests.append(data)
        return real(data, **kw)

    q = Query(limit=2, filters=(("status", "draft"),), pattern="*/n*")  # paged by position, and not
    monkeypatch.setattr(listing.hashlib, "sha256", counting)
    pages = 0
    for query in (q, replace(q, sort="title")):
        cursor = None
        while True:
            res = run_query(vault.snapshot, replace(query, cursor=cursor), vault.clock)
            pages += 1
            cursor = res.next_cursor
            if not cursor:
                break
    monkeypatch.undo()
    assert pages > 20
    assert len(digests) <= 2

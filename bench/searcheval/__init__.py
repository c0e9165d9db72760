"""The judged search evaluation: a generated corpus where each query has one obvious answer.

`corpus.write(root)` writes the vault; `queries.QUERIES` are (query, relevant paths, shape);
`evaluate(vault)` runs them through `Vault.search` and returns hit@3 and MRR@10.
"""

from __future__ import annotations

from .corpus import write  # noqa: F401
from .metrics import evaluate  # noqa: F401
from .queries import QUERIES  # noqa: F401

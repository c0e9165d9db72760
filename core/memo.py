"""A bounded memo for values that cost far more to make than to look up (a query's cursor digest,
asked on every page): at most `most` kept, all dropped at once when full, since the keys a
process asks for again are the few of its current queries."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class BoundedMemo(Generic[V]):
    def __init__(self, most: int) -> None:
        self.most = most
        self._values: dict[Hashable, V] = {}

    def get(self, key: Hashable, make: Callable[[], V]) -> V:
        """The value kept for `key`, made (and kept) by `make()` the first time; raises TypeError for
        an unhashable key, as a dict does."""
        value = self._values.get(key)
        if value is None:
            value = make()
            if len(self._values) >= self.most:
                self._values.clear()
            self._values[key] = value
        return value

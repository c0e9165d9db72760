"""Letting go of what the pinned Textual keeps by mistake.

Textual's `StylesCache.get_inner_outer` is memoised with `functools.lru_cache` on the method
itself, so each cache key holds the `StylesCache` of a widget that drew a line, up to 1,024 of
them: every widget of every dialog the person has closed stays in memory with the lines it
cached and the strips derived from them (each Textual `Strip` carries several caches of its
own). Memory grows with every approval, and each full collection walks more of it, which
shows as pauses while keys are pressed. It is reported upstream (see docs/performance.md); until
the pin moves past a fix, the app empties that cache whenever a screen closes. What the cache
saves is two `Style` objects per widget, made again on the next frame.
"""

from __future__ import annotations

from textual._styles_cache import StylesCache


def release_style_caches() -> None:
    """Empty the cache that keeps closed screens' widgets alive (a Textual without it: nothing)."""
    clear = getattr(getattr(StylesCache, "get_inner_outer", None), "cache_clear", None)
    if callable(clear):
        clear()

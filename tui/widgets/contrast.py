"""Readable colours: WCAG contrast ratios, and muted text that keeps at least 4.5:1 against the
background it is drawn on in every theme.

Textual's `$text-muted` is the foreground at 60% alpha, which needs a background to resolve
against; resolved without one it came out as `#ffffff` in every theme.
"""

from __future__ import annotations

from rich.color import Color as RichColor
from textual.color import Color

MIN_RATIO = 4.5  # WCAG AA for normal text


def luminance(color: Color) -> float:
    """Relative luminance (WCAG 2.x)."""

    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in color.rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def ratio(a: Color, b: Color) -> float:
    """The contrast ratio of two opaque colours, 1 to 21."""
    la, lb = luminance(a), luminance(b)
    hi, lo = max(la, lb), min(la, lb)
    return (hi + 0.05) / (lo + 0.05)


def readable(color: Color, background: Color, toward: Color, minimum: float = MIN_RATIO) -> Color:
    """`color` (composited on `background`), moved toward `toward` (the normal text colour)
    just as far as it takes to reach `minimum` against the background."""
    color = background + color  # an alpha colour is seen over its background
    if ratio(color, background) >= minimum:
        return color
    lo, hi = 0.0, 1.0
    for _ in range(12):
        mid = (lo + hi) / 2
        if ratio(color.blend(toward, mid), background) >= minimum:
            hi = mid
        else:
            lo = mid
    return color.blend(toward, hi)


def rich(color: Color) -> RichColor:
    return color.rich_color

"""The key footer, rebuilt only when the keys it shows change.

Textual's Footer recomposes (every key a new widget, then a layout of the screen) on each
`bindings_updated` signal, and a focus change sends two: moving the focus from the list to the
preview rebuilt it twice, 17 + 22 ms on the UI thread, in front of the next key (bench_tui's
long-note step at 160x50, issue 16). This one coalesces the signals into one check after the
next refresh and recomposes only when the shown keys differ from the ones on screen."""
from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class KeyFooter(Footer):
    """Footer that skips rebuilds which would show the same keys."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._shown: tuple | None = None
        self._pending = False
        self.rebuilds = 0  # recompositions done (tests count them)

    def shown_keys(self) -> tuple:
        """What compose would show: each shown binding with its state, and the palette's key."""
        active = self.screen.active_bindings
        keys = tuple((b.key, b.key_display, b.description, b.action, b.group, enabled, tooltip)
                     for (_, b, enabled, tooltip) in active.values() if b.show)
        palette = active.get(self.app.COMMAND_PALETTE_BINDING) if self.show_command_palette else None
        if palette is not None:
            _, b, enabled, tooltip = palette
            palette = (b.key, b.description, b.action, enabled, tooltip or b.tooltip)
        return keys, palette, self.app.ENABLE_COMMAND_PALETTE

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._pending:
            self._pending = True
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        self._pending = False
        if not self.is_attached:
            return
        shown = self.shown_keys()
        if shown == self._shown:
            return
        self._shown = shown
        self.rebuilds += 1
        await self.recompose()

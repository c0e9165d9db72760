"""The key footer: one line drawn from the screen's active bindings, never a layout.

Textual's Footer is a container with a widget per key, rebuilt on each `bindings_updated`
signal; a rebuild mounts new widgets and lays the whole screen out again. A focus change
(list -> preview) changes the keys shown, and the rebuild plus the layout of a 160x50 screen
held the UI thread in front of the next key (bench_tui's long-note step: the first key after
the focus moved to the preview). This footer is one widget of fixed height
whose `render_line` assembles the same line Textual's Footer draws (its non-compact look: the
`footer-key--key` and `footer-key--description` styles of the theme, disabled keys dimmed, the
command palette's key on the right behind a `vkey` bar): a change of keys repaints one line.
Signals are coalesced into one check after the next refresh, and the line is redrawn only when
the keys differ. A click on a key presses it (a disabled one rings the bell), as on Footer.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget

from vaultwatch.tui.widgets.spans import undim


@dataclass(frozen=True, slots=True)
class Shown:
    """One key as the footer shows it."""

    key: str
    display: str
    description: str
    enabled: bool
    tooltip: str


class KeyFooter(Widget, can_focus=False):
    """The screen's keys on one line, redrawn only when they change."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES = {"footer-key--key", "footer-key--description", "footer-key--hover", "footer--bar"}
    DEFAULT_CSS = """
    KeyFooter {
        color: $footer-foreground;
        background: $footer-background;
        dock: bottom;
        height: 1;
        width: 1fr;
        text-wrap: nowrap;
        .footer-key--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        .footer-key--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        .footer-key--hover {
            color: $footer-key-foreground;
            background: $block-hover-background;
        }
        .footer--bar {
            color: $foreground 20%;
        }
    }
    """

    def __init__(self, *, show_command_palette: bool = True, id: str | None = None) -> None:
        super().__init__(id=id)
        self.show_command_palette = show_command_palette
        self._shown: tuple | None = None
        self._pending = False
        self._ready = False
        self._spans: list[tuple[int, int, Shown]] = []  # (start, end, key) on the line drawn last
        self._hover: int | None = None  # the cell column under the mouse
        self.redraws = 0  # times the keys changed and the line was drawn anew (tests count them)

    # -- what is shown ---------------------------------------------------------------------
    def shown_keys(self) -> tuple[tuple[Shown, ...], Shown | None]:
        """The keys to show, one per action (the first binding of each), in the screen's
        order, and the command palette's key (None: not shown)."""
        if not self._ready:
            return (), None
        active = self.screen.active_bindings
        by_action: dict[str, Shown] = {}
        for _node, binding, enabled, tooltip in active.values():
            if binding.show and binding.action not in by_action:
                by_action[binding.action] = Shown(
                    binding.key, self.app.get_key_display(binding), binding.description, enabled, tooltip
                )
        keys = tuple(by_action.values())
        palette = None
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE:
            found = active.get(self.app.COMMAND_PALETTE_BINDING)
            if found is not None:
                _node, binding, enabled, _tooltip = found
                palette = Shown(
                    binding.key,
                    self.app.get_key_display(binding),
                    binding.description,
                    enabled,
                    binding.tooltip or binding.description,
                )
        return keys, palette

    @property
    def keys(self) -> list[str]:
        """The keys on the line drawn last (tests)."""
        return [shown.key for _start, _end, shown in self._spans]

    # -- drawing -----------------------------------------------------------------------------
    def _label(self, shown: Shown, base: Style, hovered: bool, compact: bool = False) -> Text:
        key_style = self.get_component_rich_style("footer-key--key")
        description_style = self.get_component_rich_style("footer-key--description")
        if compact:  # (Footer draws the palette's key so: its FooterKey is compact)
            label = Text.assemble((shown.display, key_style), (f" {shown.description}", description_style))
        elif shown.description:
            label = Text.assemble((f" {shown.display} ", key_style), (f"{shown.description} ", description_style))
        else:
            label = Text.assemble((shown.display, key_style))
        label.stylize_before(base + Style(dim=True) if not shown.enabled else base)
        if hovered:  # the key's and description's own backgrounds are the footer's: the hover's goes over them
            label.stylize(Style(bgcolor=self.get_component_rich_style("footer-key--hover").bgcolor))
        return label

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if y != 0 or width <= 0:
            return Strip.blank(width, self.rich_style)
        line, filler = self._line()
        base = self.rich_style
        segments = undim(Strip(line.render(self.app.console)), base)
        if filler:  # the gap before the palette's key: background only, as Footer's container draws it
            gap, at = filler
            strip = Strip(segments)
            segments = [*strip.crop(0, at), gap, *strip.crop(at + gap.cell_length, strip.cell_length)]
        return Strip(segments).adjust_cell_length(width, Style(bgcolor=base.bgcolor))

    def _line(self) -> tuple[Text, tuple[Segment, int] | tuple[()]]:
        """The line's keys, and the gap of background between them and the palette's key (the
        gap's segment and where it starts)."""
        keys, palette = self._shown if self._shown is not None else ((), None)
        width = self.size.width
        base = self.rich_style
        hover = self._hover

        def label_at(shown: Shown, start: int, compact: bool = False) -> Text:
            label = self._label(shown, base, False, compact)
            if hover is not None and start <= hover < start + label.cell_len:
                label = self._label(shown, base, True, compact)
            return label

        spans: list[tuple[int, int, Shown]] = []
        right = Text()
        room = width
        if palette is not None:
            plain = self._label(palette, base, False, True)
            room = max(0, width - plain.cell_len - 2)  # the bar before it, a space after it
            right = Text.assemble(
                ("▏", self.get_component_rich_style("footer--bar")),
                label_at(palette, room + 1, True),
                (" ", Style(bgcolor=base.bgcolor)),
            )
        line = Text(no_wrap=True, overflow="crop")
        for shown in keys:
            start = line.cell_len
            if start >= room:
                break
            line.append_text(label_at(shown, start))
            spans.append((start, min(line.cell_len, room), shown))
        line.truncate(room, overflow="crop")
        gap_at, gap = line.cell_len, room - line.cell_len
        line.append(" " * gap)
        if palette is not None:
            spans.append((room + 1, width - 1, palette))
            line.append_text(right)
        self._spans = spans
        return line, ((Segment(" " * gap, Style(bgcolor=base.bgcolor)), gap_at) if gap else ())

    # -- keeping up with the bindings -----------------------------------------------------------
    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)

    def bindings_changed(self, screen: Screen) -> None:
        self._ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._pending:
            self._pending = True
            self.call_after_refresh(self._redraw_if_changed)

    def _redraw_if_changed(self) -> None:
        self._pending = False
        if not self.is_attached:
            return
        shown = self.shown_keys()
        if shown == self._shown:
            return
        self._shown = shown
        self.redraws += 1
        self.refresh()

    # -- the mouse ---------------------------------------------------------------------------------
    def _at(self, x: int) -> Shown | None:
        for start, end, shown in self._spans:
            if start <= x < end:
                return shown
        return None

    def on_mouse_move(self, event: events.MouseMove) -> None:
        shown = self._at(event.x)
        was = self._at(self._hover) if self._hover is not None else None
        self._hover = event.x
        if shown is not was:  # another key under the pointer: its highlight and tooltip move
            self.tooltip = (shown.tooltip or None) if shown is not None else None
            self.refresh()

    def on_leave(self) -> None:
        self._hover = None
        self.tooltip = None
        self.refresh()

    def on_mouse_down(self, event: events.MouseDown) -> None:
        shown = self._at(event.x)
        if shown is None:
            return
        if shown.enabled:
            self.app.simulate_key(shown.key)
        else:
            self.app.bell()

"""Keeping Textual's virtual-size reactive from laying the whole screen out again.

A widget whose size changes in a layout gets its new virtual size through a reactive that
asks for a layout of its own, and a layout redoes the whole screen's (15-30 ms at 160x50 while
a long note renders in the preview). Opening a note changed the preview's header, frontmatter
and body at once: each was laid out in a first frame and again in a second, and the body's
lines were drawn only in the second (the first key after the note opened waited for it).
`expect_size` sets the size the coming layout will give the widget (its current width, the
height its content takes there) without that reactive's side effects: the layout then finds
the size already set and asks for nothing more. A guess that turns out wrong (the width moved:
a scrollbar came or went) costs only the second layout, as before.

A widget whose own size never follows its content's (sized by CSS: the preview, the filter
bar's input line) needs no layout at all when its virtual size changes: `content_sized_free()`
declares its `virtual_size` without one (the value is still set: scrolling reads it, and
Textual refreshes the scrollbars itself).
"""

from __future__ import annotations

from textual.geometry import Size
from textual.reactive import Reactive
from textual.widget import Widget


def content_sized_free() -> Reactive[Size]:
    """A `virtual_size` reactive that asks for no layout when it changes, for a widget class
    whose size never follows its content's: `virtual_size = content_sized_free()`."""
    return Reactive(Size(0, 0), layout=False)


def expect_size(widget: Widget, height: int | None = None) -> None:
    """Set `widget`'s virtual size to its width by `height` (None: the height its content
    takes at that width, as Textual's layout measures an auto height) ahead of the layout."""
    width = widget.size.width
    if width <= 0 or not widget.is_mounted:
        return
    if height is None:
        height = widget.get_content_height(widget.container_size, widget.app.size, width)
    widget.set_reactive(Widget.virtual_size, Size(width, height))

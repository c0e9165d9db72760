"""The folder tree: the vault's folders with note counts, from the index, loaded lazily.

As Obsidian's file explorer: folders in case-insensitive order (`people` before `Zettel`),
folders without notes (only excluded or ignored files) left out; selecting "All notes"
scopes to the whole vault without collapsing the tree; `reveal` opens the tree down to the
folder of the note on screen."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, ClassVar

from rich.style import Style
from rich.text import Text
from textual import events, on
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from vaultwatch.core.query.folders import FolderTree, folder_tree
from vaultwatch.tui.marks import ago, short_agent
from vaultwatch.tui.session import Session
from vaultwatch.tui.widgets.rowlist import steady

if TYPE_CHECKING:
    from rich.text import TextType

ROOT = ""


class FolderView(Tree[str]):
    """Folders of the vault; node data is the folder's vault path ("" = the whole vault).

    Children are added when a node is first expanded, so a vault with thousands of
    folders costs only what is open. `sync()` re-reads counts and children from a new
    snapshot without collapsing anything or moving the cursor.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select_cursor", "Scope", show=False, id="tree.scope"),
    ]

    def __init__(self, session: Session, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(self._label("All notes", 0, None), data=ROOT, id=id, classes=classes)
        self.session = session
        self.show_root = True
        self.guide_depth = 2
        self.auto_expand = False  # selecting scopes; folders toggle in _toggle_folder, the root never
        self._tree: FolderTree | None = None
        self._unrevealed: str | None = None  # a note opened before the first sync
        self._dragging = False  # the right border is being dragged (a resize)

    class Resized(Message):
        """The person dragged the tree's right border: the tree wants `width` cells (`done`:
        the button was released, the width is final)."""

        def __init__(self, width: int, done: bool) -> None:
            super().__init__()
            self.width = width
            self.done = done

    def on_mouse_down(self, event: events.MouseDown) -> None:
        if event.x >= self.outer_size.width - 1:  # on the right border: drag it to resize
            self._dragging = True
            self.capture_mouse()
            event.stop()
            event.prevent_default()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        if self._dragging:
            self.post_message(self.Resized(event.screen_x - self.region.x + 1, False))

    def on_mouse_up(self, event: events.MouseUp) -> None:
        if self._dragging:
            self._dragging = False
            self.release_mouse()
            self.post_message(self.Resized(event.screen_x - self.region.x + 1, True))
            event.stop()

    def child_folders(self, folder: str) -> tuple[str, ...]:
        """The subfolders shown under `folder`: those holding notes, case-insensitively ordered."""
        tree = self._tree
        if tree is None:
            return ()
        shown = [p for p in tree.child_folders(folder) if tree.note_count(p)]
        shown.sort(key=lambda p: (p.rsplit("/", 1)[-1].casefold(), p))
        return tuple(shown)

    @on(Tree.NodeSelected)
    def _toggle_folder(self, event: Tree.NodeSelected[str]) -> None:
        """Enter or a click on a folder scopes to it and opens (or closes) it, as before; on
        "All notes" it only scopes (collapsing the root hid every folder)."""
        if event.node is not self.root:
            self._toggle_node(event.node)

    def reveal(self, path: str) -> None:
        """Open the tree down to the folder holding `path` and put the cursor on it. Before the
        tree's first `sync` (the first note can open before the counts are read) it is done
        after that sync: the order of the two was a race, and the snapshots showed either."""
        if self._tree is None:
            self._unrevealed = path
            return
        self._unrevealed = None
        folder = path.rsplit("/", 1)[0] if "/" in path else ROOT
        node = self.folder_node(folder)
        while node is None and folder:  # a folder not shown (no notes yet): its nearest shown parent
            folder = folder.rsplit("/", 1)[0] if "/" in folder else ROOT
            node = self.folder_node(folder)
        if node is not None and node is not self.cursor_node:
            # a node just expanded has its line once the tree has been laid out again
            self.call_after_refresh(lambda: self.move_cursor(node) if node.tree is self else None)

    def process_label(self, label: TextType) -> Text:
        if isinstance(label, str):
            return Text(label)  # folder names are literal, never markup
        return label

    def _label(self, name: str, count: int, folder: str | None) -> Text:
        """ "Projects (12)", then who touched the folder last. Separating spaces stay unstyled
        (see tui.widgets.spans: screenshots showed "Archive0")."""
        text = Text(steady(name))  # one width in every terminal (see rowlist.steady)
        text.append(" ")
        text.append(f"({count:,})", style=Style(dim=True))
        if folder is not None:
            mark = self.session.marks.folder(folder) if folder else None
            if mark is not None:
                text.append(" ")
                text.append(
                    f"● {ago(self.session.now() - mark.at)} {short_agent(mark.agent)}",
                    style=Style(color=self.session.colors(mark.agent)),
                )
        return text

    def sync(self) -> None:
        """Bring counts, marks and children of every loaded node up to date."""
        tree = folder_tree(self.session.snapshot)
        self._tree = tree
        self.root.set_label(self._label("All notes", tree.note_count(ROOT), None))
        self._sync_children(self.root, tree)
        if not self.root.is_expanded:
            self.root.expand()
        if self._unrevealed is not None:
            self.reveal(self._unrevealed)

    def refresh_marks(self, paths: Iterable[str] | None = None) -> None:
        """Relabel loaded nodes (agent marks or their ages changed): those holding `paths`,
        or all of them."""
        if self._tree is None:
            return
        folders: set[str] | None = None
        if paths is not None:
            folders = set()
            for path in paths:
                while "/" in path:
                    path = path.rsplit("/", 1)[0]
                    if path in folders:
                        break
                    folders.add(path)
        stack = list(self.root.children)
        while stack:
            node = stack.pop()
            folder = node.data or ""
            if folders is not None and folder not in folders:
                continue  # nothing below it was touched either
            node.set_label(self._label(folder.rsplit("/", 1)[-1], self._tree.note_count(folder), folder))
            stack.extend(node.children)

    def _sync_children(self, node: TreeNode[str], tree: FolderTree) -> None:
        folder = node.data or ROOT
        wanted = self.child_folders(folder)
        loaded = node is self.root or node.is_expanded or bool(node.children)
        if not loaded:
            node.allow_expand = bool(wanted)
            return
        existing = {child.data: child for child in node.children}
        if tuple(existing) != wanted:
            for path, child in existing.items():
                if path not in wanted:
                    child.remove()
            for i, path in enumerate(wanted):
                if path not in existing:
                    before = next((existing[p] for p in wanted[i + 1 :] if p in existing), None)
                    name = path.rsplit("/", 1)[-1]
                    label = self._label(name, tree.note_count(path), path)
                    if before is not None:
                        existing[path] = node.add(
                            label, data=path, before=before, allow_expand=bool(self.child_folders(path))
                        )
                    else:
                        existing[path] = node.add(label, data=path, allow_expand=bool(self.child_folders(path)))
        for path in wanted:
            child = existing[path]
            child.set_label(self._label(path.rsplit("/", 1)[-1], tree.note_count(path), path))
            child.allow_expand = bool(self.child_folders(path))
            self._sync_children(child, tree)

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[str]) -> None:
        node = event.node
        if node.children or self._tree is None:
            return
        for path in self.child_folders(node.data or ROOT):
            node.add(
                self._label(path.rsplit("/", 1)[-1], self._tree.note_count(path), path),
                data=path,
                allow_expand=bool(self.child_folders(path)),
            )

    def folder_node(self, folder: str) -> TreeNode[str] | None:
        """Expand down to `folder` and return its node (None when it is not a folder)."""
        if self._tree is None:
            return None
        node = self.root
        if not folder:
            return node
        parts = folder.split("/")
        for i in range(len(parts)):
            path = "/".join(parts[: i + 1])
            if not node.is_expanded:
                node.expand()
                if not node.children:
                    for child_path in self.child_folders(node.data or ROOT):
                        node.add(
                            self._label(child_path.rsplit("/", 1)[-1], self._tree.note_count(child_path), child_path),
                            data=child_path,
                            allow_expand=bool(self.child_folders(child_path)),
                        )
            child = next((c for c in node.children if c.data == path), None)
            if child is None:
                return None
            node = child
        return node

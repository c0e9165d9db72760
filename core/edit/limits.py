"""The write path's size limit, apart from the write path: the tool descriptions an agent reads at
its handshake name it, and a stdio server answers that handshake before it loads core.edit.writes."""

from __future__ import annotations

MAX_WRITE_BYTES = 10 * 1024 * 1024

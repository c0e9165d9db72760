"""Tool calls the stdio front answers while the MCP SDK is still importing.

A client that spawns `vaultwatch serve --stdio` and asks for a listing waits for the SDK's
import (~0.9 s of CPU, more than the warm index load and the listing together) before its
first page, unless the front answers it. So a `tools/call` of `list_documents` that comes
before the SDK runs is answered here, on a thread of its own, by the very function the SDK's
tool calls (readcalls.list_documents), shaped for the wire as the server's fast path shapes
it (answers.wire_result) and serialised as the SDK serialises its replies (answers.wire_json):
the client gets the same bytes either way (tests/mcp_server/test_early_calls.py compares
them). The call is attributed and published on the bus as the SDK's middleware does
(Activity.call_early), so the audit log sees it (a stdio server has no person whose input goes first).

The front takes a call only when nothing can tell the difference (stdiofront.py checks the
session: its initialize answered by the front, `notifications/initialized` received, no
earlier request of the client still waiting for the SDK). Here the call itself must be plain:
no `_meta` (a progress token), and arguments the SDK's argument model would accept exactly
as they are (`plain_arguments`); anything else goes to the SDK, which says what is wrong.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from vaultwatch.core.errors import VaultError
from vaultwatch.core.serialize import RowCache
from vaultwatch.core.vault import Vault

from . import answers, readcalls
from .activity import Activity

log = logging.getLogger("vaultwatch.stdio")

MAX_CURSOR_CHARS = 4096  # as tools.list_documents' Field(max_length=...)
MAX_LIMIT = 100_000  # as its Field(le=...)
MAX_EARLY_CALLS = 16  # calls taken before the SDK runs (a thread each); later ones wait for the SDK
_STRINGS = frozenset({"folder", "pattern", "cursor"})
_BOOLS = frozenset({"include_attachments", "include_frontmatter", "wait_for_pending_writes"})


def _json_in_string(value: str) -> bool:
    """Whether the SDK would replace this string argument by the JSON it holds (its pre_parse_json:
    a string for a field that is not plain `str` is parsed, and kept unless it held a str, int or float)."""
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return False
    return not isinstance(parsed, (str, int, float))


def plain_arguments(arguments: Any) -> dict[str, Any] | None:
    """list_documents' arguments when the SDK's validation would pass them on unchanged; else None
    (the call is left to the SDK: it coerces or refuses them, and says why)."""
    if arguments is None:
        return {}
    if not isinstance(arguments, dict):
        return None
    for key, value in arguments.items():
        if key in _STRINGS:
            if value is not None and (
                not isinstance(value, str)
                or _json_in_string(value)
                or key == "cursor"
                and len(value) > MAX_CURSOR_CHARS
            ):
                return None
        elif key in _BOOLS:
            if not isinstance(value, bool):
                return None
        elif key == "limit":
            if value is not None and (type(value) is not int or not 1 <= value <= MAX_LIMIT):
                return None
        elif key == "filters":
            if value is not None and (
                not isinstance(value, dict)
                or not all(isinstance(k, str) and type(v) in (str, bool, int) for k, v in value.items())
            ):
                return None
        else:
            return None  # an unknown argument: the SDK's server names the ones it takes
    return dict(arguments)


class EarlyCalls:
    """The calls the stdio front may answer before the SDK runs (see module doc)."""

    def __init__(self, vault: Vault, activity: Activity, *, max_answer_bytes: int, tool_prefix: str = "") -> None:
        self.vault = vault
        self.activity = activity
        self.max_answer_bytes = max_answer_bytes
        self.tool = tool_prefix + "list_documents"
        self.row_cache = RowCache()
        self._lock = threading.Lock()
        self._busy = 0
        self.idle = threading.Event()  # no early call in flight
        self.idle.set()
        self.answered = 0
        self.taken = 0

    def take(
        self, params: Any, id_text: str, agent: str, send: Callable[[str, str], None], give_back: Callable[[], None]
    ) -> bool:
        """Start answering a tools/call with these params (True), or leave it to the SDK (False).
        `send(id_text, result_json)` writes the answer; `give_back()` hands the call to the SDK after
        all, when its answer cannot be written as the SDK would (a value JSON cannot carry)."""
        if not isinstance(params, Mapping) or set(params) - {"name", "arguments"} or params.get("name") != self.tool:
            return False
        arguments = plain_arguments(params.get("arguments"))
        if arguments is None:
            return False
        with self._lock:
            if self.taken >= MAX_EARLY_CALLS:
                return False
            self.taken += 1
            self._busy += 1
            self.idle.clear()
        threading.Thread(
            target=self._answer,
            args=(arguments, id_text, agent, send, give_back),
            name="vaultwatch-early-call",
            daemon=True,
        ).start()
        return True

    def _answer(
        self,
        arguments: dict[str, Any],
        id_text: str,
        agent: str,
        send: Callable[[str, str], None],
        give_back: Callable[[], None],
    ) -> None:
        try:

            def run() -> dict[str, Any]:
                try:
                    answer = readcalls.list_documents(
                        self.vault, self.row_cache, self.max_answer_bytes, answers.listing_answer, **arguments
                    )
                except VaultError as exc:  # as results.vault_errors turns them into tool errors
                    answer = answers.failure(exc.message)
                except ValueError as exc:
                    answer = answers.failure(str(exc))
                return answers.wire_result(answer)

            wire = self.activity.call_early(agent, self.tool, arguments, run)
            try:  # as mcp_types.JSONRPCResponse.model_dump_json writes its `result: dict[str, Any]`
                text = answers.wire_json(wire)
                text.encode("utf-8")  # a lone surrogate: the SDK cannot write it either
            except (ValueError, UnicodeError) as exc:  # PydanticSerializationError is a ValueError
                log.warning("an early %s answer cannot be written (%s); the SDK answers it", self.tool, exc)
                give_back()
                return
            send(id_text, text)
            self.answered += 1
        except Exception:  # never the process: the SDK answers the call instead
            log.exception("answering %s before the SDK failed; the SDK answers it", self.tool)
            give_back()
        finally:
            with self._lock:
                self._busy -= 1
                if not self._busy:
                    self.idle.set()

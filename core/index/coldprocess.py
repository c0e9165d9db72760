"""A big cold load, parsed and written to the entry cache by a process of its own.

When the entry cache knows nothing yet (a first launch, a cache of another version) and the walk
finds at least PROCESS_MIN_FILES files, the app does not build the parsed entries itself: one
process (`_main`) parses the files with the usual pool (core.index.warmscan's `_parse_many`)
and writes them to the cache, and the app then loads them from the cache as a warm start does
(core.index.warmscan). Built in the app, over the seconds a first load takes while the app
draws and serves beside it, the entries' memory ended up interleaved with what the app freed
meanwhile; decoded from the cache in one go they are packed as a warm start's are.

Whatever the process could not do (it could not be started, failed, went away, or the cache
could not be written) the app parses itself, as before: the process's answer only ever saves
work.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from core.index.parsepool import process_context
from core.index.scan import FileFact
from core.model import Skipped

PROCESS_MIN_FILES = 20_000  # smaller cold loads are parsed for the app directly (a process costs ~0.3 s to start)
SEND_CHUNK = 5_000  # files sent to the process per message
STOP_WAIT_S = 5.0


class ColdFailed(Exception):
    """The process reported an error, could not write the cache, or went away."""


def parse_and_cache(root_real: str, cache_dir: Path, facts: list[FileFact],
                    progress: Callable[[int, int], None] | None) -> list[Skipped]:
    """Parse `facts` and write their entries to the entry cache in `cache_dir` (which holds no
    entry yet), in a process of its own; the files it could not index. Raises one of
    parsepool.START_FAILED when the process cannot be started, ColdFailed when it fails."""
    ctx = process_context("core.index.coldprocess")
    mine, theirs = ctx.Pipe()
    # not a daemon: it starts the parsing processes itself
    proc = ctx.Process(target=_main, args=(theirs, root_real, str(cache_dir)), name="vaultwatch-cold-load",
                       daemon=False)
    proc.start()
    theirs.close()
    total = len(facts)
    try:
        try:
            for i in range(0, total, SEND_CHUNK):
                mine.send(facts[i:i + SEND_CHUNK])
            mine.send(None)
        except OSError as exc:
            raise ColdFailed(f"the indexing process went away ({exc!r})") from None
        while True:
            if not mine.poll(0.2):
                if not proc.is_alive() and not mine.poll(0):
                    raise ColdFailed(f"the indexing process went away (exit code {proc.exitcode})")
                continue
            try:
                kind, value = mine.recv()
            except (EOFError, OSError) as exc:
                raise ColdFailed(f"the indexing process went away ({exc!r})") from None
            if kind == "done":
                if progress is not None:
                    progress(value, total)
            elif kind == "ok":
                return value
            else:
                raise ColdFailed(f"the indexing process failed: {value}")
    finally:
        mine.close()
        proc.join(STOP_WAIT_S)
        if proc.is_alive():
            proc.kill()
            proc.join()


def _main(conn, root_real: str, cache_dir: str) -> None:
    """The process: receive the files (then None), parse them, write their entries to the cache;
    answer ("done", files parsed) as it goes, then ("ok", the Skipped) or ("error", why)."""
    from core.index.entrycache import EntryCache
    from core.index.warmscan import _parse_many

    try:
        facts: list[FileFact] = []
        while (got := conn.recv()) is not None:
            facts.extend(got)
        out = _parse_many(facts, lambda done, _total: conn.send(("done", done)))
        del facts
        skipped = [o for o in out if isinstance(o, Skipped)]
        cache = EntryCache(root_real, Path(cache_dir))
        if cache.disabled:
            raise RuntimeError(cache.disabled)
        cache.mark_all_dirty()
        problem = cache.flush([o for o in out if not isinstance(o, Skipped)])
        if problem:
            raise RuntimeError(problem)
        conn.send(("ok", skipped))
    except Exception as exc:  # the app parses the files itself
        try:
            conn.send(("error", repr(exc)))
        except OSError:
            pass
    finally:
        conn.close()

"""The one listing function. Every listing — the MCP tools, the compat tools, the CLI and the
TUI's list, tree counts and triage tabs — is a `Query` run against a `Snapshot`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import unicodedata
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from itertools import compress
from operator import attrgetter, itemgetter, methodcaller, not_
from typing import Any

from vaultwatch.core.clock import Clock
from vaultwatch.core.disk.paths import normalize_folder
from vaultwatch.core.errors import QueryError
from vaultwatch.core.index.snapshot import Snapshot
from vaultwatch.core.markdown import okf
from vaultwatch.core.memo import BoundedMemo
from vaultwatch.core.model import ATTACHMENT, FOLDER, NOTE, Entry
from vaultwatch.core.query import postings
from vaultwatch.core.query.glob import compile_glob, literal_dir, literal_hint, unclosed_bracket
from vaultwatch.core.query.triagerules import TriageRules, due_date, pair_positions
from vaultwatch.core.query.triagerules import positions as triage_positions

SORTS = ("path", "modified", "title", "size", "overdue")
Pair = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Query:
    """What to list. Defaults: every note in the vault, in code-point order of path.

    folder: None = whole vault; "" = root level only; else that folder and its subfolders
        (name boundary: "Projects" covers "Projects/Archive", not "ProjectsOld").
    recursive: False = only the folder's direct children.
    pattern: case-sensitive glob; matched against the vault-relative path, or against the
        path inside `folder` when pattern_base == "folder".
    filters / exclude: frontmatter (key, value) equality pairs, ANDed; `exclude` negates each.
    exclude_patterns: globs (as `pattern`) whose matches are left out (the filter bar's `-path:`).
    text: substring of title or path, regardless of case and accents (`cafe` finds "Café").
    words: more such substrings; every one must occur (the filter bar's free words, ANDed).
    problems_only: only notes with a frontmatter error or undecodable bytes.
    unresolved_links: only notes with a link that resolves to no file.
    broken: only notes with a problem (as problems_only) or an unresolved link (the TUI's Broken tab).
    skip_paths: vault paths left out of a filtered listing (triage leaves out OKF's index.md and log.md).
    triage: ("deprecated" | "stale", TriageRules): only the notes that rule selects (the person's
        triage tabs off an OKF bundle; `core.query.triagerules`).
    only_paths: only these vault paths (sorted), e.g. the notes the journal says nobody reviewed.
    unreviewed: the notes an agent changed that nobody has reviewed since (the change journal's,
        sorted; the triage views pass only those whose tier it changes, so the query stays the same
        while agents write elsewhere). On an OKF bundle a `trust_tier` filter or exclusion then reads their tier as the
        triage views do (`okf.triage_tier`): a person's attestation no longer vouches for them.
        Without it `trust_tier` is the tier from `verified:` alone, as list_documents' seeds say.
    rules: the person's triage rules, for the filter bar: off an OKF bundle a `status:deprecated`
        pair then selects (or excluded, leaves out) what the Deprecated tab lists and a `stale:` pair
        what the Stale tab lists (`triagerules.pair_positions`), as they do by OKF's rules on a bundle.
        None (list_documents, the seeds) keeps them frontmatter equality off a bundle.
    shown: the filter bar's pairs match a value as the lists show it, regardless of case and a
        property that is one link by its target (`status:published` finds `["[[Published]]"]`,
        `postings.positions`). False (list_documents, `vaultwatch list --filter`, the seeds) keeps
        them frontmatter equality.
    overdue_rules: the person's triage rules the "overdue" sort reads off an OKF bundle (the days
        past their stale keys, as the Stale column says them); a `triage` query's own rules win.
        None: OKF's `stale_after`.
    """

    folder: str | None = None
    recursive: bool = True
    pattern: str | None = None
    pattern_base: str = "vault"
    exclude_patterns: tuple[str, ...] = ()
    filters: tuple[Pair, ...] = ()
    exclude: tuple[Pair, ...] = ()
    text: str | None = None
    words: tuple[str, ...] = ()
    problems_only: bool = False
    skip_paths: tuple[str, ...] = ()
    unresolved_links: bool = False
    broken: bool = False
    triage: tuple[str, TriageRules] | None = None
    only_paths: tuple[str, ...] | None = None
    unreviewed: tuple[str, ...] = ()
    rules: TriageRules | None = None
    shown: bool = False
    overdue_rules: TriageRules | None = None
    include_notes: bool = True
    include_attachments: bool = False
    include_folders: bool = False
    sort: str = "path"
    descending: bool = False
    limit: int | None = None
    cursor: str | None = None


@dataclass(frozen=True, slots=True)
class QueryResult:
    """A page of entries plus what a caller needs to page on and judge freshness."""

    entries: tuple[Entry, ...]
    total: int
    next_cursor: str | None
    generation: int
    is_bundle: bool
    loaded: bool


def pairs(filters: Mapping[str, Any] | None) -> tuple[Pair, ...]:
    """Turn a {key: value} mapping into validated (key, value) pairs (values become strings)."""
    if not filters:
        return ()
    if not isinstance(filters, Mapping):
        raise QueryError('filters must be an object of frontmatter key to value, e.g. {"status": "deprecated"}')
    out = []
    for key, value in filters.items():
        if not isinstance(key, str) or not key.strip():
            raise QueryError("filter keys must be non-empty frontmatter key names")
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, (int, float)):
            value = str(value)
        elif not isinstance(value, str):
            raise QueryError(f'filter {key!r} needs a string value, e.g. {{{key!r}: "value"}}')
        out.append((key, value))
    return tuple(out)


_MARKS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")


def fold(text: str) -> str:
    """Text as free-text matching compares it: case-folded, accents dropped (`Café` -> `cafe`,
    `Straße` -> `strasse`). ASCII text is only case-folded (the common case: no normalizing)."""
    text = text.casefold()
    if text.isascii():
        return text
    return _MARKS.sub("", unicodedata.normalize("NFKD", text))


def _by_kinds(snapshot: Snapshot, kinds: frozenset[str]) -> tuple[tuple[str, ...], tuple[Entry, ...]]:
    if kinds == {NOTE, ATTACHMENT, FOLDER}:
        return snapshot.paths, snapshot.entries
    return postings.subset(snapshot, kinds)


def _same(
    old: Any, base: Snapshot, changed: frozenset[str]
) -> Any:  # a structure of paths only: in-place edits leave it as it was
    return old


def _containing(
    snapshot: Snapshot, kinds: frozenset[str], paths: tuple[str, ...], needle: str, lo: int, hi: int
) -> list[int]:
    """Positions in `paths[lo:hi]` of the paths that contain `needle`, in order.

    Searches this generation's paths joined into one string with str.find (C speed), so the
    cost follows the number of hits, not the 100k paths a per-path test would touch.
    """

    def build() -> tuple[str, array]:
        starts, at = array("q"), 0  # an array, not a list: the collector never walks it
        for p in paths:
            starts.append(at)
            at += len(p) + 1
        starts.append(at)
        return "\n".join(paths) + "\n", starts

    blob, starts = snapshot.cached(("joined", kinds), build, postings.patching(snapshot)(_same))
    out: list[int] = []
    find, end = blob.find, starts[hi]
    i = find(needle, starts[lo], end)
    while i >= 0:
        k = bisect_right(starts, i) - 1
        out.append(k)
        i = find(needle, starts[k + 1], end)  # the next path: one hit per path
    return out


def _hay(
    snapshot: Snapshot, kinds: frozenset[str], paths: tuple[str, ...], entries: tuple[Entry, ...]
) -> tuple[str, ...]:
    """Every entry's path and title, case-folded, for free-text matching (this generation).
    A tuple of strings, which the garbage collector stops tracking: a list of one item per entry
    made every full collection (and the frame it fell in) longer."""

    def patch(old: tuple[str, ...], base: Snapshot, changed: frozenset[str]) -> tuple[str, ...] | None:
        # entries added and removed go in and out at their places (as `postings.subset` does)
        if len(changed) > postings.MAX_PATCH:
            return None
        was_paths = list(_by_kinds(base, kinds)[0])
        work = list(old)
        moved = 0
        for p in sorted(changed):
            i = bisect_left(was_paths, p)
            had = i < len(was_paths) and was_paths[i] == p
            k = bisect_left(paths, p)
            if k < len(paths) and paths[k] == p:
                if had:
                    work[i] = fold(f"{p}\n{entries[k].title}")
                    continue
                was_paths.insert(i, p)
                work.insert(i, fold(f"{p}\n{entries[k].title}"))
            elif had:
                del was_paths[i], work[i]
            else:
                continue
            moved += 1
            if moved > postings.MAX_MOVES:
                return None
        return tuple(work)

    return snapshot.cached(("hay", kinds), lambda: tuple([fold(f"{e.path}\n{e.title}") for e in entries]), patch)


def warm(snapshot: Snapshot, fields: Iterable[str] = ()) -> None:
    """Build ahead what a listing of notes reads for its first free word (folded titles and
    paths) and its first `field:value` term for each of `fields`: no keystroke waits for them."""
    kinds = frozenset({NOTE})
    paths, entries = _by_kinds(snapshot, kinds)
    _hay(snapshot, kinds, paths, entries)
    postings.warm(snapshot, fields)


def _span(paths: tuple[str, ...], folder: str | None) -> tuple[int, int]:
    if not folder:
        return 0, len(paths)
    return bisect_left(paths, folder + "/"), bisect_right(paths, folder + "/\U0010ffff")


def _fingerprint(q: Query) -> str:
    """What a cursor holds of its query: a digest of every argument but the page's (limit, cursor).
    Memoized by those arguments and their types (1 and True are equal keys but digest apart): every
    page of a listing asks for it, and the digest costs far more than a page's own work."""
    values = tuple(map(q.__getattribute__, _FINGERPRINTED))
    try:
        return _FINGERPRINTS.get((values, tuple(map(type, values))), lambda: _digest(q))
    except TypeError:  # a field holding something unhashable: digested every time
        return _digest(q)


def _digest(q: Query) -> str:
    core = asdict(replace(q, limit=None, cursor=None, unreviewed=()))
    return hashlib.sha256(json.dumps(core, sort_keys=True, default=str).encode()).hexdigest()[:12]


_DIGESTED = tuple(f.name for f in fields(Query) if f.name not in ("limit", "cursor"))
# `unreviewed` is the journal's state, not an argument: an agent's write elsewhere between two pages
# of a bundle's trust tier must not make the next page's cursor "a different query"
_FINGERPRINTED = tuple(name for name in _DIGESTED if name != "unreviewed")
_FINGERPRINTS: BoundedMemo[str] = BoundedMemo(512)


def _kept(snapshot: Snapshot, q: Query, make: Callable[[], Sequence[Any]]) -> Sequence[Any]:
    """`make()`, every match of `q` in its order (positions or entries), kept with `snapshot` for the
    listing's next pages: a filtered or matched listing found and sorted all its matches again on every
    page (a filter choosing half of a big vault sorted all those positions for each page).
    Kept per snapshot, so a new generation never sees the matches of an older one, and for a few
    queries only (`_KEPT_QUERIES`), keyed by every argument but the page's and their types, never by
    a digest two queries could share. A query whose matches depend on the clock (the overdue sort,
    triage, `stale` on a bundle or by the rules) is made every time."""
    if q.sort == "overdue" or q.triage is not None:
        return make()
    if (snapshot.is_bundle or q.rules is not None) and any(key == "stale" for key, _ in (*q.filters, *q.exclude)):
        return make()
    values = tuple(map(q.__getattribute__, _DIGESTED))
    memo: BoundedMemo[Sequence[Any]] = snapshot.cached(("listing-matches",), lambda: BoundedMemo(_KEPT_QUERIES))
    try:
        return memo.get((values, _types(values)), make)
    except TypeError:  # an argument holding something unhashable: made every time
        return make()


def _types(value: Any) -> Any:
    """The types in `value`, nested tuples (a filter's pairs) included: 1, 1.0 and True are equal keys."""
    return tuple(map(_types, value)) if type(value) is tuple else type(value)


_KEPT_QUERIES = 8  # a snapshot's listings whose matches are kept for their next pages (`_kept`)


def _overdue_rules(q: Query) -> TriageRules | None:
    """The rules whose stale keys the overdue sort reads: a triage view's, else the query's own."""
    return q.triage[1] if q.triage is not None else q.overdue_rules


def _sort_key(sort: str, clock: Clock, rules: TriageRules | None = None) -> Callable[[Entry], Any]:
    if sort == "modified":
        return lambda e: e.mtime_ns
    if sort == "title":
        return lambda e: e.title.casefold()
    if sort == "size":
        return lambda e: e.size_bytes
    if sort == "overdue" and rules is not None:  # the person's stale keys, off an OKF bundle
        today = clock.today()

        def overdue_by_rule(e: Entry) -> Any:
            due = due_date(e, rules)
            return -(today - due).days if due is not None and due <= today else 1

        return overdue_by_rule
    if sort == "overdue":  # most overdue first when ascending; not stale sorts last
        today, now = clock.today(), clock.now()  # once per query, not once per note

        def overdue(e: Entry) -> Any:
            if e.stale_date is not None:
                return -(today - e.stale_date).days if e.stale_date <= today else 1
            if e.stale_instant is not None and e.stale_instant <= now:
                return -(now - e.stale_instant).days
            return 1

        return overdue
    return lambda e: ""


def encode_cursor(fp: str, key: Any, path: str) -> str:
    raw = json.dumps([fp, key, path], ensure_ascii=False).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def cursor_after(q: Query, entry: Entry, clock: Clock) -> str:
    """The cursor that continues `q`'s listing right after `entry`, one of its rows: for a caller
    that hands out fewer rows than a page held (an MCP answer cut to its byte budget)."""
    return encode_cursor(_fingerprint(q), _sort_key(q.sort, clock, _overdue_rules(q))(entry), entry.path)


def _decode_cursor(cursor: str, fp: str) -> tuple[Any, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        got_fp, key, path = json.loads(raw)
        if not isinstance(path, str):
            raise ValueError
    except (ValueError, TypeError):
        raise QueryError("cursor is not valid: pass back the next_cursor of a previous result, unchanged") from None
    if got_fp != fp:
        raise QueryError("cursor belongs to a different query: repeat the same arguments with it, or drop the cursor")
    return key, path


def _pages_by_position(q: Query, recursive: bool) -> bool:
    """True when the answer is a run of positions in path order (no path or text stage, path
    sort): then only the page's entries are looked at, not every match."""
    return (
        recursive
        and not q.pattern
        and not q.exclude_patterns
        and not q.text
        and not any(q.words)
        and q.sort == "path"
        and not q.descending
    )


def _position_page(
    snapshot: Snapshot, q: Query, paths: tuple[str, ...], entries: tuple[Entry, ...], order: Sequence[int]
) -> QueryResult:
    """The page of `order` (ascending positions into paths/entries) that q's cursor and limit pick."""
    fp = _fingerprint(q)
    total = len(order)
    start = 0
    if q.cursor:
        ckey, cpath = _decode_cursor(q.cursor, fp)
        if ckey != "":
            raise QueryError("cursor is not valid: pass back the next_cursor of a previous result, unchanged")
        start = bisect_right(order, cpath, key=paths.__getitem__)
    end = total if q.limit is None else min(total, start + q.limit)
    if isinstance(order, range):  # a plain span: one slice, no per-entry lookups
        page = entries[order.start + start : order.start + end]
    else:
        page = tuple(map(entries.__getitem__, order[start:end]))
    next_cursor = encode_cursor(fp, "", page[-1].path) if end < total and page else None
    return QueryResult(page, total, next_cursor, snapshot.generation, snapshot.is_bundle, snapshot.loaded)


def _triage_trust(
    paths: Sequence[str], entries: Sequence[Entry], unreviewed: Sequence[str], want: str, found: Iterable[int]
) -> set[int]:
    """`found` (the notes whose `verified:` gives tier `want`) with each note of `unreviewed` in it or
    not by the tier the triage views give it (`okf.triage_tier`). Judged here, against the snapshot
    the query runs on, so a note attested after the journal was read is judged by its attestation."""
    out = set(found)
    for path in unreviewed:
        i = bisect_left(paths, path)
        if i < len(paths) and paths[i] == path:
            if okf.triage_tier(entries[i].okf_trust, True) == want:
                out.add(i)
            else:
                out.discard(i)
    return out


def run_query(snapshot: Snapshot, q: Query, clock: Clock) -> QueryResult:
    """Answer a Query from one snapshot. Raises QueryError/PathError for bad arguments."""
    folder = normalize_folder(q.folder)
    if q.sort not in SORTS:
        raise QueryError(f"sort {q.sort!r} is unknown: use one of {', '.join(SORTS)}")
    if q.limit is not None and (not isinstance(q.limit, int) or q.limit < 1):
        raise QueryError("limit must be a positive whole number (omit it for the complete listing)")
    if q.pattern_base not in ("vault", "folder"):
        raise QueryError("pattern_base must be 'vault' or 'folder'")
    recursive = q.recursive and folder != ""
    filtered = bool(
        q.filters
        or q.exclude
        or q.problems_only
        or q.unresolved_links
        or q.broken
        or q.triage is not None
        or q.only_paths is not None
        or bool(q.skip_paths)  # (the filter bar's `-trust:` off a bundle is only paths left out)
    )
    kinds = set()
    if q.include_notes:
        kinds.add(NOTE)
    if q.include_attachments and not filtered:
        kinds.add(ATTACHMENT)
    if q.include_folders and not filtered:
        kinds.add(FOLDER)

    paths, entries = _by_kinds(snapshot, frozenset(kinds))
    lo, hi = _span(paths, folder)
    if q.pattern and (q.pattern_base == "vault" or not folder):
        base = literal_dir(q.pattern)  # "Projects/*/x.md" can only match under Projects/
        if base:
            blo, bhi = _span(paths, base)
            lo, hi = max(lo, blo), min(hi, bhi)
            hi = max(lo, hi)

    def chosen_order() -> Sequence[int]:
        """The positions of the notes the filters choose, ascending (filters apply to notes only: answered
        from the inverted lists)."""
        chosen: set[int] | frozenset[int] | None = None

        def matching(key: str, want: str) -> set[int] | frozenset[int]:
            if q.rules is not None and not snapshot.is_bundle:
                # the bar's `status:Deprecated` names the tab as `status:deprecated` does
                by_rule = pair_positions(snapshot, key, want.casefold() if q.shown else want, q.rules, clock)
                if by_rule is not None:
                    return by_rule
            found = postings.positions(snapshot, key, want, clock, shown=q.shown)
            if key == "trust_tier" and q.unreviewed and snapshot.is_bundle:
                found = _triage_trust(paths, entries, q.unreviewed, want, found)
            return found

        for key, want in q.filters:
            found = matching(key, want)
            chosen = found if chosen is None else chosen & found
        if q.problems_only:
            found = postings.problems(snapshot)
            chosen = found if chosen is None else chosen & found
        if q.unresolved_links:
            found = postings.unresolved_links(snapshot)
            chosen = found if chosen is None else chosen & found
        if q.broken:
            found = postings.broken(snapshot)
            chosen = found if chosen is None else chosen & found
        if q.triage is not None:
            found = triage_positions(snapshot, q.triage[0], q.triage[1], clock)
            chosen = found if chosen is None else chosen & found
        if q.only_paths is not None:
            found = {i for p in q.only_paths if (i := bisect_left(paths, p)) < len(paths) and paths[i] == p}
            chosen = found if chosen is None else chosen & found
        for key, want in q.exclude:
            chosen = (postings.all_notes(snapshot) if chosen is None else chosen) - matching(key, want)
        if q.skip_paths:
            drop = {i for p in q.skip_paths if (i := bisect_left(paths, p)) < len(paths) and paths[i] == p}
            if drop:
                chosen = (postings.all_notes(snapshot) if chosen is None else chosen) - drop
        if chosen is None:
            return range(lo, hi)
        # an array, not a list of ints: it may be kept with the snapshot (_kept)
        return array("q", sorted(chosen) if (lo, hi) == (0, len(paths)) else sorted(i for i in chosen if lo <= i < hi))

    if _pages_by_position(q, recursive):
        order = _kept(snapshot, q, chosen_order) if filtered and kinds else range(lo, hi)
        return _position_page(snapshot, q, paths, entries, order)
    keyf = _sort_key(q.sort, clock, _overdue_rules(q))

    def all_matches() -> Sequence[Entry]:
        """Every entry the query matches, in the listing's order."""
        cand_paths: Iterable[str] = paths[lo:hi]
        cands: Iterable[Entry] = entries[lo:hi]
        if filtered and kinds:
            order = chosen_order()
            cands = [entries[i] for i in order]
            cand_paths = [paths[i] for i in order]
        # The path stages run in C via map()/compress().
        prefix_len = len(folder) + 1 if folder else 0
        keep: list[Any]  # truthy per candidate: bools, or regex matches
        hay: Sequence[str]
        if not recursive:
            rel = map(itemgetter(slice(prefix_len, None)), cand_paths) if prefix_len else cand_paths
            keep = list(map(not_, map(methodcaller("__contains__", "/"), rel)))
            cands, cand_paths = list(compress(cands, keep)), list(compress(cand_paths, keep))
        if q.pattern:
            rx = compile_glob(q.pattern)
            strip = prefix_len if (q.pattern_base == "folder" and folder) else 0
            hint = literal_hint(q.pattern)
            if hint and "\n" not in hint and type(cand_paths) is tuple:  # the unfiltered span, as is
                hits = _containing(snapshot, frozenset(kinds), paths, hint, lo, hi)
                cands, cand_paths = [entries[i] for i in hits], [paths[i] for i in hits]
            elif hint:  # substring test in C first; the regex only sees the survivors
                keep = list(map(methodcaller("__contains__", hint), cand_paths))
                cands, cand_paths = list(compress(cands, keep)), list(compress(cand_paths, keep))
            rel = map(itemgetter(slice(strip, None)), cand_paths) if strip else cand_paths
            keep = list(map(rx.fullmatch, rel))
            cands, cand_paths = list(compress(cands, keep)), list(compress(cand_paths, keep))
        for glob in q.exclude_patterns:  # the filter bar's -path: terms, matched against the vault path
            left_out = compile_glob(glob).fullmatch
            keep = [left_out(p) is None for p in cand_paths]
            cands, cand_paths = list(compress(cands, keep)), list(compress(cand_paths, keep))
        needles = [fold(n) for n in ((q.text,) if q.text else ()) + tuple(q.words) if n]
        if needles:
            if isinstance(cands, tuple):  # unfiltered: use this generation's folded titles and paths
                hay = _hay(snapshot, frozenset(kinds), paths, entries)[lo:hi]
            else:
                hay = [fold(f"{e.path}\n{e.title}") for e in cands]
            for needle in needles:  # each narrows the survivors of the one before
                keep = list(map(methodcaller("__contains__", needle), hay))
                cands, hay = list(compress(cands, keep)), list(compress(hay, keep))
        matched = list(cands)
        if q.sort != "path":
            matched.sort(key=lambda e: (keyf(e), e.path), reverse=q.descending)
        elif q.descending:
            matched.reverse()
        return tuple(matched)  # a tuple: it may be kept with the snapshot (_kept)

    matched = _kept(snapshot, q, all_matches)
    fp = _fingerprint(q)
    total = len(matched)
    start = 0
    if q.cursor:
        ckey, cpath = _decode_cursor(q.cursor, fp)
        try:
            if q.descending:
                marks = [(keyf(e), e.path) for e in matched]
                start = next((i for i, m in enumerate(marks) if m < (ckey, cpath)), total)
            elif q.sort == "path":
                if ckey != "":
                    raise TypeError
                start = bisect_right(matched, cpath, key=attrgetter("path"))
            else:
                start = bisect_right(matched, (ckey, cpath), key=lambda e: (keyf(e), e.path))
        except TypeError:  # a hand-edited cursor whose sort key has the wrong type
            raise QueryError("cursor is not valid: pass back the next_cursor of a previous result, unchanged") from None
    end = total if q.limit is None else min(total, start + q.limit)
    page = tuple(matched[start:end])
    next_cursor = None
    if end < total and page:
        last = page[-1]
        next_cursor = encode_cursor(fp, keyf(last), last.path)
    return QueryResult(page, total, next_cursor, snapshot.generation, snapshot.is_bundle, snapshot.loaded)


def stats(snapshot: Snapshot, clock: Clock, exempt: Sequence[str] = ()) -> dict[str, Any]:
    """Counts for `vaultwatch stats`, the TUI's tab badges and the MCP triage tool. Problems
    (frontmatter and encoding errors, skipped files) inside the `exempt` folders are not counted:
    pass the vault's templates folders (`problems.template_folders`), which the Broken tab and
    `links --broken` leave out, so that every count of a vault's problems agrees."""
    kinds, status, trust, fm_errors, decode_errors = _counts(snapshot)
    skipped = len(snapshot.skipped)
    if exempt:
        fm_errors, decode_errors, skipped = _unexempt(snapshot, exempt, fm_errors, decode_errors, skipped)
    bundle = snapshot.is_bundle  # elsewhere no note has an OKF status, staleness or tier (rows carry null)
    return {
        "notes": kinds.get(NOTE, 0),
        "attachments": kinds.get(ATTACHMENT, 0),
        "folders": kinds.get(FOLDER, 0),
        "status": {k: v for k, v in status.items() if v and bundle},
        "stale": len(postings.stale_positions(snapshot, clock)) if bundle else 0,
        "trust_tier": {t: trust.get(t, 0) if bundle else 0 for t in okf.TRUST_TIERS},
        "frontmatter_errors": fm_errors,
        "decode_errors": decode_errors,
        "skipped": skipped,
        "okf_bundle": snapshot.is_bundle,
        "generation": snapshot.generation,
    }


def _unexempt(
    snapshot: Snapshot, exempt: Sequence[str], fm_errors: int, decode_errors: int, skipped: int
) -> tuple[int, int, int]:
    """The problem counts less those of the notes and skipped files inside the `exempt` folders
    (each counted once, however the folders nest)."""
    inside: dict[str, Entry] = {}
    for folder in exempt:
        lo, hi = snapshot.span(folder)
        inside.update((e.path, e) for e in snapshot.entries[lo:hi] if e.kind == NOTE)
    fm_errors -= sum(1 for e in inside.values() if e.frontmatter_error is not None)
    decode_errors -= sum(1 for e in inside.values() if e.decode_error)
    prefixes = tuple(folder + "/" for folder in exempt)
    skipped -= sum(1 for s in snapshot.skipped if s.path.startswith(prefixes))
    return fm_errors, decode_errors, skipped


def _counts(snapshot: Snapshot) -> tuple[dict[str, int], dict[str, int], dict[str, int], int, int]:
    """Clock-free counts of one generation: by kind, by OKF status and trust tier, problems."""
    bundle = snapshot.is_bundle

    def add(counts: list, e: Entry, step: int) -> None:
        kinds, status, trust = counts[0], counts[1], counts[2]
        kinds[e.kind] = kinds.get(e.kind, 0) + step
        if e.kind == NOTE:
            if not (bundle and e.path in okf.RESERVED):  # OKF's index.md and log.md are no notes to triage
                status[e.okf_status] = status.get(e.okf_status, 0) + step
                trust[e.okf_trust] = trust.get(e.okf_trust, 0) + step
            counts[3] += step if e.frontmatter_error is not None else 0
            counts[4] += step if e.decode_error else 0

    def build() -> tuple:
        counts: list = [{}, {}, {}, 0, 0]
        for e in snapshot.entries:
            add(counts, e, 1)
        return tuple(counts)

    def patch(old: tuple, base: Snapshot, changed: frozenset[str]) -> tuple | None:
        if len(changed) > postings.MAX_PATCH or base.is_bundle != bundle:
            return None
        counts = [dict(old[0]), dict(old[1]), dict(old[2]), old[3], old[4]]
        for path in changed:  # added, removed or replaced: any change of shape is fine here
            if (was := base.by_path.get(path)) is not None:
                add(counts, was, -1)
            if (now := snapshot.by_path.get(path)) is not None:
                add(counts, now, 1)
        return tuple(counts)

    return snapshot.cached("counts", build, patch)


def why_empty(snapshot: Snapshot, q: Query) -> str | None:
    """Why `q` lists nothing, when a slip explains it: its folder does not exist (named in the case
    the vault spells it, when only the case differs), or its pattern has a `[` nothing closes (a
    literal `[`, as fnmatch reads it). None when the query is as meant and nothing simply matches."""
    folder = normalize_folder(q.folder)
    if folder:
        entry = snapshot.get(folder)
        if entry is None or entry.kind != FOLDER:
            folders = postings.subset(snapshot, frozenset({FOLDER}))[0]
            same = next((f for f in folders if f.casefold() == folder.casefold()), None)
            more = f"; did you mean {same!r}? Folder names are case-sensitive" if same else ""
            return f"no folder {folder!r} in this vault{more}"
    if q.pattern:
        at = unclosed_bracket(q.pattern)
        if at is not None:
            return (
                f"the pattern {q.pattern!r} has a '[' (character {at + 1}) that no ']' closes: it matches a "
                "literal '[' and no path has one; close the class, e.g. '[ab]*.md'"
            )
    return None

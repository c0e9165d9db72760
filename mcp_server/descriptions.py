"""What agents read about each tool: the descriptions and parameter texts.

Each description follows one plan: purpose in the first sentence; when to use it versus
its siblings; parameter semantics the schema cannot say; behaviour; every error with its
remedy; the return shape.
"""
from __future__ import annotations

PATH_ERRORS = ('"absolute path blocked" / "path traversal blocked" / "hidden path blocked": the value starts at '
               'the filesystem root, escapes the vault with "..", names the vault root itself (".") or is hidden '
               '(dot-prefixed like ".obsidian"); pass a vault-relative path outside hidden folders')

LIST_DOCUMENTS = f"""List documents (and optionally attachments) in the vault, filtered by folder, glob pattern or frontmatter, as metadata rows without body text.

When to use: enumerate notes when you need a complete or exactly filtered listing (e.g. every deprecated note under Projects). To find notes by their words use 'search'; for a note's text use 'read'; for triage counts (deprecated, stale, unreviewed, broken) use 'triage'; for the folder or tag structure use 'list_folders' / 'list_tags'.

Parameters:
- folder: "Journal" lists that folder and everything below it, with a name boundary ("Projects" covers "Projects/Archive", not "ProjectsOld"); "" lists root-level documents only; omit it for the whole vault. Case-sensitive.
- pattern: case-sensitive glob on the vault-relative path; * and ? stay within one folder level, ** spans any depth including none ("**/*.md" also matches root notes; "Journal/*.md" only Journal's top level).
- filters: frontmatter equality, ANDed; list fields match by membership; see its own description for the OKF keys. Any filter excludes attachments.
- include_frontmatter: rows carry path, title, OKF fields and tags; set it to true to add each note's whole frontmatter (costly on big listings; read(frontmatter_only=true) gets one note's).
- limit / cursor: without limit a page holds as many rows as fit the answer budget (64 KiB of text by default); pass next_cursor back unchanged (same other arguments) for the next page until it is null: every row comes exactly once, in order. total always counts every match. A limit whose page would pass 2 MiB is refused with a limit that fits.

Behavior: read-only. Answers from vaultwatch's live index, which follows the disk within a fraction of a second, in code-point order of path (uppercase before lowercase). Hidden (dot-prefixed) files and folders are never listed; symlinked notes inside the vault are. A folder that does not exist, or no match, gives an empty result, not an error. _meta.index_stale is true when the answer may miss a write still in flight or the index is still loading.

Errors (is_error, text starts "Error: "):
- {PATH_ERRORS}; omit folder to list the whole vault.
- "stale filter ... is not a boolean" / "trust_tier ... is not a tier": use the values listed in the filters description.
- "pattern ...": the glob is empty, too long or has too many wildcards; simplify it.
- "cursor is not valid" / "cursor belongs to a different query": repeat the same arguments with next_cursor unchanged, or drop cursor to start over.

Returns: {{"result": [{{"path", "kind" ("note"|"attachment"), "title", "folder", "status", "stale", "trust_tier", "tags", "size_bytes", "modified_at" (ISO 8601 UTC), "frontmatter" (with include_frontmatter), "mime_type" (attachments)}}], "total", "returned", "next_cursor" (null on the last page), "okf_bundle"}}; OKF fields are null when the vault is not an OKF bundle."""

P_FOLDER = ('Return only documents in this folder and its subfolders (e.g. "Journal"; "Projects" does not cover '
            '"ProjectsOld"). Use folder="" for root-level (top-level) documents only; omit for the whole vault.')
P_FILTERS = ('Frontmatter equality filters, ANDed (e.g. {"tags": "craft"}); any frontmatter key works and list '
             'fields match by membership; YAML booleans match "true"/"false". On an OKF bundle three keys carry OKF '
             'semantics: status ("draft"/"stable"/"deprecated"; "stable" also matches notes without a status '
             'field), stale ("true"/"false", also yes/no/1/0: stale_after reached), and trust_tier '
             '("unverified"/"machine-confirmed"/"human-reviewed"). Use {"status": "deprecated"} or '
             '{"stale": "true"} to build triage listings. Any filter excludes attachments (they carry no frontmatter).')
P_PATTERN = ('Unix glob matched case-sensitively against vault-relative paths (e.g. "Journal/*.md", '
             '"**/meeting*.md"); * and ? stay within one folder level, ** spans any depth.')
P_ATTACHMENTS = ('When true, also returns non-.md files (PDFs, images, etc.) that match the configured allowlist. '
                 'Each attachment entry includes kind="attachment" and mime_type. Default false (notes only).')
P_WAIT = ('When true, wait (at most 10 s) until writes already made to the vault are in the index before '
          'answering, so the listing reflects them; use it right after changing notes. Default false answers '
          'at once from the current index, which is almost always up to date; on timeout it answers from the '
          'current index with _meta.index_stale=true.')
P_INCLUDE_FM = ("Add each note's full frontmatter to its row (default false: rows carry path, title, status, stale, "
                "trust_tier and tags).")
P_LIMIT = 'Rows per page. Omit it: as many rows as fit the answer budget; follow next_cursor for the rest.'
P_PAGE_LIMIT = P_LIMIT
P_CURSOR = 'The next_cursor of the previous page, unchanged, to continue the same listing.'

SEARCH = f"""Full-text search over the vault's notes (title, headings, body and path), ranked by relevance, with a snippet of each match.

When to use: find notes by what they say. For a complete or exactly filtered listing use 'list_documents'; to read a hit use 'read' with its path; for a note's links use 'get_links'.

Parameters:
- query: words (every word must match), "exact phrases", prefix* and -excluded words; any text is safe to pass (quotes, operators and SQL fragments are searched as plain words).
- folder, pattern, filters: exactly as in list_documents (folder with a name boundary, case-sensitive glob, frontmatter and OKF filters), to scope the search.
- limit (default 20, at most 1000) / cursor: pass next_cursor back unchanged with the same arguments for more hits.

Behavior: read-only. BM25 ranking over title, headings, body and path (weighted in that order); on an OKF bundle deprecated notes rank x0.5 and stale notes x0.75. Hidden files are never searched. A first search waits up to 5 s for the full-text index to be built; _meta.index_stale is true while recent changes are still being indexed.

Errors (is_error, text starts "Error: "):
- an empty or unusable query (e.g. only excluded words): the message says how to write it.
- {PATH_ERRORS}; filter and cursor errors as in list_documents.
- "search index is still building (N of M notes indexed)": retry in a few seconds, or use list_documents meanwhile.

Returns: {{"result": [{{"path", "title", "folder", "score" (higher is better), "snippet" (matched terms in **bold**), "snippet_plain", "highlights" ([start, end] spans in snippet_plain), "modified_at", "status", "stale", "trust_tier", "tags"}}], "total" (all matches in scope; null when counting would be slow), "returned", "next_cursor", "okf_bundle"}}."""

P_QUERY = 'What to look for: words, "exact phrases", prefix* and -excluded words.'
P_SEARCH_LIMIT = 'Most hits to return in this call (default 20).'

READ = f"""Read one file of the vault: a note whole, its frontmatter only, one section by heading, or a range of lines; for an attachment, its metadata and bytes.

When to use: once list_documents, search or triage gave you a path and you need its text or exact frontmatter. Fetch only the part you need from a long note with section or lines. For metadata of many notes at once use list_documents; read takes one path.

Parameters:
- path: vault-relative and case-sensitive, with its extension, exactly as listings show it (e.g. "Projects/Atlas Migration.md").
- section: a heading's text ("Setup"), with its level to pick one of several ("## Setup"), or under its parent ("Week 1#Notes"); returns the heading line and everything under it up to the next heading of the same or a higher level (child headings included).
- lines: [start, end], 1-based and inclusive, numbered as an editor numbers the file (frontmatter lines count); an end past the last line is clamped.
- frontmatter_only: true returns the parsed frontmatter and OKF fields without the content.
Give at most one of section, lines and frontmatter_only.
- max_chars (default 40000) and offset page long content: when truncated is true, call again with the same arguments and offset=next_offset; the notice field says the same.
- include_attachment_content (default true): attachments up to 1 MiB come back base64-encoded.

Behavior: read-only. Reads the file fresh from disk, so content, frontmatter and etag always describe the bytes on disk now. etag is the SHA-256 of the whole file's bytes (also for a section) and is what write tools accept as if_match.

Errors (is_error, text starts "Error: "):
- {PATH_ERRORS}; "symlink escapes vault": the path is a link to outside the vault and is never followed.
- "not found" (with close matches when only the case or extension differs): check the path with list_documents.
- "... is a folder": list it with list_documents(folder=...).
- "section not found" (lists the note's headings) / "section is ambiguous" (lists the candidates): pass one of them.
- lines, offset or max_chars out of range, or several selectors at once: the message gives the valid range.
- files above 64 MiB cannot be read.

Returns: {{"path", "kind", "title", "etag", "size_bytes", "modified_at", "selection" ("whole"|"frontmatter"|"section"|"lines"), "frontmatter", "status", "stale", "stale_after", "trust_tier", "tags", "content", "start_line", "end_line", "total_lines", "offset", "total_chars", "truncated", "next_offset", "notice"}}; for an attachment {{"path", "kind", "title", "etag", "size_bytes", "modified_at", "mime_type", "content_base64" or "content_omitted" (why)}}."""

P_PATH = 'Vault-relative path of the note or attachment, with extension, e.g. "Projects/Atlas Migration.md".'
P_SECTION = 'Heading whose section to return: "Setup", "## Setup" or "Parent#Setup".'
P_LINES = 'Line range [start, end], 1-based and inclusive, as an editor numbers the file.'
P_FM_ONLY = 'Return frontmatter and OKF fields only, without content.'
P_OFFSET = 'Character offset into the selected content: the next_offset of a previous truncated read.'
P_MAX_CHARS = 'Most characters of content to return in this call (default 40000).'
P_ATT_CONTENT = 'Return attachment bytes base64-encoded when they are at most 1 MiB (default true).'

TRIAGE = """Count and page through the notes of an OKF bundle that need attention: deprecated, stale (stale_after reached as of a date), each trust tier, and broken (frontmatter that does not parse, undecodable bytes, files the index skipped).

When to use: to start a review or pick what to fix first. category "overview" (the default) returns the counts only; any other category returns the counts plus one page of its notes. For other frontmatter combinations (e.g. deprecated notes in one folder) use list_documents with filters; to read a note use read.

Parameters:
- category: overview | deprecated | stale | unverified | machine-confirmed | human-reviewed | broken.
- as_of: judge staleness as of this date (YYYY-MM-DD, or an ISO 8601 datetime with offset) instead of today; it changes the stale count and the stale page only.
- limit (default 50) / cursor: pass next_cursor back unchanged with the same category and as_of for the next page.

Behavior: read-only; counts cover the whole vault. The stale page is most overdue first and each row carries overdue_days; other pages are in path order. The broken page also lists skipped files with the reason. On a vault that is not an OKF bundle (no okf_version in the root index.md) only overview and broken apply.

Errors (is_error, text starts "Error: "): an unknown category (use one of the list); "invalid as-of date": write YYYY-MM-DD; a deprecated/stale/trust category on a vault that is not an OKF bundle: use list_documents filters on your own frontmatter keys instead; cursor errors as in list_documents.

Returns: {"as_of", "okf_bundle", "counts": {"notes", "deprecated", "stale", "unverified", "machine_confirmed", "human_reviewed", "broken_frontmatter", "undecodable", "skipped_files", "by_status"}, "category", "result": [rows as list_documents returns them, plus "overdue_days" on the stale page], "total", "returned", "next_cursor", "skipped": [{"path", "reason"}] (broken only)}."""

P_CATEGORY = 'Which notes to page through; "overview" returns counts only.'
P_AS_OF = 'Date (YYYY-MM-DD) staleness is judged on; default today.'
P_TRIAGE_LIMIT = 'Rows per page (default 50, fewer past the answer budget).'

LIST_FOLDERS = f"""List the vault's folders with the number of notes each holds (subfolders included), to see the vault's structure before listing or reading notes.

When to use: to learn how the vault is organised or to pick a folder argument. For the notes in a folder use list_documents(folder=...); for tags use list_tags.

Parameters:
- folder: omit for every folder; "" for the top-level folders only; "Projects" for the folders below Projects (name boundary as in list_documents). Case-sensitive.
- recursive: false lists only the direct subfolders (default true).

Behavior: read-only; from the live index, in code-point order of path. Hidden folders are never listed; a folder that does not exist gives an empty result.

Errors (is_error, text starts "Error: "): {PATH_ERRORS}; omit folder to list every folder.

Returns: {{"result": [{{"path", "notes", "subfolders", "modified_at"}}], "total"}}."""

P_LF_FOLDER = 'List the folders below this folder; "" for top-level folders only; omit for all.'
P_LF_RECURSIVE = 'False lists only direct subfolders (default true).'

LIST_TAGS = f"""List the tags used in the vault (frontmatter tags and inline #tags) with how many notes carry each, most used first.

When to use: to learn the tag vocabulary before filtering; then list_documents(filters={{"tags": "craft"}}) lists the notes carrying a tag. For folders use list_folders.

Parameters:
- folder: count only notes in this folder and below ("" = root-level notes; omit for the whole vault).
- prefix: only tags starting with this text, case-insensitively ("ops" also returns "ops/oncall").
- limit: at most this many tags (omit for all).

Behavior: read-only; from the live index. Tags compare case-insensitively (as the tags filter does) and are shown with their first spelling; '#' is not part of the tag. Ties sort by tag.

Errors (is_error, text starts "Error: "): {PATH_ERRORS}.

Returns: {{"result": [{{"tag", "count"}}], "total" (tags before limit)}}."""

P_LT_FOLDER = 'Count only notes in this folder and its subfolders; "" for root-level notes.'
P_LT_PREFIX = 'Only tags starting with this text (case-insensitive).'
P_LT_LIMIT = 'Most tags to return; omit for all.'

GET_LINKS = f"""Show one note's links: each outgoing link and the vault path it resolves to, the notes that link to it (backlinks), and its broken links.

When to use: to follow a note's connections or check its links before renaming or deprecating it. For the note's text use read; to list notes use list_documents.

Parameters:
- path: the note's vault-relative path with extension, e.g. "index.md".

Behavior: read-only; from the live index. Links resolve as Obsidian resolves them: case-insensitive names, shortest unique path, the linking note's own folder first; Markdown links are relative to the note. Wiki links, embeds (![[...]]) and Markdown links are reported, with their heading and alias.

Errors (is_error, text starts "Error: "): {PATH_ERRORS}; "not found": check the path with list_documents; "... is a folder": pass a note.

Returns: {{"path", "outgoing": [{{"target", "kind" ("wiki"|"embed"|"markdown"), "heading", "alias", "resolved" (null when broken)}}], "backlinks": [paths], "broken": [the outgoing links that resolve nowhere]}}."""

P_LINK_PATH = 'Vault-relative path of the note, e.g. "index.md".'

VAULT_LIST_NOTES = f"""List Markdown note paths in the vault, optionally filtered by folder and/or glob pattern. Returns vault-relative paths only, not note content or metadata.

Example: vault_list_notes({{ folder: "Projects" }}) Example: vault_list_notes({{ glob: "**/session-log.md" }}) Example: vault_list_notes({{ folder: "Projects", glob: "*.md" }}) (the folder's top-level notes only)

When to use: browsing what exists in a folder by file name, or finding notes matching a path pattern. Prefer list_documents when you need metadata (frontmatter, status, tags) along with paths. Prefer search for content-based discovery. Use read to read a note from the results.

Parameters:
- folder names a whole folder and includes its subfolders: "Projects" covers "Projects/Archive" but not "ProjectsOld/". Use the folder's exact letter case, as other results show it: a different case finds nothing.
- glob matches each note's path inside folder (its vault-relative path when folder is omitted), case-sensitively. * stays within one folder level and ** spans any depth: with folder "Projects", "*.md" lists the folder's top-level notes and "**/*.md" every note under it. Returned paths are always vault-relative.

Behavior: read-only. Paths come back sorted by vault-relative path, uppercase before lowercase. Hidden (dot-prefixed) notes and folders are never listed, matching Obsidian; symlinked notes are included.

Errors:
- A nonexistent folder or no glob matches returns an empty array, not an error.
- {PATH_ERRORS}, or omit folder to list the whole vault.
- A glob that is too long or has too many wildcards: simplify it.

Returns: JSON array of vault-relative path strings (e.g. ["Notes/idea.md", "Projects/plan.md"]); the structured result carries the same array as "result"."""

P_VLN_GLOB = 'Glob pattern for note paths (e.g. "**/*session-log*.md").'
P_VLN_FOLDER = 'Vault-relative folder to list (e.g. "About Me", "Projects").'

OBSIDIAN_LIST_NOTES = f"""List notes and folders in the vault, optionally scoped to one folder, to discover its structure before reading or writing.

When to use: to discover the vault's structure before reading or writing. For finding a note by its contents, search is faster; for metadata and filters use list_documents; to read a note use read.

Args: params (object):
- folder (str): vault-relative folder, "" (default) for the vault root. Case-sensitive.
- recursive (bool): walk nested folders too (default false: only the folder's direct notes and subfolders).
- response_format (str): "markdown" (default, a readable list) or "json".

Behavior: read-only; reads vaultwatch's live index of the filesystem (backend "filesystem"). Entries are notes (.md) and folders, in code-point order of path; hidden (dot-prefixed) files and folders are never listed. A folder that does not exist lists as empty (count 0).

Errors: returned as text starting "Error: " with is_error set: {PATH_ERRORS}; an unknown response_format: use "markdown" or "json".

Returns: str: a Markdown list, or JSON of the shape {{"folder": str, "count": int, "backend": "filesystem", "entries": [{{"path": str, "is_folder": bool, "size_bytes": int, "modified_at": str}}]}}; the structured result carries the same text as "result". On failure: "Error: <message>"."""

P_OLN_PARAMS = 'Listing options: folder ("" = vault root), recursive (default false), response_format ("markdown" or "json").'
P_OLN_FOLDER = 'Vault-relative folder, empty for the root.'
P_OLN_RECURSIVE = 'Walk nested folders too.'
P_OLN_FORMAT = "'markdown' or 'json'."

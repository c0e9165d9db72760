"""vaultwatch's own deterministic vault generator, for tests and benchmarks.

API (the repository root is on sys.path in tests and benchmarks, `bench` is a package)::

    from bench.vaultgen import generate, TODAY, SIZES

    manifest = generate(out_dir, notes=1000)                   # the default (benchmark) shape
    manifest = generate(out_dir, notes=2000, realistic=True)   # long, rich notes (2-20 KB)

    python -m bench.vaultgen OUT [--notes N] [--seed S] [--attachments N] [--body-bytes B]
                                 [--no-okf] [--realistic]

`generate` creates `out_dir` (it must not exist), writes the vault and its manifest, and
returns the manifest (a JSON-safe dict); the manifest is also saved beside the vault as
`<out_dir>.manifest.json`. The same arguments give the same bytes (mtimes aside), on any
machine: every note is drawn from its own `random.Random(f"{seed}:{i}")`.

What every vault has: nested folders (some three levels deep, `Projects` next to
`ProjectsOld` so a folder filter must respect the name boundary, a `café` folder), mixed-case
and unicode file names (`résumé`, `naïve`), YAML frontmatter (title, type, tags, status,
`verified` entries from which OKF derives the trust tier, sometimes a literal `trust_tier`
key OKF ignores, `stale_after` as a date, a quoted date or a UTC datetime, created,
published), notes without frontmatter, notes with broken YAML, wiki links to earlier notes
(by name and by path), attachments (.png, .pdf; default: one per 20 notes), hidden files and
folders that must never be listed, and a root `index.md` that declares `okf_version` (unless
okf=False). The default shape keeps every frontmatter inside core's fast YAML subset.

`realistic=True` writes notes of 2-20 KB with fenced code blocks (holding text that looks
like links and tags but is not), tables, callouts (some foldable), bulleted, numbered, nested
and task lists, block quotes, embeds of notes, headings and attachments, aliased and heading
links, Markdown links, inline `#tags`, a few links to notes that do not exist, and
frontmatter keys with dots and spaces (`ms.date`, `ms.topic`, `external help file`, `Module
Name`), flow lists, `verified` as a single mapping and comma-separated tag strings.

Manifest (counts as core should report them; "as of" TODAY, 00:00 UTC):

    notes, root_notes, attachments, hidden_files   every note counts index.md
    status {draft, stable, deprecated, none}        generated notes only (not index.md);
                                                    none = no parseable status (OKF: stable)
    trust_tier {unverified, machine-confirmed, human-reviewed}   generated notes only
    stale_true                                      notes whose stale_after is reached
    tag_craft                                       notes tagged craft (frontmatter or inline)
    broken_yaml, no_frontmatter
    per_top_folder {top: notes}                     "" = root level (index.md included)
    keys {key: notes}                               every frontmatter key of the generated
                                                    notes with valid YAML
    values {"type": {..}, "ms.topic": {..}}         notes per value of those keys
    links {wiki, embed, markdown, broken}           link occurrences outside code
    bytes {min, max, total}                         note file sizes (generated notes)
    generator ("bench.vaultgen VERSION"), today, okf, realistic, args

SIZES are the vault sizes the benchmarks use; the tests use small vaults (1,000-2,000 notes).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import sys
from pathlib import Path
from typing import Any

VERSION = 1  # bump when the same arguments start giving different bytes (cached bench vaults regenerate)
TODAY = dt.date(2026, 11, 29)
SIZES = {"10k": 10_000, "100k": 100_000}

STATUSES = ("draft", "stable", "deprecated")
TIERS = ("unverified", "machine-confirmed", "human-reviewed")
TAGS = ("craft", "work", "home", "idea", "reading", "todo", "project/alpha", "project/beta", "ml", "ops")
TYPES = ("note", "howto", "reference", "log-entry", "decision")
TOPICS = ("reference", "conceptual", "how-to", "tutorial")
HIDDEN = (".obsidian/workspace.md", ".trash/old note.md", "Projects/.secret/plan.md", ".hidden-note.md")

# Folders every vault has (the benchmarks query Projects and **/meetings/*.md), then a few
# drawn per vault under each top folder.
_TOPS = ("Projects", "ProjectsOld", "Areas", "Daily", "Reference", "Archive", "inbox", "People", "Knowledge")
_FIXED = ("Projects/meetings", "Reference/café", "Areas/Research/deep/er")
_SUBS = ("meetings", "Research", "design", "2025", "2026", "notes", "Ops", "drafts", "ideas", "Überblick")
_VOCAB = (
    "index agent triage stale trust review draft stable deprecated note link graph folder tag "
    "search query socket server terminal markdown frontmatter yaml watch change budget roadmap "
    "meeting design decision risk metric latency cache memory disk write read vault owner "
    "release plan sketch outline summary detail example source answer"
).split()
_CODE = {
    "python": ["def {w}(path):", "    # {w} [[not a link]] and #notatag live in code", "    return path.{w}()"],
    "sh": ["vaultwatch list ~/vault --filter status={w}", "# a comment, #notatag, [[not a link]]"],
    "json": ['{{"{w}": [1, 2, 3], "link": "[[not a link]]"}}'],
}


def manifest_path(out: str | os.PathLike[str]) -> Path:
    """Where generate() saves the manifest of the vault at `out`."""
    return Path(os.path.abspath(out).rstrip(os.sep) + ".manifest.json")


def _folders(rng: random.Random) -> list[str]:
    folders = {""} | set(_TOPS) | set(_FIXED)
    for top in _TOPS:
        for sub in rng.sample(_SUBS, 3):
            folders.add(f"{top}/{sub}")
            if rng.random() < 0.35:
                folders.add(f"{top}/{sub}/archive/old")
    for f in list(folders):  # every parent of a note folder is a folder too
        while "/" in f:
            f = f.rsplit("/", 1)[0]
            folders.add(f)
    return sorted(folders)


def _words(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(rng.choice(_VOCAB) for _ in range(rng.randint(lo, hi)))


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


class _Gen:
    def __init__(
        self, out: Path, notes: int, seed: int, attachments: int, body_bytes: int, okf: bool, realistic: bool
    ) -> None:
        self.out, self.n, self.seed, self.n_att = out, notes, seed, attachments
        self.body_bytes, self.okf, self.realistic = body_bytes, okf, realistic
        self.folders = _folders(random.Random(f"{seed}:folders"))
        self.targets: list[tuple[str, str]] = []  # (path without .md, stem) of the notes written so far
        self.m: dict[str, Any] = {
            "notes": 0,
            "root_notes": 0,
            "attachments": 0,
            "hidden_files": 0,
            "status": dict.fromkeys((*STATUSES, "none"), 0),
            "trust_tier": dict.fromkeys(TIERS, 0),
            "stale_true": 0,
            "tag_craft": 0,
            "broken_yaml": 0,
            "no_frontmatter": 0,
            "per_top_folder": {},
            "keys": {},
            "values": {"type": {}, "ms.topic": {}},
            "links": {"wiki": 0, "embed": 0, "markdown": 0, "broken": 0},
            "bytes": {"min": 0, "max": 0, "total": 0},
            "generator": f"bench.vaultgen {VERSION}",
            "today": TODAY.isoformat(),
            "okf": okf,
            "realistic": realistic,
            "args": {
                "notes": notes,
                "seed": seed,
                "attachments": attachments,
                "body_bytes": body_bytes,
                "okf": okf,
                "realistic": realistic,
            },
        }

    # -- frontmatter -------------------------------------------------------------------------
    def frontmatter(self, rng: random.Random, stem: str) -> tuple[str, dict[str, Any], set[str]]:
        """(YAML block, the values that matter for counting, frontmatter tags)."""
        fm: dict[str, Any] = {}
        lines = ["---", f"title: {_q(stem)}"]
        fm["title"] = stem
        kind = rng.choice(TYPES)
        fm["type"] = kind
        lines.append(f"type: {kind}")
        tags = rng.sample(TAGS, rng.randint(0, 3))
        fm["tags"] = tags
        if self.realistic and tags and rng.random() < 0.2:
            lines.append(f"tags: {', '.join(tags)}")  # a comma-separated string
        elif self.realistic and rng.random() < 0.3:
            lines.append(f"tags: [{', '.join(tags)}]")
        else:
            lines.append("tags:" if tags else "tags: []")
            lines.extend(f"  - {t}" for t in tags)
        if rng.random() < 0.8:
            fm["status"] = rng.choice(STATUSES)
            lines.append(f"status: {fm['status']}")
        r = rng.random()
        if r < 0.5:
            who = "human:alice" if r < 0.25 else "ci-bot/2.1"
            day = (TODAY - dt.timedelta(days=rng.randint(1, 900))).isoformat()
            fm["verified"] = who
            if self.realistic and rng.random() < 0.3:
                lines.extend(["verified:", f"  by: {who}", f"  at: {day}T09:30:00Z"])  # one mapping
            else:
                lines.extend(["verified:", f"  - by: {who}", f"    at: {day}T09:30:00Z"])
                if rng.random() < 0.2:
                    lines.extend(["  - by: ci-bot/2.1", f"    at: {day}T10:00:00Z"])
        if rng.random() < 0.2:
            fm["trust_tier"] = rng.choice(TIERS)  # literal key: OKF derives the tier from `verified`
            lines.append(f"trust_tier: {fm['trust_tier']}")
        if rng.random() < 0.6:
            days = rng.randint(-400, 400) or 1
            day = TODAY + dt.timedelta(days=days)
            style = rng.random()
            if style < 0.6:
                lines.append(f"stale_after: {day.isoformat()}")
                fm["stale"] = day <= TODAY
            elif style < 0.85:
                lines.append(f"stale_after: {_q(day.isoformat())}")
                fm["stale"] = day <= TODAY
            else:  # an instant: stale once it is <= TODAY 00:00 UTC, so day TODAY-1 is, TODAY+1 is not
                lines.append(f"stale_after: {day.isoformat()}T12:00:00Z")
                fm["stale"] = days < 0
            fm["stale_after"] = True
        fm["created"] = True
        lines.append(f"created: {(TODAY - dt.timedelta(days=rng.randint(0, 2000))).isoformat()}")
        fm["published"] = True
        lines.append(f"published: {'true' if rng.random() < 0.5 else 'false'}")
        if self.realistic:
            if rng.random() < 0.4:
                topic = rng.choice(TOPICS)
                fm["ms.topic"] = topic
                fm["ms.date"] = True
                lines.append(f"ms.date: {rng.randint(1, 12):02d}/{rng.randint(1, 28):02d}/2025")
                lines.append(f"ms.topic: {topic}")
            if rng.random() < 0.25:
                fm["external help file"] = True
                fm["Module Name"] = True
                lines.append(f"external help file: {rng.choice(_VOCAB).capitalize()}.Module-help.xml")
                lines.append(f"Module Name: {rng.choice(_VOCAB).capitalize()}Tools")
            if rng.random() < 0.3:
                fm["aliases"] = True
                lines.append(f"aliases: [{_q(stem.lower())}, {rng.choice(_VOCAB)}]")
        lines.append("---\n")
        return "\n".join(lines), fm, {t.casefold() for t in tags}

    # -- body --------------------------------------------------------------------------------
    def link(self, rng: random.Random) -> str:
        """A link in prose (counted): to an earlier note by name or path, sometimes broken."""
        if not self.targets or (self.realistic and rng.random() < 0.03):
            self.m["links"]["broken"] += 1
            self.m["links"]["wiki"] += 1
            return f"[[Missing {rng.choice(_VOCAB)} {rng.randint(0, 10**6)}]]"
        path, stem = rng.choice(self.targets)
        target = stem if rng.random() < 0.5 else path
        if not self.realistic:
            self.m["links"]["wiki"] += 1
            return f"[[{target}]]"
        r = rng.random()
        if r < 0.15:
            self.m["links"]["markdown"] += 1
            return f"[{stem}]({path.replace(' ', '%20')}.md)"
        self.m["links"]["wiki"] += 1
        if r < 0.3:
            return f"[[{target}|{_words(rng, 1, 3)}]]"
        if r < 0.4:
            return f"[[{target}#Summary]]"
        return f"[[{target}]]"

    def paragraph(self, rng: random.Random, inline_tags: set[str]) -> str:
        text = _words(rng, 8, 40)
        if rng.random() < 0.3:
            text += f" See {self.link(rng)}."
        if self.realistic:
            if rng.random() < 0.3:
                text = f"The **{rng.choice(_VOCAB)}** step uses `{rng.choice(_VOCAB)}()`; " + text
            if rng.random() < 0.15:
                tag = rng.choice(TAGS)
                inline_tags.add(tag.casefold())
                text += f" #{tag}"
        return text + "\n"

    def block(self, rng: random.Random, inline_tags: set[str]) -> str:
        r = rng.random()
        if r < 0.40:
            return self.paragraph(rng, inline_tags)
        if r < 0.50:
            lang = rng.choice(sorted(_CODE))
            fence = "~~~" if rng.random() < 0.2 else "```"
            body = "\n".join(line.format(w=rng.choice(_VOCAB)) for line in _CODE[lang])
            return f"{fence}{lang}\n{body}\n{fence}\n"
        if r < 0.58:
            rows = ["| Field | Value | Owner |", "| --- | :---: | ---: |"]
            rows += [
                f"| {rng.choice(_VOCAB)} | {rng.randint(0, 999)} | {rng.choice(_VOCAB)} |"
                for _ in range(rng.randint(2, 6))
            ]
            return "\n".join(rows) + "\n"
        if r < 0.66:
            kind = rng.choice(("note", "warning", "tip", "info", "todo"))
            fold = rng.choice(("", "-", "+"))
            return (
                f"> [!{kind}]{fold} {_words(rng, 1, 4).capitalize()}\n> {_words(rng, 6, 20)}\n> - {_words(rng, 2, 6)}\n"
            )
        if r < 0.78:
            items = []
            for k in range(rng.randint(2, 6)):
                style = rng.random()
                if style < 0.3:
                    items.append(f"- [{'x' if rng.random() < 0.5 else ' '}] {_words(rng, 2, 8)}")
                elif style < 0.55:
                    items.append(f"{k + 1}. {_words(rng, 2, 8)}")
                else:
                    items.append(f"- {_words(rng, 2, 8)}")
                    if rng.random() < 0.3:
                        items.append(f"    - {_words(rng, 2, 6)}")
            if rng.random() < 0.3:
                items.append(f"- {self.link(rng)}")
            return "\n".join(items) + "\n"
        if r < 0.86:
            self.m["links"]["embed"] += 1
            if self.n_att and rng.random() < 0.5:
                j = rng.randrange(self.n_att)
                return f"![[asset-{j:05d}.{'png' if j % 2 == 0 else 'pdf'}]]\n"
            if not self.targets:
                self.m["links"]["embed"] -= 1
                return self.paragraph(rng, inline_tags)
            _path, stem = rng.choice(self.targets)
            return f"![[{stem}#Summary]]\n" if rng.random() < 0.5 else f"![[{stem}]]\n"
        if r < 0.92:
            return f"> {_words(rng, 8, 30)}\n>\n> -- {rng.choice(_VOCAB)}\n"
        return f"## {_words(rng, 1, 3).capitalize()}\n\n{self.paragraph(rng, inline_tags)}"

    def body(self, rng: random.Random, stem: str, inline_tags: set[str], head: int) -> str:
        parts = [f"# {stem}\n"]
        if self.realistic:  # files of 2-20 KB, log-uniform; the last block may add up to ~600 bytes
            budget = int(2048 * 9.2 ** rng.random()) - head
            parts.append(f"## Summary\n\n{self.paragraph(rng, inline_tags)}")
        else:
            budget = self.body_bytes
        size = 0
        while size < budget:
            if self.realistic:
                part = self.block(rng, inline_tags)
            else:
                part = self.paragraph(rng, inline_tags)
                if rng.random() < 0.2:
                    part = f"## {rng.choice(_VOCAB).capitalize()}\n\n{part}"
            parts.append(part)
            size += len(part.encode())
        return "\n".join(parts)

    # -- notes and files ---------------------------------------------------------------------
    def note(self, i: int) -> None:
        rng = random.Random(f"{self.seed}:{i}")
        folder = rng.choice(self.folders)
        word = rng.choice(_VOCAB)
        stem = f"{word.capitalize() if rng.random() < 0.5 else word} {i:06d}"
        if i % 97 == 0:
            stem += " – résumé"
        elif i % 89 == 0:
            stem += " naïve"
        rel = f"{folder}/{stem}.md" if folder else f"{stem}.md"
        m = self.m
        r = rng.random()
        fm: dict[str, Any] = {}
        fm_tags: set[str] = set()
        inline_tags: set[str] = set()
        if r < 0.03:
            head = "---\ntitle: [never closed\nstatus: draft\n---\n"
            m["broken_yaml"] += 1
        elif r < 0.10:
            head = ""
            m["no_frontmatter"] += 1
        else:
            head, fm, fm_tags = self.frontmatter(rng, stem)
        body = self.body(rng, stem, inline_tags, len(head.encode()))
        data = (head + body).encode("utf-8")
        path = self.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.targets.append((rel[:-3], stem))

        m["notes"] += 1
        m["status"][fm.get("status", "none")] += 1
        tier = "unverified"
        if "verified" in fm:
            tier = "human-reviewed" if fm["verified"].startswith("human:") else "machine-confirmed"
        m["trust_tier"][tier] += 1
        m["stale_true"] += bool(fm.get("stale"))
        m["tag_craft"] += "craft" in (fm_tags | inline_tags)
        for key in fm:
            if key != "stale":
                m["keys"][key] = m["keys"].get(key, 0) + 1
        for key in ("type", "ms.topic"):
            if key in fm:
                m["values"][key][fm[key]] = m["values"][key].get(fm[key], 0) + 1
        top = folder.split("/")[0]
        m["per_top_folder"][top] = m["per_top_folder"].get(top, 0) + 1
        m["root_notes"] += not folder
        b = m["bytes"]
        b["min"] = min(b["min"], len(data)) if b["total"] else len(data)
        b["max"] = max(b["max"], len(data))
        b["total"] += len(data)

    def attachment(self, j: int) -> None:
        rng = random.Random(f"{self.seed}:asset:{j}")
        folder = rng.choice(self.folders)
        ext = "png" if j % 2 == 0 else "pdf"
        name = f"asset-{j:05d}.{ext}"
        path = self.out / folder / name if folder else self.out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        magic = b"\x89PNG\r\n\x1a\n" if ext == "png" else b"%PDF-1.7\n"
        path.write_bytes(magic + rng.randbytes(200 + rng.randrange(200)))
        self.m["attachments"] += 1

    def run(self) -> dict[str, Any]:
        self.out.mkdir(parents=True)
        for i in range(self.n):
            self.note(i)
        for j in range(self.n_att):
            self.attachment(j)
        for rel in HIDDEN:
            path = self.out / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("---\nstatus: deprecated\n---\n# Hidden\n\nNever listed. #craft [[index]]\n")
            self.m["hidden_files"] += 1
        (self.out / ".obsidian" / "app.json").write_text('{"userIgnoreFilters": []}\n')
        index = ('---\nokf_version: "0.2"\n---\n' if self.okf else "") + "# Index\n\nA generated vault.\n"
        (self.out / "index.md").write_text(index)
        self.m["notes"] += 1
        self.m["root_notes"] += 1
        self.m["per_top_folder"][""] = self.m["per_top_folder"].get("", 0) + 1
        manifest_path(self.out).write_text(json.dumps(self.m, indent=1, sort_keys=True, ensure_ascii=False))
        return self.m


def generate(
    out: str | os.PathLike[str],
    notes: int = 1000,
    *,
    seed: int = 7,
    attachments: int | None = None,
    body_bytes: int = 1500,
    okf: bool = True,
    realistic: bool = False,
) -> dict[str, Any]:
    """Write a vault of `notes` generated notes (plus index.md) at `out` and return its manifest.

    attachments: default notes // 20. body_bytes: approximate body size of a default note
    (ignored when realistic). okf=False leaves index.md without okf_version.
    """
    n_att = notes // 20 if attachments is None else attachments
    return _Gen(Path(out), notes, seed, n_att, body_bytes, okf, realistic).run()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.vaultgen", description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--notes", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--attachments", type=int, default=None, help="default: notes // 20")
    ap.add_argument("--body-bytes", type=int, default=1500, help="approximate body size (default shape)")
    ap.add_argument("--no-okf", action="store_true", help="no okf_version in index.md")
    ap.add_argument("--realistic", action="store_true", help="long, rich notes (2-20 KB)")
    a = ap.parse_args(argv)
    m = generate(
        a.out,
        a.notes,
        seed=a.seed,
        attachments=a.attachments,
        body_bytes=a.body_bytes,
        okf=not a.no_okf,
        realistic=a.realistic,
    )
    print(json.dumps({k: m[k] for k in ("notes", "attachments", "stale_true", "broken_yaml")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Which vault paths are excluded: `.vaultwatchignore` (gitignore syntax) and Obsidian's excluded files."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported by a vault that has an ignore file: most have none, and start-up time counts
    import pathspec

IGNORE_FILE = ".vaultwatchignore"


@dataclass(frozen=True)
class IgnoreRules:
    """Exclusion rules for vault-relative paths (hidden paths are excluded separately, always)."""

    spec: pathspec.PathSpec | None = None
    prefixes: tuple[str, ...] = ()
    regexes: tuple[re.Pattern[str], ...] = ()
    problems: tuple[str, ...] = field(default=())

    @classmethod
    def from_vault(cls, root: str) -> IgnoreRules:
        """Read `.vaultwatchignore` and `.obsidian/app.json` (userIgnoreFilters). Bad files are reported, not fatal."""
        problems: list[str] = []
        spec = None
        try:
            with open(os.path.join(root, IGNORE_FILE), encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
            import pathspec  # noqa: PLC0415

            spec = pathspec.GitIgnoreSpec.from_lines(lines)
        except FileNotFoundError:
            pass
        except (OSError, ValueError) as exc:
            problems.append(f"{IGNORE_FILE}: {exc}")
        prefixes: list[str] = []
        regexes: list[re.Pattern[str]] = []
        try:
            with open(os.path.join(root, ".obsidian", "app.json"), encoding="utf-8") as f:
                filters = json.load(f).get("userIgnoreFilters") or []
            for item in filters if isinstance(filters, list) else []:
                if not isinstance(item, str) or not item.strip():
                    continue
                if len(item) > 2 and item.startswith("/") and item.endswith("/"):
                    try:
                        regexes.append(re.compile(item[1:-1]))
                    except re.error as exc:
                        problems.append(f".obsidian/app.json: bad userIgnoreFilters regex {item!r}: {exc}")
                else:
                    prefixes.append(item.lstrip("/"))
        except FileNotFoundError:
            pass
        except (OSError, ValueError, AttributeError) as exc:
            problems.append(f".obsidian/app.json: {exc}")
        return cls(spec, tuple(prefixes), tuple(regexes), tuple(problems))

    def excluded(self, rel: str, is_dir: bool = False) -> bool:
        """True when `rel` is excluded by either rule set."""
        probe = rel + "/" if is_dir else rel
        if self.prefixes and probe.startswith(self.prefixes):
            return True
        if any(rx.search(rel) for rx in self.regexes):
            return True
        return self.spec is not None and self.spec.match_file(probe)

    @property
    def empty(self) -> bool:
        return self.spec is None and not self.prefixes and not self.regexes

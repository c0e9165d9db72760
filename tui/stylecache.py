"""A stylesheet whose parsed rules are kept for the process, shared by every app it starts.

Textual parses an app's CSS (app.tcss and the DEFAULT_CSS of every widget class it mounts) per
app instance, and parses all of it again each time a widget class new to the app adds its CSS:
about ten parses of some 170 sources in one start. Its own parse cache lives in the app's
stylesheet and holds fewer entries than there are sources, so a parse of all of them finds
none it kept. Here each source is parsed once per process and theme: one app's later parses
(a person's start) and every later app of the process (the test suite starts hundreds) find
their rules kept.

Rules are looked up by everything their parse depends on: the CSS text, where it was read
from, whether it is a widget's default CSS, its tie breaker and scope, and the variables (the
theme's colours), so a theme change parses anew. Textual treats parsed rules as read-only
(its own cache hands the same rules to every parse of one stylesheet), which makes sharing
them between stylesheets safe.
"""

from __future__ import annotations

from typing import Any

from textual.css.model import RuleSet
from textual.css.stylesheet import CSSLocation, Stylesheet

KEPT_THEMES = 8  # variable sets (themes) whose rules are kept; an older one is parsed again

# the variables (sorted items) -> (CSS text, location, defaults?, tie breaker, scope) -> rules
_parsed: dict[tuple[tuple[str, str], ...], dict[tuple[Any, ...], list[RuleSet]]] = {}


def _rules_for(variables: dict[str, str]) -> dict[tuple[Any, ...], list[RuleSet]]:
    key = tuple(sorted(variables.items()))
    found = _parsed.pop(key, None)  # re-inserted: the dict's order is the use order
    if found is None:
        found = {}
        while len(_parsed) >= KEPT_THEMES:
            del _parsed[next(iter(_parsed))]
    _parsed[key] = found
    return found


class SharedStylesheet(Stylesheet):
    """Textual's stylesheet, with its parsed rules kept per process and variable set."""

    def __init__(self, *, variables: dict[str, str] | None = None) -> None:
        super().__init__(variables=variables)
        # the variables dict the rules below were looked up for (set_variables replaces it)
        self._kept_for: dict[str, str] | None = None
        self._kept: dict[tuple[Any, ...], list[RuleSet]] = {}

    def _parse_rules(
        self,
        css: str,
        read_from: CSSLocation,
        is_default_rules: bool = False,
        tie_breaker: int = 0,
        scope: str = "",
    ) -> list[RuleSet]:
        variables = self._variables
        if self._kept_for is not variables:
            self._kept_for = variables
            self._kept = _rules_for(variables)
        key = (css, read_from, is_default_rules, tie_breaker, scope)
        rules = self._kept.get(key)
        if rules is None:
            # CSS that fails to tokenize raises here and is not kept; rules with errors are kept
            # and Textual's parse reports them for every app, as before
            rules = super()._parse_rules(css, read_from, is_default_rules, tie_breaker, scope)
            self._kept[key] = rules
        return rules


def shared_stylesheet(variables: dict[str, str]) -> Stylesheet:
    """A new app's stylesheet (for `App.stylesheet`) that reuses the process's parsed rules."""
    return SharedStylesheet(variables=variables)

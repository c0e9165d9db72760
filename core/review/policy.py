"""Who may change what without asking: a change's effects + who is asking -> a decision naming the rule.

    policy = Policy("none", [Rule("Private/**", "writes")])
    decision = policy.decide(effects.written("Pub/alias.md", "Private/secret.md"), Asker("agent:x"), PathForm())
    decision.needs_approval   # True
    decision.why              # 'rule "Private/**" = "writes" covers write Private/secret.md (named as Pub/alias.md)'

Every effect (core.edit.effects) is checked, never only the path the caller named. Per path the
first folder rule that covers it decides its mode, else the policy's mode. What a rule covers is
core.review.rulereach's one reading: `X`, `X/` and `X/**` cover the folder `X` itself (renaming or
deleting `X` changes everything under it) and all in it, a rule asking for approval covers what is
inside any folder it matches, and `[...]` matches a real folder name with brackets too. A rule
`"none"` grants, so it reaches into folders only when it names them. Rules and paths are compared
in the vault's `PathForm` (NFC, and case folded where the file system folds it).

Modes: "writes": every effect on a covered path waits; "deletes": a file leaving a covered path
waits: deleted, or moved to where no rule protects it from deletion (moving it out and then
deleting it would otherwise get around the rule); "none": nothing waits. The person's own
changes never wait.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from vaultwatch.core.edit.effects import DELETE, MOVE_FROM, Effect, EffectSet, PathForm
from vaultwatch.core.review import rulereach

MODES = ("none", "writes", "deletes")


@dataclass(frozen=True, slots=True)
class Rule:
    """One folder rule: paths matching the glob `pattern` are under `mode`."""

    pattern: str
    mode: str

    def covers(self, path: str, form: PathForm) -> bool:
        # "none" is the one mode that lets agents do more than the mode around it
        return rulereach.covers(form.key(self.pattern), form.key(path), grants=self.mode == "none")

    def describe(self) -> str:
        return f'rule "{self.pattern}" = "{self.mode}"'


@dataclass(frozen=True, slots=True)
class Asker:
    """Who is asking for a change: `actor` as the write path names it ("human", "human:<name>",
    "agent:<name>"), with the agent's session when an MCP call makes it."""

    actor: str
    agent: str | None = None
    session: str | None = None

    @property
    def is_person(self) -> bool:
        return self.actor == "human" or self.actor.startswith("human:")


@dataclass(frozen=True, slots=True)
class Decision:
    """The answer for one effect set. `rule` is the folder rule that decided (None: the policy's
    mode did, or nothing needed approval); `effect` the first effect that needs approval."""

    needs_approval: bool
    mode: str = "none"
    rule: Rule | None = None
    effect: Effect | None = None

    @property
    def why(self) -> str:
        if not self.needs_approval or self.effect is None:
            return "no rule asks for approval of this change"
        by = self.rule.describe() if self.rule is not None else f'approval mode "{self.mode}"'
        return f"{by} covers {self.effect.describe()}"


class Policy:
    """The approval mode and the folder rules (first match wins per path)."""

    def __init__(self, mode: str = "none", rules: Iterable[Rule] = ()) -> None:
        self.mode = mode
        self.rules = tuple(rules)

    def mode_for(self, path: str, form: PathForm) -> tuple[str, Rule | None]:
        for rule in self.rules:
            if rule.covers(path, form):
                return rule.mode, rule
        return self.mode, None

    def decide(self, effects: EffectSet, asker: Asker, form: PathForm) -> Decision:
        if asker.is_person:
            return Decision(False)
        if self.mode == "none" and not self.rules:
            return Decision(False)
        for effect in effects.effects:
            for path in (effect.path, effect.via) if effect.via else (effect.path,):
                mode, rule = self.mode_for(path, form)
                if self._waits(effect, mode, form):
                    return Decision(True, mode, rule, effect)
        return Decision(False)

    def _waits(self, effect: Effect, mode: str, form: PathForm) -> bool:
        if mode == "writes":
            return True
        if mode != "deletes":
            return False
        if effect.change == DELETE:
            return True
        if effect.change == MOVE_FROM:  # leaving delete protection is a delete from here
            return effect.dest is None or self.mode_for(effect.dest, form)[0] == "none"
        return False


__all__ = ["MODES", "Asker", "Decision", "Policy", "Rule"]

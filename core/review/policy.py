"""Who may change what without asking: a change's effects + who is asking -> a decision naming the rule.

    policy = Policy("none", [Rule("Private/**", "writes")])
    decision = policy.decide(effects.written("Pub/alias.md", "Private/secret.md"), Asker("agent:x"), PathForm())
    decision.needs_approval   # True
    decision.why              # 'rule "Private/**" = "writes" covers the change, which rewrites Private/secret.md  (named as Pub/alias.md)'

Every effect (core.edit.effects) is checked, never only the path the caller named. Per path the
first folder rule that covers it decides its mode, else the policy's mode (a rule spelled otherwise
than meant, `Templates\\**`, is read both ways and the stricter answer wins). What a rule covers is
core.review.rulereach's one reading: `X`, `X/` and `X/**` cover the folder `X` itself (renaming or
deleting `X` changes everything under it) and all in it, a rule asking for approval covers what is
inside any folder it matches, and `[...]` matches a real folder name with brackets too. A rule
`"none"` grants, so it reaches into folders only when it names them. Rules and paths are compared
in the vault's `PathForm` (NFC, and case folded where the file system folds it); a rule that
restricts covers a path in any case too, since one folder of the vault may sit on a disk that folds
case where its root does not (rulereach.loosely).

Modes: "writes": every effect on a covered path waits; "deletes": a file leaving a covered path
waits: deleted, or moved to where no rule protects it from deletion (moving it out and then
deleting it would otherwise get around the rule); "none": nothing waits. A folder rule may
also say "never": every agent's change to a path it decides is refused, whatever the agent's own
rule or approval mode (`refusal`; the gate refuses before it asks). The person's own changes
never wait.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from vaultwatch.core.edit.effects import DELETE, MOVE_FROM, Effect, EffectSet, PathForm, in_words
from vaultwatch.core.review import rulereach

MODES = ("none", "writes", "deletes")
NEVER = "never"
FOLDER_MODES = (*MODES, NEVER)  # a folder rule's values: an approval mode, or no agent at all
STRICTNESS = ("none", "deletes", "writes", NEVER)  # each asks at least what the one before asks


@dataclass(frozen=True, slots=True)
class Rule:
    """One folder rule: paths matching the glob `pattern` are under `mode`."""

    pattern: str
    mode: str

    def covers(self, path: str, form: PathForm, *, plainly: bool = False, any_spelling: bool = False) -> bool:
        """Whether the rule covers `path`; `plainly`: read as the person plainly meant it
        (rulereach.plain: backslashes as slashes), when it is spelled otherwise; `any_spelling`: a
        "none" rule too covers the path in any case (rulereach.loosely), as a restricting rule always does."""
        pattern = (rulereach.plain(self.pattern) or self.pattern) if plainly else self.pattern
        # "none" is the one mode that lets agents do more than the mode around it
        grants = self.mode == "none"
        return rulereach.covers(
            form.key(pattern), form.key(path), grants=grants, any_spelling=any_spelling or not grants
        )

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
    source: str = ""  # where the mode that decided is written (an agent's rule), "" for the vault's mode

    @property
    def why(self) -> str:
        """The rule that asked, as the person wrote it, and the effect it covers: a folder rule, an
        agent's own mode (`[agents."x"] approve = "writes"`), or the vault's approval mode."""
        if not self.needs_approval or self.effect is None:
            return "no rule asks for approval of this change"
        if self.rule is not None:
            by = self.rule.describe()
        elif self.source:
            by = f'{self.source} approve = "{self.mode}"'
        else:
            by = f'approval mode "{self.mode}"'
        # in the words the dialog lists the effects in; a rename's link rewrites are not worked out
        # when the rule decides, so one is said as one it may do
        return f"{by} covers the change, which {in_words(self.effect, relinks_known=False)}"


class Policy:
    """The approval mode and the folder rules (first match wins per path)."""

    def __init__(self, mode: str = "none", rules: Iterable[Rule] = (), source: str = "") -> None:
        self.mode = mode
        self.rules = tuple(rules)
        self.source = source  # where `mode` is written when an agent's rule gives it (Decision.why names it)
        # looked at once: mode_for runs for every path of every change
        self._spelled_otherwise = any(rulereach.plain(rule.pattern) for rule in self.rules)

    def mode_for(self, path: str, form: PathForm) -> tuple[str, Rule | None]:
        """The mode that decides `path` and the rule that gives it. When a rule is spelled otherwise
        than plainly meant (`Templates\\**`), the rules are read both as written and as meant, and
        the stricter answer wins: reading a restricting rule as meant must not let it shadow a
        stricter rule below it that the written reading reaches."""
        found = self._first(path, form, plainly=False)
        if self._spelled_otherwise:
            meant = self._first(path, form, plainly=True)
            if STRICTNESS.index(meant[0]) > STRICTNESS.index(found[0]):
                return meant
        return found

    def _first(
        self, path: str, form: PathForm, *, plainly: bool, any_spelling: bool = False
    ) -> tuple[str, Rule | None]:
        for rule in self.rules:
            if rule.covers(path, form, plainly=plainly, any_spelling=any_spelling):
                return rule.mode, rule
        return self.mode, None

    def _may_be_unprotected(self, dest: str, form: PathForm) -> bool:
        """Whether a move's destination may be where nothing protects a file from deletion: its mode
        is "none" as written, or a "none" rule covers it in another spelling of its names (a folder on a
        disk that folds case finds `Open` as `open`: rulereach.loosely)."""
        if self.mode_for(dest, form)[0] == "none":
            return True
        readings = (False, True) if self._spelled_otherwise else (False,)
        return any(self._first(dest, form, plainly=p, any_spelling=True)[0] == "none" for p in readings)

    def refusal(self, paths: Iterable[str], form: PathForm) -> str | None:
        """Why a folder rule refuses every agent's change to one of `paths` (every path the change
        touches), or None. Per path the first matching rule decides, as for approval, so an earlier
        rule can open a subfolder of a "never" folder."""
        for path in paths:
            mode, rule = self.mode_for(path, form)
            if mode == NEVER and rule is not None:
                return f"the person's {rule.describe()} ([approve.folders]) refuses every agent's change to {path!r}"
        return None

    def decide(self, effects: EffectSet, asker: Asker, form: PathForm) -> Decision:
        if asker.is_person:
            return Decision(False)
        if self.mode == "none" and not self.rules:
            return Decision(False)
        for effect in effects.effects:
            for path in (effect.path, effect.via) if effect.via else (effect.path,):
                mode, rule = self.mode_for(path, form)
                if self._waits(effect, mode, form):
                    return Decision(True, mode, rule, effect, "" if rule is not None else self.source)
        return Decision(False)

    def _waits(self, effect: Effect, mode: str, form: PathForm) -> bool:
        if mode in ("writes", NEVER):  # (a "never" path is refused before; should one get here, it waits)
            return True
        if mode != "deletes":
            return False
        if effect.change == DELETE:
            return True
        if effect.change == MOVE_FROM:  # leaving delete protection is a delete from here
            return effect.dest is None or self._may_be_unprotected(effect.dest, form)
        return False


__all__ = ["FOLDER_MODES", "MODES", "NEVER", "Asker", "Decision", "Policy", "Rule"]

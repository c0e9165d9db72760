"""The effect set of a change (core.edit.effects) and the rule check over it (core.review.policy)."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest

from vaultwatch.core.edit import effects as fx
from vaultwatch.core.edit.effects import PathForm
from vaultwatch.core.review.approval import ApprovalGate
from vaultwatch.core.review.policy import Asker, Policy, Rule

AGENT = Asker("agent:test")
PLAIN = PathForm(False)


def test_a_rule_on_a_folders_contents_covers_the_folder_itself():
    rule = Rule("Team/Secret/**", "deletes")
    assert rule.covers("Team/Secret", PLAIN) and rule.covers("Team/Secret/a.md", PLAIN)
    assert not rule.covers("Team/Secrets", PLAIN) and not rule.covers("Team", PLAIN)
    gate = ApprovalGate("none", folders=[("Team/Secret/**", "deletes")])
    assert gate.needs("delete", "Team/Secret")  # deleting the folder deletes what the rule protects


def test_paths_and_rules_are_compared_in_nfc_and_in_the_file_systems_case():
    nfd, nfc = unicodedata.normalize("NFD", "Privé"), unicodedata.normalize("NFC", "Privé")
    rule = Rule(f"{nfc}/**", "writes")
    assert rule.covers(f"{nfd}/a.md", PLAIN) and Rule(f"{nfd}/**", "writes").covers(f"{nfc}/a.md", PLAIN)
    # a rule that restricts holds every case (a folder may sit on a disk that folds case where the
    # vault's root does not); a "none" rule grants only the case it names, unless the disk folds it
    assert Rule("Private/**", "writes").covers("PRIVATE/a.md", PLAIN)
    assert not Rule("Private/**", "none").covers("PRIVATE/a.md", PLAIN)
    assert Rule("Private/**", "none").covers("PRIVATE/a.md", PathForm(True))


def test_the_vaults_case_rule_is_probed_on_its_own_file_system(tmp_path: Path):
    root = tmp_path / "vault"
    root.mkdir()
    (root / "note.md").write_text("x")
    folds = os.path.exists(root / "NOTE.md")  # what this file system does, asked directly
    assert fx.form_of(str(root)).folds_case is folds


def test_every_effect_is_checked_and_the_decision_names_the_rule_and_the_effect():
    policy = Policy("none", [Rule("Private/**", "writes")])
    effects = fx.moved("Pub/a.md", "Pub/b.md") + fx.relinked([("Pub/c.md", "Pub/c.md"), ("Pub/x.md", "Private/s.md")])
    decision = policy.decide(effects, AGENT, PLAIN)
    assert decision.needs_approval and decision.rule == Rule("Private/**", "writes")
    assert (
        decision.why
        == 'rule "Private/**" = "writes" covers the change, which may rewrite links in Private/s.md  (named as Pub/x.md)'
    )
    assert not policy.decide(effects, Asker("human:me"), PLAIN).needs_approval  # the person never waits


def test_a_folder_move_is_an_effect_on_every_file_under_it_at_both_ends():
    effects = fx.moved("Team", "Crew", files=["Team/Secret/p.md"], folders=["Team/Secret"])
    assert effects.paths() == ("Team", "Crew", "Team/Secret", "Crew/Secret", "Team/Secret/p.md", "Crew/Secret/p.md")
    policy = Policy("none", [Rule("Team/Secret/**", "writes")])
    assert policy.decide(effects, AGENT, PLAIN).effect == fx.Effect("Team/Secret", fx.MOVE_FROM, dest="Crew/Secret")


@pytest.mark.parametrize(
    "dest, waits",
    [
        ("Loose/p.md", True),  # out of the rule's protection: as good as a delete
        ("Team/Secret/q.md", False),  # stays protected
        ("Archive/p.md", False),  # another folder that protects it from deletion
    ],
)
def test_under_a_deletes_rule_moving_a_file_out_of_protection_waits(dest, waits):
    policy = Policy("none", [Rule("Team/Secret/**", "deletes"), Rule("Archive/**", "deletes")])
    assert policy.decide(fx.moved("Team/Secret/p.md", dest), AGENT, PLAIN).needs_approval is waits
    assert not policy.decide(fx.written("Team/Secret/p.md", "Team/Secret/p.md"), AGENT, PLAIN).needs_approval


def test_the_rule_that_asks_for_a_folder_rename_says_the_move_in_words():
    """The why line the dialog, the pending screen and the question through the agent's client show
    words the effect as their lists of effects do, not as `move_from Daily -> Inbox/Daily`."""
    policy = Policy("none", [Rule("Daily/**", "writes")])
    effects = fx.moved("Daily", "Inbox/Daily", files=["Daily/a.md", "Daily/b.md"])
    decision = policy.decide(effects, AGENT, PLAIN)
    assert decision.why == 'rule "Daily/**" = "writes" covers the change, which moves Daily → Inbox/Daily'
    assert fx.what_moves(effects.effects) == "the folder Daily and the 2 files in it move"
    assert fx.what_moves(fx.moved("a.md", "b.md").effects) == "the note moves"


@pytest.mark.parametrize("open_as", ["Shared/Open/k.md", "Shared/open/k.md", "Shared/OPEN./k.md"])
def test_a_move_into_a_none_folder_in_any_spelling_leaves_delete_protection(open_as):
    """On a disk that folds case (and a Windows share's trailing dots), `Shared/open` is the "none"
    folder `Shared/Open`: moving a protected note there waits, as the plain spelling does, or the
    agent could move it there and then delete it, spelled as it is, unasked."""
    policy = Policy("none", [Rule("Shared/Open/**", "none"), Rule("Shared/**", "deletes")])
    assert policy.decide(fx.moved("Shared/Keep/k.md", open_as), AGENT, PLAIN).needs_approval
    assert not policy.decide(fx.moved("Shared/Keep/k.md", "Shared/Other/k.md"), AGENT, PLAIN).needs_approval


def test_a_decision_by_an_agents_own_mode_names_that_agents_rule():
    from vaultwatch.core.review.agentrules import parse

    agents = parse({"agents": {"ts-helper": {"approve": "writes"}, "default": {"approve": "writes"}}}, None)
    gate = ApprovalGate("deletes", folders=[("Journal/**", "writes")], agents=agents)
    wrote = fx.written("Notes/a.md", "Notes/a.md")
    said = {actor: gate.decide_effects(wrote, Asker(actor)).why for actor in ("agent:ts-helper", "agent:someone")}
    assert (
        said["agent:ts-helper"]
        == '[agents."ts-helper"] approve = "writes" covers the change, which rewrites Notes/a.md'
    )
    assert said["agent:someone"] == '[agents."default"] approve = "writes" covers the change, which rewrites Notes/a.md'
    journal = gate.decide_effects(fx.written("Journal/d.md", "Journal/d.md"), Asker("agent:ts-helper"))
    assert (
        journal.why == 'rule "Journal/**" = "writes" covers the change, which rewrites Journal/d.md'
    )  # a folder rule still names itself
    vault_mode = ApprovalGate("writes").decide_effects(wrote, AGENT)
    assert vault_mode.why == 'approval mode "writes" covers the change, which rewrites Notes/a.md'

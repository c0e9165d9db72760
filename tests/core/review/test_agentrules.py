"""The person's per-agent rules: parsed from settings.toml, found for an agent's name, and
deciding on a change's effects (every path it touches), in any Unicode spelling."""

from __future__ import annotations

import os
import subprocess
import unicodedata

import pytest

from vaultwatch.core import platform
from vaultwatch.core.errors import VaultError
from vaultwatch.core.review import agentrules
from vaultwatch.core.review.agentrules import AgentRule, covers, parse

SETTINGS = {
    "agents": {
        "default": {"approve": "writes"},
        "claude-code": {"read_only": True},
        "scribe": {"write": ["Inbox/**", "Daily/**"], "deny": ["Inbox/Private/**"], "approve": "none"},
    },
    "vaults": {"/v/notes": {"agents": {"scribe": {"write": ["Journal/**"]}}}},
}


def test_an_agent_is_known_by_its_name_and_unknown_agents_get_the_default() -> None:
    rules = parse(SETTINGS, "/elsewhere")
    assert rules.for_agent("claude-code/2.1.0").read_only
    assert rules.for_agent("agent:scribe/1").write == ("Inbox/**", "Daily/**")
    unknown = rules.for_agent("cursor/1.0")
    assert unknown.name == "default" and unknown.approve == "writes" and not unknown.read_only
    assert parse({}, None).for_agent("x").refusal("write", ["a.md"]) is None  # no rules: nothing refused


def test_a_label_is_read_back_as_the_name_whatever_the_version() -> None:
    rules = parse(SETTINGS, "/elsewhere")
    for version in ("1/evil", "/", "a/b/c", "", None):
        label = agentrules.agent_label("claude-code", version)
        assert agentrules.agent_name(label) == "claude-code", label
        assert rules.for_agent(label).read_only
    assert agentrules.agent_label("scribe", "1/x") == "scribe/1_x"
    assert rules.for_name("scribe").write == ("Inbox/**", "Daily/**") and rules.for_name("scribe/1").name == "default"


def test_a_name_with_a_slash_is_never_another_agent_whatever_its_version() -> None:
    """A client named `claude-code/helper` is not `claude-code`: with no version its label was the
    bare name, read back (cut at its last slash) as `claude-code`, whose read-only rule the person's
    views then showed for it; the lists' Agent column cut it at its first slash."""
    from vaultwatch.tui.marks import short_agent  # noqa: PLC0415

    rules = parse(SETTINGS, "/elsewhere")
    for version in ("2.0", "1/x", "", None):
        label = agentrules.agent_label("claude-code/helper", version)
        assert agentrules.agent_name(label) == "claude-code/helper", label
        assert short_agent(label) == "claude-code/helper", label
        assert rules.for_agent(label).name == "default", label
    assert short_agent(agentrules.agent_label("claude-code", "2.1.3")) == "claude-code"


def test_a_vaults_own_rule_replaces_the_general_one(tmp_path) -> None:
    vault = tmp_path / "notes"
    vault.mkdir()
    data = {**SETTINGS, "vaults": {str(vault): SETTINGS["vaults"]["/v/notes"]}}
    assert parse(data, str(vault)).for_agent("scribe").write == ("Journal/**",)
    (tmp_path / "other").mkdir()
    assert parse(data, str(tmp_path / "other")).for_agent("scribe").write == ("Inbox/**", "Daily/**")


@pytest.mark.parametrize("served", ["notes/Projects", "."])
def test_a_vault_above_or_below_one_with_rules_refuses_until_it_has_its_own(tmp_path, served) -> None:
    """A rule's paths are relative to the vault it was written for: served from a folder inside it
    (or one that holds it), `deny = ["Projects/secret/**"]` would name nothing and the rules would
    quietly not apply. Agents' changes are refused instead, until the served folder has a table."""
    vault = tmp_path / "notes"
    (vault / "Projects").mkdir(parents=True)
    data = {"vaults": {str(vault): {"agents": {"scribe": {"deny": ["Projects/secret/**"]}}}}}
    root = str(tmp_path / served)
    with pytest.raises(VaultError) as refused:
        parse(data, root)
    said = str(refused.value)
    assert f'[vaults."{vault}"]' in said and "cannot be applied here" in said, said
    own = {"vaults": {**data["vaults"], root: {"agents": {"scribe": {"read_only": True}}}}}
    assert parse(own, root).for_agent("scribe").read_only
    triage_only = {"vaults": {str(vault): {"triage": {"stale_unmodified_days": 30}}}}
    assert parse(triage_only, root).for_agent("scribe").name == "default"  # no agent rule to misapply


def test_a_refusal_names_the_rule_that_refused() -> None:
    rules = parse(SETTINGS, None)
    said = rules.for_agent("claude-code").refusal("write", ["Inbox/a.md"])
    assert said is not None and '[agents."claude-code"]' in said and "read-only" in said
    scribe = rules.for_agent("scribe")
    assert scribe.refusal("write", ["Inbox/a.md", "Daily/2026.md"]) is None
    outside = scribe.refusal("rename", ["Inbox/a.md", "Archive/a.md"])  # a rename's effects: both paths
    assert outside is not None and "'Archive/a.md'" in outside and '[agents."scribe"]' in outside
    denied = scribe.refusal("write", ["Inbox/Private/x.md"])
    assert denied is not None and "denies" in denied


def test_a_folder_glob_covers_the_folder_itself_in_any_unicode_form() -> None:
    assert covers("Private/**", "Private")  # a rename or delete of the folder itself
    assert covers("Private/**", "Private/a/b.md") and not covers("Private/**", "Privateer/x.md")
    nfc, nfd = unicodedata.normalize("NFC", "Privé"), unicodedata.normalize("NFD", "Privé")
    assert nfc != nfd
    assert covers(f"{nfc}/**", f"{nfd}/note.md") and covers(f"{nfd}/**", f"{nfc}/note.md")
    rule = AgentRule("scribe", deny=(f"{nfc}/**",))
    assert rule.refusal("delete", [nfd]) is not None


@pytest.mark.parametrize(
    "data, said",
    [
        ({"agents": {"x": {"read_only": "yes"}}}, "read_only must be true or false"),
        ({"agents": {"x": {"approve": "always"}}}, "approve must be one of"),
        ({"agents": {"x": {"ask_client": "yes"}}}, "ask_client must be true or false"),
        ({"agents": {"x": {"write": [1]}}}, "must be a list of folder globs"),
        ({"agents": {"x": {"writes": ["a/**"]}}}, "unknown keys ['writes']"),
        ({"agents": ["x"]}, "[agents] must be a table"),
        ({"agents": {"n" * 81: {"read_only": True}}}, "at most 80 characters"),  # no actor could carry it
    ],
)
def test_a_bad_rule_is_said_with_where_it_is(data, said) -> None:
    with pytest.raises(VaultError) as caught:
        parse(data, None, origin="settings file S")
    assert "settings file S" in str(caught.value) and said in str(caught.value)


def test_load_reads_the_settings_file(tmp_path) -> None:
    path = tmp_path / "settings.toml"
    assert not agentrules.load(str(path), None)
    path.write_text('[approve]\nmode = "writes"\n\n[agents."claude-code"]\nread_only = true\n')
    assert agentrules.load(str(path), None).for_agent("claude-code/1").read_only
    path.write_text("[agents\n")
    with pytest.raises(VaultError, match="fix or remove it"):
        agentrules.load(str(path), None)


def test_the_summary_says_the_rule_in_a_few_words() -> None:
    rules = parse(SETTINGS, None)
    assert rules.for_agent("claude-code").summary() == "read-only"
    assert rules.for_agent("scribe").summary() == "writes Inbox/**, Daily/**; never Inbox/Private/**; approval: none"
    assert rules.for_agent("other").summary() == "writes anywhere; approval: writes"


def test_an_agents_approval_mode_replaces_the_vaults_and_folder_rules_still_apply() -> None:
    from vaultwatch.core.edit import effects as fx
    from vaultwatch.core.review.approval import ApprovalGate
    from vaultwatch.core.review.policy import Asker

    rules = parse({"agents": {"careful": {"approve": "writes"}, "default": {"approve": "none"}}}, None)
    gate = ApprovalGate("none", folders=[("Journal/**", "deletes")], agents=rules)
    write = fx.written("Notes/a.md", "Notes/a.md")
    assert gate.decide_effects(write, Asker("agent:careful", "careful/1")).needs_approval
    assert not gate.decide_effects(write, Asker("agent:other", "other/1")).needs_approval
    delete = fx.deleted("Journal/d.md", "Journal/d.md")
    assert gate.decide_effects(delete, Asker("agent:other", "other/1")).needs_approval
    assert not gate.decide_effects(write, Asker("human:ana")).needs_approval  # the person never waits


def test_whether_an_agents_client_may_ask_is_the_persons_rule_for_its_journaled_name(tmp_path) -> None:
    """`ask_client` per agent replaces `[approve] ask_client` (off when absent). The rule is found by
    the name an agent's changes are journaled under, so a client cannot reach another agent's rule
    through the version half of its label."""
    from vaultwatch.core.review.approval import ApprovalGate, load_ask_client
    from vaultwatch.core.review.policy import Asker

    data = {"agents": {"trusted": {"ask_client": True}, "careful": {"ask_client": False}}}
    rules = parse(data, None)
    assert rules.for_name("trusted").summary() == "writes anywhere; its client may approve"
    off, on = ApprovalGate("writes", agents=rules), ApprovalGate("writes", agents=rules, ask_client=True)
    assert off.client_may_not_ask(Asker("agent:trusted", "trusted/1")) == ""
    assert "[approve] ask_client" in off.client_may_not_ask(Asker("agent:other", "other/1"))
    assert on.client_may_not_ask(Asker("agent:other", "other/1")) == ""
    assert '[agents."careful"] sets ask_client = false' in on.client_may_not_ask(Asker("agent:careful", "careful/1"))
    # a client called `careful` claiming the version `1/trusted`: still careful's rule
    assert on.client_may_not_ask(Asker("agent:careful", "careful/1_trusted")) != ""
    assert off.client_may_not_ask(Asker("agent:careful/trusted", "careful/trusted/1")) != ""
    defaults = parse({"agents": {"default": {"ask_client": True}}}, None)
    assert ApprovalGate("writes", agents=defaults).client_may_not_ask(Asker("agent:any", "any/1")) == ""

    path = tmp_path / "settings.toml"
    assert load_ask_client(str(path)) is False  # no file: off
    path.write_text('[approve]\nmode = "writes"\n')
    assert load_ask_client(str(path)) is False  # not said: off
    path.write_text("[approve]\nask_client = true\n")
    assert load_ask_client(str(path)) is True
    path.write_text('[approve]\nask_client = "yes"\n')
    with pytest.raises(VaultError, match="approve.ask_client must be true or false"):
        load_ask_client(str(path))


@pytest.mark.parametrize("key", ["notes", "./notes", "notes/"])
def test_a_vault_named_by_a_relative_path_is_a_problem_not_a_guess(tmp_path, monkeypatch, key) -> None:
    """A relative `[vaults."notes"]` meant the vault only for a program started from its parent: a
    headless server (started from /) never applied it, and the nested-vault check missed it."""
    (tmp_path / "notes").mkdir()
    monkeypatch.chdir(tmp_path)
    data = {"vaults": {key: {"agents": {"scribe": {"read_only": True}}}}}
    for root in (str(tmp_path / "notes"), "/"):
        with pytest.raises(VaultError) as refused:
            parse(data, root)
        assert "name the vault by its full path" in str(refused.value)


def nfd_folder(parent) -> tuple[str, str]:
    """A real folder stored in NFD (as a vault synced from macOS is), and its name typed in NFC."""
    folder = parent / unicodedata.normalize("NFD", "Études")
    folder.mkdir()
    nfc = unicodedata.normalize("NFC", str(folder))
    assert nfc != str(folder) and os.path.exists(str(folder)) and not os.path.exists(nfc)
    return str(folder), nfc


def test_a_vaults_table_names_its_folder_in_any_unicode_form(tmp_path) -> None:
    """A key typed in NFC is the vault's table when its folder is stored in NFD, and the other way
    round: before, the table silently did not apply and a per-vault read-only agent wrote."""
    vault, nfc = nfd_folder(tmp_path)
    settings = tmp_path / "settings.toml"
    settings.write_text(f'[vaults."{nfc}".agents.scribe]\nread_only = true\n', encoding="utf-8")
    assert agentrules.load(str(settings), vault).for_agent("scribe/1").read_only
    typed_nfd = tmp_path / unicodedata.normalize("NFC", "Ärchiv")
    typed_nfd.mkdir()
    key = unicodedata.normalize("NFD", str(typed_nfd))
    settings.write_text(f'[vaults."{key}".agents.scribe]\nread_only = true\n', encoding="utf-8")
    assert agentrules.load(str(settings), str(typed_nfd)).for_agent("scribe/1").read_only


@pytest.mark.parametrize("named", ["parent", "child"])
def test_a_parent_or_child_named_in_another_form_is_no_way_around_the_rules(tmp_path, named) -> None:
    """A table for a folder holding the vault, or inside it, counts as overlapping in any Unicode
    form: the vault is refused until it has a table of its own, as with the same spelling."""
    parent, nfc = nfd_folder(tmp_path)
    os.mkdir(os.path.join(parent, "Inbox"))
    served, key = (os.path.join(parent, "Inbox"), nfc) if named == "parent" else (parent, nfc + "/Inbox")
    data = {"vaults": {key: {"agents": {"scribe": {"deny": ["Private/**"]}}}}}
    with pytest.raises(VaultError) as refused:
        parse(data, served)
    said = str(refused.value)
    assert f'[vaults."{key}"]' in said and "cannot be applied here" in said, said
    assert ("lies inside" if named == "parent" else "holds") in said, said


def test_two_keys_naming_one_vault_in_two_forms_are_a_problem_not_a_guess(tmp_path) -> None:
    """`[vaults."Études"]` in NFC and in NFD name one folder: applying one of them, or both in the
    file's order, would guess what the person meant; the settings problem names both instead."""
    vault, nfc = nfd_folder(tmp_path)
    data = {
        "vaults": {
            nfc: {"agents": {"scribe": {"read_only": True}}},
            vault: {"agents": {"scribe": {"write": ["Inbox/**"]}}},
        }
    }
    with pytest.raises(VaultError) as refused:
        parse(data, vault)
    said = str(refused.value)
    assert f'[vaults."{nfc}".agents]' in said and f'[vaults."{vault}".agents]' in said and "both name" in said, said
    # one key for the agents and another for the triage rules: each table has one key, no problem
    split = {"vaults": {nfc: {"agents": {"scribe": {"read_only": True}}}, vault: {"triage": {"stale_keys": []}}}}
    assert parse(split, vault).for_agent("scribe").read_only


def test_a_vaults_table_names_its_folder_in_any_case_where_the_disk_folds_case(tmp_path) -> None:
    """On a file system that folds case (forced here: none mounts on Linux), `~/notes` is `~/Notes`."""
    vault = tmp_path / "Notes"
    vault.mkdir()
    data = {"vaults": {str(tmp_path / "NOTES"): {"agents": {"scribe": {"read_only": True}}}}}
    assert not parse(data, str(vault)).for_agent("scribe").read_only  # a case-sensitive disk: another folder
    with platform.force(folds_case=True):
        assert parse(data, str(vault)).for_agent("scribe").read_only


def test_a_key_naming_the_vaults_folder_by_another_path_applies(tmp_path) -> None:
    """A key is compared with the vault by the folders' identity too (device and inode), which is how
    a name in another case or form finds the vault on a disk that folds them (macOS's). No such
    disk mounts here; a bind mount gives the folder a second path, whose spelling shares nothing."""
    vault = tmp_path / "Notes"
    other = tmp_path / "mounted"
    vault.mkdir()
    other.mkdir()
    mounted = subprocess.run(["mount", "--bind", str(vault), str(other)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"no bind mount here: {mounted.stderr.decode(errors='replace').strip()}")
    try:
        data = {"vaults": {str(other): {"agents": {"scribe": {"read_only": True}}}}}
        assert parse(data, str(vault)).for_agent("scribe").read_only
        inner = {"vaults": {str(other / "Inbox"): {"agents": {"scribe": {"read_only": True}}}}}
        with pytest.raises(VaultError, match="holds"):
            parse(inner, str(vault))
    finally:
        subprocess.run(["umount", str(other)], check=True)


def test_a_vaults_table_with_triage_rules_alone_is_not_its_own_agent_rules(tmp_path) -> None:
    """`[vaults."~/Notes/Projects".triage]` says nothing of agents: served as its own vault, Projects is
    still refused while `[vaults."~/Notes".agents]` gives rules it cannot apply (before, the triage
    table counted as the vault's own and its agents ran under no rule at all). An agents table of
    its own, even an empty one, is the person's word for it."""
    parent = tmp_path / "Notes"
    (parent / "Projects").mkdir(parents=True)
    served = str(parent / "Projects")
    rules = {"agents": {"scribe": {"deny": ["Projects/secret/**"]}}}
    data = {"vaults": {str(parent): rules, served: {"triage": {"stale_keys": ["review_by"]}}}}
    with pytest.raises(VaultError) as refused:
        parse(data, served)
    assert "cannot be applied here" in str(refused.value) and f'[vaults."{served}".agents]' in str(refused.value)
    data["vaults"][served]["agents"] = {}
    assert parse(data, served).for_agent("scribe").deny == ()

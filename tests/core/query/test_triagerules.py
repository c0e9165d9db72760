"""core.query.triagerules: Deprecated and Stale by the person's rules on a vault that is no OKF
bundle (tests/triage_vault.py), their settings (`[triage]`, `[vaults."ROOT".triage]`), and the
OKF bundle's own semantics left as they were."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from tests.triage_vault import AS_OF, DEPRECATED, STALE, make_triage_vault
from vaultwatch.core.clock import parse_as_of
from vaultwatch.core.errors import VaultError
from vaultwatch.core.query import filterexpr, triagerules
from vaultwatch.core.query.listing import Query, run_query
from vaultwatch.core.query.triagerules import TriageRules, load, parse
from vaultwatch.core.review import triageviews
from vaultwatch.core.vault import Vault, demo_vault_path


@pytest.fixture(scope="module")
def vault(tmp_path_factory) -> Vault:
    v = Vault(make_triage_vault(tmp_path_factory.mktemp("t") / "vault"), clock=parse_as_of(AS_OF))
    v.load()
    assert not v.snapshot.is_bundle
    return v


def listed(vault: Vault, kind: str, rules: TriageRules, **more) -> list[str]:
    res = run_query(vault.snapshot, Query(triage=(kind, rules), **more), vault.clock)
    return [e.path for e in res.entries]


def test_default_rules_on_a_vault_people_keep(vault: Vault) -> None:
    rules = TriageRules()
    assert listed(vault, "deprecated", rules) == DEPRECATED
    assert listed(vault, "stale", rules) == STALE
    # the template's placeholders ({{status}}, {{date}}) are no status and no date
    assert "Templates/Project Template.md" not in listed(vault, "deprecated", rules) + listed(vault, "stale", rules)
    # the rule narrows with the rest of a query (the folder scope, the filter bar)
    assert listed(vault, "deprecated", rules, folder="Reference") == DEPRECATED[2:]
    assert listed(vault, "stale", rules, text="vendor") == ["Reference/Vendor Terms.md"]


def test_settings_override_per_vault(vault: Vault, tmp_path: Path) -> None:
    settings = tmp_path / "settings.toml"
    settings.write_text(
        '[triage]\ndeprecated_status = ["archived"]\ndeprecated_tags = []\ndeprecated_flags = []\n'
        f'[vaults."{vault.root}".triage]\nstale_keys = ["expires"]\nstale_unmodified_days = 200\n'
        '[vaults."/elsewhere".triage]\nstale_keys = []\n'
    )
    rules = load(str(settings), vault.root_real)
    assert rules.source == str(settings)
    assert listed(vault, "deprecated", rules) == ["Projects/Old Website.md"]
    # expires reached, or untouched for 200 days by the vault's clock
    cutoff = (vault.clock.now().timestamp() - 200 * 86400) * 10**9
    untouched = {e.path for e in vault.snapshot.entries if e.kind == "note" and e.mtime_ns < cutoff}
    assert untouched and "Reference/Vendor Terms.md" not in untouched
    assert listed(vault, "stale", rules) == sorted(untouched | {"Reference/Vendor Terms.md"})
    assert "expires reached or unmodified for 200 days" in rules.describe("stale")
    assert "status is archived" in rules.describe("deprecated") and str(settings) in rules.describe("deprecated")
    # another vault's table does not apply; no file: the defaults
    assert load(str(settings), "/elsewhere-not-this").stale_keys == TriageRules().stale_keys
    assert load(str(tmp_path / "absent.toml"), vault.root_real) == TriageRules()


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ({"triage": {"stale_keys": "review_by"}}, "stale_keys must be a list of words"),
        ({"triage": {"stale_unmodified_days": -1}}, "whole number of days"),
        ({"triage": {"write_verified": "yes"}}, "true or false"),
        ({"triage": {"stale_key": ["x"]}}, "has no key 'stale_key'"),
        ({"triage": 3}, "[triage] must be a table"),
    ],
)
def test_bad_settings_say_which_key(table: dict, said: str) -> None:
    with pytest.raises(VaultError) as err:
        parse(table, "/v", origin="settings.toml")
    assert said in err.value.message and "settings.toml" in err.value.message


def test_defaults_describe_themselves() -> None:
    rules = TriageRules()
    assert rules.describe("deprecated") == (
        "Rule: status is deprecated / archived / obsolete / superseded or tagged #deprecated / #archived"
        " or deprecated: true · set in the defaults [triage]"
    )
    assert rules.describe("stale") == "Rule: stale_after / review_by / expires reached · set in the defaults [triage]"


def test_okf_bundle_keeps_its_own_semantics(tmp_path: Path) -> None:
    """The demo vault is a bundle: its status/stale filters answer as before, whatever the rules."""
    import shutil

    root = tmp_path / "demo"
    shutil.copytree(demo_vault_path(), root)
    v = Vault(root, clock=parse_as_of(AS_OF))
    v.load()
    assert v.snapshot.is_bundle
    okf = run_query(v.snapshot, Query(filters=(("status", "deprecated"),)), v.clock)
    assert okf.total > 0 and all(e.okf_status == "deprecated" for e in okf.entries)


@pytest.mark.parametrize("key", ["notes", "./notes", "notes/"])
def test_a_vault_named_by_a_relative_path_is_a_problem_not_a_silent_miss(tmp_path, monkeypatch, key) -> None:
    """A relative `[vaults."notes"]` named the vault only for a program started from its parent:
    elsewhere its rules quietly did not apply. It is a settings problem, as the agent rules say."""
    (tmp_path / "notes").mkdir()
    monkeypatch.chdir(tmp_path)
    data = {"vaults": {key: {"triage": {"stale_keys": ["expires"]}}}}
    for root in (str(tmp_path / "notes"), "/"):
        with pytest.raises(VaultError) as refused:
            parse(data, root, origin="settings.toml")
        assert "name the vault by its full path" in refused.value.message and "settings.toml" in refused.value.message


@pytest.mark.parametrize("served", ["notes/Projects", "."])
def test_a_vault_above_or_below_one_with_triage_rules_applies_none_of_them_and_says_so(tmp_path, served) -> None:
    """Another folder's triage table is that vault's: served from inside or above it, nothing of it
    applies, and the problem says so (the tabs then use the defaults and show why), until the served
    folder has a triage table of its own."""
    vault = tmp_path / "notes"
    (vault / "Projects").mkdir(parents=True)
    data = {"vaults": {str(vault): {"triage": {"stale_keys": ["expires"]}}}}
    root = str(tmp_path / served)
    with pytest.raises(VaultError) as refused:
        parse(data, root, origin="settings.toml")
    said = refused.value.message
    assert f'[vaults."{vault}".triage]' in said and "not applied here" in said, said
    assert f'[vaults."{Path(root).resolve()}".triage]' in said, said
    own = {"vaults": {**data["vaults"], root: {"triage": {"stale_keys": ["review_by"]}}}}
    assert parse(own, root).stale_keys == ("review_by",)
    # a table of the other vault's without triage rules, or one for agents only, is no triage problem
    agents_only = {"vaults": {str(vault): {"agents": {"scribe": {"read_only": True}}}}}
    assert parse(agents_only, root) == TriageRules()


def test_a_vaults_triage_table_names_its_folder_in_any_unicode_form(tmp_path) -> None:
    """The triage rules share the agent rules' key resolution: a key typed in NFC applies to the
    vault folder stored in NFD, a parent named so is an overlap, and two keys naming the vault in
    two forms are a problem naming both."""
    vault = tmp_path / unicodedata.normalize("NFD", "Études")
    (vault / "Inbox").mkdir(parents=True)
    nfc = unicodedata.normalize("NFC", str(vault))
    assert nfc != str(vault)
    settings = tmp_path / "settings.toml"
    settings.write_text(f'[vaults."{nfc}".triage]\nstale_keys = ["expires"]\n', encoding="utf-8")
    assert load(str(settings), str(vault)).stale_keys == ("expires",)
    with pytest.raises(VaultError, match="not applied here"):
        load(str(settings), str(vault / "Inbox"))
    both = {"vaults": {nfc: {"triage": {"stale_keys": []}}, str(vault): {"triage": {"stale_keys": ["due"]}}}}
    with pytest.raises(VaultError) as refused:
        parse(both, str(vault), origin="settings.toml")
    said = refused.value.message
    assert f'[vaults."{nfc}".triage]' in said and f'[vaults."{vault}".triage]' in said and "both name" in said, said


def bar(vault: Vault, text: str, rules: TriageRules, base: Query | None = None) -> list[str]:
    """What the person's list shows for filter-bar `text` (on `base`, a tab's query)."""
    q = filterexpr.merge(base or Query(), filterexpr.parse(text))
    q = triageviews.narrow(q, vault.snapshot, rules, triageviews.Reviews())
    return [e.path for e in run_query(vault.snapshot, q, vault.clock).entries]


def test_the_filter_bars_status_deprecated_and_stale_select_what_the_tabs_list(vault: Vault) -> None:
    """`status:deprecated` and `stale:true`, the terms the bar and the README offer, select what the
    Deprecated and Stale tabs list off a bundle (the same rule positions), not a frontmatter
    equality no note of an ordinary vault meets; `-` and `stale:false` take the rest."""
    rules = TriageRules()
    every = [e.path for e in run_query(vault.snapshot, Query(), vault.clock).entries]
    assert bar(vault, "status:deprecated", rules) == listed(vault, "deprecated", rules) == DEPRECATED
    assert bar(vault, "stale:true", rules) == listed(vault, "stale", rules) == STALE
    assert bar(vault, "stale:yes", rules) == STALE
    assert bar(vault, "-status:deprecated", rules) == [p for p in every if p not in DEPRECATED]
    assert bar(vault, "stale:false", rules) == bar(vault, "-stale:true", rules) == [p for p in every if p not in STALE]
    # with the rest of the bar, and on a tab, as any term
    assert bar(vault, "status:deprecated path:Reference", rules) == DEPRECATED[2:]
    assert bar(vault, "stale:true", rules, Query(triage=("deprecated", rules))) == []
    # the person's own rules, not the defaults; other status values stay frontmatter equality
    mine = TriageRules(deprecated_status=("active",))
    assert bar(vault, "status:deprecated", mine) == listed(vault, "deprecated", mine)
    assert "Projects/Launch.md" in listed(vault, "deprecated", mine)
    assert bar(vault, "status:archived", rules) == ["Projects/Old Website.md"]
    # and no "did you mean" for the tab's word on a vault where no status reads "deprecated"
    assert filterexpr.explain(filterexpr.tokenize("status:deprecated stale:true"), vault.snapshot) == ()
    # list_documents keeps the seeds' semantics (no rules): frontmatter equality off a bundle
    plain = filterexpr.parse("status:deprecated")
    assert run_query(vault.snapshot, plain, vault.clock).total == 0


LINKED_STATUS = {
    "Notes/Linked.md": '---\nstatus: "[[Archived]]"\n---\n# a\n',
    "Notes/Aliased.md": '---\nstatus: "[[Archived|old]]"\n---\n# b\n',
    "Notes/Listed.md": '---\nstatus:\n  - "[[Active]]"\n  - "[[Superseded]]"\n---\n# c\n',
    "Notes/Active.md": '---\nstatus: ["[[Active]]"]\n---\n# d\n',
    "Notes/Words.md": '---\nstatus: "see [[Archived]] and [[Other]]"\n---\n# e\n',
    "Notes/Plain.md": "---\nstatus: [archived]\n---\n# f\n",
}


def test_a_status_that_is_a_link_or_a_list_of_links_counts_by_its_link_text(tmp_path: Path) -> None:
    """Obsidian's properties hold links, and kepano's template writes `status: ["[[Active]]"]`: a
    status counts by its link's target, and a list when any of its values matches; text that only
    contains links is text."""
    for rel, text in LINKED_STATUS.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    v = Vault(tmp_path, clock=parse_as_of(AS_OF))
    v.load()
    assert listed(v, "deprecated", TriageRules()) == [
        "Notes/Aliased.md",
        "Notes/Linked.md",
        "Notes/Listed.md",
        "Notes/Plain.md",
    ]
    words = {
        e.path: triagerules.status_words(e.frontmatter.get("status")) for e in v.snapshot.entries if e.kind == "note"
    }
    assert words["Notes/Aliased.md"] == ("Archived",)
    assert words["Notes/Listed.md"] == ("Active", "Superseded")
    assert words["Notes/Active.md"] == ("Active",)
    assert words["Notes/Words.md"] == ("see [[Archived]] and [[Other]]",)


FLAGS = {
    "yes.md": "---\ndeprecated: yes\n---\n",  # YAML 1.1 (the parser's): a boolean
    "quoted yes.md": '---\ndeprecated: "yes"\n---\n',  # Obsidian's text property
    "on.md": "---\ndeprecated: on\n---\n",
    "quoted On.md": '---\ndeprecated: "On"\n---\n',
    "TRUE.md": "---\ndeprecated: TRUE\n---\n",
    "quoted true.md": "---\ndeprecated: 'true'\n---\n",
    "one.md": "---\ndeprecated: 1\n---\n",
    "quoted one.md": '---\ndeprecated: "1"\n---\n',
    "no.md": "---\ndeprecated: no\n---\n",
    "quoted false.md": '---\ndeprecated: "false"\n---\n',
    "someday.md": "---\ndeprecated: someday\n---\n",
}
FLAGGED = ["TRUE.md", "on.md", "quoted On.md", "quoted true.md", "quoted yes.md", "yes.md"]


def test_a_deprecated_flag_is_on_for_true_yes_or_on_read_as_a_boolean_or_as_text(tmp_path: Path) -> None:
    """A deprecated flag says "on" with the words people type, true, yes or on (any case), whether
    YAML 1.1 read them as a boolean or Obsidian stored them as text; a number or another word is
    not. The tab, the filter bar's `status:deprecated` and the agents' triage counts agree."""
    for rel, text in FLAGS.items():
        (tmp_path / rel).write_text(text + "# note\n", encoding="utf-8")
    v = Vault(tmp_path, clock=parse_as_of(AS_OF))
    v.load()
    rules = TriageRules()
    assert listed(v, "deprecated", rules) == FLAGGED
    assert bar(v, "status:deprecated", rules) == FLAGGED
    assert triageviews.counts(v.snapshot, rules, triageviews.Reviews(), v.clock)["deprecated"] == len(FLAGGED)

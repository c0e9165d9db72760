"""The names an agent may create (core.disk.names.check_new_name): every invisible, blank and
lookalike character an attacker could hide in a name beside an existing one is refused, naming
the character and a name to use instead; ordinary names in any script, emoji sequences and
accented names in either Unicode form are still created; names already on disk stay usable.
"""

from __future__ import annotations

import os
import re
import sys
import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from vaultwatch.core.disk.names import check_new_name, default_ignorable
from vaultwatch.core.disk.reader import read
from vaultwatch.core.edit.writes import Writer
from vaultwatch.core.errors import UnsafeNameError
from vaultwatch.core.vault import Vault

SIBLINGS = ["Private", "Pub", "plan.md", "copy.md", "Ideas"]


def refusal(name: str, siblings: list[str] = SIBLINGS) -> str:
    with pytest.raises(UnsafeNameError) as info:
        check_new_name(name, siblings)
    return info.value.message


def suggested(message: str) -> str:
    """The name an error says to use instead."""
    found = re.search(r"use (['\"])(.*?)\1 (?:instead|\(the existing one\))", message)
    assert found, message
    return found.group(2)


# (name, the character the error must name, the name it must suggest): the audit's lookalikes
# of a gated folder `Private` and a note `plan.md`, and more of their kind
LOOKALIKES = [
    ("Private\u034f", "U+034F COMBINING GRAPHEME JOINER", "Private"),
    ("Private\ufe0f", "U+FE0F VARIATION SELECTOR-16", "Private"),
    ("Private\U000e0020", "U+E0020 TAG SPACE", "Private"),
    ("Private\u115f", "U+115F HANGUL CHOSEONG FILLER", "Private"),
    ("Private\u2800", "U+2800 BRAILLE PATTERN BLANK", "Private"),
    ("Private\u00a0", "U+00A0 NO-BREAK SPACE", "Private"),
    ("Private\u2007", "U+2007 FIGURE SPACE", "Private"),
    ("Private\u3000", "U+3000 IDEOGRAPHIC SPACE", "Private"),
    ("\u0420rivate", "U+0420 CYRILLIC CAPITAL LETTER ER", "Private"),
    ("\uff30rivate", "'Private'", "Private"),  # fullwidth: the existing name is the one to use
    ("\U0001d40frivate", "'Private'", "Private"),  # MATHEMATICAL BOLD CAPITAL P
    ("private", "another case", "Private"),
    ("Private\u200b", "U+200B ZERO WIDTH SPACE", "Private"),
    (" Private", "starts with a space", "Private"),
    ("Pri\u00advate", "U+00AD SOFT HYPHEN", "Private"),
    ("Private\u3164", "U+3164 HANGUL FILLER", "Private"),
    ("Private\uffa0", "U+FFA0 HALFWIDTH HANGUL FILLER", "Private"),
    ("Private\u1160", "U+1160 HANGUL JUNGSEONG FILLER", "Private"),
    ("Private\u180e", "U+180E MONGOLIAN VOWEL SEPARATOR", "Private"),
    ("Private\u2060", "U+2060 WORD JOINER", "Private"),
    ("Private\u17b4", "U+17B4 KHMER VOWEL INHERENT AQ", "Private"),
    ("Private\U000e0100", "U+E0100 VARIATION SELECTOR-17", "Private"),
    ("Private\U0001d159", "U+1D159 MUSICAL SYMBOL NULL NOTEHEAD", "Private"),
    ("Private\u202f", "U+202F NARROW NO-BREAK SPACE", "Private"),
    ("Private\u1680", "U+1680 OGHAM SPACE MARK", "Private"),
    ("Private\ue000", "U+E000 (private use)", "Private"),
    ("Private\u0378", "U+0378 (unassigned)", "Private"),
    ("Private\u0600", "U+0600 ARABIC NUMBER SIGN", "Private"),  # a visible format character: Cf all the same
    ("Private\u2215secret.md", "U+2215 DIVISION SLASH", "Private-secret.md"),  # a note "inside" Private
    ("Private\uff0fsecret.md", "U+FF0F FULLWIDTH SOLIDUS", "Private-secret.md"),
    ("Pr\u0456vate", "U+0456 CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I", "Private"),
    ("\u03a1rivate", "U+03A1 GREEK CAPITAL LETTER RHO", "Private"),
    ("\U0001d6b8rivate", "U+1D6B8 MATHEMATICAL BOLD CAPITAL RHO", "Private"),  # a Greek rho, drawn bold
    ("plan\u034f.md", "U+034F COMBINING GRAPHEME JOINER", "plan.md"),
    ("plan\u00a0.md", "U+00A0 NO-BREAK SPACE", "plan .md"),
    ("\u0441\u043e\u0440\u0443.md", "'copy.md'", "copy.md"),  # "copy" all in Cyrillic letters
    ("c\u03bfpy.md", "U+03BF GREEK SMALL LETTER OMICRON", "copy.md"),
    ("\u0406deas", "U+0406 CYRILLIC CAPITAL LETTER BYELORUSSIAN-UKRAINIAN I", "Ideas"),
    ("Plan.md", "another case", "plan.md"),
]


@pytest.mark.parametrize("name, named, instead", LOOKALIKES, ids=[ascii(n) for n, _, _ in LOOKALIKES])
def test_a_lookalike_of_an_existing_name_is_refused_naming_the_character(name, named, instead):
    message = refusal(name)
    assert named in message, message
    assert suggested(message) == instead, message
    if name.strip(" .") != name:
        return
    check_new_name(instead, [])  # what the error suggests is itself a name (or the existing one)


# words in one script, emoji sequences, and accented names in either Unicode form
ORDINARY = [
    "Заметки о встрече.md",
    "Σημειώσεις.md",
    "日本語ノート.md",
    "会議メモ 2024.md",
    "ملاحظات الاجتماع.md",
    "נקודה.md",
    "서울 여행.md",
    "Москва-trip.md",  # two words, each in one script
    "Tシャツ.md",  # Latin with Katakana in one word: ordinary in Japanese
    "iPhone用.md",
    "Hawai\u02bbi.md",  # MODIFIER LETTER TURNED COMMA belongs to no script
    "5 \u00b5m.md",  # MICRO SIGN likewise, though it is drawn as a Greek mu
    "emoji \U0001f389.md",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467 family.md",  # ZWJ family
    "\U0001f9d1\U0001f3fd\u200d\U0001f4bb code.md",  # skin tone, then ZWJ
    "\U0001f3f3\ufe0f\u200d\U0001f308 pride.md",  # VS16, then ZWJ
    "\u2764\ufe0f notes.md",
    "\u2194\ufe0f both ways.md",
    "1\ufe0f\u20e3 first.md",  # keycap
    "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f Scotland.md",
    "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.md",  # Persian: ZWNJ between two Arabic-script letters
    "\u0645\u06cc\u0651\u200c\u062e.md",  # ... with a combining mark before it
    "\u0915\u094d\u200d\u0937.md",  # Devanagari: ZWJ after a virama (a half form)
    "\u0915\u094d\u200c\u0937.md",  # ... and ZWNJ (the explicit virama)
    unicodedata.normalize("NFD", "Résumé café.md"),
    unicodedata.normalize("NFC", "Résumé café.md"),
    "Crème brûlée",
    "~draft.md",
    "a..b.md",
    "Notes  with two spaces.md",
]


@pytest.mark.parametrize("name", ORDINARY, ids=[ascii(n) for n in ORDINARY])
def test_ordinary_names_in_any_script_and_emoji_sequences_are_names_but_not_with_a_blank_inside(name):
    check_new_name(name, SIBLINGS)
    stem, dot, ext = name.rpartition(".") if name.endswith(".md") else (name, "", "")
    assert "U+2800 BRAILLE PATTERN BLANK" in refusal(f"{stem}\u2800{dot}{ext}")


# the same invisible characters outside an emoji sequence, and tag runs that are not a flag
MISPLACED = [
    ("e\u200d\U0001f642.md", "U+200D ZERO WIDTH JOINER"),
    ("\U0001f642\u200d.md", "U+200D ZERO WIDTH JOINER"),
    ("\U0001f642\u200dx.md", "U+200D ZERO WIDTH JOINER"),
    ("Pri\u200cvate.md", "U+200C ZERO WIDTH NON-JOINER"),  # Latin letters never join: no ZWNJ there
    ("\u200c\u0645\u06cc.md", "U+200C ZERO WIDTH NON-JOINER"),  # at the start
    ("\u0645\u200c.md", "U+200C ZERO WIDTH NON-JOINER"),  # with no letter after it
    ("\u0645\u200c\u200c\u062e.md", "U+200C ZERO WIDTH NON-JOINER"),  # two in a row
    ("\u0645\u200c x.md", "U+200C ZERO WIDTH NON-JOINER"),
    ("\u0645\u200d\u062e.md", "U+200D ZERO WIDTH JOINER"),  # ZWJ only after a virama
    ("x\ufe0f.md", "U+FE0F VARIATION SELECTOR-16"),
    ("=\ufe0f.md", "U+FE0F VARIATION SELECTOR-16"),  # no emoji is an ASCII sign
    ("\u2764\ufe0f\ufe0f.md", "U+FE0F VARIATION SELECTOR-16"),
    ("1\ufe0f.md", "U+FE0F VARIATION SELECTOR-16"),  # a keycap needs its U+20E3
    ("\U0001f3f4\U000e0075\U000e0073\U000e007f.md", "U+E0075 TAG LATIN SMALL LETTER U"),  # no such flag
    ("note\U000e0069\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065.md", "U+E0069 TAG LATIN SMALL LETTER I"),
    ("\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074.md", "U+E0067 TAG LATIN SMALL LETTER G"),
]


@pytest.mark.parametrize("name, named", MISPLACED, ids=[ascii(n) for n, _ in MISPLACED])
def test_joiners_and_selectors_are_refused_outside_an_emoji_sequence_or_a_words_spelling(name, named):
    assert named in refusal(name)


def test_a_persian_name_with_or_without_its_non_joiner_is_a_twin_of_the_other():
    """The non-joiner a Persian word may hold is allowed, not a way to a second note that reads the same."""
    joined, spelled = (
        "\u0645\u06cc\u062e\u0648\u0627\u0647\u0645.md",
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.md",
    )
    for name, existing in ((joined, spelled), (spelled, joined)):
        assert repr(existing) in refusal(name, [existing]), name
        check_new_name(name, [])


def test_a_word_mixing_scripts_is_refused_even_with_no_twin_beside_it():
    for name, scripts in (
        ("\u0420rivate", "Cyrillic and Latin"),
        ("\u0394t.md", "Greek and Latin"),
        ("\u0430b\u03b3", "Cyrillic and Greek and Latin"),
        ("\u05d0\u0628", "Arabic and Hebrew"),
    ):
        assert f"mixes {scripts} letters" in refusal(name, []), name
    assert suggested(refusal("\u0394t.md", [])) == "\u0394-t.md"


def test_lookalike_signs_and_ascii_twins_are_refused_beside_the_name_they_mimic():
    for name, existing in (
        ("plan\u2010b.md", "plan-b.md"),
        ("plan\u2212b.md", "plan-b.md"),
        ("Tom\u2019s.md", "Tom's.md"),
        ("Legal", "Iegal"),
        ("modern.md", "modem.md"),
        ("Notes  x.md", "Notes x.md"),
        (unicodedata.normalize("NFD", "café.md"), "café.md"),
        ("caf\u00e9.md", unicodedata.normalize("NFD", "café.md")),
        # Latin letters drawn like ASCII ones (the small capital ꜱ, the iota ɩ)
        ("\ua731ecure.md", "secure.md"),
        ("\u0269nfo.md", "info.md"),
    ):
        assert repr(existing) in refusal(name, [existing]), name
        check_new_name(name, [])  # alone, each is a name


def test_every_format_control_private_unassigned_and_white_space_character_is_refused():
    white_space = [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029]
    white_space += [0x202F, 0x205F, 0x3000]
    sample = [cp for cp in range(0x110000) if unicodedata.category(chr(cp)) in ("Cf", "Cc")]
    sample += list(range(0xE000, 0xF900, 97)) + list(range(0xF0000, 0x110000, 997))  # private use
    sample += [cp for cp in range(0, 0x110000, 89) if unicodedata.category(chr(cp)) == "Cn"]
    sample += [0xD800, 0xDBFF, 0xDC00, 0xDFFF, *white_space]
    allowed = [cp for cp in sample if _accepted(f"a{chr(cp)}b")]
    assert allowed == [], [f"U+{cp:04X}" for cp in allowed]
    assert _accepted("a b")


def _accepted(name: str) -> bool:
    try:
        check_new_name(name)
    except UnsafeNameError:
        return False
    return True


# Default_Ignorable_Code_Point as DerivedCoreProperties.txt lists it (those code points that the
# Unicode version of every supported Python assigns alike), and what the derivation leaves out
PUBLISHED_DEFAULT_IGNORABLE = [
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F),
    (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
]  # fmt: skip


def test_default_ignorable_follows_the_derived_property():
    published = {cp for lo, hi in PUBLISHED_DEFAULT_IGNORABLE for cp in range(lo, hi + 1)}
    derived = {cp for cp in range(0x110000) if default_ignorable(chr(cp))}
    assert published <= derived
    newer = derived - published  # format characters a later Unicode than the list's added
    assert all(unicodedata.category(chr(cp)) == "Cf" for cp in newer), [f"U+{cp:04X}" for cp in newer]
    for cp in (0x0020, 0x00A0, 0x0600, 0x06DD, 0x070F, 0x110BD, 0xFFF9, 0xFFFB, 0x13430, 0x2800):
        assert not default_ignorable(chr(cp)), f"U+{cp:04X}"


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=12))
@example("Private\u00a0")
@example("\U0001f642\u200d\U0001f642")
def test_a_name_holding_a_hidden_character_is_refused_and_what_the_error_suggests_is_a_name(name):
    hidden = [c for c in name if unicodedata.category(c) in ("Cf", "Cc", "Co", "Cn") or (c.isspace() and c != " ")]
    try:
        check_new_name(name)
    except UnsafeNameError as exc:
        check_new_name(suggested(exc.message))
        return
    assert hidden in ([], ["\u200d"] * name.count("\u200d")), name  # a joiner only inside an emoji sequence


def test_names_already_on_disk_stay_readable_editable_renamable_and_deletable(tmp_path):
    root = tmp_path / "v"
    (root / "Private\u2800").mkdir(parents=True)
    (root / "Private\u2800" / "secret.md").write_text("# odd folder\n")
    (root / "plan\u00a0.md").write_text("# odd note\n")
    (root / "plan.md").write_text("# plan\n")
    v = Vault(root, cache=False)
    v.load()
    w = Writer(v)
    assert {"Private\u2800/secret.md", "plan\u00a0.md"} <= {e.path for e in v.snapshot.entries}
    for rel in ("Private\u2800/secret.md", "plan\u00a0.md"):
        assert (read(v, rel).content or "").startswith("# odd")
        w.write(rel, "# changed\n", overwrite=True)
    w.write("Private\u2800/new.md", "# a new note in the odd folder is fine\n")
    w.rename("plan\u00a0.md", "plain.md")
    with pytest.raises(UnsafeNameError):
        w.rename("plain.md", "plan\u00a0.md")  # but the odd name is not made again
    w.delete("Private\u2800/secret.md")
    assert sorted(os.listdir(root / "Private\u2800")) == ["new.md"]


def test_a_case_only_rename_is_allowed_but_a_case_twin_beside_it_is_not(tmp_path):
    root = tmp_path / "v"
    root.mkdir()
    (root / "plan.md").write_text("# plan\n")
    (root / "notes.md").write_text("# notes\n")
    w = Writer(Vault(root, cache=False))
    w.vault.load()
    with pytest.raises(UnsafeNameError, match="another case"):
        w.write("Plan.md", "# twin\n")
    with pytest.raises(UnsafeNameError, match="another case"):
        w.rename("notes.md", "Plan.md")
    if sys.platform.startswith("linux"):  # a case-sensitive disk: the rename makes a new name
        w.rename("plan.md", "Plan.md")
        assert sorted(os.listdir(root)) == ["Plan.md", "notes.md"]

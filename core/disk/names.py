"""Names an agent may create: refused when a person could mistake them for another.

Only a new name is judged (a note written for the first time, a rename or move target, each
folder made on the way); a name already on disk, however odd, stays readable, listable,
editable and deletable. A name is refused for:

- a character that shows nothing or is not a character at all: every Unicode
  Default_Ignorable_Code_Point (zero-width, joiners, variation selectors, tag characters,
  Hangul fillers...), every other format (Cf), control (Cc), private-use (Co), unassigned (Cn)
  or surrogate (Cs) code point. Allowed where an emoji needs them: U+200D between two emoji,
  U+FE0E/U+FE0F after a symbol (or in a keycap), and the three RGI subdivision flags' tags; and
  where a word's spelling needs them, as IDNA allows: U+200C and U+200D after a virama, U+200C
  between two letters of a joining script such as Arabic (Persian "می‌خواهم");
- a blank other than the plain ASCII space (every other Unicode White_Space, and the blanks
  that are not White_Space but draw nothing: U+2800, U+115F, U+1160, U+3164, U+FFA0, U+1D159);
  a space of any kind at either end, a dot at the end;
- a character drawn like a dot or a slash (`a／b.md` would look like a folder `a`);
- a word that mixes scripts (`Рrivate` with a Cyrillic `Р`), as browsers refuse a mixed-script
  domain label (UTS 39's Highly Restrictive level); a word is a run of letters and marks, so
  `Москва-trip.md` (two words, each in one script) and `Tシャツ` (Latin with Japanese) are names;
- the same name as an existing one of the same folder by NFKC and case folding (`Ｐrivate`,
  `private` beside `Private`), or by the lookalike letters of other scripts (`Рrivate`, `сору`
  spelled in Cyrillic beside `copy`).

The error names the character (code point and Unicode name) and gives a name to use instead.
`check_linkable_name` also refuses what a wiki link cannot reach (`# ^ [ ] |`, `%%`); the write
path asks it of names an agent gives, the person may still use them (but not rename into one while
notes link there: core.edit.writes).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from vaultwatch.core.errors import UnsafeNameError


def _ranges(*spans: tuple[int, int]) -> frozenset[int]:
    return frozenset(cp for lo, hi in spans for cp in range(lo, hi + 1))


# Default_Ignorable_Code_Point is a derived property (DerivedCoreProperties.txt):
#   Other_Default_Ignorable_Code_Point + Cf + Variation_Selector
#   - White_Space - FFF9..FFFB (interlinear annotation format characters)
#   - 13430..1343F (Egyptian hieroglyph format characters) - Prepended_Concatenation_Mark
# Python's unicodedata has the general category (Cf) but not the three contributory properties,
# so those come from PropList.txt here; they are short and have not moved as Unicode grew.
_OTHER_DEFAULT_IGNORABLE = _ranges(
    (0x034F, 0x034F),  # COMBINING GRAPHEME JOINER
    (0x115F, 0x1160),  # HANGUL CHOSEONG FILLER, HANGUL JUNGSEONG FILLER
    (0x17B4, 0x17B5),  # KHMER VOWEL INHERENT AQ, AA
    (0x2065, 0x2065),
    (0x3164, 0x3164),  # HANGUL FILLER
    (0xFFA0, 0xFFA0),  # HALFWIDTH HANGUL FILLER
    (0xFFF0, 0xFFF8),
    (0xE0000, 0xE0000),
    (0xE0002, 0xE001F),
    (0xE0080, 0xE00FF),
    (0xE01F0, 0xE0FFF),
)
_VARIATION_SELECTOR = _ranges((0x180B, 0x180D), (0x180F, 0x180F), (0xFE00, 0xFE0F), (0xE0100, 0xE01EF))
_WHITE_SPACE = _ranges(
    (0x0009, 0x000D), (0x0020, 0x0020), (0x0085, 0x0085), (0x00A0, 0x00A0), (0x1680, 0x1680), (0x2000, 0x200A),
    (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000),
)  # fmt: skip
_NOT_IGNORABLE_FORMAT = _ranges(
    (0xFFF9, 0xFFFB),  # interlinear annotation
    (0x13430, 0x1343F),  # Egyptian hieroglyph format characters
    # Prepended_Concatenation_Mark: format characters drawn visibly (Arabic number signs...)
    (0x0600, 0x0605), (0x06DD, 0x06DD), (0x070F, 0x070F), (0x0890, 0x0891), (0x08E2, 0x08E2),
    (0x110BD, 0x110BD), (0x110CD, 0x110CD),
)  # fmt: skip


def default_ignorable(ch: str) -> bool:
    """Unicode's Default_Ignorable_Code_Point: a code point a renderer may draw as nothing at all."""
    cp = ord(ch)
    if cp in _OTHER_DEFAULT_IGNORABLE or cp in _VARIATION_SELECTOR:
        return True
    return unicodedata.category(ch) == "Cf" and cp not in _WHITE_SPACE and cp not in _NOT_IGNORABLE_FORMAT


# Blanks that are not White_Space yet draw nothing (the Hangul fillers are default-ignorable too).
_BLANKS = frozenset("\u2800\u115f\u1160\u3164\uffa0\U0001d159")
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# drawn like '.' and '/': in a listing `Private∕secret.md` would pass for a note inside `Private`
# (core.review.visible escapes them beside ASCII letters too: `https://evil∕paypal.com`)
DOT_LOOKALIKES = frozenset("\u2024\ufe52\uff0e")  # one dot leader, small and fullwidth full stops
SLASH_LOOKALIKES = frozenset("\u1735\u2041\u2044\u2215\u2571\u27cb\u29f8\u31d3\uff0f")
_ZWJ, _VS15, _VS16, _KEYCAP = "\u200d", "\ufe0e", "\ufe0f", "\u20e3"
_SKIN_TONES = frozenset(chr(cp) for cp in range(0x1F3FB, 0x1F400))
_EMOJI_PUNCTUATION = frozenset("\u203c\u2049\u3030\u303d")  # ‼ ⁉ 〰 〽: emoji that are not symbols
# The flags of England, Scotland and Wales: a black flag, tag letters, a cancel tag. Tag
# characters spell hidden text an agent's reader never sees, so no other tag run is allowed.
_TAG_FLAGS = tuple(
    "\U0001f3f4" + "".join(chr(0xE0000 + ord(c)) for c in code) + "\U000e007f" for code in ("gbeng", "gbsct", "gbwls")
)


def _emoji(ch: str) -> bool:
    """A character an emoji presentation applies to (a symbol, or one of the emoji punctuation marks)."""
    return unicodedata.category(ch) in ("So", "Sm") or ch in _EMOJI_PUNCTUATION


def _allowed_in_emoji(name: str, i: int) -> bool:
    """Whether the invisible name[i] is part of an emoji sequence (ZWJ, presentation selector)."""
    ch = name[i]
    before = name[i - 1] if i else ""
    after = name[i + 1] if i + 1 < len(name) else ""
    if ch in (_VS15, _VS16):  # (not after an ASCII sign such as '=': no emoji there)
        if before in ("", "\ufe0e", "\ufe0f"):
            return False
        return (_emoji(before) and not before.isascii()) or (before in "0123456789#*" and after == _KEYCAP)
    if ch == _ZWJ:
        j = i - 1
        if j >= 0 and name[j] in _SKIN_TONES:
            j -= 1
        if j >= 0 and name[j] == _VS16:
            j -= 1
        return j >= 0 and unicodedata.category(name[j]) == "So" and bool(after) and unicodedata.category(after) == "So"
    return False


_ZWNJ = "\u200c"
# scripts whose letters join their neighbours, where U+200C stops a join that spelling wants
# stopped (Persian "می‌خواهم"): RFC 5892's CONTEXTJ rule, by script, as Python has no Joining_Type
_JOINING_SCRIPTS = frozenset({"ARABIC", "SYRIAC", "NKO", "MONGOLIAN", "MANDAIC", "ADLAM", "HANIFI", "SOGDIAN"})


def _allowed_joiner(name: str, i: int) -> bool:
    """Whether the joiner name[i] is part of how a word is spelled (RFC 5892's CONTEXTJ, as IDNA
    allows in domain names): U+200C or U+200D after a virama (Indic conjuncts), and U+200C between
    two letters of a joining script (combining marks between them aside)."""
    ch = name[i]
    if ch not in (_ZWNJ, _ZWJ) or i == 0:
        return False
    if unicodedata.combining(name[i - 1]) == 9:  # canonical combining class Virama
        return True
    if ch != _ZWNJ:
        return False
    j = i - 1
    while j >= 0 and unicodedata.category(name[j]).startswith("M"):
        j -= 1
    k = i + 1
    while k < len(name) and unicodedata.category(name[k]).startswith("M"):
        k += 1
    return (
        j >= 0
        and k < len(name)
        and unicodedata.category(name[j]).startswith("L")
        and unicodedata.category(name[k]).startswith("L")
        and letter_script(name[j]) in _JOINING_SCRIPTS
        and letter_script(name[k]) in _JOINING_SCRIPTS
    )


def _allowed_invisible(name: str, i: int) -> bool:
    """Whether the invisible name[i] belongs where it is: in an emoji sequence, or in a word's spelling."""
    return (name[i] in (_ZWJ, _VS15, _VS16) and _allowed_in_emoji(name, i)) or _allowed_joiner(name, i)


def _char(ch: str) -> str:
    """'U+2800 BRAILLE PATTERN BLANK': a character as a person can look it up."""
    name = unicodedata.name(ch, "")
    if not name:
        cat = unicodedata.category(ch)
        name = {"Cn": "(unassigned)", "Co": "(private use)", "Cs": "(lone surrogate)", "Cc": "(control)"}.get(cat, "")
    return f"U+{ord(ch):04X} {name}".rstrip()


def _refused(ch: str) -> str | None:
    """What kind of character `ch` is when no new name may hold it (None: it may)."""
    cp = ord(ch)
    if ch in _BIDI:
        return "a bidirectional control character"
    if ch in ("\u2028", "\u2029"):
        return "a line or paragraph separator"
    if ch in DOT_LOOKALIKES:
        return "a dot lookalike"
    if ch in SLASH_LOOKALIKES:
        return "a slash lookalike"
    if cp in _WHITE_SPACE:
        return None if ch == " " else "a space other than the plain space (U+0020)"
    if ch in _BLANKS and not default_ignorable(ch):
        return "a blank character"
    if default_ignorable(ch):
        return "an invisible (default-ignorable) character"
    cat = unicodedata.category(ch)
    if cat == "Cf":
        return "a format character"
    if cat == "Cc":
        return "a control character"
    if cat == "Co":
        return "a private-use character"
    if cat == "Cn":
        return "an unassigned code point"
    if cat == "Cs":
        return "a lone surrogate (not valid text)"
    return None


def _bad_chars(name: str) -> Iterable[tuple[int, str]]:
    """(index, kind) of each character of `name` that no new name may hold."""
    i = 0
    while i < len(name):
        ch = name[i]
        if ch == "\U0001f3f4":
            flag = next((f for f in _TAG_FLAGS if name.startswith(f, i)), None)
            if flag:
                i += len(flag)
                continue
        if not (ch.isascii() and ch.isprintable()):
            kind = _refused(ch)
            if kind and not _allowed_invisible(name, i):
                yield i, kind
        i += 1


# --- scripts -------------------------------------------------------------------------------

# Python's unicodedata has no Script property, but a letter's Unicode name starts with its
# script's name (LATIN SMALL LETTER A, CYRILLIC CAPITAL LETTER ER, HIRAGANA LETTER A), save
# these first words, which belong to no script: such letters count for none (Unicode's Common),
# after the compatibility form has been looked at (MATHEMATICAL BOLD CAPITAL RHO is a Greek rho).
_NOT_SCRIPTS = frozenset(
    "MATHEMATICAL DOUBLE-STRUCK SCRIPT BLACK-LETTER MODIFIER SUPERSCRIPT FULLWIDTH HALFWIDTH VERTICAL TURNED "
    "CARON ROMAN MASU KATAKANA-HIRAGANA VEDIC PLANCK EULER INFORMATION FEMININE MASCULINE MICRO OHM KELVIN "
    "ANGSTROM ALEF BET GIMEL DALET".split()
)
# (and the digits of Arabic text, ARABIC-INDIC and EXTENDED ARABIC-INDIC, are Arabic's: digits are
# named by their script too, which core.review.visible asks of a digit beside ASCII ones)
_SCRIPT_ALIASES = {
    "CJK": "HAN", "IDEOGRAPHIC": "HAN", "HENTAIGANA": "HIRAGANA", "ARABIC-INDIC": "ARABIC", "EXTENDED": "ARABIC",
}  # fmt: skip
# the script sets a word may mix (UTS 39 Highly Restrictive): Latin with the scripts of Japanese,
# Chinese (Bopomofo) or Korean text, where such mixes are ordinary ("Tシャツ", "iPhone用")
_MIXES = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)


@lru_cache(maxsize=4096)  # a diff's lines ask again and again for the few letters of their scripts
def letter_script(ch: str) -> str | None:
    """The script of the letter `ch` (None: Common, such as MODIFIER LETTER TURNED COMMA)."""
    if ch != "\u00b5":  # MICRO SIGN: Common, though its compatibility form is the Greek mu
        compat = unicodedata.normalize("NFKC", ch)
        if len(compat) == 1:
            ch = compat
    word = unicodedata.name(ch, "").partition(" ")[0]
    word = _SCRIPT_ALIASES.get(word, word)
    return word if word and word not in _NOT_SCRIPTS else None


def mixes_scripts(scripts: frozenset[str]) -> bool:
    """Whether one word with letters of all of `scripts` mixes them beyond what real text mixes
    (UTS 39 Highly Restrictive: one script, or Latin with Japanese, Chinese or Korean scripts)."""
    return len(scripts) > 1 and not any(scripts <= allowed for allowed in _MIXES)


def _mixed_word(name: str) -> tuple[str, frozenset[str]] | None:
    """The first word of `name` mixing scripts beyond what _MIXES allows, with its scripts (None: none)."""
    word: list[str] = []
    for ch in name + "/":
        if unicodedata.category(ch)[0] in "LM":
            word.append(ch)
            continue
        if len(word) > 1:
            scripts = frozenset(s for c in word if unicodedata.category(c)[0] == "L" and (s := letter_script(c)))
            if mixes_scripts(scripts):
                return "".join(word), scripts
        word = []
    return None


# --- lookalikes ----------------------------------------------------------------------------

# Latin letters past ASCII drawn like an ASCII letter that no orthography of Latin-script notes
# writes: IPA letters and small capitals (ɑ ɡ ɒ ɪ ʀ ʏ ɴ ʜ ʟ ɢ ʙ), Latin Extended-D's small
# capitals (ꜱ ꜰ Ɪ), the dotless ȷ. Two are letters of a few orthographies all the same: ɩ (Kabiyè
# and other languages of Togo) and the dental click ǀ (Khoekhoe, !Xóõ and other Khoisan languages);
# core.review.visible writes each as its escape beside ASCII letters, where it passes for an i or
# an l, and still shows it there, as `\u0269`, `\u01c0`. A new name spelled with them reads as
# its sibling with the ASCII letter (`ꜱecure.md` beside `secure.md`), as with other scripts' below.
LATIN_LOOKALIKE_PAIRS = "ɑa ɡg ɒa ɩi ɪl ʀr ʏy ɴn ʜh ʟl ɢg ʙb ȷj ǀl ꜱs ꜰf Ɪl".split()
LATIN_LOOKALIKES = frozenset(pair[0] for pair in LATIN_LOOKALIKE_PAIRS)

# Letters of other scripts (and a few Latin and ASCII ones) drawn like a Latin letter or sign:
# the pairs of Unicode's confusables data (UTS 39) that a file name can use against another.
# Capitals map before case folding, since Cyrillic В looks like B but в does not look like b;
# every capital I (and 1, |) maps to l, which it is drawn like in most fonts.
_LOOKALIKE_PAIRS = (
    # Cyrillic
    "АA ВB ЕE ЅS Іl ЈJ КK МM НH ОO РP СC ТT ХX ҮY ԚQ ԜW Ӏl Ѵv"
    " аa еe ѕs іi јj оo рp сc уy хx һh ԁd ԛq ԝw ӏl ѵv"
    # Greek
    " ΑA ΒB ΕE ΖZ ΗH Ιl ΚK ΜM ΝN ΟO ΡP ΤT ΥY ΧX ϹC ϒY"
    " οo νv ιi αa ρp υu γy ϳj ϲc"
    # Armenian
    " ՕO ՍU ՏS ԼL օo սu հh ոn զq"
    # Latin (Turkish ı) and ASCII
    " ıi Il 1l |l 0O"
).split() + LATIN_LOOKALIKE_PAIRS
_LOOKALIKE = str.maketrans({pair[0]: pair[-1] for pair in _LOOKALIKE_PAIRS} | {
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2043": "-", "\u2212": "-",
    "\u2018": "'", "\u2019": "'", "\u02bc": "'", "\u02b9": "'",
})  # fmt: skip


@lru_cache(maxsize=4096)
def looks_latin(ch: str) -> bool:
    """Whether `ch` is a letter of another script drawn like a Latin letter (Cyrillic `а`, Greek `ο`)."""
    if letter_script(ch) in (None, "LATIN"):
        return False
    compat = unicodedata.normalize("NFKC", ch)
    latin = (compat if len(compat) == 1 else ch).translate(_LOOKALIKE)
    return len(latin) == 1 and letter_script(latin) == "LATIN"


def _plain(name: str) -> str:
    """`name` without what draws nothing, in NFKC (the form that makes `Ｐ` a `P`)."""
    if name.isascii():
        return name if name.isprintable() else "".join(c for c in name if c.isprintable())
    return unicodedata.normalize("NFKC", "".join(c for c in name if not default_ignorable(c)))


def _keys(name: str) -> tuple[str, str]:
    """Two names are one to a reader when either key matches: NFKC with case folded, and the
    lookalike skeleton (other scripts' lookalikes as Latin, `rn` as `m`, runs of spaces as one)."""
    plain = _plain(name)
    return plain.casefold(), " ".join(plain.translate(_LOOKALIKE).casefold().replace("rn", "m").split())


def _one_script(word: str) -> str:
    """`word` with other scripts' lookalikes of Latin letters made Latin, and a hyphen where the
    script still changes (`Рrivate` becomes `Private`, `Δt` becomes `Δ-t`)."""
    out: list[str] = []
    seen: set[str] = set()
    for c in word:
        if letter_script(c) not in (None, "LATIN"):
            compat = unicodedata.normalize("NFKC", c)
            latin = (compat if len(compat) == 1 else c).translate(_LOOKALIKE)
            if len(latin) == 1 and letter_script(latin) == "LATIN":
                c = "I" if latin == "l" and c.isupper() else latin
        script = letter_script(c)
        if script and seen and not any(seen | {script} <= allowed for allowed in _MIXES) and script not in seen:
            out.append("-")
            seen = set()
        out.append(c)
        if script:
            seen.add(script)
    return "".join(out)


def _safer(name: str) -> str:
    """A name like `name` that check_new_name accepts on its own (siblings aside)."""
    out = []
    for i, ch in enumerate(name):
        if ch in DOT_LOOKALIKES:
            out.append(".")
        elif ch in SLASH_LOOKALIKES:
            out.append("-")
        elif unicodedata.category(ch) == "Zs":  # a space (not a line break or a tab) stays a space
            out.append(" ")
        elif not (_refused(ch) and not _allowed_invisible(name, i)):
            out.append(ch)
    safe = unicodedata.normalize("NFC", "".join(out))
    for _ in range(len(safe)):  # each pass mends one word (and its repeats) for good
        mixed = _mixed_word(safe)
        if not mixed:
            break
        safe = safe.replace(mixed[0], _one_script(mixed[0]))
    return safe.strip(" ").rstrip(" .") or "untitled"


def check_new_name(name: str, siblings: Iterable[str] = (), *, folds_case: bool = False) -> None:
    """Refuse a name for a new file or folder that could deceive a person reading the vault.

    `siblings` are the names already in the folder. See the module's doc for what is refused;
    `folds_case` (the file system compares names without case) is kept for the callers: names
    differing only in case are refused on every file system, as a person reads them as one.
    The error says which character is wrong and which name to use instead.
    """
    del folds_case
    spelled = _spelled(name)
    for i, kind in _bad_chars(name):
        where = " at its end" if i == len(name) - 1 else " at its start" if i == 0 else ""
        raise UnsafeNameError(
            f"unsafe name: {name!r}{spelled} contains {kind}{where}, "
            f"{_char(name[i])}, which makes a name look like another or hides part of it; "
            f"use {_safer(name)!r} instead"
        )
    if name[:1] == " " or name[-1:] in (" ", "."):
        where = "starts with a space" if name[:1] == " " else "ends with a space or a dot"
        raise UnsafeNameError(
            f"unsafe name: {name!r} {where}, which file managers hide and other systems drop; "
            f"use {_safer(name)!r} instead"
        )
    mixed = _mixed_word(name)
    if mixed:
        word, scripts = mixed
        base = "LATIN" if "LATIN" in scripts else next(s for c in word if (s := letter_script(c)))
        odd = next(c for c in word if letter_script(c) not in (None, base))
        raise UnsafeNameError(
            f"unsafe name: {name!r} mixes {' and '.join(sorted(s.title() for s in scripts))} letters in the "
            f"word {word!r} ({_char(odd)} among them), as lookalike names do; write each word in one "
            f"script: use {_safer(name)!r} instead"
        )
    keys = None
    for other in siblings:
        if other == name:
            continue
        if keys is None:
            keys = _keys(name)
        theirs = _keys(other)
        if theirs[0] == keys[0] or theirs[1] == keys[1]:
            raise UnsafeNameError(
                f"confusable name: {name!r}{spelled} reads as the existing {other!r}"
                f"{_spelled(other)}: {_how(name, other)}; use {other!r} (the existing one) or "
                "a clearly different name"
            )


def _spelled(name: str) -> str:
    """' (spelled ...)' with the name's escapes, when its repr hides a character a terminal draws as nothing."""
    return f" (spelled {ascii(name)})" if ascii(name) != repr(name) else ""


def _how(name: str, other: str) -> str:
    if unicodedata.normalize("NFC", name) == unicodedata.normalize("NFC", other):
        return "the same name in another Unicode form"
    if unicodedata.normalize("NFC", name).casefold() == unicodedata.normalize("NFC", other).casefold():
        return "the same name in another case"
    if _plain(name).casefold() == _plain(other).casefold():
        return "the same name in compatibility (NFKC) form, such as a fullwidth letter, or with invisible characters"
    return "letters of another script (or lookalike characters) drawn like the existing name's"


# characters a wiki link cannot hold in its target: Obsidian reads # as a heading, ^ as a block, | as
# an alias and [ ] as the link's ends, and warns that links will not work with such file names; %%
# opens a comment, which ends the link where it stands
LINK_BREAKING = "#^[]|"
COMMENT = "%%"


def link_breaking(name: str) -> list[str]:
    """What of LINK_BREAKING (and COMMENT) `name` holds, in that order: what a link to it cannot hold."""
    return sorted({c for c in name if c in LINK_BREAKING}) + ([COMMENT] if COMMENT in name else [])


def check_linkable_name(name: str) -> None:
    """Refuse a new name that holds any of them (the write path asks it of an agent's names): a
    rename rewrites every link to the note, and a link to such a name silently reaches nothing
    (`[[Foo #x]]` names a heading of Foo), so the person would lose the note's backlinks while
    the rename says it rewrote them."""
    found = link_breaking(name)
    if found:
        raise UnsafeNameError(
            f"unsafe name: {name!r} holds {' '.join(found)}, which links cannot reach (Obsidian reads # as a "
            f"heading, ^ as a block, | as an alias, [ ] as a link's ends, {COMMENT} as a comment); choose a "
            f"name without {LINK_BREAKING} or {COMMENT}"
        )

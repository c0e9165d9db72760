"""core.review.visible: one rule for what the person is shown of an agent's text."""

from __future__ import annotations

import pytest

from vaultwatch.core.review.visible import visible, visible_parts


def test_a_line_in_parts_is_judged_as_the_whole_line():
    # a diff line's changed words are drawn one part at a time: a mark at a part's start sits on the
    # letter before it, so it is judged with that letter, as in the whole line
    assert visible_parts(["cafe", "\u0301 ok"]) == ["cafe", "\u0301 ok"]
    assert visible_parts(["1", "\u0336 paid"]) == ["1", "\\u0336 paid"]
    assert visible_parts([" ", "\u0301"]) == [" ", "\\u0301"]  # nothing under it
    assert "".join(visible_parts(["o\u0301\u0302", "\u0303\u0304\u0306"])) == visible("o\u0301\u0302\u0303\u0304\u0306")
    assert visible_parts(["plain", " ascii"]) == ["plain", " ascii"]


# one sentence of each script, each word in one script: shown as it is
REAL_TEXT = [
    "Я живу в Москве, а сахар купил у дома.",
    "Καλημέρα κόσμε, τι κάνεις σήμερα;",
    "今日は良い天気ですね。東京に行きます。",
    "我们明天去北京开会。",
    "안녕하세요, 서울에 갑니다.",
    "مرحبا بالعالم، كيف حالك؟",
    "שלום עולם, מה שלומך?",
    "नमस्ते दुनिया, आप कैसे हैं?",
    "Купил iPhone в Apple Store, потом Москва-trip с Anna в Café Paris",
    "Tシャツ и iPhone用のケース, angle α = 0.05, ρ value",
]


@pytest.mark.parametrize("text", REAL_TEXT)
def test_a_word_mixing_scripts_is_spelled_out_beside_real_text_shown_as_it_is(text) -> None:
    # the line read the same as `paypal.com/acme` and `[[Budget]]`: a Cyrillic а and В among Latin letters
    line = f"{text} https://p\u0430ypal.com/acme [[\u0412udget]]"
    assert visible(line) == f"{text} https://p\\u0430ypal.com/acme [[\\u0412udget]]"


@pytest.mark.parametrize(
    "text, shown",
    [
        ("Москв\u0061", "Москв\\u0061"),  # a Latin letter in a Cyrillic word: the word's own script is drawn
        ("\u0440a", "\\u0440a"),  # a tie: Latin is drawn, lookalikes pass for Latin letters
        ("user1\u04302", "user1\\u04302"),  # digits keep a letter in its word
        ("my_v\u0430r", "my_v\\u0430r"),
        ("iPh\u043ene用", "iPh\\u043ene用"),  # Latin and Han mix in real text, Cyrillic does not
        ("p\u0301\u0430\u0301ypal", "p\u0301\\u0430\\u0301ypal"),  # marks keep a word one; none sits on an escape
        ("See the \u0441\u043e\u0440\u0443 of it", "See the \\u0441\\u043e\\u0440\\u0443 of it"),  # all lookalikes
        ("\u0441\u043e\u0440y here", "\\u0441\\u043e\\u0440y here"),
        ("\u039a\u0391\u0399 Apple", "\\u039a\\u0391\\u0399 Apple"),  # Greek capitals read as KAI
    ],
)
def test_letters_that_disguise_a_word_as_another_are_shown_as_escapes(text, shown) -> None:
    assert visible(text) == shown


def test_a_mixed_word_drawn_in_parts_is_judged_whole() -> None:
    assert visible_parts(["p", "\u0430", "ypal.com"]) == ["p", "\\u0430", "ypal.com"]


def test_an_escape_past_the_basic_plane_is_not_four_digits_and_a_fifth() -> None:
    # a tag letter (invisible): `\ue0041` read as U+E004 and a `1`
    assert visible("a\U000e0041b\U000e007f") == "a\\U000e0041b\\U000e007f"
    assert visible_parts(["a\U000e0041", "b"]) == ["a\\U000e0041", "b"]


@pytest.mark.parametrize(
    "text, shown",
    [
        # a lone letter of another script drawn like a Latin one, in a token with ASCII letters or digits
        ("Log in at https://\u0445.com/login", "Log in at https://\\u0445.com/login"),  # Cyrillic х: x.com
        ("See [[Report 2\u041e24]]", "See [[Report 2\\u041e24]]"),  # Cyrillic О between digits: 2024
        ("\u0445.com", "\\u0445.com"),  # (a line of that token alone)
        ("https://\u03bf.io", "https://\\u03bf.io"),  # Greek ο
        # Latin letters of blocks prose never writes, in a token with ASCII letters
        ("Sign in at https://p\u0251ypal.com", "Sign in at https://p\\u0251ypal.com"),  # IPA alpha ɑ
        ("\u0261oogle", "\\u0261oogle"),  # script g ɡ
        ("g\u1d0f\u1d0fgle.com", "g\\u1d0f\\u1d0fgle.com"),  # small capital ᴏ
        ("https://examp\u217ce.com", "https://examp\\u217ce.com"),  # small roman numeral fifty ⅼ
        ("\u0280eport", "\\u0280eport"),  # small capital ʀ
        ("\uff30aypal", "\\uff30aypal"),  # fullwidth Ｐ
        ("\U0001d41aws.com", "\\U0001d41aws.com"),  # mathematical bold 𝐚
        ("5\u2113 tank", "5\\u2113 tank"),  # script small l ℓ
        # Latin letters of Latin Extended-C and -D, and of the IPA and Extended-B blocks drawn like ASCII ones
        ("https://\ua731ecure-pay.com", "https://\\ua731ecure-pay.com"),  # small capital ꜱ
        ("\ua730ile.txt", "\\ua730ile.txt"),  # small capital ꜰ
        ("\ua7aenfo", "\\ua7aenfo"),  # capital small capital Ɪ
        ("\u0269nfo", "\\u0269nfo"),  # iota ɩ
        ("\u0237ava", "\\u0237ava"),  # dotless ȷ
        ("\u0252pple", "\\u0252pple"),  # turned alpha ɒ
        ("g\u2c7aogle", "g\\u2c7aogle"),  # o with low ring inside ⱺ
        ("https://paypa\u01c0.com", "https://paypa\\u01c0.com"),  # dental click ǀ, drawn as an l
        ("\u24d0pple.com", "\\u24d0pple.com"),  # circled ⓐ (a symbol whose compatibility form is `a`)
        ("g\u0e4fogle.com", "g\\u0e4fogle.com"),  # Thai fongman ๏, drawn as an o
    ],
)
def test_a_lone_letter_passing_for_an_ascii_one_in_an_ascii_token_is_an_escape(text, shown) -> None:
    assert visible(text) == shown


# the zero of each script that has its own digits, between ASCII digits: `2०24` reads as `2024`
ZEROS = {
    "Devanagari": "\u0966", "Bengali": "\u09e6", "Gurmukhi": "\u0a66", "Gujarati": "\u0ae6", "Oriya": "\u0b66",
    "Telugu": "\u0c66", "Kannada": "\u0ce6", "Malayalam": "\u0d66", "Thai": "\u0e50", "Lao": "\u0ed0",
    "Myanmar": "\u1040", "Khmer": "\u17e0", "Mongolian": "\u1810", "NKo": "\u07c0", "Arabic-Indic": "\u0660",
    "Extended Arabic-Indic": "\u06f0", "Ideographic number zero": "\u3007",
}  # fmt: skip


@pytest.mark.parametrize("zero", ZEROS.values(), ids=ZEROS.keys())
def test_a_digit_of_another_script_in_an_ascii_token_is_an_escape(zero) -> None:
    assert visible(f"Numbers are in [[Report 2{zero}24]]") == f"Numbers are in [[Report 2\\u{ord(zero):04x}24]]"
    assert visible(f"https://g{zero}ogle.com/docs") == f"https://g\\u{ord(zero):04x}ogle.com/docs"


@pytest.mark.parametrize(
    "text, shown",
    [
        ("https://evil.com\u2215paypal.com", "https://evil.com\\u2215paypal.com"),  # division slash ∕
        ("https://evil.com\u2044paypal.com", "https://evil.com\\u2044paypal.com"),  # fraction slash ⁄
        ("[[Private\uff0fsecret]]", "[[Private\\uff0fsecret]]"),  # fullwidth solidus ／
        ("https://paypal\u2024com", "https://paypal\\u2024com"),  # one dot leader ․
        ("https://paypal\ufe52com", "https://paypal\\ufe52com"),  # small full stop ﹒
        ("https://paypal\uff0ecom", "https://paypal\\uff0ecom"),  # fullwidth full stop ．
    ],
)
def test_a_dot_or_slash_lookalike_in_an_ascii_token_is_an_escape(text, shown) -> None:
    assert visible(text) == shown


@pytest.mark.parametrize("space", ["\u200a", "\u2009", "\u202f"], ids=["hair", "thin", "narrow no-break"])
def test_a_narrow_space_does_not_part_a_lookalike_from_its_ascii_token(space) -> None:
    # `х .com` with a hair space reads as `x.com`: the space stays, the Cyrillic х is an escape
    assert visible(f"Log in at \u0445{space}.com/login") == f"Log in at \\u0445{space}.com/login"


# text in which no letter passes for an ASCII one: shown as it is
NATURAL = [
    "Я живу в Москве, а сахар купил у дома.",  # a lone Cyrillic в, а, у in a Russian sentence
    "Встреча с Anna в 10:00, потом Москва-trip и https://ru.wikipedia.org/wiki/Москва",
    "Ο Γιώργος είπε: ο καιρός είναι καλός.",  # Greek, with a lone ο
    "Kapı açık, ılık bir gün; Istanbul'da yağmur.",  # Turkish dotless ı among Latin letters
    "Straße, Größe, café, naïve, œuvre, Hà Nội, Tiếng Việt",
    "Azərbaycan dili; Akan: Ɛyɛ ɔkɔm; Hausa: ɗan ɓera",  # IPA-block letters of real orthographies
    "area = π r², E = mc², H₂O, xⁿ, angle α = 0.05, ρ value",
    "The vowel [ə] and [ʃ] in IPA; ɑ and ɡ alone are IPA too.",
    "1ª edição, 3º lugar, iPhone™, №5, ½ cup, wait…",
    "२०२४ में चुनाव हुए, 10:30 बजे",  # Hindi with Devanagari digits, beside no ASCII
    "في عام ٢٠٢٤ ذهبت إلى القاهرة، ورقم ۱۴۰۳ بالفارسية",  # Arabic-Indic and Persian digits
    "ในปี ๒๕๖๗ ฉันไปเชียงใหม่ ๏ เรื่องเล่า",  # Thai digits and a fongman among Thai words
    "संस्करण v2-१०वाँ, iOS १८",  # Devanagari digits beside Devanagari letters (१०वाँ: 10th) or alone
    "Prix\u202f: 10\u00a0000\u202f€\u202f! Vraiment\u202f?",  # French narrow no-break spaces
]


@pytest.mark.parametrize("text", NATURAL)
def test_natural_text_stays_as_it_is_beside_a_lone_lookalike_that_is_escaped(text) -> None:
    # the line read the same as `x.com/login` and `paypal.com`: a Cyrillic х, a Latin alpha ɑ
    line = f"{text} https://\u0445.com/login https://p\u0251ypal.com"
    assert visible(line) == f"{text} https://\\u0445.com/login https://p\\u0251ypal.com"
    assert visible(text) == text

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
    ],
)
def test_a_lone_letter_passing_for_an_ascii_one_in_an_ascii_token_is_an_escape(text, shown) -> None:
    assert visible(text) == shown


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
]


@pytest.mark.parametrize("text", NATURAL)
def test_natural_text_stays_as_it_is_beside_a_lone_lookalike_that_is_escaped(text) -> None:
    # the line read the same as `x.com/login` and `paypal.com`: a Cyrillic х, a Latin alpha ɑ
    line = f"{text} https://\u0445.com/login https://p\u0251ypal.com"
    assert visible(line) == f"{text} https://\\u0445.com/login https://p\\u0251ypal.com"
    assert visible(text) == text

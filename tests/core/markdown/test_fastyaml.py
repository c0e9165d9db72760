"""Tests for core.markdown.fastyaml: the fast path must agree exactly with libyaml or fall back."""

from __future__ import annotations

import datetime
import json
import math
import random
import time

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vaultwatch.core.markdown.fastyaml import FALLBACK, parse_simple

VAULTGEN_SAMPLE = """\
title: "Budget 000123"
type: "howto"
tags:
  - craft
  - project/alpha
status: "draft"
verified:
  - by: human:alice
    at: 2026-01-02T03:04:05Z
trust_tier: "unverified"
stale_after: "2026-03-01"
created: "2025-01-01"
published: true
"""


def libyaml(text):
    return yaml.load(text, Loader=yaml.CSafeLoader)


def same(a, b) -> bool:
    """Equal with identical types all the way down (bool vs int, date vs datetime, tz)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return len(a) == len(b) and all(
            same(ka, kb) and same(va, vb) for (ka, va), (kb, vb) in zip(a.items(), b.items(), strict=True)
        )
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, datetime.datetime):
        return a == b and a.utcoffset() == b.utcoffset() and type(a.tzinfo) is type(b.tzinfo)
    return a == b


def check_agrees(text) -> bool:
    """Assert parse_simple agrees with libyaml unless it falls back; return 'fast path used'."""
    got = parse_simple(text)
    if got is FALLBACK:
        return False
    want = libyaml(text)  # must not raise when the fast path accepted the text
    assert same(got, want), f"{text!r}: fast={got!r} libyaml={want!r}"
    return True


# --------------------------------------------------------------------------- hand-written

SUPPORTED = [
    # keys with dots and single inner spaces, as Microsoft Learn and PowerShell help write them
    "ms.date: 2024-01-01\nexternal help file: Az.Accounts.dll-Help.xml\nModule Name: Az.Accounts\n",
    "a.b.c: [x, y]\n1.5: float key\nyes no: str key\n",
    VAULTGEN_SAMPLE,
    'title: "x"\ntags: []\n',
    "a: 1",
    "a: b\n",
    "a:\nb: 2\n",
    "a:   \nb:\n",
    "a: yes\nb: No\nc: TRUE\nd: off\ne: On\nf: y\ng: n\n",
    "a: ~\nb: null\nc: Null\nd: NULL\ne: nULL\n",
    "a: 0x1F\nb: 017\nc: 1_000\nd: -42\ne: +7\nf: 0b101\ng: 1:30\nh: 0o17\n",
    "a: 1.5\nb: 1e3\nc: 1.0e+3\nd: .inf\ne: -.Inf\nf: .nan\ng: 1_000.5\nh: 6.02e23\n",
    "a: 2026-11-29\nb: 2026-01-02 03:04:05\nc: 2026-01-02T03:04:05+02:00\n"
    "d: 2026-01-02T03:04:05.123456Z\ne: 2026-1-2\nf: 2026-01-02t03:04:05-05:30\n",
    "a: human:bob\nb: http://example.com/x?y=1#frag\nc: a#b\nd: it's\ne: 50%\n",
    "a: héllo wörld\nb: 日本語\nc: emoji 😀\nd: \xa0nbsp\xa0\n",
    "a: trailing   \nb: 'single'  \nc: \"double\"   \n",
    "a: \"\"\nb: ''\nc: 'it''s'\nd: \"yes\"\ne: '123'\nf: \"a: b # c\"\n",
    'a: "caf\\u00e9 \\"q\\" back\\\\slash \\/ tab\\tnl\\n"\n',
    "a: [a, b, \"c d\", 'e, f']\nb: [ ]\nc: [1, yes, ~, 2026-01-01]\nd: [x y, -1]\n",
    "tags:\n- a\n- b\nnext: 1\n",
    "tags:\n    - a\n\n    - 'b'\n    -\n    - \nnext: 1\n",
    "tags:\n  - [a, b]\n  - []\n",
    "v:\n  - by: human:alice\n    at: 2026-01-02T03:04:05Z\n  - by: x\n    at:\n",
    'v:\n-   by: a\n    note: "n"\n- plain\nz: 0\n',
    "yes: 1\n2: 2\nnull: 3\n2026-01-01: 4\nkey-with-dash_: 5\n",
    "a: -foo\nb: -x-\nc: x - y\nd: a, b\ne: a [b] {c}\n",
]

MUST_FALL_BACK = [
    "",
    "\n\n",
    "# comment\na: 1\n",
    "a: 1 # comment\n",
    "a:\t1\n",
    "a: 1\r\n",
    "a: &x 1\nb: *x\n",
    "a: !!str 1\n",
    "a: |\n  text\n",
    "a: >\n  text\n",
    "a: multi\n  line\n",
    "a:\n  sub: v\n",
    "? a\n: b\n",
    "a: {b: c}\n",
    "---\na: 1\n",
    "a: 1\n...\n",
    "a: 1\na: 2\n",
    "yes: 1\ntrue: 2\n",
    "yes: 1\n1: 2\n",
    "a: -\n",
    "a: - x\n",
    "a: @x\n",
    "a: `x`\n",
    "a: %x\n",
    "a: b: c\n",
    "a: b:\n",
    "a : 1\n",
    "- a\n- b\n",
    "a: 2026-02-30\n",
    "a: =\n",
    "a: <<\n",
    'a: "x\\ud83d\\ude00"\n',
    'a: "\\x41"\n',
    'a: "unterminated\n',
    "a: 'x' y\n",
    "a: [a, [b]]\n",
    "a: [a, ]\n",
    "a: [a: b]\n",
    "a: [a\n",
    "a:\n  - x\n    y\n",
    "a:\n  - b:\n      c: 1\n",
    "a:\n  - x\n - y\n",
    "a: x\u2028y\n",
    "a: x\x85y\n",
    "\ufeffa: 1\n",
    "a: x\x00\n",
    "%YAML 1.1\n---\na: 1\n",
]


@pytest.mark.parametrize("text", SUPPORTED)
def test_supported_cases_match_libyaml(text):
    assert parse_simple(text) is not FALLBACK, text
    assert check_agrees(text)


@pytest.mark.parametrize("text", MUST_FALL_BACK)
def test_unsupported_cases_fall_back(text):
    assert parse_simple(text) is FALLBACK


def test_vaultgen_shape_uses_fast_path():
    got = parse_simple(VAULTGEN_SAMPLE)
    assert got is not FALLBACK
    assert same(got, libyaml(VAULTGEN_SAMPLE))
    assert got["verified"] == [{"by": "human:alice", "at": datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)}]
    assert got["published"] is True and got["tags"] == ["craft", "project/alpha"]
    empty_tags = VAULTGEN_SAMPLE.replace("  - craft\n  - project/alpha\n", "").replace("tags:\n", "tags: []\n")
    assert parse_simple(empty_tags) is not FALLBACK and check_agrees(empty_tags)


def test_vaultgen_json_dumps_strings_use_fast_path():
    for s in ["Café ünïcode", 'say "hi"', "back\\slash", "a/b", "tab\there", "日本", "#x: y"]:
        text = f"title: {json.dumps(s)}\n"
        assert parse_simple(text) == {"title": s}
        assert check_agrees(text)


# --------------------------------------------------------------------------- differential

# Plain-safe-looking tricky scalars, then ones that need quoting (or make libyaml fail).
PLAIN_OK = [
    "yes",
    "No",
    "ON",
    "oFF",
    "y",
    "true",
    "False",
    "0x1F",
    "0x_1F",
    "017",
    "09",
    "0o17",
    "0b11",
    "1_000",
    "-1",
    "+1",
    "1:30",
    "1:70",
    "-1:30",
    "1e3",
    "1.0e3",
    "1.0e+3",
    ".inf",
    "-.inf",
    ".NaN",
    ".nan",
    "1.",
    "._",
    "1_0.5",
    "2026-11-29",
    "2026-1-2",
    "2026-01-02 03:04:05",
    "2026-01-02T03:04:05+02:00",
    "2026-01-02T03:04:05Z",
    "2026-01-02T03:04:05.5 -3",
    "0001-01-01T00:00:00Z",
    "9999-12-31",
    "2026-01-02T03:04:05z",
    "2026-01-02t03:04:05Z",
    "2026-01-02 3:04:05",
    "human:bob",
    "a:b",
    "a#b",
    "it's",
    "~",
    "null",
    "NULL",
    "nUll",
    "café",
    "日本語",
    "😀",
    "\xa0x",
    "x\xa0",
    "-x",
    "-.5",
    "a, b",
    "a [b]",
    "a\\b",
    "x/y",
    "a  b",
    'a"b',
    "craft",
    "project/alpha",
]
TRICKY = [
    "2026-02-30",
    "2026-13-01T00:00:00Z",
    "2026-01-02T24:00:00Z",
    "0000-01-01",
    "a: b",
    "a:",
    "#x",
    "a #b",
    '"q"',
    "'q'",
    "",
    " ",
    "-",
    "--",
    "---",
    "- x",
    "?x",
    ":x",
    "!x",
    "&x",
    "*x",
    "|",
    ">",
    "%x",
    "@x",
    "`x`",
    "<<",
    "=",
    "[a]",
    "{a: b}",
    "trailing ",
    "\\u00e9",
    "a\tb",
    "a\rb",
    "\x85",
    "\u2028",
    "\x00",
    "\ufeff",
    "\ud800",
]
SCALARS = PLAIN_OK + TRICKY
KEYS_OK = [
    "a",
    "b",
    "c",
    "title",
    "tags",
    "status",
    "verified",
    "by",
    "at",
    "yes",
    "1",
    "null",
    "2026-01-01",
    "a-b",
    "_x",
    "0x1F",
    "NO",
    "ms.date",
    "external help file",
    "a b",
    "1.5",
    "a.b.c",
    "x.",
    "a - b",
    "1 2",
    "yes no",
    "1e3",
    "0.5.1",
]
KEYS = KEYS_OK + [
    "~",
    "01",
    "-a",
    "é",
    "a:b",
    "key ",
    "x" * 130,
    "true",
    "a  b",
    "a .b",
    "a #b",
    ".a",
    "a -",
    "a ?b",
    "a b ",
    "x" * 120 + " " + "y" * 10,
]
INDENTS = ["", " ", "  ", "    "]


class Grammar:
    """Random frontmatter texts; ``choose(options)`` picks one option (RNG or hypothesis).

    Clean mode produces only supported constructs (tricky scalars get quoted), so the fast
    path is exercised; dirty mode slips in an unsupported construct now and then, so the
    fast path must notice it amid otherwise acceptable text."""

    def __init__(self, choose, clean):
        self.choose, self.clean = choose, clean

    def pick(self, ok, bad):
        if self.clean or self.choose([0, 1, 2, 3]):
            return self.choose(ok)
        return self.choose(bad)

    def scalar(self):
        style = self.choose(["plain", "plain", "plain", "dq", "dq_ascii", "sq", "raw_dq"])
        s = self.choose(self.choose([PLAIN_OK, TRICKY] if self.clean else [TRICKY]))
        if style == "plain" and self.clean and s not in PLAIN_OK:
            style = "dq"
        if style == "dq":
            return json.dumps(s, ensure_ascii=False)
        if style == "dq_ascii":
            return json.dumps(s)
        if style == "sq":
            return "'" + s.replace("'", "''") + "'"
        if style == "raw_dq":
            return '"' + s + '"'
        return s

    def inline(self):
        kind = self.pick(["scalar", "scalar", "flow", "empty"], ["junk"])
        if kind == "scalar":
            return self.scalar()
        if kind == "flow":
            items = [self.scalar() for _ in range(self.choose([0, 1, 2, 3]))]
            return "[" + self.choose([", ", ",", " , "]).join(items) + self.pick(["]", " ]"], [", ]", "", "] x", "]]"])
        if kind == "empty":
            return self.choose(["", " ", "  "])
        return self.choose(
            ["&a x", "*a", "!!str x", "|", ">-", "{}", "{a: 1}", "x # c", "[a, [b]]", "[a: b]", "[a :b]", "[{a: b}]"]
        )

    def seq(self, indent):
        lines = []
        for _ in range(self.choose([1, 2, 3])):
            dash = self.pick([indent], INDENTS) + "-" + self.choose([" ", " ", "   ", ""])
            if self.choose(["scalar", "map"]) == "scalar":
                lines.append(dash + self.inline())
                continue
            dash = dash if dash.endswith(" ") else dash + " "
            key_col = " " * (len(dash) + self.pick([0], [1, -1, 2, -len(dash)]))
            lines.append(dash + self.pick(KEYS_OK, KEYS) + ":" + self.choose([" ", "  "]) + self.inline())
            for _ in range(self.choose([0, 1, 2])):
                lines.append(key_col + self.pick(KEYS_OK, KEYS) + self.pick([": "], [":", " : "]) + self.inline())
        return lines

    def text(self) -> str:
        lines = []
        for _ in range(self.choose([1, 2, 3, 4, 5])):
            key = self.pick(KEYS_OK, KEYS)
            shape = self.pick(["inline", "inline", "seq", "seq", "blank"], ["nested", "junk"])
            if shape == "inline":
                sep = self.pick([": ", ":  "], [":", " : ", ":\t"])
                lines.append(key + sep + self.inline() + self.choose(["", "", "  "]))
            elif shape == "seq":
                lines.append(key + ":" + self.choose(["", " "]))
                lines.extend(self.seq(self.choose(INDENTS)))
            elif shape == "nested":
                lines.append(key + ":")
                lines.append(self.choose(INDENTS[1:]) + self.choose(KEYS) + ": " + self.scalar())
            elif shape == "junk":
                lines.append(
                    self.choose(
                        [
                            "# c",
                            "---",
                            "...",
                            "  continued",
                            "- x",
                            "? k",
                            "%YAML 1.1",
                            "a: |",
                            "  block",
                            "\ufeffa: 1",
                            "k: v\r",
                            " ",
                            "  - x",
                            "    y: 1",
                        ]
                    )
                )
            else:
                lines.append("")
        return "\n".join(lines) + self.choose(["\n", "", "\n\n"])


@settings(
    max_examples=2000,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.booleans(), st.lists(st.integers(0, 251), max_size=100))
def test_differential_against_libyaml(clean, choices):
    """Whenever parse_simple does not fall back, it equals libyaml (types included)."""
    it = iter(choices)
    text = Grammar(lambda opts: opts[next(it, 0) % len(opts)], clean).text()
    check_agrees(text)


TEMPLATES = [
    "k: {0}",
    "k: {0}\nz: 1",
    "k:\n  - {0}\n  - x",
    "k:\n- a: {0}\n  b: {0}",
    "k: [{0}]",
    "k: [{0}, x]",
    "{0}: v",
    "k:\n  - {0}: v",
    "k: x\n{0}",
]


@settings(max_examples=1500, deadline=None, database=None)
@given(st.sampled_from(TEMPLATES), st.text(alphabet=" -?:,[]{}#&*!|>'\"%@`=<~\\/.01xyYnN_e+\xa0é\n\t", max_size=10))
def test_differential_random_scalars(template, scalar):
    """Strings of indicator characters in every value position agree or fall back."""
    check_agrees(template.format(scalar))


def test_differential_fuzz_exercises_fast_path():
    """Same grammar driven by a seeded RNG: agreement, plus proof the fast path is exercised."""
    rng = random.Random(20260102)
    fast = [check_agrees(Grammar(rng.choice, clean=i % 2 == 0).text()) for i in range(4000)]
    assert sum(fast[0::2]) > 600 and sum(fast[1::2]) > 40, (sum(fast[0::2]), sum(fast[1::2]))


# --------------------------------------------------------------------------- benchmark

if __name__ == "__main__":
    N = 20_000
    for name, fn in [("fastyaml", parse_simple), ("CSafeLoader", libyaml)]:
        t0 = time.perf_counter()
        for _ in range(N):
            fn(VAULTGEN_SAMPLE)
        print(f"{name:12s} {(time.perf_counter() - t0) / N * 1e6:7.2f} us/call")

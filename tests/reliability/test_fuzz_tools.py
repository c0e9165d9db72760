"""Fuzzing every MCP tool over the real socket with the real client (hypothesis).

Generated arguments: wrong types, huge strings, Unicode edge cases, hostile paths from the
path corpus, glob bombs, full-text query bombs, deep and wide structures, unknown argument
names. Every call must answer within its bound with a result or a structured tool error
("Error: ..."; never a traceback, never "internal error", never a dropped connection), and
the read tools must leave the vault byte-for-byte unchanged. Malformed JSON-RPC sent as raw
HTTP gets an error response and the server keeps serving.

Size: a CI subset by default; VAULTWATCH_FUZZ_EXAMPLES=10000 for the nightly size (per test).
"""

from __future__ import annotations

import json
import os
import shutil
from typing import Any

import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from path_corpus import CASES, Fired, build_jail
from reliability_helpers import McpSession, tree_state

from vaultwatch.core.vault import Vault, demo_vault_path

NIGHTLY = int(os.environ.get("VAULTWATCH_FUZZ_EXAMPLES", "0") or 0)
READ_EXAMPLES = NIGHTLY or 250
WRITE_EXAMPLES = NIGHTLY or 120
RAW_EXAMPLES = NIGHTLY // 10 if NIGHTLY else 40
CALL_BOUND_S = 10.0


def _settings(n: int):
    return settings(
        max_examples=n,
        deadline=None,
        database=None,
        derandomize=not NIGHTLY,
        print_blob=True,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.function_scoped_fixture,
            HealthCheck.filter_too_much,
            HealthCheck.large_base_example,
        ],
    )


# --- strategies --------------------------------------------------------------------------------


def _sendable(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


GLOB_BOMBS = [
    "**/" * 60 + "x.md",
    "*a" * 40 + "b",
    "[" * 200,
    "[!" * 100 + "]",
    "{a,b}" * 50,
    "?" * 2000,
    "**" * 500,
    "*/" * 300,
    "**/*" * 100 + "/*.md",
    "[a-z" * 50,
    "[]]" * 100,
    "\\*" * 100,
    "*" * 1000 + "x",
    "**/[!.]*/**/*.md",
    "[\U0010ffff-\U0010ffff]",
]
FTS_BOMBS = [
    "NEAR(",
    '"',
    '"""',
    "*",
    "-",
    "(((((",
    ")))",
    "a OR OR b",
    "NOT",
    "AND AND",
    "'; DROP TABLE x; --",
    'title:"x"',
    "a* b* c* d* e* f* g* h* i* j* k* l* m* n* o* p* q* r* s* t* u* v* w* x* y* z* aa* bb*",
    "\u0000",
    "^",
    "{a b}",
    "NEAR(a b, 99999999999)",
    "a" * 600,
    "-" * 100,
    '"' * 101,
    "-a -b -c",
    "x:y:z",
    "* * *",
    "🎉",
    "\u202e",
    "a\nb",
    "MATCH",
    "rank",
    "bm25(x)",
]
HOSTILE_STRINGS = sorted(
    {c.path for c in CASES if _sendable(c.path) and "{JAIL}" not in c.path}
    | set(GLOB_BOMBS)
    | set(FTS_BOMBS)
    | {
        "",
        " ",
        "null",
        "true",
        "0",
        "-1",
        "1e309",
        "NaN",
        "{}",
        "[]",
        "undefined",
        "status:deprecated",
        "stale=maybe",
        "\ufeff",
        "\u200b",
        "\U0010ffff",
        "a\u0301" * 100,
    }
)
SAFE_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
HUGE = st.builds(
    lambda ch, n: ch * n,
    st.sampled_from(["a", "é", "/", "*", "\u202e", "🎉", "[[", "#", "\n", "..", "-"]),
    st.integers(1_000, 200_000),
)
STRINGS = st.one_of(SAFE_TEXT, st.sampled_from(HOSTILE_STRINGS), HUGE)
NUMBERS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.integers(-3, 200),
    st.floats(allow_nan=False, allow_infinity=False),
)
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, STRINGS)


def _nest(depth: int, kind: str) -> Any:
    value: Any = "leaf"
    for i in range(depth):
        value = {f"k{i}": value} if kind == "dict" else [value]
    return value


DEEP = st.builds(_nest, st.integers(1, 150), st.sampled_from(["dict", "list"]))
WIDE = st.builds(lambda n: {f"key{i}": f"v{i}" for i in range(n)}, st.integers(50, 3000))
JSON = st.recursive(
    SCALARS, lambda ch: st.lists(ch, max_size=5) | st.dictionaries(SAFE_TEXT, ch, max_size=5), max_leaves=12
)
ANY = st.one_of(JSON, DEEP, WIDE)


def _typed(prop: dict) -> st.SearchStrategy:
    """A value of roughly the right type for one JSON-schema property (often at its edges)."""
    types = set()
    for sub in [prop, *prop.get("anyOf", []), *prop.get("oneOf", [])]:
        t = sub.get("type")
        if isinstance(t, list):
            types.update(t)
        elif t:
            types.add(t)
        if "enum" in sub:
            return st.one_of(st.sampled_from(sub["enum"]), STRINGS)
        if sub.get("$ref") or t == "object":
            types.add("object")
    choices: list[st.SearchStrategy] = []
    if "string" in types:
        choices.append(STRINGS)
    if "integer" in types or "number" in types:
        choices.append(NUMBERS)
    if "boolean" in types:
        choices.append(st.booleans())
    if "array" in types:
        choices.append(st.lists(SCALARS, max_size=4))
    if "object" in types:
        choices.append(
            st.one_of(
                st.dictionaries(st.one_of(SAFE_TEXT, st.sampled_from(HOSTILE_STRINGS)), SCALARS, max_size=6), DEEP, WIDE
            )
        )
    if "null" in types:
        choices.append(st.none())
    return st.one_of(*choices) if choices else ANY


def arguments(tool, real_paths: list[str]) -> st.SearchStrategy:
    """Arguments for one tool: a subset of its parameters, each typed, wrong-typed or hostile,
    sometimes a real path (to reach the success paths too), sometimes an unknown name."""
    props = tool.input_schema.get("properties", {})
    required = set(tool.input_schema.get("required", []))

    @st.composite
    def well_formed(draw):
        """Right names and types with odd contents: reaches the tools' success paths."""
        args: dict[str, Any] = {}
        for name, prop in props.items():
            if name in ("if_match", "permanent") or (name not in required and draw(st.integers(0, 9)) >= 3):
                continue
            kinds = {sub.get("type") for sub in [prop, *prop.get("anyOf", [])]}
            if name in ("path", "new_path", "folder", "confirm_path"):
                args[name] = draw(st.one_of(st.sampled_from(real_paths), SAFE_TEXT.map(lambda t: f"fuzz/{t}.md")))
            elif "enum" in prop or any("enum" in sub for sub in prop.get("anyOf", [])):
                args[name] = draw(_typed(prop))
            elif "boolean" in kinds:
                args[name] = draw(st.booleans())
            elif "string" in kinds:
                args[name] = draw(SAFE_TEXT)
            elif "integer" in kinds:
                args[name] = draw(st.integers(1, 100))
            elif name in ("set", "append"):
                args[name] = draw(
                    st.dictionaries(
                        st.sampled_from(["status", "tags", "x", "title", "verified"]), SCALARS, min_size=1, max_size=3
                    )
                )
            else:
                args[name] = draw(_typed(prop))
        return args

    @st.composite
    def build(draw):
        args: dict[str, Any] = {}
        for name, prop in props.items():
            if draw(st.integers(0, 9)) >= (9 if name in required else 4):
                continue
            pick = draw(st.integers(0, 5))
            if name in ("path", "new_path", "folder", "confirm_path") and pick <= 1:
                args[name] = draw(st.sampled_from(real_paths))
            elif name in ("path", "new_path") and pick == 2:  # a new note's name, odd characters and all
                args[name] = draw(SAFE_TEXT.map(lambda t: f"fuzz/{t}.md"))
            elif name in ("content", "text", "new_text", "query") and draw(st.booleans()):
                args[name] = draw(SAFE_TEXT)
            elif name == "params":
                args[name] = draw(
                    st.one_of(
                        st.fixed_dictionaries(
                            {},
                            optional={
                                "folder": STRINGS,
                                "recursive": SCALARS,
                                "response_format": st.sampled_from(["json", "markdown", "x"]),
                                "vault": SCALARS,
                            },
                        ),
                        ANY,
                    )
                )
            else:
                args[name] = draw(st.one_of(_typed(prop), _typed(prop), _typed(prop), ANY))
        if draw(st.integers(0, 9)) == 0:
            args[draw(st.sampled_from(["pth", "__proto__", "$where", "", "path ", "PATH", "x" * 300]))] = draw(SCALARS)
        return args

    return st.one_of(build(), well_formed(), well_formed())


# --- what every answer must look like ------------------------------------------------------------


def check(name: str, args: Any, out) -> None:
    shown = json.dumps(args, ensure_ascii=True, default=str)[:300]
    assert out.protocol_error is None, f"{name}({shown}): protocol error {out.protocol_error}"
    assert out.seconds < CALL_BOUND_S, f"{name}({shown}) took {out.seconds:.1f} s"
    if out.is_error:
        assert out.text.startswith("Error: "), f"{name}({shown}): {out.text[:300]}"
        for bad in ("Traceback", "internal error", 'File "/', "Exception:"):
            assert bad not in out.text, f"{name}({shown}): {out.text[:500]}"
    else:
        assert isinstance(out.structured, dict), f"{name}({shown}): no structured content"


@pytest.fixture(scope="module")
def read_session(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz-read") / "vault"
    shutil.copytree(demo_vault_path(), root, symlinks=True)
    (root / "Big.md").write_text("# Big\n" + "line [[Welcome]] #tag\n" * 50_000)
    (root / "bomb.md").write_text(
        "---\na: &a [1,2,3,4,5,6,7,8,9]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
        "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n---\n"
    )
    vault = Vault(root, cache=False)
    vault.load()
    with McpSession(vault, name="fuzz-reader") as session:
        tools = session.run(session.client.list_tools()).tools
        session.tools = {t.name: t for t in tools if t.annotations and t.annotations.read_only_hint}
        session.real_paths = [e.path for e in vault.snapshot.entries][:60] + ["", "Projects", "Big.md"]
        session.root = root
        session.stats = {"calls": 0, "errors": 0, "max_s": 0.0}
        yield session


@pytest.fixture(scope="module")
def write_session(tmp_path_factory):
    jail = build_jail(tmp_path_factory.mktemp("fuzz-write") / "jail")
    vault = Vault(jail.vault, cache=False)
    vault.load()
    with McpSession(vault, name="fuzz-writer") as session:
        tools = session.run(session.client.list_tools()).tools
        session.tools = {t.name: t for t in tools if t.annotations and not t.annotations.read_only_hint}
        session.real_paths = [e.path for e in vault.snapshot.entries] + ["Notes/new.md", "victims/v.md", "fifo.md"]
        session.jail = jail
        session.stats = {"calls": 0, "errors": 0, "max_s": 0.0}
        yield session


def _stats(root) -> list:
    """Every entry's name, size, mtime and inode (cheap enough to take after every call)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in sorted(dirnames + filenames):
            st = os.lstat(os.path.join(dirpath, name))
            out.append((dirpath, name, st.st_size, st.st_mtime_ns, st.st_ino, st.st_mode))
    return sorted(out)


def _note(session, out, name: str, args) -> None:
    session.stats["calls"] += 1
    session.stats["errors"] += bool(out.is_error)
    if out.seconds > session.stats["max_s"]:
        session.stats["max_s"] = out.seconds
        session.stats["slowest"] = f"{name}({json.dumps(args, ensure_ascii=True, default=str)[:160]})"


@pytest.mark.timing
def test_read_tools_answer_any_arguments_and_change_nothing(read_session, figure):
    session = read_session
    names = sorted(session.tools)
    assert {
        "list_documents",
        "read",
        "triage",
        "list_folders",
        "list_tags",
        "get_links",
        "search",
        "vault_list_notes",
        "obsidian_list_notes",
    } <= set(names)
    before = tree_state(session.root)
    quick = _stats(session.root)

    @_settings(READ_EXAMPLES)
    @given(st.data())
    def run(data):
        name = data.draw(st.sampled_from(names), label="tool")
        args = data.draw(arguments(session.tools[name], session.real_paths), label="arguments")
        out = session.call(name, args, timeout=CALL_BOUND_S * 3)
        _note(session, out, name, args)
        check(name, args, out)
        assert _stats(session.root) == quick, f"{name} changed the vault"

    run()
    assert tree_state(session.root) == before  # bytes too, not only sizes and times
    # still serving normally afterwards
    out = session.call("list_documents", {"limit": 5})
    assert not out.is_error and out.structured["returned"] == 5
    figure("cases", session.stats["calls"])
    figure("tool_errors", session.stats["errors"])
    figure("slowest_call_s", round(session.stats["max_s"], 3))
    figure("slowest_call", session.stats.get("slowest", ""))
    figure("tools", len(names))


@pytest.mark.timing
def test_write_tools_answer_any_arguments_and_stay_inside_the_vault(write_session, figure):
    session = write_session
    jail = session.jail
    names = sorted(session.tools)
    assert {"write", "edit", "update_frontmatter", "rename", "delete"} <= set(names)
    fired = Fired(jail)

    @_settings(WRITE_EXAMPLES)
    @given(st.data())
    def run(data):
        name = data.draw(st.sampled_from(names), label="tool")
        args = data.draw(arguments(session.tools[name], session.real_paths), label="arguments")
        if data.draw(st.booleans()):
            try:  # (a fuzzed rename may have put a folder, or anything, in the way: then no victim)
                (jail.vault / "victims").mkdir(exist_ok=True)
                (jail.vault / "victims" / "v.md").write_text("---\ntitle: v\n---\n# Secret\nvictim\n")
            except OSError:
                pass
        out = session.call(name, args, timeout=CALL_BOUND_S * 3)
        _note(session, out, name, args)
        check(name, args, out)

    with fired.audit.recording():
        run()
    assert fired.problems() == []
    fresh = Vault(jail.vault, cache=False)  # whatever was written, the vault still indexes
    fresh.load()
    out = session.call("write", {"path": "after-fuzz.md", "content": "# still serving\n"})
    assert not out.is_error, out.text
    figure("cases", session.stats["calls"])
    figure("tool_errors", session.stats["errors"])
    figure("slowest_call_s", round(session.stats["max_s"], 3))


# --- raw JSON-RPC over the socket ------------------------------------------------------------------

HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def _raw_client(session) -> tuple[httpx2.Client, dict]:
    http = httpx2.Client(
        transport=httpx2.HTTPTransport(uds=session.socket_path), base_url="http://localhost", timeout=30
    )
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw-fuzzer", "version": "0"},
        },
    }
    r = http.post("/mcp", json=init, headers=HEADERS)
    assert r.status_code == 200, r.text
    headers = dict(HEADERS)
    sid = r.headers.get("mcp-session-id")
    if sid:
        headers["mcp-session-id"] = sid
    headers["mcp-protocol-version"] = "2025-06-18"
    http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    return http, headers


MALFORMED = [
    b"",
    b"{",
    b"}",
    b"null",
    b"[]",
    b"[{}]",
    b"123",
    b'"x"',
    b"{}",
    b'{"jsonrpc": "1.0"}',
    b'{"jsonrpc":"2.0","id":1}',
    b'{"jsonrpc":"2.0","id":1,"method":null}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call"}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":[1,2]}}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":"x"}}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":null}}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{}}}',
    b'{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"\\udcff.md"}}}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write","arguments":{"path":"\\ud800x.md",'
    b'"content":"x"}}}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write","arguments":{"path":"s.md",'
    b'"content":"\\udcff"}}}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"a\\u0000b.md"}}}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_documents","arguments":{"filters":'
    + b'{"a":' * 3000
    + b"1"
    + b"}" * 3000
    + b"}}}",
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_documents","arguments":{"limit":'
    + b"9" * 5000
    + b"}}}",
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_documents","arguments":{"limit":1e999}}}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"x","path":"y"}}}',
    b"[" * 100_000 + b"]" * 100_000,
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"'
    + b"a" * 5_000_000
    + b'"}}}',
    b"\xff\xfe\x00\x00garbage",
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"index.md"}}}'
    + b"trailing",
    b'{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///etc/passwd"}}',
    b'{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"x"}}',
    b'{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}',
    b'{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{}}',
]


def _post_ok(http, headers, body: bytes) -> tuple[int, str]:
    r = http.post("/mcp", content=body, headers=headers)
    text = r.text
    assert r.status_code < 500, f"HTTP {r.status_code} for {body[:120]!r}: {text[:300]}"
    assert "Traceback" not in text and 'File "/' not in text, text[:500]
    if r.status_code == 200 and text.strip():
        doc = json.loads(text)
        msgs = doc if isinstance(doc, list) else [doc]
        for m in msgs:
            assert "result" in m or "error" in m, m
            if "result" in m and isinstance(m["result"], dict) and m["result"].get("isError"):
                blob = json.dumps(m["result"])
                assert "Error: " in blob and "internal error" not in blob, blob[:400]
    return r.status_code, text


def test_malformed_json_rpc_is_answered_and_the_server_keeps_serving(read_session, figure):
    session = read_session
    http, headers = _raw_client(session)
    before = tree_state(session.root)
    statuses: dict[int, int] = {}
    try:
        for body in MALFORMED:
            status, _ = _post_ok(http, headers, body)
            statuses[status] = statuses.get(status, 0) + 1

        @_settings(RAW_EXAMPLES)
        @given(
            st.dictionaries(
                st.sampled_from(["path", "folder", "query", "pattern", "filters", "limit", "content"]),
                st.text(max_size=30),
                max_size=4,
            ),
            st.sampled_from(["read", "list_documents", "search", "vault_list_notes", "get_links", "triage"]),
        )
        def run(args, name):
            # any str, lone surrogates included, written as JSON escapes the SDK client would refuse to send
            body = json.dumps(
                {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, "arguments": args}},
                ensure_ascii=True,
            ).encode()
            status, _ = _post_ok(http, headers, body)
            statuses[status] = statuses.get(status, 0) + 1

        run()
    finally:
        http.close()
    out = session.call("list_documents", {"limit": 3})
    assert not out.is_error and out.structured["returned"] == 3
    assert tree_state(session.root) == before  # nothing here may change the vault (writes are refused)
    figure("cases", sum(statuses.values()))
    figure("http_statuses", json.dumps(statuses, sort_keys=True))

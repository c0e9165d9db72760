"""Resource subscriptions are bounded and cheap, through the real server on its socket with the
real Python client: a session follows at most MAX_PER_SESSION notes by URIs of at most
MAX_URI_CHARS characters (a clear error beyond, nothing lost), and one agent's many subscriptions
make neither another agent's subscribe nor a change's notification do work in all of them.

Work is counted, not timed: every subscription held costs the server one `resources.path_of` call
each time it looks at all of them, so the number of calls during one request says how many
subscriptions that request walked.
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import Implementation, ResourceUpdatedNotification
from reliability_helpers import serving

from vaultwatch.mcp_server import resources

PLAN = resources.uri_of("Plan.md")
# the limits (read with defaults, so that a server without them fails on what it accepts, not on a name)
CAP = getattr(resources, "MAX_PER_SESSION", 1000)
MAX_URI = getattr(resources, "MAX_URI_CHARS", len(resources.SCHEME) + 3 * 4096)


def client_for(socket_path, heard: list, mode: str = "legacy") -> Client:
    """A real `mcp` client on the socket that notes every resources/updated it hears in `heard`."""

    async def on_message(message) -> None:
        root = getattr(message, "root", message)
        if isinstance(root, ResourceUpdatedNotification):
            heard.append(("updated", str(root.params.uri)))

    http = httpx2.AsyncClient(
        transport=httpx2.AsyncHTTPTransport(uds=os.fspath(socket_path)), timeout=httpx2.Timeout(30, read=60)
    )
    return Client(
        streamable_http_client("http://localhost/mcp", http_client=http),
        mode=mode,
        client_info=Implementation(name="subscriber", version="1"),
        message_handler=on_message,
    )


async def until(test, seconds: float = 10.0) -> bool:
    for _ in range(int(seconds / 0.02)):
        if test():
            return True
        await asyncio.sleep(0.02)
    return test()


@pytest.fixture
def vault(make_vault, open_vault):
    return open_vault(make_vault({"Plan.md": "# Plan\n", "Home.md": "See [[Plan]].\n"}))


@pytest.fixture
def counted(monkeypatch) -> Counter:
    """How often the server turned a URI into a path and a path into a URI."""
    calls: Counter = Counter()
    path_of, uri_of = resources.path_of, resources.uri_of

    def counting_path_of(uri: str) -> str:
        calls["path_of"] += 1
        return path_of(uri)

    def counting_uri_of(path: str) -> str:
        calls["uri_of"] += 1
        return uri_of(path)

    monkeypatch.setattr(resources, "path_of", counting_path_of)
    monkeypatch.setattr(resources, "uri_of", counting_uri_of)
    return calls


async def test_a_session_is_capped_and_oversized_uris_refused_with_clear_errors(vault, sock_dir, figure):
    heard: list = []
    cap = CAP
    async with serving(vault, sock_dir / "v.sock") as host, client_for(host.socket_path, heard) as client:
        await client.subscribe_resource(PLAN)
        for i in range(cap - 1):
            await client.subscribe_resource(resources.uri_of(f"many/n{i}.md"))
        await client.subscribe_resource(PLAN)  # following again what it follows is no new subscription
        with pytest.raises(MCPError) as over:
            await client.subscribe_resource(resources.uri_of("one-too-many.md"))
        await client.unsubscribe_resource(resources.uri_of("many/n0.md"))
        await client.subscribe_resource(resources.uri_of("room-again.md"))  # room again after an unsubscribe
        huge = resources.SCHEME + "x" * 60_000
        with pytest.raises(MCPError) as long:
            await client.subscribe_resource(huge)
        await client.unsubscribe_resource(resources.uri_of("many/n1.md"))
        with pytest.raises(MCPError) as long_after_room:
            await client.subscribe_resource(resources.SCHEME + "y" * (MAX_URI - len(resources.SCHEME) + 1))
        fits = resources.SCHEME + "z" * (MAX_URI - len(resources.SCHEME))
        await client.subscribe_resource(fits)  # the longest allowed URI is accepted
        # nothing was lost: the first subscription still hears its note change
        await client.call_tool("write", {"path": "Plan.md", "content": "# Plan\nchanged\n", "overwrite": True})
        assert await until(lambda: ("updated", PLAN) in heard), heard[-5:]
    assert over.value.code == -32602 and f"at most {cap}" in over.value.message, over.value.message
    assert "unsubscribe" in over.value.message
    for refused in (long.value, long_after_room.value):
        assert refused.code == -32602 and f"at most {MAX_URI}" in refused.message, refused.message
    figure("subscriptions_per_session", cap)
    figure(
        "fixed_bug",
        "one session could hold any number of subscriptions with URIs of any length (60 KB accepted); now at "
        "most MAX_PER_SESSION, by URIs of at most MAX_URI_CHARS, with a clear -32602 error (mcp_server/resources.py)",
    )


@pytest.mark.long
async def test_one_agents_many_subscriptions_cost_another_agent_nothing(vault, sock_dir, counted, figure):
    # each subscribe is a round trip; work counted per held subscription shows at 100 as at 500
    # (old code: 100 path look-ups per subscribe, against the bound of 2)
    many = 100
    heard: list = []
    async with (
        serving(vault, sock_dir / "v.sock") as host,
        client_for(host.socket_path, []) as greedy,
        client_for(host.socket_path, heard) as other,
    ):
        for i in range(many):
            await greedy.subscribe_resource(resources.uri_of(f"deep/{'d' * 200}/n{i}.md"))
        counted.clear()
        await other.list_resources()  # a session's first resources request
        first_listing = counted["path_of"]  # (its rows' URIs are uri_of calls: two notes, two calls)
        counted.clear()
        await other.subscribe_resource(PLAN)
        subscribing = sum(counted.values())
        counted.clear()
        await other.unsubscribe_resource(PLAN)
        unsubscribing = sum(counted.values())
        await other.subscribe_resource(PLAN)
        for i in range(many):  # the greedy agent goes on while the other's note changes
            await greedy.subscribe_resource(resources.uri_of(f"more/n{i}.md"))
        counted.clear()
        await other.call_tool("write", {"path": "Plan.md", "content": "# Plan\nnew\n", "overwrite": True})
        assert await until(lambda: ("updated", PLAN) in heard)
        await asyncio.sleep(resources.COALESCE_SECONDS * 4)  # any flush still due has run
        notifying = sum(counted.values())
    # work in what the request names: one URI each, never the greedy agent's thousand
    assert first_listing == 0, first_listing
    assert subscribing <= 2, subscribing
    assert unsubscribing <= 2, unsubscribing
    assert notifying <= 2, notifying
    figure("greedy_subscriptions", 2 * many)
    figure(
        "fixed_bug",
        "every resources/subscribe (and a session's first resources request) recomputed all subscriptions on "
        "the event loop: 116 subscriptions of 60 KB URIs pushed another agent's listing to p50 0.51 s; "
        "followers are now indexed by path (mcp_server/resources.py)",
    )


async def test_a_listen_stream_is_held_to_the_same_limits(vault, sock_dir):
    """A 2026-07-28 client names what it follows when it opens a subscriptions/listen stream: the same
    cap and URI limit apply there, with the same errors, and a stream within them still hears changes."""
    refusals = {}
    events: list = []
    async with (
        serving(vault, sock_dir / "v.sock") as host,
        client_for(host.socket_path, [], mode="auto") as client,
    ):

        async def first_event(uris: list[str]) -> None:
            async with client.listen(resource_subscriptions=uris) as sub:
                async for _event in sub:
                    break

        for what, uris in (
            ("long", [resources.SCHEME + "x" * 60_000]),
            ("many", [resources.uri_of(f"n{i}.md") for i in range(CAP + 1)]),
        ):
            with pytest.raises(MCPError) as refused:  # a stream accepted would wait for an event: a timeout
                await asyncio.wait_for(first_event(uris), 10)
            refusals[what] = refused.value
        async with client.listen(resource_subscriptions=[PLAN]) as sub:

            async def collect() -> None:
                async for event in sub:
                    events.append(type(event).__name__)

            task = asyncio.create_task(collect())
            await client.call_tool("write", {"path": "Plan.md", "content": "# Plan\nagain\n", "overwrite": True})
            heard = await until(lambda: "ResourceUpdated" in events)
            task.cancel()
    assert f"at most {MAX_URI}" in refusals["long"].message, refusals["long"].message
    assert f"at most {CAP}" in refusals["many"].message, refusals["many"].message
    assert heard, events

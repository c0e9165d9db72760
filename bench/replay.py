"""The replay server: answers each request with a recorded line of vaultwatch's, at once.

    python -m bench.replay RECORDING

RECORDING is a tap's file (bench_floor.tap: b">" and a line the client sent, b"<" and a line the
server sent). Each request is answered with the recorded answer to the same request (its method and
parameters; any `initialize` is one), its id put in; anything unrecorded gets an error. It does no
vaultwatch work and imports only the standard library's json and sys, so its start is close to a bare
interpreter's: what a client walks against it is that client's own cost of these answers.
"""

from __future__ import annotations

import json
import sys


def _key(method: str, params: dict | None) -> str:
    params = dict(params or {})
    params.pop("_meta", None)
    if method == "initialize":
        return method  # clients name themselves differently: one handshake serves any
    return method + " " + json.dumps(params, sort_keys=True, separators=(",", ":"))


def load_recording(path: str) -> dict[str, tuple[bytes, bytes]]:
    """Each recorded request's answer, as the bytes before and after its id (the last answer of each)."""
    asked: dict[object, str] = {}
    answers: dict[str, tuple[bytes, bytes]] = {}
    with open(path, "rb") as fh:
        for raw in fh:
            mark, line = raw[:1], raw[1:]
            if mark == b">":
                msg = json.loads(line)
                if "method" in msg and "id" in msg:
                    asked[msg["id"]] = _key(msg["method"], msg.get("params"))
                continue
            # an answer's id is within its first bytes (the SDK's and the front's order: jsonrpc, id)
            head = line[:64]
            start = head.find(b'"id":')
            if start < 0:
                continue  # a notification or a request of the server's: not replayed
            end = start + 5
            while line[end : end + 1] in (b" ",):
                end += 1
            stop = end
            while line[stop : stop + 1] not in (b",", b"}"):
                stop += 1
            ident = json.loads(line[end:stop])
            if ident in asked:
                answers[asked[ident]] = (line[:end], line[stop:])
    return answers


def replay(path: str) -> None:
    """Answer each request on stdin with its recorded line at once; anything unrecorded is an error."""
    answers = load_recording(path)
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        msg = json.loads(line)
        if "method" not in msg or "id" not in msg:
            continue  # a notification, or the client's answer to a request of the server's
        ident = json.dumps(msg["id"]).encode()
        found = answers.get(_key(msg["method"], msg.get("params")))
        if found is None:
            err = {"code": -32601, "message": f"not recorded: {msg['method']}"}
            out.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": err}).encode() + b"\n")
        elif msg["method"] == "initialize":
            # the protocol version the client asked for (the recording's client may have asked another)
            answer = json.loads(found[0] + ident + found[1])
            answer["result"]["protocolVersion"] = msg["params"]["protocolVersion"]
            out.write(json.dumps(answer).encode() + b"\n")
        else:
            out.write(found[0] + ident + found[1])
        out.flush()


if __name__ == "__main__":
    replay(sys.argv[1])

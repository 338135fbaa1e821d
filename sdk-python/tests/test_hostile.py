"""Whatever a client sends, the bundle answers that request with an error and goes on."""

from __future__ import annotations

from typing import Any

import pytest

CALL = b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":'
DEEP = CALL + b'{"a":' + b"[" * 5000 + b"]" * 5000 + b"}}}"


@pytest.mark.parametrize(
    "line, code",
    [
        (DEEP, -32700),
        (b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ec\xffho"}}', -32700),
        (b'{"jsonrpc":"2.0","id":5,"method":"ping"\x00}', -32700),
        (CALL + b'{"n":1e999}}}', -32700),
        (CALL + b'{"n":' + b"9" * 5000 + b"}}}", -32700),
        (b"[" * 100000, -32700),
    ],
    ids=["nested-5000", "invalid-utf8", "raw-nul", "huge-float", "huge-integer", "unclosed-100k"],
)
def test_hostile_line_fails_alone(spawn: Any, line: bytes, code: int) -> None:
    peer = spawn()
    peer.initialize()
    peer.send_raw(line)
    answer = peer.recv()
    assert answer["error"]["code"] == code, answer
    assert answer["id"] is None
    assert peer.request("ping")["result"] == {}
    assert peer.close() == []
    assert peer.proc.returncode == 0


@pytest.mark.parametrize(
    "name, text",
    [("a\\u0000b", "unknown tool"), ("\\ud800", "unknown tool")],
    ids=["escaped-nul", "lone-surrogate"],
)
def test_odd_strings_reach_the_answer_intact(spawn: Any, name: str, text: str) -> None:
    peer = spawn()
    peer.initialize()
    params = b'{"name":"' + name.encode() + b'"}'
    peer.send_raw(b'{"jsonrpc":"2.0","id":"x","method":"tools/call","params":' + params + b"}")
    answer = peer.wait_for("x")
    assert answer["error"]["code"] == -32602 and text in answer["error"]["message"], answer
    echoed = peer.call("echo", {"s": "a\u0000b\ud800"})
    assert "a\\x00b" in echoed["content"][0]["text"]
    assert peer.request("ping")["result"] == {}

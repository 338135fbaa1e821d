"""The JSON-RPC and MCP lifecycle layer, driven over real pipes."""

from __future__ import annotations

import json
from typing import Any, Dict, Optional

import pytest
from conftest import EXAMPLE

SUPPORTED = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]


@pytest.mark.parametrize(
    "offered, expected",
    [(v, v) for v in SUPPORTED]
    + [("2099-01-01", "2025-11-25"), ("", "2025-11-25"), (None, "2025-11-25")],
)
def test_initialize_negotiates_version(spawn: Any, offered: Optional[str], expected: str) -> None:
    peer = spawn()
    params: Dict[str, Any] = {"capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    if offered is not None:
        params["protocolVersion"] = offered
    answer = peer.request("initialize", params)
    assert answer["result"] == {
        "protocolVersion": expected,
        "capabilities": {"tools": {"listChanged": False}, "logging": {}},
        "serverInfo": {"name": "fixture", "version": "9.9.9"},
    }


def test_example_server_info(spawn: Any) -> None:
    result = spawn(EXAMPLE).initialize("2025-06-18")["result"]
    assert result["serverInfo"]["name"] == "toolnode-example-python"
    assert result["protocolVersion"] == "2025-06-18"


def test_ping(spawn: Any) -> None:
    peer = spawn()
    peer.initialize()
    assert peer.request("ping")["result"] == {}


def test_list_shows_definitions_in_order(spawn: Any) -> None:
    peer = spawn()
    peer.initialize()
    tools = peer.request("tools/list")["result"]["tools"]
    names = [tool["name"] for tool in tools]
    assert names == [
        "barrier",
        "block",
        "echo",
        "print",
        "log",
        "progress",
        "job",
        "returns",
        "typed",
        "ask",
    ]
    echo = tools[2]
    assert echo == {
        "name": "echo",
        "title": "Echo",
        "description": "Answer with the request id and the arguments.",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True},
    }
    assert "description" not in tools[3], "a function without a docstring has no description"


@pytest.mark.parametrize("page_size, fillers", [(3, 7), (1, 2), (5, 2), (100, 0)])
def test_list_paginates(spawn: Any, page_size: int, fillers: int) -> None:
    everything = spawn(FIXTURE_FILLER_TOOLS=str(fillers), FIXTURE_PAGE_SIZE="1000")
    expected = [t["name"] for t in everything.request("tools/list")["result"]["tools"]]
    assert len(expected) == 10 + fillers

    peer = spawn(FIXTURE_FILLER_TOOLS=str(fillers), FIXTURE_PAGE_SIZE=str(page_size))
    seen, pages, params = [], 0, {}
    while True:
        result = peer.request("tools/list", params)["result"]
        pages += 1
        assert 0 < len(result["tools"]) <= page_size
        seen += [tool["name"] for tool in result["tools"]]
        if "nextCursor" not in result:
            break
        assert isinstance(result["nextCursor"], str)
        params = {"cursor": result["nextCursor"]}
    assert seen == expected
    assert pages == -(-len(expected) // page_size)


# Each line is followed by a ping: the server must answer the line as expected and carry on.
@pytest.mark.parametrize(
    "line, code, answer_id",
    [
        (b"not json", -32700, None),
        (b'{"jsonrpc":"2.0","id":1,', -32700, None),
        (b"\xff\xfe{}", -32700, None),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}', -32700, None),
        (b"[1, 2]", -32600, None),
        (b"[]", -32600, None),
        (b'"ping"', -32600, None),
        (b"42", -32600, None),
        (b"{}", -32600, None),
        (b'{"jsonrpc":"1.0","id":1,"method":"ping"}', -32600, 1),
        (b'{"id":"a","method":"ping"}', -32600, "a"),
        (b'{"jsonrpc":"2.0","id":1,"method":7}', -32600, 1),
        (b'{"jsonrpc":"2.0","id":1}', -32600, 1),
        (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":[1],"method":"ping"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":1,"method":"no/such"}', -32601, 1),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}', -32602, 1),
        (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}', -32602, 1),
        (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}', -32602, 1),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
            b'"params":{"name":"echo","arguments":[]}}',
            -32602,
            1,
        ),
        (b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"bogus"}}', -32602, 1),
        (b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"999"}}', -32602, 1),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"loud"}}',
            -32602,
            1,
        ),
    ],
)
def test_bad_input_is_answered_and_survived(
    spawn: Any, line: bytes, code: int, answer_id: Any
) -> None:
    peer = spawn()
    peer.initialize()
    peer.send_raw(line)
    answer = peer.recv()
    assert answer["jsonrpc"] == "2.0"
    assert answer["id"] == answer_id and type(answer["id"]) is type(answer_id)
    assert answer["error"]["code"] == code, answer
    assert isinstance(answer["error"]["message"], str) and answer["error"]["message"]
    assert peer.request("ping")["result"] == {}


@pytest.mark.parametrize(
    "line",
    [
        b"",
        b"   ",
        b'{"jsonrpc":"2.0","method":"notifications/whatever","params":{}}',
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12345}}',
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[1]}}',
        b'{"jsonrpc":"2.0","id":77,"result":{}}',
        b'{"jsonrpc":"2.0","id":78,"error":{"code":1,"message":"x"}}',
    ],
)
def test_lines_needing_no_answer_get_none(spawn: Any, line: bytes) -> None:
    peer = spawn()
    peer.initialize()
    peer.send_raw(line)
    answer = peer.request("ping")  # would fail on any message in between
    assert answer["result"] == {}
    assert peer.notifications == []


def test_unknown_tool_is_an_error_naming_it(spawn: Any) -> None:
    peer = spawn(EXAMPLE)
    peer.initialize()
    answer = peer.request("tools/call", {"name": "nope.nothing", "arguments": {}})
    assert answer["error"]["code"] == -32602
    assert "nope.nothing" in answer["error"]["message"]


def test_non_ascii_and_big_lines_round_trip(spawn: Any) -> None:
    peer = spawn(EXAMPLE)
    peer.initialize()
    name = "Zoë 名前 " + "x" * 300_000
    result = peer.call("greet", {"name": name})
    assert result["content"] == [{"type": "text", "text": f"Hello, {name}!"}]


def test_answers_are_single_compact_lines(spawn: Any) -> None:
    peer = spawn()
    peer.initialize()
    peer.send_raw(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"t": "a\nb"}},
            }
        ).encode()
    )
    raw = peer.recv_line()
    assert raw.endswith(b"\n") and raw.count(b"\n") == 1
    assert json.loads(raw)["id"] == 5

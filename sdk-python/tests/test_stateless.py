"""MCP 2026-07-28: requests served on their own, with what the client is in their _meta."""

from __future__ import annotations

from typing import Any, Dict, Optional

import pytest
from conftest import EXAMPLE, text_of

V2026 = "2026-07-28"


def meta(level: Optional[str] = None, **capabilities: Any) -> Dict[str, Any]:
    m: Dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
    }
    if level is not None:
        m["io.modelcontextprotocol/logLevel"] = level
    return m


def test_discover_without_initialize(spawn: Any) -> None:
    result = spawn().request("server/discover", {"_meta": meta()})["result"]
    assert result == {
        "resultType": "complete",
        "supportedVersions": ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", V2026],
        "capabilities": {"tools": {"listChanged": False}, "logging": {}},
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fixture", "version": "9.9.9"}},
        "ttlMs": 60000,
        "cacheScope": "public",
    }


def test_list_and_call_without_initialize(spawn: Any) -> None:
    peer = spawn(EXAMPLE)
    listed = peer.request("tools/list", {"_meta": meta()})["result"]
    assert listed["resultType"] == "complete"
    assert (listed["ttlMs"], listed["cacheScope"]) == (60000, "public")
    assert [t["name"] for t in listed["tools"]][:2] == ["greet", "node-lamp.on"]
    result = peer.call("greet", {"name": "Ada"}, _meta=meta())
    assert result == {
        "content": [{"type": "text", "text": "Hello, Ada!"}],
        "resultType": "complete",
    }


def test_unknown_version_is_refused(spawn: Any) -> None:
    peer = spawn()
    m = meta()
    m["io.modelcontextprotocol/protocolVersion"] = "2099-01-01"
    error = peer.request("tools/list", {"_meta": m})["error"]
    assert error["code"] == -32022
    assert error["data"]["requested"] == "2099-01-01"
    assert V2026 in error["data"]["supported"]


def test_logs_only_at_the_level_the_request_asks(spawn: Any) -> None:
    peer = spawn()
    peer.initialize()  # a session level must not leak into stateless requests
    peer.call("log", {}, _meta=meta())
    assert peer.notifications == []
    peer.call("log", {}, _meta=meta(level="critical"))
    levels = [n["params"]["level"] for n in peer.notifications]
    assert levels == ["critical", "alert", "emergency"]
    routing = {"io.toolnode/request": peer.last_id}
    assert all(n["params"]["_meta"] == routing for n in peer.notifications)


CAPS = {"elicitation": {}, "sampling": {}}


def test_input_required_rounds(spawn: Any) -> None:
    peer = spawn()
    first = peer.call("ask", {}, _meta=meta(**CAPS))
    assert first["resultType"] == "input_required"
    assert list(first["inputRequests"]) == ["user_name"]
    assert first["inputRequests"]["user_name"]["method"] == "elicitation/create"
    name = {"action": "accept", "content": {"name": "Ada"}}
    second = peer.call(
        "ask",
        {},
        _meta=meta(**CAPS),
        inputResponses={"user_name": name},
        requestState=first["requestState"],
    )
    assert second["resultType"] == "input_required"
    assert list(second["inputRequests"]) == ["colour"]
    colour = {"role": "assistant", "content": {"type": "text", "text": "green"}, "model": "m"}
    # The name comes back from the sealed state alone: the client sends only this round's answer.
    third = peer.call(
        "ask",
        {},
        _meta=meta(**CAPS),
        inputResponses={"colour": colour, "extra": {"ignored": True}},
        requestState=second["requestState"],
    )
    assert third["resultType"] == "complete"
    assert text_of(third) == "Ada likes green"


def test_missing_answer_is_asked_again(spawn: Any) -> None:
    peer = spawn()
    again = peer.call(
        "ask", {}, _meta=meta(**CAPS), inputResponses={"wrong": {"action": "accept"}}
    )
    assert again["resultType"] == "input_required"
    assert list(again["inputRequests"]) == ["user_name"]


@pytest.mark.parametrize("how", ["flip", "other-call", "garbage"])
def test_tampered_state_is_refused(spawn: Any, how: str) -> None:
    peer = spawn()
    first = peer.call("ask", {}, _meta=meta(**CAPS))
    state: str = first["requestState"]
    if how == "flip":
        state = state[:5] + ("A" if state[5] != "A" else "B") + state[6:]
    arguments: Dict[str, Any] = {"other": 1} if how == "other-call" else {}
    if how == "garbage":
        state = "not-a-state"
    answer = peer.request(
        "tools/call",
        {
            "name": "ask",
            "arguments": arguments,
            "_meta": meta(**CAPS),
            "inputResponses": {"user_name": {"action": "accept", "content": {"name": "x"}}},
            "requestState": state,
        },
    )
    assert answer["error"]["code"] == -32602, answer


def test_input_responses_must_be_results(spawn: Any) -> None:
    peer = spawn()
    answer = peer.request(
        "tools/call",
        {"name": "ask", "_meta": meta(**CAPS), "inputResponses": {"user_name": "Ada"}},
    )
    assert answer["error"]["code"] == -32602


def test_missing_capability_is_an_error(spawn: Any) -> None:
    answer = spawn().request("tools/call", {"name": "ask", "_meta": meta()})
    assert answer["error"]["code"] == -32021
    assert answer["error"]["data"] == {"requiredCapabilities": {"elicitation": {}}}


def test_the_same_tool_asks_by_request_under_2025(spawn: Any) -> None:
    peer = spawn()
    peer.request(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": CAPS,
            "clientInfo": {"name": "t", "version": "0"},
        },
    )
    peer.send({"jsonrpc": "2.0", "id": "call", "method": "tools/call", "params": {"name": "ask"}})
    asked = peer.recv()
    assert asked["method"] == "elicitation/create"
    assert asked["params"]["_meta"] == {"io.toolnode/request": "call"}
    peer.send(
        {
            "jsonrpc": "2.0",
            "id": asked["id"],
            "result": {"action": "accept", "content": {"name": "Bo"}},
        }
    )
    asked = peer.recv()
    assert asked["method"] == "sampling/createMessage"
    peer.send(
        {
            "jsonrpc": "2.0",
            "id": asked["id"],
            "result": {
                "role": "assistant",
                "content": {"type": "text", "text": "red"},
                "model": "m",
            },
        }
    )
    assert text_of(peer.wait_for("call")["result"]) == "Bo likes red"

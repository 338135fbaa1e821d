"""Resources, templates, prompts and completion, driven over pipes against the Python
conformance bundle (testdata/conformance/python)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

BUNDLE = Path(__file__).resolve().parents[2] / "testdata" / "conformance" / "python" / "server.py"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}


@pytest.fixture
def peer(spawn: Any) -> Any:
    p = spawn(BUNDLE)
    p.initialize()
    return p


def test_capabilities_follow_what_is_registered(spawn: Any) -> None:
    capabilities = spawn(BUNDLE).initialize()["result"]["capabilities"]
    assert capabilities == {
        "tools": {"listChanged": False},
        "logging": {},
        "prompts": {"listChanged": False},
        "resources": {"subscribe": True, "listChanged": False},
        "completions": {},
    }


def test_read_text_binary_and_template(peer: Any) -> None:
    listed = peer.request("resources/list")["result"]["resources"]
    assert [r["uri"] for r in listed][:2] == ["test://static-text", "test://static-binary"]
    text = peer.request("resources/read", {"uri": "test://static-text"})["result"]["contents"]
    assert text == [
        {
            "uri": "test://static-text",
            "mimeType": "text/plain",
            "text": "This is the content of the static text resource.",
        }
    ]
    blob = peer.request("resources/read", {"uri": "test://static-binary"})["result"]["contents"][0]
    assert base64.b64decode(blob["blob"]).startswith(b"\x89PNG")
    templates = peer.request("resources/templates/list")["result"]["resourceTemplates"]
    assert templates[0]["uriTemplate"] == "test://template/{id}/data"
    data = peer.request("resources/read", {"uri": "test://template/a%20b/data"})["result"]
    assert '"id": "a b"' in data["contents"][0]["text"]


def test_unknown_resource_per_era(peer: Any) -> None:
    missing = {"uri": "test://nope"}
    assert peer.request("resources/read", missing)["error"]["code"] == -32002
    error = peer.request("resources/read", {**missing, "_meta": META})["error"]
    assert (error["code"], error["data"]) == (-32602, {"uri": "test://nope"})


def test_prompts_and_completion(peer: Any) -> None:
    names = [p["name"] for p in peer.request("prompts/list")["result"]["prompts"]]
    assert "test_prompt_with_arguments" in names
    got = peer.request(
        "prompts/get",
        {"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}},
    )["result"]
    assert got["messages"][0]["content"]["text"] == "Prompt with arguments: arg1='a', arg2='b'"
    missing = peer.request("prompts/get", {"name": "test_prompt_with_arguments", "arguments": {}})
    assert missing["error"]["code"] == -32602
    done = peer.request(
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
            "argument": {"name": "arg1", "value": "par"},
        },
    )["result"]
    assert done == {
        "completion": {"values": ["paris", "park", "party"], "total": 3, "hasMore": False}
    }


def test_prompt_asks_for_input_under_2026(peer: Any) -> None:
    first = peer.request(
        "prompts/get", {"name": "test_input_required_result_prompt", "_meta": META}
    )
    assert first["result"]["resultType"] == "input_required"
    again = peer.request(
        "prompts/get",
        {
            "name": "test_input_required_result_prompt",
            "_meta": META,
            "requestState": first["result"]["requestState"],
            "inputResponses": {"user_context": {"action": "accept", "content": {"context": "x"}}},
        },
    )
    assert again["result"]["resultType"] == "complete"
    assert again["result"]["messages"][0]["content"]["text"] == "Context: x"
    cached = peer.request("resources/read", {"uri": "test://static-text", "_meta": META})["result"]
    assert (cached["ttlMs"], cached["cacheScope"], cached["resultType"]) == (
        60000,
        "public",
        "complete",
    )

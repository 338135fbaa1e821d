"""subscriptions/listen (2026-07-28): resource updates on the subscriptions that asked."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

import pytest

FIXTURE = Path(__file__).resolve().parent / "fixture_resources.py"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"


def listen(request_id: Any, uris: List[str]) -> Dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "subscriptions/listen",
        "params": {
            "_meta": META,
            "notifications": {"toolsListChanged": True, "resourceSubscriptions": uris},
        },
    }


def updated(request_id: Any, uri: str) -> Dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"_meta": {SUBSCRIPTION: request_id}, "uri": uri},
    }


def touch(peer: Any, uri: str) -> List[Dict[str, Any]]:
    """Call touch for uri and return the notifications sent before its answer."""
    peer.notifications.clear()
    peer.call("touch", {"uri": uri}, _meta=META)
    return list(peer.notifications)


def test_listen_acknowledges_updates_and_cancels(spawn: Any) -> None:
    peer = spawn(FIXTURE)
    capabilities = peer.request("server/discover", {"_meta": META})["result"]["capabilities"]
    assert capabilities["resources"] == {"subscribe": True, "listChanged": False}
    # Unknown resources and list changes (never sent) are left out of the acknowledgment.
    peer.send(listen("a", ["test://text", "other://x", "test://items/7"]))
    assert peer.recv() == {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {
            "_meta": {SUBSCRIPTION: "a"},
            "notifications": {"resourceSubscriptions": ["test://text", "test://items/7"]},
        },
    }
    peer.send(listen(7, ["test://text"]))
    assert peer.recv()["params"] == {
        "_meta": {SUBSCRIPTION: 7},
        "notifications": {"resourceSubscriptions": ["test://text"]},
    }
    peer.send(listen(7, []))
    assert peer.recv()["error"]["code"] == -32600

    assert touch(peer, "test://items/7") == [updated("a", "test://items/7")]
    assert touch(peer, "test://text") == [updated("a", "test://text"), updated(7, "test://text")]
    assert touch(peer, "test://items/8") == []

    # Cancelled: no answer, and no more updates on it.
    peer.notify("notifications/cancelled", {"requestId": "a"})
    assert touch(peer, "test://text") == [updated(7, "test://text")]
    # The end of the input answers no subscription.
    assert peer.close() == []


@pytest.mark.parametrize(
    "params, code",
    [
        ({"notifications": {"resourceSubscriptions": ["test://text"]}}, -32601),
        ({"_meta": META, "notifications": []}, -32602),
        ({"_meta": META, "notifications": {"resourceSubscriptions": "test://text"}}, -32602),
    ],
    ids=["without 2026-07-28 _meta", "filter not an object", "uris not an array"],
)
def test_listen_refused(spawn: Any, params: Dict[str, Any], code: int) -> None:
    answer = spawn(FIXTURE).request("subscriptions/listen", params)
    assert answer["error"]["code"] == code


def test_session_subscribers_are_not_listeners(spawn: Any) -> None:
    peer = spawn(FIXTURE)
    peer.initialize()
    peer.request("resources/subscribe", {"uri": "test://text"})
    peer.notifications.clear()
    peer.call("touch", {"uri": "test://text"})
    assert peer.notifications == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": "test://text"},
        }
    ]

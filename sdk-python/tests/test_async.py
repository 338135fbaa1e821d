"""async def handlers: run on the server's event loop beside sync ones, cancelled as
asyncio tasks, in both eras."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Dict, List

from conftest import text_of

ASYNC = Path(__file__).resolve().parent / "fixture_async.py"


def _call(request_id: Any, name: str, arguments: Dict[str, Any]) -> Dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def _answers(peer: Any, count: int) -> List[Dict[str, Any]]:
    return [m for m in (peer.recv() for _ in range(count)) if "id" in m]


def test_async_tools_run_at_once_on_one_worker(spawn: Any) -> None:
    peer = spawn(ASYNC)
    peer.initialize()
    # The only worker thread is held by a sync tool: the async ones do not need it.
    peer.send(_call("sync", "block", {"tag": "sync"}))
    assert peer.recv()["params"]["data"] == {"started": "sync"}
    for request_id in (1, 2, 3):
        peer.send(_call(request_id, "meet", {"parties": 3}))
    answers = _answers(peer, 3)
    assert sorted(a["id"] for a in answers) == [1, 2, 3]
    assert all(text_of(a["result"]) == "met" for a in answers), answers
    peer.notify("notifications/cancelled", {"requestId": "sync"})
    assert [m.get("id") for m in peer.close() if "id" in m] == []


def test_two_async_naps_overlap(spawn: Any) -> None:
    """Two 300 ms async tools called at once: the figure is printed (pytest -s), the
    overlap asserted by test_async_tools_run_at_once_on_one_worker."""
    peer = spawn(ASYNC)
    peer.initialize()
    started = time.monotonic()
    peer.send(_call(1, "nap", {"ms": 300}))
    peer.send(_call(2, "nap", {"ms": 300}))
    answers = _answers(peer, 2)
    elapsed = time.monotonic() - started
    assert [text_of(a["result"]) for a in answers] == ["napped 300 ms"] * 2
    print(f"two async 300 ms tools answered in {elapsed * 1000:.0f} ms")


def test_cancelled_async_tool_sees_cancelled_error(spawn: Any) -> None:
    peer = spawn(ASYNC)
    peer.initialize()
    peer.send(_call(7, "wait_cancel", {"tag": "seven"}))
    assert peer.recv()["params"]["data"] == {"started": "seven"}
    peer.notify("notifications/cancelled", {"requestId": 7})
    assert peer.request("ping")["result"] == {}
    rest = peer.close()
    assert [m.get("id") for m in rest if "id" in m] == []
    assert "async tool seven saw CancelledError" in peer.stderr
    assert peer.proc.returncode == 0


def test_async_prompt_and_resource(spawn: Any) -> None:
    peer = spawn(ASYNC)
    peer.initialize()
    prompt = peer.request("prompts/get", {"name": "greeting"})["result"]
    assert prompt["messages"][0]["content"]["text"] == "say hello"
    read = peer.request("resources/read", {"uri": "test://async"})["result"]
    assert read["contents"] == [
        {"uri": "test://async", "mimeType": "text/plain", "text": "read on the loop"}
    ]


def test_async_tool_asks_in_a_session_without_blocking_the_loop(spawn: Any) -> None:
    peer = spawn(ASYNC)
    peer.initialize()
    peer.send(_call(1, "ask_name", {}))
    question = peer.recv()
    assert question["method"] == "elicitation/create"
    # While the question waits, the loop serves another async call.
    assert text_of(peer.call("nap", {"ms": 1})) == "napped 1 ms"
    peer.send(
        {
            "jsonrpc": "2.0",
            "id": question["id"],
            "result": {"action": "accept", "content": {"name": "Ada"}},
        }
    )
    assert text_of(peer.wait_for(1)["result"]) == "hello Ada"


def test_async_tool_asks_under_2026_07_28(spawn: Any) -> None:
    peer = spawn(ASYNC)
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    }
    first = peer.request("tools/call", {"name": "ask_name", "arguments": {}, "_meta": meta})
    assert first["result"]["resultType"] == "input_required"
    assert list(first["result"]["inputRequests"]) == ["name"]
    second = peer.request(
        "tools/call",
        {
            "name": "ask_name",
            "arguments": {},
            "_meta": meta,
            "inputResponses": {"name": {"action": "accept", "content": {"name": "Grace"}}},
            "requestState": first["result"]["requestState"],
        },
    )
    assert second["result"]["resultType"] == "complete"
    assert text_of(second["result"]) == "hello Grace"

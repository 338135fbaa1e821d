"""tools/call end to end: arguments, results, progress, logging, cancellation, threads."""

from __future__ import annotations

from typing import Any, Dict, Iterator, List

import pytest
from conftest import EXAMPLE, FIXTURE, Peer, text_of

LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


def test_example_contract(spawn: Any) -> None:
    peer = spawn(EXAMPLE)
    peer.initialize()
    names = [t["name"] for t in peer.request("tools/list")["result"]["tools"]]
    assert names == [
        "greet",
        "node-lamp.on",
        "node-lamp.status",
        "sleep",
        "ask-name",
        "trace",
    ]
    assert peer.call("greet", {"name": "Ada"}) == {
        "content": [{"type": "text", "text": "Hello, Ada!"}]
    }
    off = {
        "content": [{"type": "text", "text": '{"on":false}'}],
        "structuredContent": {"on": False},
    }
    on = {"content": [{"type": "text", "text": '{"on":true}'}], "structuredContent": {"on": True}}
    assert peer.call("node-lamp.status", {}) == off
    assert peer.call("node-lamp.on") == on
    assert peer.call("node-lamp.status", {}) == on
    assert peer.call("sleep", {"ms": 0}) == {"content": [{"type": "text", "text": "slept 0 ms"}]}


@pytest.mark.parametrize(
    "tool, arguments, message",
    [
        ("greet", {}, 'missing required argument "name"'),
        ("greet", None, 'missing required argument "name"'),
        ("greet", {"name": 5}, 'argument "name" must be a string'),
        ("greet", {"name": None}, 'argument "name" must be a string'),
        ("sleep", {}, 'missing required argument "ms"'),
        ("sleep", {"ms": "10"}, 'argument "ms" must be an integer'),
        ("sleep", {"ms": True}, 'argument "ms" must be an integer'),
        ("sleep", {"ms": 1.5}, 'argument "ms" must be an integer'),
        ("sleep", {"ms": -1}, 'argument "ms" must be >= 0'),
        ("sleep", {"ms": 60001}, 'argument "ms" must be <= 60000'),
    ],
)
def test_example_argument_errors(spawn: Any, tool: str, arguments: Any, message: str) -> None:
    peer = spawn(EXAMPLE)
    peer.initialize()
    result = peer.call(tool, arguments)
    assert result == {"content": [{"type": "text", "text": message}], "isError": True}


@pytest.fixture(scope="module")
def fixture_peer() -> Iterator[Peer]:
    """One fixture process shared by the table tests below, which do not disturb each other."""
    peer = Peer(FIXTURE)
    peer.initialize()
    yield peer
    peer.kill()


@pytest.mark.parametrize(
    "arguments, problem",
    [
        ({"s": "x"}, None),
        ({"s": "x", "i": 3, "n": 1.5, "x": 0.5, "b": False, "o": {}, "a": [], "z": None}, None),
        ({"s": "x", "u": None, "free": [1]}, None),
        ({"s": "x", "u": "text", "unknown": "extra"}, None),
        ({"s": "x", "n": 1, "i": -(2**70)}, None),
        ({}, 'missing required argument "s"'),
        ({"s": 1}, 'argument "s" must be a string'),
        ({"s": "x", "i": 1.0}, 'argument "i" must be an integer'),
        ({"s": "x", "i": False}, 'argument "i" must be an integer'),
        ({"s": "x", "n": True}, 'argument "n" must be a number'),
        ({"s": "x", "n": "1"}, 'argument "n" must be a number'),
        ({"s": "x", "n": 0.5}, 'argument "n" must be >= 1'),
        ({"s": "x", "n": 2.5}, 'argument "n" must be <= 2'),
        ({"s": "x", "x": 0}, 'argument "x" must be > 0'),
        ({"s": "x", "x": 1}, 'argument "x" must be < 1'),
        ({"s": "x", "b": 0}, 'argument "b" must be a boolean'),
        ({"s": "x", "o": []}, 'argument "o" must be an object'),
        ({"s": "x", "a": {}}, 'argument "a" must be an array'),
        ({"s": "x", "z": 0}, 'argument "z" must be null'),
        ({"s": "x", "u": 3}, 'argument "u" must be a string or null'),
    ],
)
def test_argument_check(fixture_peer: Any, arguments: Dict[str, Any], problem: Any) -> None:
    result = fixture_peer.call("typed", arguments)
    if problem is None:
        assert result == {"content": [{"type": "text", "text": "ok"}]}
    else:
        assert result == {"content": [{"type": "text", "text": problem}], "isError": True}


@pytest.mark.parametrize(
    "kind, expected",
    [
        ("text", {"content": [{"type": "text", "text": "plain"}]}),
        ("content", {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
        (
            "dict",
            {
                "content": [{"type": "text", "text": '{"n":1,"s":"é"}'}],
                "structuredContent": {"n": 1, "s": "é"},
            },
        ),
        (
            "result",
            {"content": [{"type": "text", "text": "custom"}], "structuredContent": {"k": [1]}},
        ),
        ("error-result", {"content": [{"type": "text", "text": "soft"}], "isError": True}),
        ("none", {"content": []}),
        ("tool-error", {"content": [{"type": "text", "text": "told you so"}], "isError": True}),
    ],
)
def test_handler_returns(fixture_peer: Any, kind: str, expected: Dict[str, Any]) -> None:
    assert fixture_peer.call("returns", {"kind": kind}) == expected


@pytest.mark.parametrize(
    "kind, words", [("crash", "boom"), ("int", "int"), ("not-json", "not JSON")]
)
def test_handler_failures_are_error_results(fixture_peer: Any, kind: str, words: str) -> None:
    result = fixture_peer.call("returns", {"kind": kind})
    assert result["isError"] is True
    assert words in text_of(result)
    assert fixture_peer.request("ping")["result"] == {}


def test_handler_sees_its_request_id(spawn: Any) -> None:
    peer = spawn()
    peer.initialize()
    peer.send(
        {
            "jsonrpc": "2.0",
            "id": "abc",
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"k": 1}},
        }
    )
    assert text_of(peer.wait_for("abc")["result"]) == "abc [('k', 1)]"


@pytest.mark.parametrize("token", ["tok", 7])
def test_progress_follows_token(spawn: Any, token: Any) -> None:
    peer = spawn()
    peer.initialize()
    result = peer.call("progress", {"steps": 3}, _meta={"progressToken": token})
    assert text_of(result) == "done"
    assert peer.notifications == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {
                "progressToken": token,
                "progress": step,
                "total": 3,
                "message": f"step {step}",
                "_meta": {"io.toolnode/request": peer.last_id},
            },
        }
        for step in (1, 2, 3)
    ]


def test_no_progress_without_token(spawn: Any) -> None:
    peer = spawn()
    peer.initialize()
    peer.call("progress", {"steps": 3})
    peer.call("progress", {"steps": 3}, _meta={})
    assert peer.notifications == []


def test_example_sleep_reports_progress(spawn: Any) -> None:
    peer = spawn(EXAMPLE)
    peer.initialize()
    result = peer.call("sleep", {"ms": 350}, _meta={"progressToken": "p"})
    assert text_of(result) == "slept 350 ms"
    progress = [n["params"] for n in peer.notifications if n["method"] == "notifications/progress"]
    assert [p["progress"] for p in progress] == [100, 200, 300, 350]
    assert all(p["progressToken"] == "p" and p["total"] == 350 for p in progress)


@pytest.mark.parametrize("level", [None, "debug", "notice", "warning", "emergency"])
def test_log_level_filters(spawn: Any, level: Any) -> None:
    peer = spawn()
    peer.initialize()
    if level is not None:
        assert peer.request("logging/setLevel", {"level": level})["result"] == {}
    peer.call("log", {})
    sent = [n["params"] for n in peer.notifications if n["method"] == "notifications/message"]
    wanted = LEVELS[LEVELS.index(level or "debug") :]
    routing = {"io.toolnode/request": peer.last_id}
    assert sent == [
        {"level": lv, "data": {"level": lv}, "logger": "fixture", "_meta": routing}
        for lv in wanted
    ]


def _answer_ids(messages: List[Dict[str, Any]]) -> List[Any]:
    return [m["id"] for m in messages if "id" in m]


def test_cancelled_call_gets_no_answer(spawn: Any) -> None:
    peer = spawn(EXAMPLE)
    peer.initialize()
    peer.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "sleep", "arguments": {"ms": 60000}, "_meta": {"progressToken": 1}},
        }
    )
    assert peer.recv()["method"] == "notifications/message"  # the sleep is under way
    peer.notify("notifications/cancelled", {"requestId": 1, "reason": "changed my mind"})
    assert peer.request("ping")["result"] == {}
    # Stdin closing makes the server finish what is in flight and write it out, so
    # everything it would ever say about id 1 is in here; a sleep that ignored the
    # cancel would also keep it alive far past the timeout.
    rest = peer.close()
    assert 1 not in _answer_ids(peer.notifications + rest)
    assert peer.proc.returncode == 0


def test_cancel_reaches_queued_calls(spawn: Any) -> None:
    peer = spawn(FIXTURE_MAX_WORKERS="1")
    peer.initialize()
    for request_id in (1, 2):
        peer.send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": "block", "arguments": {"tag": str(request_id)}},
            }
        )
    assert peer.recv()["params"]["data"] == {"started": "1"}
    peer.notify("notifications/cancelled", {"requestId": 2})  # still waiting for a worker
    peer.notify("notifications/cancelled", {"requestId": 1})
    assert peer.request("ping")["result"] == {}
    rest = peer.close()
    assert _answer_ids(rest) == []
    assert {"started": "2"} not in [
        m.get("params", {}).get("data") for m in rest
    ], "call 2 should never start"


def test_calls_run_concurrently(spawn: Any) -> None:
    peer = spawn()
    peer.initialize()
    # Each barrier call returns only once all four are inside the handler together.
    for request_id in range(1, 5):
        peer.send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": "barrier", "arguments": {"parties": 4}},
            }
        )
    answers = [peer.recv() for _ in range(4)]
    assert sorted(_answer_ids(answers)) == [1, 2, 3, 4]
    assert all(text_of(a["result"]) == "passed" for a in answers), answers


def test_max_workers_bounds_concurrency(spawn: Any) -> None:
    peer = spawn(FIXTURE_MAX_WORKERS="2")
    peer.initialize()
    for request_id in range(1, 4):
        peer.send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": "barrier", "arguments": {"parties": 3, "timeout": 0.5}},
            }
        )
    answers = [peer.recv() for _ in range(3)]
    assert all(a["result"].get("isError") for a in answers), "three calls ran on two workers"


def test_fast_call_overtakes_slow_one(spawn: Any) -> None:
    peer = spawn()
    peer.initialize()
    peer.send(
        {"jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": {"name": "block"}}
    )
    assert peer.recv()["method"] == "notifications/message"
    assert text_of(peer.call("echo", {})).endswith("[]")
    peer.notify("notifications/cancelled", {"requestId": "slow"})
    assert _answer_ids(peer.close()) == []


def test_stray_output_goes_to_stderr(spawn: Any) -> None:
    peer = spawn()
    peer.initialize()
    assert text_of(peer.call("print", {})) == "printed"
    assert peer.request("ping")["result"] == {}
    peer.close()
    assert peer.junk == []
    assert "stray print" in peer.stderr and "raw fd write" in peer.stderr


def test_exit_on_stdin_close_finishes_calls_in_flight(spawn: Any) -> None:
    peer = spawn(EXAMPLE)
    peer.initialize()
    peer.send(
        {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "tools/call",
            "params": {"name": "sleep", "arguments": {"ms": 300}},
        }
    )
    rest = peer.close()
    assert [m["result"] for m in rest if m.get("id") == 9] == [
        {"content": [{"type": "text", "text": "slept 300 ms"}]}
    ]
    assert peer.proc.returncode == 0


def test_exit_on_stdin_close_when_idle(spawn: Any) -> None:
    peer = spawn()
    assert peer.close() == []
    assert peer.proc.returncode == 0
    assert peer.stderr == ""

"""Tasks (MCP's tasks extension): a tool says whether it allows or requires one, and a
task-aware handler reports its status and may fail as the protocol does."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import text_of

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from toolnode_sdk import Server, Tool  # noqa: E402


def test_task_support_is_listed_and_status_is_progress(spawn: Any) -> None:
    peer = spawn()
    peer.initialize()
    tools = {t["name"]: t for t in peer.request("tools/list")["result"]["tools"]}
    assert tools["job"]["execution"] == {"taskSupport": "required"}
    assert "execution" not in tools["echo"]
    result = peer.call("job", {}, _meta={"progressToken": "p"})
    assert text_of(result) == "done"
    assert [n["params"]["message"] for n in peer.notifications] == ["phase one", "phase two"]
    assert [n["params"]["progress"] for n in peer.notifications] == [1, 2]


def test_rpc_error_fails_the_call(spawn: Any) -> None:
    peer = spawn()
    peer.initialize()
    answer = peer.request("tools/call", {"name": "job", "arguments": {"broken": True}})
    assert answer["error"] == {"code": -32603, "message": "the job's store is gone"}


def test_bad_task_support_is_refused() -> None:
    with pytest.raises(ValueError, match="task_support 'sometimes' must be one of"):
        Tool(name="t", handler=lambda a, c: "", input_schema={}, task_support="sometimes")
    server = Server("s")
    with pytest.raises(ValueError, match="task_support"):
        server.tool(name="u", task_support="always")(lambda a, c: "")

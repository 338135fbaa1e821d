"""The example bundle driven by the official MCP Python SDK client, started as bundle.json says."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, List

import pytest

pytest.importorskip("mcp", reason="the official MCP client (PyPI package mcp) is not installed")
import anyio  # noqa: E402  (a dependency of mcp)
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.types import ElicitResult  # noqa: E402

HERE = Path(__file__).resolve().parent


def _server_parameters() -> StdioServerParameters:
    manifest = json.loads((HERE / "bundle.json").read_text())
    assert manifest["name"] == "python" and manifest["seats"] == ["node-lamp"]
    command, *args = manifest["command"]
    if shutil.which(command) is None:
        pytest.skip(f"{command} (bundle.json command[0]) is not on PATH")
    # The node starts bundles from their own directory; do the same.
    return StdioServerParameters(
        command=command, args=args, cwd=HERE, env={"PATH": os.environ["PATH"]}
    )


def test_official_client_drives_the_example() -> None:
    progress: List[float] = []

    async def on_progress(value: float, total: Any, message: Any) -> None:
        progress.append(value)

    async def on_elicit(context: Any, params: Any) -> ElicitResult:
        assert params.message == "What is your name?"
        return ElicitResult(action="accept", content={"name": "Grace"})

    async def session() -> None:
        async with stdio_client(_server_parameters()) as (read, write):
            async with ClientSession(read, write, elicitation_callback=on_elicit) as client:
                init = await client.initialize()
                assert init.server_info.name == "toolnode-example-python"

                tools = (await client.list_tools()).tools
                assert [t.name for t in tools] == [
                    "greet",
                    "node-lamp.on",
                    "node-lamp.status",
                    "sleep",
                    "ask-name",
                    "trace",
                ]
                assert tools[1].output_schema == {
                    "type": "object",
                    "properties": {"on": {"type": "boolean"}},
                    "required": ["on"],
                }

                greeting = await client.call_tool("greet", {"name": "Ada"})
                assert not greeting.is_error
                assert [(c.type, c.text) for c in greeting.content] == [("text", "Hello, Ada!")]

                lamp = await client.call_tool("node-lamp.on", {})
                assert not lamp.is_error
                assert lamp.structured_content == {"on": True}
                assert json.loads(lamp.content[0].text) == {"on": True}
                status = await client.call_tool("node-lamp.status", {})
                assert status.structured_content == {"on": True}

                bad = await client.call_tool("greet", {})
                assert bad.is_error and bad.content[0].text == 'missing required argument "name"'

                slept = await client.call_tool("sleep", {"ms": 250}, progress_callback=on_progress)
                assert slept.content[0].text == "slept 250 ms"

                asked = await client.call_tool("ask-name", {})
                assert [(c.type, c.text) for c in asked.content] == [("text", "Hello, Grace!")]

    anyio.run(session)
    assert progress == [100, 200, 250]

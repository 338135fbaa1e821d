"""The agent frameworks on PyPI against a node with make run's bundles and default flags.

Each framework is set up as its documentation says, over stdio (it starts the node) and over
Streamable HTTP (a node started here), and nothing calls a model: the test takes the tools the
framework would hand a model and calls two of them through the framework's own tool objects.
It checks that every name it would hand a model passes ^[a-zA-Z0-9_-]{1,64}$, that it holds at
most 128 tools, and that the greeting (go.greet) and a MEOS tool (meos.length) answer right.

    python check.py --node bin/toolnode --root . openai-agents langchain pydantic-ai fastmcp

Run by make test-frameworks (every framework, in the venvs it installs under build/) and,
one framework over both transports, by make test. Prints one line per check and a closing
"N passed, N failed".
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
import traceback
from typing import Any, Awaitable, Callable

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_TOOLS = 128
POINT = "[POINT(0 0)@2025-01-01T08:00:00Z, POINT(300 400)@2025-01-01T08:10:00Z]"
# The tools called, by the names a client that does not take dots is given.
GREET = ("go_greet", {"name": "Ada"}, "Hello, Ada!")
LENGTH = ("meos_length", {"point": POINT}, "500")

Server = dict[str, Any]  # how to reach the node: {"command", "args"} or {"url"}


def node_args(root: str) -> list[str]:
    return ["serve", "--bundles", os.path.join(root, "examples"), "--bundles", os.path.join(root, "bundles")]


def text_of(value: Any) -> str:
    """Whatever a framework's tool returns, as text to look for the answer in."""
    if isinstance(value, str):
        return value
    for attr in ("content", "text", "data", "structured_content", "output"):
        if hasattr(value, attr) and getattr(value, attr) is not None:
            return text_of(getattr(value, attr))
    if isinstance(value, (list, tuple)):
        return " ".join(text_of(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value)
    return str(value)


# ---- each framework: (names it would hand a model, call(name, args) -> answer text) ----------

Framework = Callable[[Server], Awaitable[tuple[list[str], Callable[[str, dict], Awaitable[str]]]]]


async def openai_agents(server: Server, stack) -> tuple[list[str], Any]:
    from agents import Agent, RunContextWrapper
    from agents.mcp import MCPServerStdio, MCPServerStreamableHttp, MCPUtil
    from agents.tool_context import ToolContext

    if "url" in server:
        s = MCPServerStreamableHttp(params={"url": server["url"]}, client_session_timeout_seconds=60)
    else:
        s = MCPServerStdio(params={"command": server["command"], "args": server["args"]},
                           client_session_timeout_seconds=60)
    await stack.enter_async_context(s)
    agent = Agent(name="check", mcp_servers=[s])
    ctx = RunContextWrapper(context=None)
    tools = await MCPUtil.get_all_function_tools([s], False, ctx, agent)
    by_name = {t.name: t for t in tools}

    async def call(name: str, args: dict) -> str:
        tool = by_name[name]
        tctx = ToolContext(context=None, tool_name=name, tool_call_id="call-1", tool_arguments=json.dumps(args))
        return text_of(await tool.on_invoke_tool(tctx, json.dumps(args)))

    return list(by_name), call


async def langchain(server: Server, stack) -> tuple[list[str], Any]:
    from langchain_mcp_adapters.client import MultiServerMCPClient

    conn: dict[str, Any]
    if "url" in server:
        conn = {"transport": "streamable_http", "url": server["url"]}
    else:
        conn = {"transport": "stdio", "command": server["command"], "args": server["args"]}
    client = MultiServerMCPClient({"toolnode": conn})
    tools = await client.get_tools()
    by_name = {t.name: t for t in tools}

    async def call(name: str, args: dict) -> str:
        return text_of(await by_name[name].ainvoke(args))

    return list(by_name), call


async def pydantic_ai(server: Server, stack) -> tuple[list[str], Any]:
    from pydantic_ai import RunContext
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    if "url" in server:
        toolset = MCPToolset(server["url"])
    else:
        from fastmcp.client.transports import StdioTransport
        toolset = MCPToolset(StdioTransport(command=server["command"], args=server["args"]))
    await stack.enter_async_context(toolset)
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    tools = await toolset.get_tools(ctx)

    async def call(name: str, args: dict) -> str:
        return text_of(await toolset.call_tool(name, args, ctx, tools[name]))

    return list(tools), call


async def fastmcp_client(server: Server, stack) -> tuple[list[str], Any]:
    from fastmcp import Client

    if "url" in server:
        client = Client(server["url"], timeout=60)
    else:
        from fastmcp.client.transports import StdioTransport
        client = Client(StdioTransport(command=server["command"], args=server["args"]), timeout=60)
    await stack.enter_async_context(client)
    tools = await client.list_tools()

    async def call(name: str, args: dict) -> str:
        return text_of(await client.call_tool(name, args))

    return [t.name for t in tools], call


FRAMEWORKS = {"openai-agents": openai_agents, "langchain": langchain, "pydantic-ai": pydantic_ai,
              "fastmcp": fastmcp_client}


# ---- the checks -----------------------------------------------------------------------------

def start_http_node(node: str, root: str) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([node, *node_args(root), "--http", f"127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/mcp"
    for _ in range(600):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc, url
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the node's HTTP front did not come up")


async def check(name: str, framework, server: Server) -> list[str]:
    """The failures of one framework over one transport."""
    from contextlib import AsyncExitStack

    failures: list[str] = []
    async with AsyncExitStack() as stack:
        names, call = await framework(server, stack)
        bad = [n for n in names if not NAME.match(n)]
        if bad:
            failures.append(f"names a model API refuses: {bad[:5]}")
        if len(names) > MAX_TOOLS or len(set(names)) != len(names):
            failures.append(f"{len(names)} tools ({len(set(names))} distinct); want at most {MAX_TOOLS}, none twice")
        for tool, args, want in (GREET, LENGTH):
            if tool not in names:
                failures.append(f"{tool} is not among the {len(names)} tools")
                continue
            got = await asyncio.wait_for(call(tool, args), 60)
            if want not in got:
                failures.append(f"{tool} answered {got[:300]!r}; want {want!r} in it")
    return failures


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--node", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--transport", action="append", choices=["stdio", "http"])
    ap.add_argument("frameworks", nargs="+", choices=sorted(FRAMEWORKS))
    a = ap.parse_args()
    node, root = os.path.abspath(a.node), os.path.abspath(a.root)
    proc, url = start_http_node(node, root)
    passed = failed = 0
    try:
        for fw in a.frameworks:
            for transport in a.transport or ["stdio", "http"]:
                server: Server = {"url": url} if transport == "http" else {"command": node, "args": node_args(root)}
                try:
                    failures = asyncio.run(check(fw, FRAMEWORKS[fw], server))
                except Exception:  # a framework that cannot even list is a failure to report
                    failures = [traceback.format_exc(limit=3)]
                if failures:
                    failed += 1
                    print(f"FAIL {fw} over {transport}: " + "; ".join(failures), flush=True)
                else:
                    passed += 1
                    print(f"ok   {fw} over {transport}", flush=True)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""A bundle of async handlers (tools, a prompt, a resource) beside a sync tool, on one
worker thread: async handlers run on the server's event loop, not on the pool."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any, Dict, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from toolnode_sdk import Context, Server, ToolError  # noqa: E402

server = Server("fixture-async", max_workers=1)


class _Gate:
    """Opens once `parties` calls arrived (made and used on the loop)."""

    def __init__(self, parties: int) -> None:
        self.parties = parties
        self.arrived = 0
        self.open = asyncio.Event()


_gates: Dict[int, _Gate] = {}


@server.tool(input_schema={"type": "object", "properties": {"ms": {"type": "integer"}}})
async def nap(args: Dict[str, Any], ctx: Context) -> str:
    """Sleep ms milliseconds without holding a thread."""
    await asyncio.sleep(args.get("ms", 0) / 1000)
    return f"napped {args.get('ms', 0)} ms"


@server.tool(input_schema={"type": "object", "properties": {"parties": {"type": "integer"}}})
async def meet(args: Dict[str, Any], ctx: Context) -> str:
    """Return only once `parties` calls are inside this handler at the same time."""
    gate = _gates.setdefault(args["parties"], _Gate(args["parties"]))
    gate.arrived += 1
    if gate.arrived >= gate.parties:
        gate.open.set()
    try:
        await asyncio.wait_for(gate.open.wait(), timeout=20)
    except asyncio.TimeoutError:
        raise ToolError("the calls did not run together") from None
    return "met"


@server.tool(input_schema={"type": "object", "properties": {"tag": {"type": "string"}}})
async def wait_cancel(args: Dict[str, Any], ctx: Context) -> str:
    """Wait until cancelled, and say on stderr that the cancellation arrived."""
    ctx.log("info", {"started": args.get("tag")})
    try:
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        print(f"async tool {args.get('tag')} saw CancelledError", file=sys.stderr, flush=True)
        raise
    return "never cancelled"


@server.tool(input_schema={"type": "object", "properties": {"tag": {"type": "string"}}})
def block(args: Dict[str, Any], ctx: Context) -> str:
    """A sync tool holding the only worker until cancelled."""
    ctx.log("info", {"started": args.get("tag")})
    ctx.wait_cancelled(30)
    return "cancelled" if ctx.cancelled else "never cancelled"


@server.tool()
async def ask_name(args: Dict[str, Any], ctx: Context) -> str:
    """Ask the user's name, without blocking the loop."""
    answer = await ctx.ask_async(
        {
            "name": {
                "method": "elicitation/create",
                "params": {"message": "Name?", "requestedSchema": {"type": "object"}},
            }
        }
    )
    content: Optional[Dict[str, Any]] = answer["name"].get("content")
    return f"hello {(content or {}).get('name')}"


@server.prompt()
async def greeting(args: Dict[str, str], ctx: Context) -> str:
    """An async prompt."""
    await asyncio.sleep(0)
    return "say hello"


@server.resource("test://async", mime_type="text/plain")
async def async_text(uri: str, ctx: Context) -> str:
    """An async resource reader."""
    await asyncio.sleep(0)
    return "read on the loop"


if __name__ == "__main__":
    server.run()

"""The example bundle written with the Python SDK; examples/README.md is its contract."""

from __future__ import annotations

import importlib.util
import sys
import threading
from pathlib import Path
from typing import Any, Dict

if importlib.util.find_spec("toolnode_sdk") is None:
    # The node starts us as `python3 ./server.py` from a checkout where the SDK
    # is usually not pip-installed: use the copy in the same repository.
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sdk-python" / "src"))

from toolnode_sdk import Context, Result, Server, ToolError

server = Server("toolnode-example-python", version="1.0.0")

LAMP_SCHEMA = {"type": "object", "properties": {"on": {"type": "boolean"}}, "required": ["on"]}
_lamp_on = False
_lamp_lock = threading.Lock()


@server.tool(
    name="greet",
    description="Greet someone by name.",
    input_schema={
        "type": "object",
        "properties": {"name": {"type": "string", "description": "Who to greet"}},
        "required": ["name"],
    },
)
def greet(args: Dict[str, Any], ctx: Context) -> str:
    return f"Hello, {args['name']}!"


@server.tool(
    name="node-lamp.on",
    description="Turn the lamp on.",
    input_schema={"type": "object", "properties": {}},
    output_schema=LAMP_SCHEMA,
)
def lamp_on(args: Dict[str, Any], ctx: Context) -> Result:
    global _lamp_on
    with _lamp_lock:
        _lamp_on = True
    return Result(structured_content={"on": True})


@server.tool(
    name="node-lamp.status",
    description="Tell whether the lamp is on.",
    input_schema={"type": "object", "properties": {}},
    output_schema=LAMP_SCHEMA,
)
def lamp_status(args: Dict[str, Any], ctx: Context) -> Result:
    with _lamp_lock:
        return Result(structured_content={"on": _lamp_on})


@server.tool(
    name="sleep",
    description="Sleep for ms milliseconds, reporting progress every 100 ms.",
    input_schema={
        "type": "object",
        "properties": {"ms": {"type": "integer", "minimum": 0, "maximum": 60000}},
        "required": ["ms"],
    },
)
def sleep(args: Dict[str, Any], ctx: Context) -> str:
    ms: int = args["ms"]
    ctx.log("info", f"sleeping {ms} ms", logger="sleep")
    slept = 0
    while slept < ms:
        step = min(100, ms - slept)
        if ctx.wait_cancelled(step / 1000):
            raise ToolError("cancelled")
        slept += step
        ctx.progress(slept, total=ms)
    return f"slept {ms} ms"


NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@server.tool(
    name="ask-name",
    description="Ask the user for their name and greet them.",
    input_schema={"type": "object", "properties": {}},
)
def ask_name(args: Dict[str, Any], ctx: Context) -> str:
    # One way for both eras: a request to the client under 2025-11-25, an
    # input_required round under 2026-07-28.
    answer = ctx.elicit("name", "What is your name?", NAME_SCHEMA)
    if answer.get("action") != "accept":
        raise ToolError("no name given")
    return f"Hello, {answer['content']['name']}!"



@server.tool(
    name="trace",
    description="Tell the W3C trace context the call carried in _meta.",
    input_schema={"type": "object", "properties": {}},
    output_schema={
        "type": "object",
        "properties": {"traceparent": {"type": "string"}, "tracestate": {"type": "string"}},
    },
)
def trace(args: Dict[str, Any], ctx: Context) -> Result:
    return Result(structured_content=ctx.trace_context)

if __name__ == "__main__":
    server.run()

"""A bundle exercising every corner of the SDK, configured by environment variables.

FIXTURE_MAX_WORKERS, FIXTURE_PAGE_SIZE: Server options.
FIXTURE_FILLER_TOOLS: how many extra tools filler-0, filler-1, ... to register.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any, Dict

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from toolnode_sdk import Context, Result, RpcError, Server, ToolError  # noqa: E402

server = Server(
    "fixture",
    version="9.9.9",
    max_workers=int(os.environ.get("FIXTURE_MAX_WORKERS", "8")),
    page_size=int(os.environ.get("FIXTURE_PAGE_SIZE", "100")),
)

_barriers: Dict[int, threading.Barrier] = {}
_barriers_lock = threading.Lock()


@server.tool(
    input_schema={
        "type": "object",
        "properties": {
            "parties": {"type": "integer", "minimum": 1},
            "timeout": {"type": "number"},
        },
        "required": ["parties"],
    }
)
def barrier(args: Dict[str, Any], ctx: Context) -> str:
    """Return only once `parties` calls are inside this handler at the same time."""
    with _barriers_lock:
        gate = _barriers.setdefault(args["parties"], threading.Barrier(args["parties"]))
    try:
        gate.wait(timeout=args.get("timeout", 20))
    except threading.BrokenBarrierError:
        raise ToolError("barrier broken: the calls did not run together") from None
    return "passed"


@server.tool(
    name="block", input_schema={"type": "object", "properties": {"tag": {"type": "string"}}}
)
def block(args: Dict[str, Any], ctx: Context) -> str:
    """Wait until cancelled."""
    ctx.log("info", {"started": args.get("tag")})
    ctx.wait_cancelled(30)
    return "cancelled" if ctx.cancelled else "never cancelled"


@server.tool(name="echo", title="Echo", annotations={"readOnlyHint": True})
def echo(args: Dict[str, Any], ctx: Context) -> str:
    """Answer with the request id and the arguments."""
    return f"{ctx.request_id} {sorted(args.items())}"


@server.tool(name="print")
def stray_print(args: Dict[str, Any], ctx: Context) -> str:
    print("stray print")
    os.write(1, b"raw fd write\n")  # what a C extension's printf would do
    return "printed"


@server.tool(name="log")
def log(args: Dict[str, Any], ctx: Context) -> str:
    for level in ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"):
        ctx.log(level, {"level": level}, logger="fixture")
    return "logged"


@server.tool(
    name="progress", input_schema={"type": "object", "properties": {"steps": {"type": "integer"}}}
)
def progress(args: Dict[str, Any], ctx: Context) -> str:
    for step in range(1, args.get("steps", 3) + 1):
        ctx.progress(step, total=args.get("steps", 3), message=f"step {step}")
    return "done"


@server.tool(
    name="job",
    input_schema={"type": "object", "properties": {"broken": {"type": "boolean"}}},
    task_support="required",
)
def job(args: Dict[str, Any], ctx: Context) -> str:
    """A task-aware tool: it reports its status, and may fail as the protocol does."""
    ctx.status("phase one")
    ctx.status("phase two")
    if args.get("broken"):
        raise RpcError(-32603, "the job's store is gone")
    return "done"


_RETURNS: Dict[str, Any] = {
    "text": lambda: "plain",
    "content": lambda: [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
    "dict": lambda: {"n": 1, "s": "é"},
    "result": lambda: Result(
        content=[{"type": "text", "text": "custom"}], structured_content={"k": [1]}
    ),
    "error-result": lambda: Result(content=[{"type": "text", "text": "soft"}], is_error=True),
    "none": lambda: None,
    "int": lambda: 42,
    "not-json": lambda: {"set": {1, 2}},
}


@server.tool(
    name="returns", input_schema={"type": "object", "properties": {"kind": {"type": "string"}}}
)
def returns(args: Dict[str, Any], ctx: Context) -> Any:
    """Return each kind of value a handler may (or may not) return."""
    kind = args["kind"]
    if kind == "tool-error":
        raise ToolError("told you so")
    if kind == "crash":
        raise RuntimeError("boom")
    return _RETURNS[kind]()


@server.tool(
    name="typed",
    input_schema={
        "type": "object",
        "properties": {
            "s": {"type": "string"},
            "i": {"type": "integer"},
            "n": {"type": "number", "minimum": 1, "maximum": 2},
            "x": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            "b": {"type": "boolean"},
            "o": {"type": "object"},
            "a": {"type": "array"},
            "z": {"type": "null"},
            "u": {"type": ["string", "null"]},
            "free": {},
        },
        "required": ["s"],
    },
)
def typed(args: Dict[str, Any], ctx: Context) -> str:
    return "ok"


NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@server.tool(name="ask")
def ask(args: Dict[str, Any], ctx: Context) -> str:
    """Ask the user's name, then the model for a colour: two rounds of input."""
    name = ctx.elicit("user_name", "What is your name?", NAME_SCHEMA)
    if name.get("action") != "accept":
        raise ToolError(f"no name: {name.get('action')}")
    colour = ctx.create_message(
        "colour",
        {
            "messages": [{"role": "user", "content": {"type": "text", "text": "A colour?"}}],
            "maxTokens": 10,
        },
    )
    return f"{name['content']['name']} likes {colour['content']['text']}"


for index in range(int(os.environ.get("FIXTURE_FILLER_TOOLS", "0"))):
    server.tool(name=f"filler-{index}")(echo)

if __name__ == "__main__":
    server.run()

"""A bundle with a resource and a template, whose tool touch says a resource changed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from toolnode_sdk import Context, Server  # noqa: E402

server = Server("resources", version="1")


@server.resource("test://text", mime_type="text/plain")
def text(uri: str, ctx: Context) -> str:
    return "hello"


@server.resource_template("test://items/{id}")
def item(uri: str, variables: Dict[str, str], ctx: Context) -> str:
    return variables["id"]


@server.tool(
    input_schema={
        "type": "object",
        "properties": {"uri": {"type": "string"}},
        "required": ["uri"],
    }
)
def touch(args: Dict[str, Any], ctx: Context) -> str:
    """Tell the clients watching uri that it changed."""
    server.resource_updated(args["uri"])
    return "touched"


if __name__ == "__main__":
    server.run()

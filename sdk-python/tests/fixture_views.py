"""A bundle with MCP Apps views: one listed, one not, a tool showing its results in a view
and a tool only views call."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from toolnode_sdk import Context, Server  # noqa: E402

server = Server("views", version="1")
server.view(
    "ui://views/show.html",
    "<!DOCTYPE html><p>hi</p>",
    ui={"csp": {"connectDomains": ["https://api.example.com"]}, "prefersBorder": True},
)
server.view("ui://views/hidden.html", "<p>", name="hidden", listed=False)


@server.tool(view="ui://views/show.html", meta={"kept": 1})
def show(args: Dict[str, Any], ctx: Context) -> str:
    return "shown"


@server.tool(view="ui://views/show.html", visibility=["app"])
def refresh(args: Dict[str, Any], ctx: Context) -> str:
    return "refreshed"


if __name__ == "__main__":
    server.run()

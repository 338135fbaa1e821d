"""The registration API, used in-process."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import toolnode_sdk  # noqa: E402
from toolnode_sdk import Context, Server, Tool  # noqa: E402


def handler(args: Dict[str, Any], ctx: Context) -> str:
    """First line.

    More detail."""
    return "x"


def test_decorator_registers_and_returns_the_function() -> None:
    server = Server("s")
    assert server.tool(name="one", input_schema={"type": "object"})(handler) is handler
    assert server.tool()(handler) is handler
    one, two = server.tools
    assert (one.name, one.input_schema, one.handler) == ("one", {"type": "object"}, handler)
    assert (two.name, two.input_schema) == ("handler", {"type": "object", "properties": {}})
    assert two.description == "First line.\n\nMore detail."


def test_bare_decorator_says_how_to_fix_it() -> None:
    server = Server("s")
    with pytest.raises(TypeError, match=r"@server\.tool\(\)"):
        server.tool(handler)  # what `@server.tool` without parentheses does
    assert server.tools == []


@pytest.mark.parametrize("name", ["", "has space", "ü", "a/b", "x" * 129])
def test_invalid_tool_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="1-128 characters"):
        Server("s").tool(name=name)(handler)


def test_duplicate_tool_names_are_refused() -> None:
    server = Server("s")
    server.add_tool(Tool(name="a.b-c_D", handler=handler, input_schema={}))
    with pytest.raises(ValueError, match="already registered"):
        server.tool(name="a.b-c_D")(handler)


@pytest.mark.parametrize("options", [{"max_workers": 0}, {"page_size": 0}, {"cache_ttl_ms": -1}])
def test_options_are_checked(options: Dict[str, int]) -> None:
    with pytest.raises(ValueError):
        Server("s", **options)


def test_exports() -> None:
    assert sorted(toolnode_sdk.__all__) == sorted(
        [
            "LATEST_VERSION",
            "MIME_APP",
            "STATELESS_VERSIONS",
            "SUPPORTED_VERSIONS",
            "UI_EXTENSION",
            "Context",
            "Result",
            "RpcError",
            "Server",
            "Tool",
            "ToolError",
            "ToolnodeError",
        ]
    )
    assert issubclass(toolnode_sdk.ToolError, toolnode_sdk.ToolnodeError)
    assert toolnode_sdk.LATEST_VERSION == "2025-11-25"
    assert toolnode_sdk.STATELESS_VERSIONS == ("2026-07-28",)

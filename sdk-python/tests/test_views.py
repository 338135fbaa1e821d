"""MCP Apps views, driven over pipes against tests/fixture_views.py."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from toolnode_sdk import MIME_APP, Server  # noqa: E402

FIXTURE = Path(__file__).resolve().parent / "fixture_views.py"
UI = {"ui": {"csp": {"connectDomains": ["https://api.example.com"]}, "prefersBorder": True}}


@pytest.fixture
def peer(spawn: Any) -> Any:
    p = spawn(FIXTURE)
    p.initialize()
    return p


def test_views_are_listed_and_read_with_their_meta(peer: Any) -> None:
    listed = peer.request("resources/list")["result"]["resources"]
    assert listed == [
        {"uri": "ui://views/show.html", "name": "ui://views/show.html", "mimeType": MIME_APP, "_meta": UI}
    ]
    read = peer.request("resources/read", {"uri": "ui://views/show.html"})["result"]["contents"]
    assert read == [
        {"uri": "ui://views/show.html", "mimeType": MIME_APP, "text": "<!DOCTYPE html><p>hi</p>", "_meta": UI}
    ]
    hidden = peer.request("resources/read", {"uri": "ui://views/hidden.html"})["result"]["contents"]
    assert hidden == [{"uri": "ui://views/hidden.html", "mimeType": MIME_APP, "text": "<p>", "_meta": {"ui": {}}}]


def test_tools_name_their_view(peer: Any) -> None:
    tools = {t["name"]: t.get("_meta") for t in peer.request("tools/list")["result"]["tools"]}
    assert tools == {
        "show": {"kept": 1, "ui": {"resourceUri": "ui://views/show.html"}},
        "refresh": {"ui": {"resourceUri": "ui://views/show.html", "visibility": ["app"]}},
    }


@pytest.mark.parametrize(
    "register",
    [
        lambda s: s.view("https://x/v.html", "<p>"),
        lambda s: s.view("ui://", "<p>"),
        lambda s: s.tool(view="file:///v.html")(lambda a, c: ""),
        lambda s: s.tool(view="ui://v", visibility=["user"])(lambda a, c: ""),
        lambda s: s.tool(visibility=["app"])(lambda a, c: ""),
    ],
)
def test_bad_views_are_refused(register: Any) -> None:
    with pytest.raises(ValueError):
        register(Server("bad", version="1"))


def test_a_view_uri_is_taken_once() -> None:
    s = Server("twice", version="1")
    s.view("ui://v/a.html", "<p>")
    with pytest.raises(ValueError):
        s.view("ui://v/a.html", "<p>")

"""MCP Apps (extension io.modelcontextprotocol/ui): views a host renders for tools."""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

UI_EXTENSION = "io.modelcontextprotocol/ui"
"""The extension's identifier, under which clients declare it in capabilities.extensions."""
MIME_APP = "text/html;profile=mcp-app"
"""The MIME type of a view's HTML."""
UI_SCHEME = "ui://"
VISIBILITIES = ("model", "app")


def view_meta(
    meta: Optional[Dict[str, Any]], view: Optional[str], visibility: Optional[Sequence[str]]
) -> Optional[Dict[str, Any]]:
    """A tool's _meta with ui.resourceUri naming view and ui.visibility, other members kept."""
    if view is None:
        if visibility is not None:
            raise ValueError("visibility is given with a view only")
        return meta
    if not view.lower().startswith(UI_SCHEME) or len(view) == len(UI_SCHEME):
        raise ValueError(f"view URI {view!r} must begin {UI_SCHEME}")
    ui: Dict[str, Any] = {"resourceUri": view}
    if visibility is not None:
        unknown = [v for v in visibility if v not in VISIBILITIES]
        if unknown:
            raise ValueError(f"visibility {unknown!r}: each must be one of {VISIBILITIES}")
        ui["visibility"] = list(visibility)
    return {**(meta or {}), "ui": ui}

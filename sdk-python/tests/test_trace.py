"""Context.trace_context: the W3C trace context a call's _meta carried, in both eras."""

from __future__ import annotations

from typing import Any, Dict, Optional

import pytest
from conftest import EXAMPLE
from test_stateless import meta as stateless_meta

PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
STATE = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"

CASES = [
    ({"traceparent": PARENT, "tracestate": STATE}, {"traceparent": PARENT, "tracestate": STATE}),
    ({"traceparent": PARENT}, {"traceparent": PARENT}),
    (None, {}),
    ({"tracestate": STATE}, {}),
    ({"traceparent": "cc-" + PARENT[3:] + "-later"}, {"traceparent": "cc-" + PARENT[3:] + "-later"}),
    ({"traceparent": PARENT.upper(), "tracestate": STATE}, {}),
    ({"traceparent": "00-" + "0" * 32 + PARENT[35:]}, {}),
    ({"traceparent": PARENT[:36] + "0" * 16 + "-01"}, {}),
    ({"traceparent": "ff" + PARENT[2:]}, {}),
    ({"traceparent": PARENT + "-00"}, {}),
    ({"traceparent": PARENT[:-1]}, {}),
    ({"traceparent": 1, "tracestate": STATE}, {}),
    ({"traceparent": PARENT, "tracestate": {"a": "b"}}, {"traceparent": PARENT}),
]


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
def test_trace_context(spawn: Any, era: str) -> None:
    peer = spawn(EXAMPLE)
    if era != "2026-07-28":
        peer.initialize(era)
    for sent, seen in CASES:
        m: Optional[Dict[str, Any]] = dict(sent) if sent is not None else None
        if era == "2026-07-28":
            m = {**stateless_meta(), **(m or {})}
        params: Dict[str, Any] = {"name": "trace", "arguments": {}}
        if m is not None:
            params["_meta"] = m
        result = peer.request("tools/call", params)["result"]
        assert result["structuredContent"] == seen, sent

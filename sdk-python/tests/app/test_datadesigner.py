"""NVIDIA DataDesigner 0.9.7's MCP layer, a thin client, against a node with default
settings, over Streamable HTTP and stdio: it lists its whole view in one page (every tool of
a catalog within the default view's budget, else the node's own, pinned and featured ones),
runs a completion's calls in parallel, and every name it would hand a model API passes that
API's rule."""

from __future__ import annotations

import asyncio
import json
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from conftest import MEOS, ROOT, TIMEOUT, TOOLNODE, Node
from rules import ANTHROPIC_NAME, GEMINI_NAME, OPENAI_NAME

from toolnode_sdk.app import Toolnode

DD_PYTHON = ROOT / "build" / "dd-venv" / "bin" / "python"
VIEW_MAX_TOOLS = 128  # the node's default --view-max-tools
DRIVER = Path(__file__).resolve().parent / "datadesigner_driver.py"


def bundle_args() -> list[str]:
    args = ["--bundles", str(ROOT / "examples")]
    return args + (["--bundles", str(ROOT / "bundles")] if MEOS.exists() else [])


def drive(*args: str) -> dict[str, Any]:
    if not DD_PYTHON.exists():
        pytest.skip(f"{DD_PYTHON} is missing: make build/dd-venv/.ok installs data-designer 0.9.7")
    out = subprocess.run([str(DD_PYTHON), str(DRIVER), *args], capture_output=True, timeout=TIMEOUT * 3)
    assert out.returncode == 0, out.stderr.decode()[-3000:]
    return json.loads(out.stdout)


def overlapping(audit: Path) -> bool:
    calls = [json.loads(line) for line in audit.read_text().splitlines()]
    calls = [c for c in calls if c["tool"] == "go.sleep"]
    assert len(calls) == 8
    starts = [datetime.fromisoformat(c["time"].replace("Z", "+00:00")).timestamp() for c in calls]
    return max(starts) < min(s + c["duration_ms"] / 1000 for s, c in zip(starts, calls, strict=True))


def check(seen: dict[str, Any], total: int) -> None:
    names = seen["names"]
    if total <= VIEW_MAX_TOOLS:
        assert len(names) == total, f"DataDesigner saw {len(names)} of {total} tools"
    else:  # the auto view: the examples' tools (featured) among them
        assert 0 < len(names) <= VIEW_MAX_TOOLS and "go_sleep" in names, f"DataDesigner saw {len(names)} tools"
    bad = [n for n in names if not (OPENAI_NAME.match(n) and ANTHROPIC_NAME.match(n) and GEMINI_NAME.match(n))]
    assert not bad, f"names a model API refuses: {bad[:5]}"
    texts = [m["content"][0]["text"] if isinstance(m["content"], list) else m["content"]
             for m in seen["results"] if m["role"] == "tool"]
    assert texts == ["slept 200 ms"] * 8 + ["Hello, Ada!"]
    assert seen["canonical"] == "Hello, Grace!"


def total_tools(url: str) -> int:
    async def count() -> int:
        tn = Toolnode(url)
        try:
            return len(await tn.list_tools())
        finally:
            await tn.close()

    return asyncio.run(count())


def test_over_streamable_http(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    n = Node(*[Path(a) for a in bundle_args()[1::2]], extra=("--audit", str(audit)))
    try:
        seen = drive("http", n.url)
        check(seen, total_tools(n.url))
        assert overlapping(audit), "DataDesigner's calls ran one after another"
        print(f"\nDataDesigner over HTTP: {len(seen['names'])} tools, "
              f"8 parallel 200 ms calls in {seen['elapsed_ms']:.0f} ms")
    finally:
        n.stop()


def test_over_stdio(tmp_path: Path) -> None:
    if not TOOLNODE.exists():
        pytest.skip(f"{TOOLNODE} is not built: run make")
    audit = tmp_path / "audit.jsonl"
    seen = drive("stdio", str(TOOLNODE), "serve", *bundle_args(), "--audit", str(audit), "--log-level", "error")
    n = Node(*[Path(a) for a in bundle_args()[1::2]])
    try:
        check(seen, total_tools(n.url))
    finally:
        n.stop()
    assert overlapping(audit), "DataDesigner's calls ran one after another"

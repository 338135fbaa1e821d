"""Names and schemas: the shared vectors, every MEOS tool under each API's rules, and the
CLI printing what the library makes."""

from __future__ import annotations

import asyncio
import json
import subprocess
from typing import Any

import pytest
from conftest import ROOT, TOOLNODE, Node
from rules import ANTHROPIC_NAME, GEMINI_NAME, OPENAI_NAME, check

from toolnode_sdk.app import FORMATS, Toolnode, definitions, is_provider_name, map_names

VECTORS = json.loads((ROOT / "testdata" / "app" / "vectors.json").read_text())


@pytest.mark.parametrize("case", VECTORS["names"], ids=lambda c: c["case"])
def test_name_vectors(case: dict[str, Any]) -> None:
    m = map_names(case["rendered"])
    assert {n: m.provider_name(n) for n in case["rendered"]} == case["rendered"]
    for n, r in case["rendered"].items():
        assert m.tool_name(r) == n
        assert OPENAI_NAME.match(r) and ANTHROPIC_NAME.match(r) and GEMINI_NAME.match(r), r


@pytest.mark.parametrize("case", VECTORS["schemas"], ids=lambda c: c["case"])
def test_schema_vectors(case: dict[str, Any]) -> None:
    for key, want in case["definitions"].items():
        fmt, _, strict = key.partition("+")
        got = definitions([case["tool"]], fmt, strict=bool(strict)).tools
        assert got == want, key
        assert check(fmt, got) == {}, key


def catalog(node: Node) -> list[dict[str, Any]]:
    return asyncio.run(Toolnode(node.url).list_tools())


def test_every_meos_name_and_long_dotted_names_map_both_ways(meos_node: Node) -> None:
    names = [t["name"] for t in catalog(meos_node)]
    assert sum(n.startswith("meos.") for n in names) > 1000
    long_names = [f"b{i}." + ".".join(["segment"] * 15) + f".{i:04d}"[: 128] for i in range(50)]
    long_names = [(n + "x" * 128)[:128] for n in long_names]
    assert all(len(n) == 128 and "." in n for n in long_names)
    everything = names + long_names
    m = map_names(everything)
    rendered = [m.provider_name(n) for n in everything]
    assert len(set(rendered)) == len(everything), "two tools share a name"
    for n, r in zip(everything, rendered, strict=True):
        assert is_provider_name(r) and OPENAI_NAME.match(r) and ANTHROPIC_NAME.match(r) and GEMINI_NAME.match(r), (n, r)
        assert m.tool_name(r) == n


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_schema_of_the_catalog_passes_the_api_rules(node: Node, fmt: str, strict: bool) -> None:
    tools = catalog(node)
    d = definitions(tools, fmt, strict=strict)
    assert check(fmt, d.tools) == {}
    count = len(d.tools[0]["functionDeclarations"]) if fmt == "gemini" else len(d.tools)
    assert count == len(tools)


@pytest.mark.parametrize("fmt", FORMATS)
def test_cli_prints_what_the_library_makes(node: Node, fmt: str) -> None:
    if not TOOLNODE.exists():
        pytest.skip(f"{TOOLNODE} is not built: run make")
    args = [str(TOOLNODE), "tools", "--url", node.url, "--format", fmt, "--allow", "meos.*", "--allow", "*.greet",
            "--deny", "meos.a*"]
    if fmt.startswith("openai"):
        args.append("--strict")
    out = subprocess.run(args, capture_output=True, check=True, timeout=120).stdout
    tn = Toolnode(node.url, allow=["meos.*", "*.greet"], deny=["meos.a*"])
    mine = asyncio.run(tn.tools(fmt, strict=fmt.startswith("openai")))
    assert json.loads(out) == mine
    assert mine

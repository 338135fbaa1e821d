"""Skills (MCP's skills extension): a folder served by Server.skill, over pipes."""

from __future__ import annotations

import base64
import hashlib
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from toolnode_sdk import Server  # noqa: E402
from toolnode_sdk._skills import parse_frontmatter  # noqa: E402

FIXTURE = Path(__file__).resolve().parent / "fixture_skills.py"
URI = "skill://geo/trajectory-analysis/SKILL.md"


def test_a_skill_is_listed_got_and_read_with_its_digests(spawn: Any) -> None:
    peer = spawn(FIXTURE)
    capabilities = peer.initialize()["result"]["capabilities"]
    assert capabilities["extensions"] == {"io.modelcontextprotocol/skills": {}}
    assert "resources" in capabilities
    listed = peer.request("skills/list")["result"]["skills"]
    assert [s["uri"] for s in listed] == [URI]
    entry = peer.request("skills/get", {"uri": URI})["result"]["skill"]
    assert entry == listed[0]
    assert entry["frontmatter"]["name"] == "trajectory-analysis"
    assert entry["frontmatter"]["metadata"]["bundle"] == "meos"
    uris = [r["uri"] for r in entry["resources"]]
    assert URI in uris and "skill://geo/trajectory-analysis/programs/summary.star" in uris
    for r in entry["resources"]:
        c = peer.request("resources/read", {"uri": r["uri"]})["result"]["contents"][0]
        data = c["text"].encode() if "text" in c else base64.b64decode(c["blob"])
        assert "sha256:" + hashlib.sha256(data).hexdigest() == r["digest"]
        assert len(data) == r["size"]
    assert peer.request("resources/list")["result"]["resources"] == []
    missing = peer.request("skills/get", {"uri": "skill://geo/none/SKILL.md"})
    assert missing["error"]["code"] == -32602


def test_frontmatter_reads_the_simple_yaml_and_refuses_the_rest(tmp_path: Path) -> None:
    text = "---\nname: a\ndescription: >\n  two\n  lines\nn: 3\nok: true\nq: 'it''s'\n---\n"
    assert parse_frontmatter(text) == {
        "name": "a",
        "description": "two lines\n",
        "n": 3,
        "ok": True,
        "q": "it's",
    }
    for bad in ["# none", "---\nname: a\n", "---\ntags:\n  - a\n---\n"]:
        with pytest.raises(ValueError):
            parse_frontmatter(bad)
    (tmp_path / "SKILL.md").write_text("---\nname: other\ndescription: d\n---\n")
    with pytest.raises(ValueError, match="must have name"):
        Server("s").skill("x/wanted", str(tmp_path))

"""docs/applications.md's loops, run as written: each snippet of docs/snippets against a node
and a loopback server answering as the model API does."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest
from conftest import RESPONSES, ROOT, TIMEOUT, FakeAPI, Node

SNIPPETS = {
    "app_openai.py": "openai",
    "app_openai_responses.py": "openai-responses",
    "app_anthropic.py": "anthropic",
    "app_gemini.py": "gemini",
}


def test_the_page_quotes_every_snippet() -> None:
    page = (ROOT / "docs" / "applications.md").read_text()
    for name in SNIPPETS:
        assert (ROOT / "docs" / "snippets" / name).read_text().strip() in page, name


@pytest.mark.parametrize("snippet", list(SNIPPETS))
def test_snippet_runs_a_whole_loop(snippet: str, node: Node, fake_api: FakeAPI) -> None:
    api = SNIPPETS[snippet]

    def answer(kind: str, req: dict[str, Any]) -> dict[str, Any]:
        assert kind == api
        first = len(fake_api.requests) == 1
        return RESPONSES[api]([("call_1", "c_greet", {"name": "Ada"})]) if first else RESPONSES[api](None, text="done")

    fake_api.script = answer
    env = dict(os.environ, TOOLNODE_URL=node.url, PYTHONPATH=str(ROOT / "sdk-python" / "src"),
               OPENAI_API_KEY="test", OPENAI_BASE_URL=fake_api.url + "/v1",
               ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=fake_api.url,
               GEMINI_API_KEY="test", GOOGLE_GEMINI_BASE_URL=fake_api.url)
    env.pop("GOOGLE_API_KEY", None)
    out = subprocess.run([sys.executable, str(ROOT / "docs" / "snippets" / snippet)], env=env,
                         capture_output=True, timeout=TIMEOUT)
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    assert out.stdout.decode().strip() == "done"
    assert len(fake_api.requests) == 2
    assert "Hello, Ada!" in str(fake_api.requests[1][1])

"""Sessions, listings, parallel calls, reconnection, turn limits and allow-lists, against
real nodes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, TIMEOUT, TOOLNODE, Node, chat_completion, free_port

from toolnode_sdk.app import REFUSAL, Call, SyncToolnode, Toolnode, Unreachable
from toolnode_sdk.app import _connection


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A node over the examples (one tools/list page) that writes an audit line per call."""
    audit = tmp_path_factory.mktemp("audit") / "calls.jsonl"
    n = Node(ROOT / "examples", extra=("--audit", str(audit)))
    n.audit = audit  # type: ignore[attr-defined]
    yield n
    n.stop()


def audit_lines(node: Any) -> list[dict[str, Any]]:
    path: Path = node.audit
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def wait_for(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def test_a_completions_calls_run_at_once(audited: Any) -> None:
    """Eight 200 ms calls of one completion all run at the same moment (the node's audit
    log shows every one arrived before any ended)."""
    tn = SyncToolnode(audited.url, allow=["go.sleep"])
    conv = tn.conversation("openai")
    name = tn.definitions("openai").names.provider_name("go.sleep")
    before = len(audit_lines(audited))
    started = time.monotonic()
    msgs = conv.results(chat_completion([(f"c{i}", name, {"ms": 200}) for i in range(8)]))
    elapsed = time.monotonic() - started
    assert [m["content"] for m in msgs] == ["slept 200 ms"] * 8
    wait_for(lambda: len(audit_lines(audited)) >= before + 8, "eight audit lines")
    calls = [r for r in audit_lines(audited)[before:] if r["tool"] == "go.sleep"]
    assert len(calls) == 8
    from datetime import datetime

    starts = [datetime.fromisoformat(r["time"].replace("Z", "+00:00")).timestamp() for r in calls]
    ends = [s + r["duration_ms"] / 1000 for s, r in zip(starts, calls, strict=True)]
    assert max(starts) < min(ends), "a call began only after another had ended"
    print(f"\n8 parallel calls of a 200 ms tool took {elapsed * 1000:.0f} ms")


def test_fifty_concurrent_listings_make_one_request(audited: Any) -> None:
    async def run() -> list[Any]:
        tn = Toolnode(audited.url)
        try:
            return await asyncio.gather(*(tn.tools("anthropic") for _ in range(50)))
        finally:
            await tn.close()

    before = audited.count("tools/list")
    results = asyncio.run(run())
    assert audited.count("tools/list") == before + 1
    assert all(r == results[0] for r in results) and results[0]


def test_the_list_is_cached_until_its_ttl(audited: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The node's ttlMs (2026-07-28) keeps the list; past it the next call lists again."""
    now = [1000.0]
    monkeypatch.setattr(_connection.time, "monotonic", lambda: now[0])

    async def run() -> tuple[int, int, int]:
        tn = Toolnode(audited.url)
        try:
            c0 = audited.count("tools/list")
            await tn.tools("openai")
            now[0] += 20  # within the node's 30 s
            await tn.tools("openai")
            c1 = audited.count("tools/list")
            now[0] += 20  # past it
            await tn.tools("openai")
            return c0, c1, audited.count("tools/list")
        finally:
            await tn.close()

    c0, c1, c2 = asyncio.run(run())
    assert (c1 - c0, c2 - c1) == (1, 1)


def test_list_changed_refreshes_a_session(tmp_path: Path) -> None:
    """Under a 2025-11-25 session the node announces a new bundle, and the next tools() has it."""
    bundles = tmp_path / "bundles"
    bundles.mkdir()
    n = Node(bundles, extra=("--watch=true",))
    try:
        async def run() -> tuple[list[str], list[str]]:
            tn = Toolnode(n.url, mode="legacy")
            try:
                first = [t["name"] for t in await tn.list_tools()]
                add_bundle(bundles / "late", "late")
                deadline = time.monotonic() + TIMEOUT
                while time.monotonic() < deadline:
                    names = [t["name"] for t in await tn.list_tools()]
                    if "late.hello" in names:
                        return first, names
                    await asyncio.sleep(0.05)
                return first, names
            finally:
                await tn.close()

        first, later = asyncio.run(run())
        assert "late.hello" not in first and "late.hello" in later
    finally:
        n.stop()


def add_bundle(folder: Path, name: str) -> None:
    folder.mkdir()
    (folder / "server.py").write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT / 'sdk-python' / 'src')!r})
        from toolnode_sdk import Server
        server = Server({name!r})

        @server.tool(name="hello", input_schema={{"type": "object", "properties": {{}}}})
        def hello(args, ctx):
            return "hello"

        server.run()
        """))
    (folder / "bundle.json").write_text(json.dumps({"name": name, "command": [sys.executable, "./server.py"]}))


def test_turn_limit_refuses_readably(audited: Any) -> None:
    tn = SyncToolnode(audited.url)
    conv = tn.conversation("anthropic", max_turns=1)
    name = tn.definitions("anthropic").names.provider_name("c.greet")
    response = {"content": [{"type": "tool_use", "id": "t1", "name": name, "input": {"name": "Ada"}}]}
    first = conv.results(response)
    assert first[0]["content"][0]["content"] == [{"type": "text", "text": "Hello, Ada!"}]
    assert conv.exhausted
    before = len(audit_lines(audited))
    second = conv.results(response)
    text = second[0]["content"][0]["content"][0]["text"]
    assert text == REFUSAL.format(limit=1)
    time.sleep(0.2)
    assert len(audit_lines(audited)) == before, "a refused call ran"


def test_allow_and_deny(audited: Any) -> None:
    tn = SyncToolnode(audited.url, allow=["*.greet", "node-lamp.*"], deny=["python.*"])
    names = sorted(t["name"] for t in tn.list_tools())
    assert names and all(n.endswith(".greet") or n.startswith("node-lamp.") for n in names)
    assert not any(n.startswith("python.") for n in names)
    before = len(audit_lines(audited))
    (out,) = tn.run("openai", [Call("x", "python_greet", {"name": "x"})])
    assert out.error == {"kind": "forbidden", "dispatched": False, "message": "tool 'python.greet' is not allowed here"}
    with pytest.raises(PermissionError):
        tn.call("go.sleep", {"ms": 1})
    time.sleep(0.2)
    assert len(audit_lines(audited)) == before
    with pytest.raises(ValueError, match="which no tool name has"):
        SyncToolnode(audited.url, allow=["a/b"])


def test_timeout_tells_the_model_the_call_may_have_acted(audited: Any) -> None:
    tn = SyncToolnode(audited.url, timeout=0.3)
    name = tn.definitions("openai").names.provider_name("go.sleep")
    (out,) = tn.run("openai", [Call("x", name, {"ms": 5000})])
    assert out.error is not None and out.error["kind"] == "timeout" and out.error["dispatched"] is True


def test_sync_api_from_many_threads_shares_one_session(audited: Any) -> None:
    # A Toolnode whose endpoint nobody used yet: a URL spelled differently.
    url = audited.url.replace("127.0.0.1", "localhost")
    before = audited.count("tools/list")
    errors: list[BaseException] = []
    answers: list[str] = []

    def work(i: int) -> None:
        try:
            tn = SyncToolnode(url)
            assert tn.tools("gemini")
            res = tn.call("c.greet", {"name": f"n{i}"})
            answers.append(res["content"][0]["text"])
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert not errors, errors
    assert sorted(answers) == sorted(f"Hello, n{i}!" for i in range(20))
    assert audited.count("tools/list") == before + 1
    SyncToolnode(url).close()


def test_a_killed_node_is_reached_again_over_http() -> None:
    port = free_port()
    n = Node(ROOT / "examples", port=port)
    try:
        async def run() -> None:
            tn = Toolnode(n.url, timeout=TIMEOUT)
            name = (await tn.definitions("openai")).names.provider_name("go.sleep")
            assert (await tn.call("c.greet", {"name": "a"}))["content"][0]["text"] == "Hello, a!"
            inflight = asyncio.ensure_future(tn.run("openai", [Call("s", name, {"ms": 10000})]))
            await asyncio.sleep(0.5)
            n.kill()
            (lost,) = await inflight
            assert lost.error is not None and lost.error["kind"] == "failed" and lost.error["dispatched"] is True
            with pytest.raises(Unreachable, match="cannot reach|lost"):
                await tn.call("c.greet", {"name": "b"})
            n.start()
            assert (await tn.call("c.greet", {"name": "c"}))["content"][0]["text"] == "Hello, c!"
            await tn.close()

        asyncio.run(run())
    finally:
        n.stop()


def test_a_killed_node_is_started_again_over_stdio(tmp_path: Path) -> None:
    if not TOOLNODE.exists():
        pytest.skip(f"{TOOLNODE} is not built: run make")
    pidfile = tmp_path / "pid"
    script = f'echo $$ > {pidfile}; exec {TOOLNODE} serve --bundles {ROOT / "examples"} --log-level error'

    async def run() -> None:
        tn = Toolnode(command=["sh", "-c", script], timeout=TIMEOUT)
        assert (await tn.call("c.greet", {"name": "a"}))["content"][0]["text"] == "Hello, a!"
        first = int(pidfile.read_text())
        name = (await tn.definitions("anthropic")).names.provider_name("go.sleep")
        inflight = asyncio.ensure_future(tn.run("anthropic", [Call("s", name, {"ms": 10000})]))
        await asyncio.sleep(0.5)
        os.kill(first, signal.SIGKILL)
        (lost,) = await inflight
        assert lost.error is not None and lost.error["kind"] == "failed" and lost.error["dispatched"] is True
        assert "lost" in lost.error["message"]
        assert (await tn.call("c.greet", {"name": "b"}))["content"][0]["text"] == "Hello, b!"
        assert int(pidfile.read_text()) != first
        await tn.close()

    asyncio.run(run())


def test_command_given_as_one_path_is_the_program(tmp_path: Path) -> None:
    if not TOOLNODE.exists():
        pytest.skip(f"{TOOLNODE} is not built: run make")

    async def run() -> None:
        for command in (str(TOOLNODE), TOOLNODE):
            tn = Toolnode(command=command, bundles=[ROOT / "examples"], timeout=TIMEOUT)
            assert tn.endpoint.command[:2] == (str(TOOLNODE), "serve")
            assert (await tn.call("c.greet", {"name": "Path"}))["content"][0]["text"] == "Hello, Path!"
            await tn.close()

    asyncio.run(run())

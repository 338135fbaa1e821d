"""A real node serving the example bundles, the Go conformance bundle and MEOS, and a
loopback server that answers as the model APIs do, for the application library's tests."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "sdk-python" / "src"))

TOOLNODE = ROOT / "bin" / "toolnode"
MEOS = ROOT / "bundles" / "meos" / "build" / "meos-bundle"
# The Go conformance bundle serves an image tool and a failing tool under bare names (make fixtures).
CONFORMANCE = ROOT / "testdata" / "conformance" / "go"
# Generous: it bounds a hang on a busy machine, it does not measure anything.
TIMEOUT = 60.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Node:
    """A `toolnode serve` over HTTP on loopback, with Prometheus metrics to count requests."""

    def __init__(self, *bundles: Path, extra: tuple[str, ...] = (), port: int | None = None) -> None:
        if not TOOLNODE.exists():
            pytest.skip(f"{TOOLNODE} is not built: run make")
        self.bundles = bundles
        self.extra = extra
        self.port = port or free_port()
        self.metrics_port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    def args(self) -> list[str]:
        args = [str(TOOLNODE), "serve", "--http", f"127.0.0.1:{self.port}", "--metrics",
                f"127.0.0.1:{self.metrics_port}", "--log-level", "warn", *self.extra]
        for b in self.bundles:
            args += ["--bundles", str(b)]
        return args

    def start(self) -> None:
        self.proc = subprocess.Popen(self.args(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            try:
                self.count("tools/list")
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"toolnode exited with {self.proc.returncode}") from None
                time.sleep(0.05)
        raise RuntimeError("toolnode did not come up")

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()

    def count(self, method: str) -> int:
        """How many requests of ``method`` the node has answered, from its metrics."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5) as r:
            text = r.read().decode()
        key = f'mcp_server_operation_duration_seconds_count{{mcp_method_name="{method}"}}'
        for line in text.splitlines():
            if line.startswith(key):
                return int(float(line.split()[-1]))
        return 0

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="session")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Node]:
    """A node over the examples, the Go conformance bundle and MEOS (when built), with
    default settings."""
    if not (CONFORMANCE / "build" / "conformance").exists():
        pytest.skip(f"{CONFORMANCE} is not built: run make fixtures")
    folder = tmp_path_factory.mktemp("bundles")
    for b in sorted((ROOT / "examples").iterdir()):
        if (b / "bundle.json").exists():
            (folder / b.name).symlink_to(b)
    (folder / "conformance").symlink_to(CONFORMANCE)
    bundles = [folder]
    if MEOS.exists():
        bundles.append(ROOT / "bundles")
    n = Node(*bundles)
    yield n
    n.stop()


@pytest.fixture(scope="session")
def meos_node(node: Node) -> Node:
    if not MEOS.exists():
        pytest.skip(f"{MEOS} is not built (make -C bundles/meos)")
    return node


# ---- a loopback server answering as the model APIs do ---------------------------------

Script = Callable[[str, dict[str, Any]], dict[str, Any]]


class FakeAPI:
    """Answers the model APIs' endpoints with what ``script(api, request)`` returns, in the
    shapes their documentation records, and keeps every request it was sent."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.script: Script = lambda api, req: {}
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
                path = self.path.split("?")[0]
                if path.endswith("/chat/completions"):
                    kind = "openai"
                elif path.endswith("/responses"):
                    kind = "openai-responses"
                elif path.endswith("/messages"):
                    kind = "anthropic"
                elif ":generateContent" in path:
                    kind = "gemini"
                else:
                    self.send_error(404)
                    return
                api.requests.append((kind, body))
                out = json.dumps(api.script(kind, body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def fake_api() -> Iterator[FakeAPI]:
    api = FakeAPI()
    yield api
    api.close()


Calls = list[tuple[str, str, dict[str, Any]]] | None


def chat_completion(tool_calls: Calls, text: str | None = None) -> dict[str, Any]:
    """A Chat Completions response: tool calls (id, name, arguments) or a final text."""
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    if tool_calls:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}} for i, n, a in tool_calls
        ]
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1764720000, "model": "gpt-test",
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "tool_calls" if tool_calls else "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def responses_response(tool_calls: Calls, text: str | None = None) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    for i, n, a in tool_calls or []:
        output.append({"type": "function_call", "id": f"fc_{i}", "call_id": i, "name": n,
                       "arguments": json.dumps(a), "status": "completed"})
    if text is not None:
        output.append({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": text, "annotations": []}]})
    return {"id": "resp_1", "object": "response", "created_at": 1764720000, "status": "completed", "model": "gpt-test",
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "error": None,
            "incomplete_details": None, "instructions": None, "metadata": {}, "temperature": 1.0, "top_p": 1.0,
            "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                      "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}}


def anthropic_message(tool_calls: Calls, text: str | None = None) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"type": "text", "text": text})
    for i, n, a in tool_calls or []:
        content.append({"type": "tool_use", "id": i, "name": n, "input": a})
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": content,
            "stop_reason": "tool_use" if tool_calls else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5}}


def gemini_response(tool_calls: Calls, text: str | None = None) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if text is not None:
        parts.append({"text": text})
    for i, n, a in tool_calls or []:
        parts.append({"functionCall": {"id": i, "name": n, "args": a}})
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": "gemini-test"}


RESPONSES = {"openai": chat_completion, "openai-responses": responses_response, "anthropic": anthropic_message,
             "gemini": gemini_response}


def env_without_proxies() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
